//! Analysis shared by the optimizations: sites and annotation placement, scopes, and the fact
//! context Γ(P) handed to the Z3 layer.

pub mod builtins;
pub mod exprtext;
pub mod facts;
pub mod generics;
pub mod genperms;
pub mod loops;
pub mod names;
pub mod scope;
pub mod shapes;
pub mod sites;
pub mod typeck;

//! Analysis shared by the optimizations: sites and annotation placement, scopes, and the fact
//! context Γ(P) handed to the Z3 layer.

// Refusals carry whole diagnostics in `Err` (the cold path); AST enums keep large variants
// inline. Boxing them would only add noise (the same allowance as every crate of the workspace).
#![allow(clippy::result_large_err, clippy::large_enum_variant)]

pub mod builtins;
pub mod facts;
pub mod generics;
pub mod genperms;
pub mod loops;
pub mod names;
pub mod scope;
pub mod shapes;
pub mod sites;
pub mod typeck;
pub mod uniform;

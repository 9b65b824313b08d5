//! alpine-rs: annotation-aware optimization of verified GPU kernels written in PVL.
//!
//! The pipeline is visible in the module layout:
//! parse ([`front`]) → analyze ([`analyze`]) → check with Z3 ([`check`]) → rewrite
//! ([`transforms`]) → emit ([`edit`]).

pub mod cli;
pub mod diag;
pub mod edit;
pub mod front;
pub mod verify;
pub mod viper;

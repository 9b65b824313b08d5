//! alpine-rs: annotation-aware optimization of verified GPU kernels written in PVL.
//!
//! The pipeline is visible in the module layout:
//! parse ([`front`]) → analyze ([`analyze`]) → check with Z3 ([`check`]) → rewrite
//! ([`transforms`]) → emit ([`edit`]); [`verify`] re-verifies with Viper/Silicon.

// Refusals carry whole diagnostics in `Err`; they are the cold path, and boxing them everywhere
// would only add noise. AST enums keep their large variants inline for the same reason.
#![allow(clippy::result_large_err, clippy::large_enum_variant)]

pub mod allocator;
pub mod analyze;
pub mod check;
pub mod cli;
pub mod codes;
pub mod diag;
pub mod edit;
pub mod front;
pub mod review;
pub mod verify;
pub mod viper;

pub mod sem;
#[path = "../transforms/mod.rs"]
pub mod transforms;

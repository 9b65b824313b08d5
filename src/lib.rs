//! alpine-rs: annotation-aware optimization of verified GPU kernels written in PVL.
//!
//! The pipeline is visible in the module layout:
//! parse ([`front`]) → analyze ([`analyze`]) → check with Z3 ([`check`]) → rewrite
//! ([`transforms`]) → emit ([`edit`]); [`verify`] re-verifies with Viper/Silicon.

// Refusals carry whole diagnostics in `Err`; they are the cold path, and boxing them everywhere
// would only add noise. AST enums keep their large variants inline for the same reason.
#![allow(clippy::result_large_err, clippy::large_enum_variant)]

pub mod allocator;
pub mod cli;
pub mod review;

// The stages, re-exported under the names the CLI and the tests use (`alpine_rs::front::…`).
pub use analyze;
pub use check;
pub use diag;
pub use diag::codes;
pub use edit;
pub use front;
pub use lsp;
pub use sem;
pub use transforms;
pub use verify;
pub use viper;

/// Validation's defaults with what the later stages pass in: the linearization transform's
/// reader of matrix layouts (validation, in `sem`, cannot import `transforms`). Everything that
/// validates optimizer outputs starts from this.
pub fn validate_options() -> sem::ValidateOptions {
    sem::ValidateOptions {
        matrix_layout: transforms::registry::matrix_layout(),
        ..sem::ValidateOptions::default()
    }
}

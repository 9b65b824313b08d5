//! Re-verification through Viper (design: `shared/design/verification.md`).
//!
//! - [`backend`]: provisioning — cache directory, discovery of Java/Silicon/z3, `backend install`,
//!   `backend doctor`. All failures are [`backend::BackendError`]s (CLI exit code 3).
//! - [`silicon`]: running Silicon (batch driver or per-file), parsing its output, result cache.
//!
//! ```no_run
//! use verify::backend::BackendConfig;
//! use verify::silicon::{Backend, Verdict};
//!
//! let backend = Backend::discover(&BackendConfig::default())?;
//! let outcome = backend.verify_text("method m() { assert 1 + 1 == 2 }\n", 60);
//! match outcome.verdict {
//!     Verdict::Verified => {}
//!     Verdict::Failed(errors) => {
//!         for e in errors {
//!             // e.full_id, e.pos (the error node), e.reason_pos (batch mode only)
//!             println!("{} at {:?}: {}", e.full_id, e.pos, e.message);
//!         }
//!     }
//!     Verdict::Timeout => println!("inconclusive"),
//!     Verdict::Crash(why) => println!("backend failed: {why}"),
//! }
//! # Ok::<(), verify::backend::BackendError>(())
//! ```

// Refusals carry whole diagnostics in `Err` (the cold path); AST enums keep large variants
// inline. Boxing them would only add noise (the same allowance as every crate of the workspace).
#![allow(clippy::result_large_err, clippy::large_enum_variant)]

pub mod backend;
pub mod silicon;

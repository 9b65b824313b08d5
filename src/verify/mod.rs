//! Re-verification through Viper (design: `shared/design/verification.md`).
//!
//! - [`backend`]: provisioning — cache directory, discovery of Java/Silicon/z3, `backend install`,
//!   `backend doctor`.
//! - [`silicon`]: running Silicon (batch driver or per-file), parsing its output, result cache.

pub mod backend;
pub mod silicon;

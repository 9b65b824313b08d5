//! Codes of this area: see [`super`].

use super::{Code, ExitClass};
use crate::diag::Severity;

pub static CODES: &[Code] = &[];

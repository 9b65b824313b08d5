//! Sweep candidates: factors 2 and 3.

use crate::sweep::{Candidates, Choice, SweepSite};

pub fn candidates(_: &SweepSite) -> Candidates {
    Ok(["2", "3"].map(|k| Choice::new(vec![("factor", k.into())], None)).to_vec())
}

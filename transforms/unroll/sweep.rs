//! Sweep candidates: factors 1 and 2.

use crate::sweep::{Candidates, Choice, SweepSite};

pub fn candidates(_: &SweepSite) -> Candidates {
    Ok(["1", "2"].map(|k| Choice::new(vec![("factor", k.into())], None)).to_vec())
}

//! Affine permissions (optimizations.md §7d, as revised): a kernel may give back less than it
//! takes (`Σ Q_k <= Σ P_k` on a cell). VerCors verifies such kernels and Alpinist fuses them, so
//! fusion must too; only a post that claims more than its pre (A606) cannot verify.
//!
//! What a caller of the two kernels is known to hold on a cell follows from running them one
//! after the other: it gives kernel 1 its `P1`, gets `Q1` back, and must then still hold `P2`.
//! So it holds at least `max(P1, P1 + P2 - Q1)`, and never more than write. When kernel 1
//! returns everything (`Q1 = P1`) this is the hungrier kernel's `max(P1, P2)`; when it drops
//! permission that kernel 2 needs, kernel 2's share comes from the method's own state, which the
//! fused precondition then asks from the start.

use super::model::{Atom, Func};
use super::solver::{big, Analysis, Undecided, Witness};
use check::ctx as z3ctx;
use z3::ast::{Bool, Int};

impl Analysis<'_> {
    /// A cell where the total of `atoms` over all threads is above write (the witness compares
    /// the total with write).
    pub fn above_write(&mut self, atoms: &[&Atom]) -> Result<Option<Witness>, Undecided> {
        let (x, totals, scale) = self.cell_totals(&[atoms])?;
        let [total] = <[_; 1]>::try_from(totals).map_err(|_| Undecided::Unencodable)?;
        let write = big(&scale);
        let bad = total.gt(&write);
        self.cell_witness(x, (&total, &write), bad, &scale)
    }

    /// A cell where `fp`'s total is above `max(P1, P1 + P2 - Q1)`: more than a caller that runs
    /// the two kernels one after the other is known to hold there (the witness compares the
    /// total with that bound).
    pub fn above_caller(
        &mut self,
        fp: &[&Atom],
        p1: &[&Atom],
        q1: &[&Atom],
        p2: &[&Atom],
    ) -> Result<Option<Witness>, Undecided> {
        let (x, totals, scale) = self.cell_totals(&[fp, p1, q1, p2])?;
        let [f, a, q, b] = <[_; 4]>::try_from(totals).map_err(|_| Undecided::Unencodable)?;
        let c = z3ctx();
        let after = Int::sub(c, &[&Int::add(c, &[&a, &b]), &q]);
        let held = a.ge(&after).ite(&a, &after);
        let bad = f.gt(&held);
        self.cell_witness(x, (&f, &held), bad, &scale)
    }

    /// For every thread, every cell it holds through `q` it also holds through `by`.
    pub fn covers(&mut self, q: &[&Atom], by: &[&Atom]) -> Result<bool, Undecided> {
        let ts = self.fresh_threads("thread");
        let x = self.tr.fresh_int("cell");
        let mut any = |v: &[&Atom]| -> Result<Bool, Undecided> {
            let mut parts = Vec::new();
            for a in v {
                parts.push(self.local_cov(a, &ts, &x, false).ok_or(Undecided::Unencodable)?);
            }
            Ok(Bool::or(z3ctx(), &parts.iter().collect::<Vec<_>>()))
        };
        let (held, kept) = (any(q)?, any(by)?);
        Ok(self.sat(&[self.range(&ts), held, kept.not()])?.is_none())
    }
}

/// The conjuncts of kernel 1's functional post that stay framed where they are restated: each
/// array a conjunct mentions on which `q1` (kernel 1's post) holds cells must still be held, on
/// every one of those cells and for every thread, by each of `holders` (the fused post, the
/// barrier's ensures). A kernel that drops permission may leave nothing of a cell to the fused
/// post once kernel 2 took its share: the fact about it is then not restated (kernel 2's own
/// post says what the method learns about that cell).
pub(super) fn retain_framed(
    an: &mut Analysis,
    fs: Vec<Func>,
    q1: &[Atom],
    holders: &[&[Atom]],
) -> Result<Vec<Func>, Undecided> {
    let mut out = Vec::new();
    for f in fs {
        let mut framed = true;
        for arr in &f.arrays {
            let held: Vec<&Atom> = q1.iter().filter(|a| &a.array == arr).collect();
            if held.is_empty() {
                continue;
            }
            for h in holders {
                let by: Vec<&Atom> = h.iter().filter(|a| &a.array == arr).collect();
                if !an.covers(&held, &by)? {
                    framed = false;
                }
            }
        }
        if framed {
            out.push(f);
        }
    }
    Ok(out)
}

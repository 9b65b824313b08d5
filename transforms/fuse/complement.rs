//! Per-cell complements of the fusion solver: what is left of a permission on its cell after
//! other atoms took their amounts there (split out of `solver.rs`, same `Analysis`).

use super::lin::{Cond, Lin, Rel, Subst};
use super::model::{Atom, Frac};
use super::solver::*;
use check::translate::{Z3Bool, Z3Int};
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};
use z3::ast::Ast;

impl Analysis<'_> {
    // -----------------------------------------------------------------------------------------
    // Per-cell complements
    // -----------------------------------------------------------------------------------------

    /// What is left of `a` on its cell after `others` took their amounts there, as guarded
    /// copies of `a` (positive amounts only). Each of `others` covers a cell at most once
    /// (injective), so the amount taken on `a`'s cell is the sum of the fractions of the atoms
    /// that reach it; where that depends on the thread, `a` is split by a printed guard.
    pub fn complement(&mut self, a: &Atom, others: &[&Atom]) -> Result<Vec<Atom>, ComplementError> {
        let und = ComplementError::Undecided;
        let ts = self.fresh_threads("thread");
        let js = self.fresh_binders(a);
        let (g, x) =
            self.atom_at(a, &ts, &js).ok_or(ComplementError::Undecided(Undecided::Unencodable))?;
        let ctx = vec![self.range(&ts), g];
        let jpairs: Vec<(String, Z3Int)> =
            a.binders.iter().map(|(_, n)| n.clone()).zip(js.iter().cloned()).collect();
        let mut base = a.frac.clone();
        let mut open: Vec<(Cond, &Frac, Z3Bool)> = Vec::new();
        for s in others {
            let cov =
                self.global_cov(s, &x).ok_or(ComplementError::Undecided(Undecided::Unencodable))?;
            if self.valid(&ctx, &cov).map_err(und)? {
                base -= &s.frac;
                continue;
            }
            if self.valid(&ctx, &cov.not()).map_err(und)? {
                continue;
            }
            let cond = self.cov_text(s, a, &ts, &jpairs, &ctx).map_err(|e| match e {
                CovText::Undecided => ComplementError::Undecided(Undecided::Unknown),
                CovText::No => ComplementError::Inexpressible(s.print()),
            })?;
            open.push((cond, &s.frac, cov));
        }
        if open.len() > 4 {
            return Err(ComplementError::TooMany);
        }
        let mut out: Vec<(Vec<String>, Frac)> = Vec::new();
        let mut all_feasible_same = true;
        let mut first: Option<Frac> = None;
        for mask in (0u32..(1 << open.len())).rev() {
            let mut amount = base.clone();
            let mut lits = Vec::new();
            let mut zs = ctx.clone();
            for (i, (cond, f, cov)) in open.iter().enumerate() {
                if mask & (1 << i) != 0 {
                    amount -= *f;
                    lits.push(cond.text.clone());
                    zs.push(cov.clone());
                } else {
                    lits.push(cond.neg.clone());
                    zs.push(cov.not());
                }
            }
            let feasible = match self.sat(&zs) {
                Ok(m) => m.is_some(),
                Err(_) => true,
            };
            if !feasible {
                continue;
            }
            match &first {
                None => first = Some(amount.clone()),
                Some(f) if *f != amount => all_feasible_same = false,
                _ => {}
            }
            if amount.is_positive() {
                out.push((lits, amount));
            }
        }
        if all_feasible_same {
            return Ok(match first {
                Some(f) if f.is_positive() => vec![a.with_frac(f)],
                _ => Vec::new(),
            });
        }
        Ok(out.into_iter().map(|(lits, f)| a.restricted(&lits).with_frac(f)).collect())
    }

    /// The guard "some thread holds `s` on `a`'s cell", printed over `a`'s thread and binders,
    /// checked equivalent to the solver's condition before it is used.
    fn cov_text(
        &mut self,
        s: &Atom,
        a: &Atom,
        ts: &[Z3Int],
        jpairs: &[(String, Z3Int)],
        ctx: &[Z3Bool],
    ) -> Result<Cond, CovText> {
        let names = self.th.names.clone();
        let mut vars: Vec<&str> = names.iter().map(String::as_str).collect();
        vars.extend(a.binders.iter().map(|(_, n)| n.as_str()));
        let mut undecided = false;
        for (d, t2, pre) in self.candidates(s, a, &vars).ok_or(CovText::No)? {
            match self.cov_candidate(s, a, (d, &t2, pre), &vars, ts, jpairs, ctx) {
                Ok(c) => return Ok(c),
                Err(CovText::Undecided) => undecided = true,
                Err(CovText::No) => {}
            }
        }
        Err(if undecided { CovText::Undecided } else { CovText::No })
    }

    /// Candidate threads of `s` that reach `a`'s cell: `(dimension, its value, side conditions)`,
    /// the other dimensions keeping `a`'s values.
    ///
    /// One dimension: the index `k * t + r` is inverted, `t2 = (x - r) / k` (with `k | x - r`).
    /// Several: when both indices have the same literal thread coefficients, they differ by a
    /// residue `D`, and shifting one dimension by `D / k_d` is a candidate. Candidates are only
    /// guesses; [`Self::cov_candidate`] proves the printed guard equivalent before it is used.
    fn candidates(
        &self,
        s: &Atom,
        a: &Atom,
        vars: &[&str],
    ) -> Option<Vec<(usize, Lin, Vec<Cond>)>> {
        if !s.binders.is_empty() {
            return None;
        }
        let xe = self.parse(&a.index)?;
        let x = Lin::of(&xe, &a.index, None);
        let names: Vec<&str> = self.th.names.iter().map(String::as_str).collect();
        if names.len() == 1 {
            let (k, rest) = self.invertible(s)?;
            let mut diff = x.sub(&rest);
            let mut k = k;
            if k.is_negative() {
                k = -k;
                diff = diff.scale(&BigInt::from(-1));
            }
            if k.is_one() {
                return Some(vec![(0, diff, Vec::new())]);
            }
            let d = diff.print();
            let div = Cond::compare(
                &Lin::opaque(&format!("({d}) % {k}"), false),
                Rel::Eq,
                &Lin::default(),
                vars,
            );
            return Some(vec![(0, Lin::opaque(&format!("({d}) / {k}"), false), vec![div])]);
        }
        let se = self.parse(&s.index)?;
        let f = Lin::of(&se, &s.index, None);
        let mut rest_f = f.clone();
        let mut rest_x = x.clone();
        for n in &names {
            if f.coeff(n) != x.coeff(n) {
                return None;
            }
            rest_f = rest_f.without(n);
            rest_x = rest_x.without(n);
        }
        if rest_f.mentions(&names) || rest_x.mentions(&names) {
            return None;
        }
        let resid = rest_x.sub(&rest_f);
        let mut out = Vec::new();
        for (d, n) in names.iter().enumerate() {
            let k = f.coeff(n);
            if k.is_zero() {
                continue;
            }
            if let Some(delta) = resid.div_exact(&k) {
                out.push((d, Lin::opaque(n, true).add(&delta), Vec::new()));
            }
        }
        Some(out)
    }

    #[allow(clippy::too_many_arguments)]
    fn cov_candidate(
        &mut self,
        s: &Atom,
        a: &Atom,
        (d, t2, mut conds): (usize, &Lin, Vec<Cond>),
        vars: &[&str],
        ts: &[Z3Int],
        jpairs: &[(String, Z3Int)],
        ctx: &[Z3Bool],
    ) -> Result<Cond, CovText> {
        let t = self.th.names[d].clone();
        let lin_of = |an: &Self, text: &str| -> Result<Lin, CovText> {
            let e = an.parse(text).ok_or(CovText::No)?;
            Ok(Lin::of(&e, text, None))
        };
        let lo = lin_of(self, &self.th.lo_text[d].clone())?;
        let hi = lin_of(self, &self.th.hi_text[d].clone())?;
        conds.push(Cond::compare(&lo, Rel::Le, t2, vars));
        conds.push(Cond::compare(t2, Rel::Lt, &hi, vars));
        let sub = Subst { name: &t, value: t2 };
        for g in &s.guards {
            let ge = self.parse(g).ok_or(CovText::No)?;
            for c in ge.conjuncts() {
                conds.push(guard_cond(c, g, &sub, vars));
            }
        }
        // Drop what always holds for `a`'s threads; keep the rest, in order, once each.
        let mut kept: Vec<Cond> = Vec::new();
        for c in conds {
            if kept.contains(&c) {
                continue;
            }
            let z = self.bool_at(&c.text, ts, jpairs).ok_or(CovText::No)?;
            if !self.valid(ctx, &z).map_err(|_| CovText::Undecided)? {
                kept.push(c);
            }
        }
        let cond = match kept.len() {
            0 => return Err(CovText::No),
            1 => kept.remove(0),
            _ => Cond::opaque(kept.iter().map(|c| c.text.clone()).collect::<Vec<_>>().join(" && ")),
        };
        // The printed guard must mean exactly what the solver's coverage condition means.
        let z = self.bool_at(&cond.text, ts, jpairs).ok_or(CovText::No)?;
        let js: Vec<Z3Int> = jpairs.iter().map(|(_, j)| j.clone()).collect();
        let (_, xz) = self.atom_at(a, ts, &js).ok_or(CovText::No)?;
        let cov = self.global_cov(s, &xz).ok_or(CovText::No)?;
        if !self.valid(ctx, &z._eq(&cov)).map_err(|_| CovText::Undecided)? {
            return Err(CovText::No);
        }
        Ok(cond)
    }
}

/// Whether a coverage could be printed: undecided by the solver, or not expressible.
enum CovText {
    Undecided,
    No,
}

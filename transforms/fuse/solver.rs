//! The symbolic questions of fusion, answered by Z3 over the thread range (optimizations.md §7d).
//!
//! A thread is a vector of symbolic integers (one per iterator), constrained to the kernels'
//! common range, so no concrete length or thread count is needed. An atom *covers* a cell `x`
//! for thread `t` when some binder values satisfy its guards and its index equals `x`.
//! Permission amounts are rationals; each query scales them by the least common denominator of
//! the atoms involved, so all arithmetic is over integers.

use super::lin::{Cond, Lin, Rel, Subst};
use super::model::{frac_text, Atom, Frac};
use check::translate::{Term, Translator, Z3Bool, Z3Int};
use check::{self, ctx as z3ctx, model_of, Counterexample};
use front::ast::*;
use front::exprtext::subst_var;
use front::parser::parse_expr_text;
use front::Dialect;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};
use std::cell::RefCell;
use z3::ast::{Ast, Bool, Int};
use z3::{Params, SatResult, Tactic};

/// The thread space of the fused kernel: one iterator per dimension.
pub(super) struct Threads {
    pub names: Vec<String>,
    pub lo: Vec<Z3Int>,
    pub hi: Vec<Z3Int>,
    /// Bound texts (renamed), for printing guards.
    pub lo_text: Vec<String>,
    pub hi_text: Vec<String>,
}

/// `Some(model)` if `facts` plus `extra` are satisfiable, `None` if not.
///
/// Quantified coverage conditions (multi-dimensional or quantified atoms) can defeat the default
/// solver; such queries, and undecided ones, go to quantifier elimination first, which decides
/// linear integer arithmetic.
pub(super) fn sat_with(
    tr: &Translator,
    facts: &[Z3Bool],
    extra: &[Z3Bool],
    timeout: u32,
) -> Result<Option<Counterexample>, Undecided> {
    let mut all = facts.to_vec();
    all.extend(extra.iter().cloned());
    if extra.iter().any(has_quantifier) {
        return sat_qe(tr, &all, timeout);
    }
    // `satisfiable` folds unsat and unknown together; `prove(false)` tells them apart.
    match check::prove(tr, &all, &Bool::from_bool(z3ctx(), false), timeout) {
        check::Answer::Proved => Ok(None),
        check::Answer::Refuted(cx) => Ok(Some(cx)),
        check::Answer::Unknown(_) => sat_qe(tr, &all, timeout),
    }
}

fn sat_qe(
    tr: &Translator,
    all: &[Z3Bool],
    timeout: u32,
) -> Result<Option<Counterexample>, Undecided> {
    let c = z3ctx();
    let s = Tactic::new(c, "qe").and_then(&Tactic::new(c, "smt")).solver();
    let mut p = Params::new(c);
    p.set_u32("timeout", timeout.max(1));
    s.set_params(&p);
    for f in all {
        s.assert(f);
    }
    match s.check() {
        SatResult::Unsat => Ok(None),
        SatResult::Sat => Ok(Some(model_of(tr, &s))),
        SatResult::Unknown => Err(Undecided::Unknown),
    }
}

/// A model whose values do not depend on the solver's history: each objective (a user-visible
/// constant, by label), in order, is pushed down to its least value and then fixed. The solver
/// is shared by every query of a thread, so a plain model may differ between runs that asked
/// different questions before; diagnostics must not. An objective without a least value (or an
/// undecided step) keeps the value found so far.
pub(super) fn canonical(
    tr: &Translator,
    facts: &[Z3Bool],
    extra: &[Z3Bool],
    objectives: &[(String, Z3Int)],
    timeout: u32,
) -> Result<Option<Counterexample>, Undecided> {
    let Some(mut cx) = sat_with(tr, facts, extra, timeout)? else {
        return Ok(None);
    };
    let mut fixed = extra.to_vec();
    let value = |cx: &Counterexample, label: &str| -> Option<BigInt> {
        cx.get(label).and_then(|v| int_text(v).parse().ok())
    };
    for (label, v) in objectives {
        let Some(mut hi) = value(&cx, label) else {
            continue;
        };
        let at_most = |b: &BigInt| v.le(&big(b));
        // Find a bound below which there is no model, doubling the step.
        let mut lo: Option<BigInt> = None;
        let mut step = BigInt::one();
        for _ in 0..24 {
            let cand = &hi - &step;
            let mut q = fixed.clone();
            q.push(at_most(&cand));
            match sat_with(tr, facts, &q, timeout) {
                Ok(None) => {
                    lo = Some(cand);
                    break;
                }
                Ok(Some(m)) => match value(&m, label) {
                    Some(x) => {
                        hi = x;
                        cx = m;
                        step *= 2;
                    }
                    None => break,
                },
                Err(_) => break,
            }
        }
        if let Some(mut lo) = lo {
            // Binary search: no model at `lo`, one at `hi`.
            while &hi - &lo > BigInt::one() {
                let mid: BigInt = (&lo + &hi) / 2;
                let mut q = fixed.clone();
                q.push(at_most(&mid));
                match sat_with(tr, facts, &q, timeout) {
                    Ok(None) => lo = mid,
                    Ok(Some(m)) => match value(&m, label) {
                        Some(x) => {
                            hi = x;
                            cx = m;
                        }
                        None => break,
                    },
                    Err(_) => break,
                }
            }
        }
        fixed.push(v._eq(&big(&hi)));
    }
    // One model with every objective fixed, so the other values agree with them.
    Ok(Some(sat_with(tr, facts, &fixed, timeout)?.unwrap_or(cx)))
}

/// Whether `lhs` is a sub-multiset of `rhs` (with `exact`, the same multiset), comparing atoms
/// by structure, and whatever `rhs` has besides is a non-negative amount. Then on every cell
/// and for every thread the total of `lhs` is at most (exactly) that of `rhs`, whatever the
/// atoms cover, so no witness exists and the solver need not be asked. The self-checks compare
/// a fused contract with the atoms it was assembled from, so this is their common case.
fn included(lhs: &[&Atom], rhs: &[&Atom], exact: bool) -> bool {
    let mut left: Vec<&Atom> = rhs.to_vec();
    for a in lhs {
        match left.iter().position(|b| a.same_as(b)) {
            Some(i) => {
                left.swap_remove(i);
            }
            None => return false,
        }
    }
    if exact {
        left.is_empty()
    } else {
        left.iter().all(|b| !b.frac.is_negative())
    }
}

/// A question the solver could not answer: unknown or timed out (A0020), or a pattern that
/// cannot be encoded for it (A604).
#[derive(Clone, Copy, Debug)]
pub(super) enum Undecided {
    Unknown,
    Unencodable,
}

/// A cell (and thread) where two permission totals compare the wrong way.
#[derive(Debug)]
pub(super) struct Witness {
    pub cell: String,
    pub threads: Vec<(String, String)>,
    pub lhs: Frac,
    pub rhs: Frac,
}

impl Witness {
    pub fn describe(&self, array: &str) -> String {
        let th = if self.threads.is_empty() {
            String::new()
        } else {
            let parts: Vec<String> =
                self.threads.iter().map(|(n, v)| format!("{n} = {v}")).collect();
            format!(" for thread {}", parts.join(", "))
        };
        format!("at {array}[{}]{th}", self.cell)
    }
}

/// Why a per-cell complement cannot be printed.
#[derive(Debug)]
pub(super) enum ComplementError {
    Undecided(Undecided),
    /// The atom (printed) whose coverage cannot be written as a guard.
    Inexpressible(String),
    TooMany,
}

pub(super) struct Analysis<'a> {
    pub tr: &'a mut Translator,
    pub facts: Vec<Z3Bool>,
    pub th: Threads,
    pub dialect: Dialect,
    pub timeout: u32,
    /// While collecting ([`Analysis::any_witness`]): the witness queries asked so far, each
    /// answered "no witness" without the solver.
    pub pending: RefCell<Option<Vec<Z3Bool>>>,
}

type Saved = Vec<(String, Option<Term>)>;

impl Analysis<'_> {
    pub(super) fn parse(&self, s: &str) -> Option<Expr> {
        parse_expr_text(s, self.dialect).ok()
    }

    pub fn fresh_threads(&mut self, hint: &str) -> Vec<Z3Int> {
        (0..self.th.names.len()).map(|_| self.tr.fresh_int(hint)).collect()
    }

    /// Thread constants whose values show up in counterexamples under the iterator names.
    fn named_threads(&mut self, hint: &str) -> Vec<(String, Z3Int)> {
        let names = self.th.names.clone();
        names
            .iter()
            .map(|n| {
                let label = format!("{hint} {n}");
                (n.clone(), named_int(self.tr, &label))
            })
            .collect()
    }

    pub fn range(&self, ts: &[Z3Int]) -> Z3Bool {
        let c = z3ctx();
        let parts: Vec<Z3Bool> = ts
            .iter()
            .enumerate()
            .flat_map(|(k, t)| [self.th.lo[k].le(t), t.lt(&self.th.hi[k])])
            .collect();
        Bool::and(c, &parts.iter().collect::<Vec<_>>())
    }

    fn bind(&mut self, pairs: Vec<(String, Z3Int)>) -> Saved {
        pairs
            .into_iter()
            .map(|(n, t)| {
                let prev = self.tr.env.bound.insert(n.clone(), Term::Int(t));
                (n, prev)
            })
            .collect()
    }

    fn unbind(&mut self, saved: Saved) {
        for (n, p) in saved.into_iter().rev() {
            match p {
                Some(p) => {
                    self.tr.env.bound.insert(n, p);
                }
                None => {
                    self.tr.env.bound.remove(&n);
                }
            }
        }
    }

    fn thread_pairs(&self, ts: &[Z3Int]) -> Vec<(String, Z3Int)> {
        self.th.names.iter().cloned().zip(ts.iter().cloned()).collect()
    }

    /// Translate a boolean text with the thread variables bound to `ts` (and extra bindings).
    pub(super) fn bool_at(
        &mut self,
        text: &str,
        ts: &[Z3Int],
        extra: &[(String, Z3Int)],
    ) -> Option<Z3Bool> {
        let e = self.parse(text)?;
        let mut pairs = self.thread_pairs(ts);
        pairs.extend(extra.iter().cloned());
        let saved = self.bind(pairs);
        let r = self.tr.bool(&e).ok();
        self.unbind(saved);
        r
    }

    /// The guards and index of `a` for thread `ts` and binder values `js`.
    pub(super) fn atom_at(
        &mut self,
        a: &Atom,
        ts: &[Z3Int],
        js: &[Z3Int],
    ) -> Option<(Z3Bool, Z3Int)> {
        let mut pairs = self.thread_pairs(ts);
        pairs.extend(a.binders.iter().map(|(_, n)| n.clone()).zip(js.iter().cloned()));
        let saved = self.bind(pairs);
        let res = (|| {
            let mut parts = Vec::new();
            for g in &a.guards {
                let e = self.parse(g)?;
                parts.push(self.tr.bool(&e).ok()?);
            }
            let i = self.parse(&a.index)?;
            let idx = self.tr.int(&i).ok()?;
            Some((Bool::and(z3ctx(), &parts.iter().collect::<Vec<_>>()), idx))
        })();
        self.unbind(saved);
        res
    }

    pub(super) fn fresh_binders(&mut self, a: &Atom) -> Vec<Z3Int> {
        a.binders.iter().map(|(_, n)| self.tr.fresh_int(n)).collect()
    }

    /// Thread `ts` holds `a` on cell `x`: `∃ j⃗. guards ∧ index == x` (binders free when `free`,
    /// for witness encodings).
    pub fn local_cov(&mut self, a: &Atom, ts: &[Z3Int], x: &Z3Int, free: bool) -> Option<Z3Bool> {
        let js = self.fresh_binders(a);
        let (g, idx) = self.atom_at(a, ts, &js)?;
        let body = Bool::and(z3ctx(), &[&g, &idx._eq(x)]);
        Some(exists(&js, body, free))
    }

    /// Some thread holds `a` on cell `x`. Quantifier-free when the index can be inverted.
    pub fn global_cov(&mut self, a: &Atom, x: &Z3Int) -> Option<Z3Bool> {
        if let Some(b) = self.inverse_cov(a, x) {
            return Some(b);
        }
        let ts = self.fresh_threads("t");
        let js = self.fresh_binders(a);
        let (g, idx) = self.atom_at(a, &ts, &js)?;
        let body = Bool::and(z3ctx(), &[&self.range(&ts), &g, &idx._eq(x)]);
        let mut vars = ts;
        vars.extend(js);
        Some(exists(&vars, body, false))
    }

    /// For a one-dimensional atom without binders whose index is `k * t + r`: the thread is
    /// `(x - r) / k`, so coverage is a quantifier-free condition on `x`.
    fn inverse_cov(&mut self, a: &Atom, x: &Z3Int) -> Option<Z3Bool> {
        let (k, rest) = self.invertible(a)?;
        let c = z3ctx();
        let re = self.parse(&rest.print())?;
        let r = self.tr.int(&re).ok()?;
        let kz = big(&k);
        let d = Int::sub(c, &[x, &r]);
        let t2 = d.div(&kz);
        let mut parts = vec![self.range(std::slice::from_ref(&t2))];
        if !k.abs().is_one() {
            parts.push(d.modulo(&kz)._eq(&Int::from_i64(c, 0)));
        }
        let (g, _) = self.atom_at(a, std::slice::from_ref(&t2), &[])?;
        parts.push(g);
        Some(Bool::and(c, &parts.iter().collect::<Vec<_>>()))
    }

    /// `(k, r)` with index `k * t + r`, `r` free of `t`, for one-dimensional atoms without binders.
    pub(super) fn invertible(&self, a: &Atom) -> Option<(BigInt, Lin)> {
        if self.th.names.len() != 1 || !a.binders.is_empty() {
            return None;
        }
        let t = self.th.names[0].as_str();
        let e = self.parse(&a.index)?;
        let f = Lin::of(&e, &a.index, None);
        let k = f.coeff(t);
        let rest = f.without(t);
        if k.is_zero() || rest.mentions(&[t]) {
            return None;
        }
        Some((k, rest))
    }

    fn scale_of(atoms: &[&Atom]) -> BigInt {
        atoms.iter().fold(BigInt::one(), |l, a| l.lcm(a.frac.denom()))
    }

    fn amount(f: &Frac, scale: &BigInt) -> Z3Int {
        let v = f.numer() * (scale / f.denom());
        big(&v)
    }

    /// `Σ_α ite(cov_α, π_α · scale, 0)`.
    fn sum(covs: &[(Z3Bool, &Frac)], scale: &BigInt) -> Z3Int {
        let c = z3ctx();
        let zero = Int::from_i64(c, 0);
        let parts: Vec<Z3Int> =
            covs.iter().map(|(b, f)| b.ite(&Self::amount(f, scale), &zero)).collect();
        if parts.is_empty() {
            return zero;
        }
        Int::add(c, &parts.iter().collect::<Vec<_>>())
    }

    fn local_sum(
        &mut self,
        atoms: &[&Atom],
        ts: &[Z3Int],
        x: &Z3Int,
        scale: &BigInt,
    ) -> Option<Z3Int> {
        let mut covs = Vec::new();
        for a in atoms {
            covs.push((self.local_cov(a, ts, x, false)?, &a.frac));
        }
        Some(Self::sum(&covs, scale))
    }

    /// A fresh cell `x` and the total of each group over all threads at `x`, in units of the
    /// returned scale (one for all groups, so the totals compare).
    pub(super) fn cell_totals(
        &mut self,
        groups: &[&[&Atom]],
    ) -> Result<(Z3Int, Vec<Z3Int>, BigInt), Undecided> {
        let all: Vec<&Atom> = groups.iter().flat_map(|g| g.iter().copied()).collect();
        let scale = Self::scale_of(&all);
        let x = named_int(self.tr, "the cell");
        let totals = groups
            .iter()
            .map(|g| self.global_sum(g, &x, &scale).ok_or(Undecided::Unencodable))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((x, totals, scale))
    }

    fn global_sum(&mut self, atoms: &[&Atom], x: &Z3Int, scale: &BigInt) -> Option<Z3Int> {
        let mut covs = Vec::new();
        for a in atoms {
            covs.push((self.global_cov(a, x)?, &a.frac));
        }
        Some(Self::sum(&covs, scale))
    }

    /// `Some(model)` if the facts plus `extra` are satisfiable, `None` if not.
    pub fn sat(&self, extra: &[Z3Bool]) -> Result<Option<Counterexample>, Undecided> {
        if self.collect(extra) {
            return Ok(None);
        }
        sat_with(self.tr, &self.facts, extra, self.timeout)
    }

    /// Like [`Self::sat`], with the model made canonical: each objective, in order, at its least
    /// value (see [`canonical`]).
    fn sat_min(
        &self,
        extra: &[Z3Bool],
        objectives: &[(String, Z3Int)],
    ) -> Result<Option<Counterexample>, Undecided> {
        if self.collect(extra) {
            return Ok(None);
        }
        canonical(self.tr, &self.facts, extra, objectives, self.timeout)
    }

    /// While collecting, records the query `extra` and says so (it is then answered "no
    /// model").
    fn collect(&self, extra: &[Z3Bool]) -> bool {
        match self.pending.borrow_mut().as_mut() {
            Some(qs) => {
                qs.push(Bool::and(z3ctx(), &extra.iter().collect::<Vec<_>>()));
                true
            }
            None => false,
        }
    }

    /// Runs `checks` (code whose queries usually find no model: witness searches, injectivity,
    /// coverage) with one solver call. First every query is collected instead of asked and
    /// answered "no model"; if the facts refute all of them at once, each of them really has
    /// no model, so that run followed the very path a real one would, and its result is the
    /// answer. Otherwise (some query has a model, the joint question is undecided, or
    /// collecting stopped with an error) `checks` runs again, asking each query, so results
    /// and diagnostics are exactly those of the queries one by one. The joint query is sound
    /// because each query only adds constraints of its own to the shared facts: their
    /// disjunction is satisfiable exactly when one of them is.
    pub fn any_witness<T, E>(
        &mut self,
        mut checks: impl FnMut(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        if self.pending.borrow().is_some() {
            // Already collecting: the enclosing call asks these queries with its own.
            return checks(self);
        }
        *self.pending.borrow_mut() = Some(Vec::new());
        let dry = checks(self);
        let qs = self.pending.borrow_mut().take().unwrap_or_default();
        if let Ok(v) = dry {
            if qs.is_empty() {
                return Ok(v);
            }
            let any = Bool::or(z3ctx(), &qs.iter().collect::<Vec<_>>());
            if let Ok(None) = self.sat(&[any]) {
                return Ok(v);
            }
        }
        checks(self)
    }

    pub(super) fn valid(&self, hyps: &[Z3Bool], goal: &Z3Bool) -> Result<bool, Undecided> {
        let mut all = hyps.to_vec();
        all.push(goal.not());
        Ok(self.sat(&all)?.is_none())
    }

    /// Can the atoms' total at some cell exceed 1 (witness encoding, quantifier-free)?
    pub fn may_exceed_one(&mut self, atoms: &[&Atom]) -> Result<bool, Undecided> {
        let c = z3ctx();
        let scale = Self::scale_of(atoms);
        let x = self.tr.fresh_int("cell");
        let mut cons = Vec::new();
        let mut covs = Vec::new();
        for a in atoms {
            let ts = self.fresh_threads("thread");
            let b = Bool::fresh_const(c, "w");
            let cov = self.local_cov(a, &ts, &x, true).ok_or(Undecided::Unencodable)?;
            cons.push(b.implies(&Bool::and(c, &[&self.range(&ts), &cov])));
            covs.push((b, &a.frac));
        }
        let total = Self::sum(&covs, &scale);
        cons.push(total.gt(&big(&scale)));
        Ok(self.sat(&cons)?.is_some())
    }

    /// Is some cell held by a thread through `p` and by a thread through `q`?
    pub fn overlap(&mut self, p: &[&Atom], q: &[&Atom]) -> Result<bool, Undecided> {
        let x = self.tr.fresh_int("cell");
        let side = |an: &mut Self, v: &[&Atom]| -> Result<Z3Bool, Undecided> {
            let mut parts = Vec::new();
            for a in v {
                let ts = an.fresh_threads("thread");
                let cov = an.local_cov(a, &ts, &x, true).ok_or(Undecided::Unencodable)?;
                parts.push(Bool::and(z3ctx(), &[&an.range(&ts), &cov]));
            }
            Ok(Bool::or(z3ctx(), &parts.iter().collect::<Vec<_>>()))
        };
        let a = side(self, p)?;
        let b = side(self, q)?;
        Ok(self.sat(&[a, b])?.is_some())
    }

    /// Two different threads never hold the same cell through `a`.
    pub fn injective(&mut self, a: &Atom) -> Result<bool, Undecided> {
        let t1 = self.fresh_threads("thread");
        let t2 = self.fresh_threads("thread");
        let x = self.tr.fresh_int("cell");
        let c1 = self.local_cov(a, &t1, &x, false).ok_or(Undecided::Unencodable)?;
        let c2 = self.local_cov(a, &t2, &x, false).ok_or(Undecided::Unencodable)?;
        let differ: Vec<Z3Bool> = t1.iter().zip(&t2).map(|(a, b)| a._eq(b).not()).collect();
        let q = [
            self.range(&t1),
            self.range(&t2),
            c1,
            c2,
            Bool::or(z3ctx(), &differ.iter().collect::<Vec<_>>()),
        ];
        // Binder-level injectivity within one thread is left to the input's own verification.
        Ok(self.sat(&q)?.is_none())
    }

    /// Does `a` have a write atom whose guard some thread satisfies?
    pub fn writes(&mut self, atoms: &[Atom]) -> Result<bool, Undecided> {
        for a in atoms.iter().filter(|a| a.is_write()) {
            let ts = self.fresh_threads("thread");
            let js = self.fresh_binders(a);
            let (g, _) = self.atom_at(a, &ts, &js).ok_or(Undecided::Unencodable)?;
            if self.sat(&[self.range(&ts), g])?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// For every thread, do the two sets cover the same cells?
    pub fn same_cells(&mut self, p: &[&Atom], q: &[&Atom]) -> Result<bool, Undecided> {
        let ts = self.fresh_threads("thread");
        let x = self.tr.fresh_int("cell");
        let any = |an: &mut Self, v: &[&Atom]| -> Result<Z3Bool, Undecided> {
            let mut parts = Vec::new();
            for a in v {
                parts.push(an.local_cov(a, &ts, &x, false).ok_or(Undecided::Unencodable)?);
            }
            Ok(Bool::or(z3ctx(), &parts.iter().collect::<Vec<_>>()))
        };
        let a = any(self, p)?;
        let b = any(self, q)?;
        Ok(self.sat(&[self.range(&ts), a._eq(&b).not()])?.is_none())
    }

    /// A cell where the total of `lhs` over all threads is above (or, with `exact`, different
    /// from) the total of `rhs`.
    pub fn global_violation(
        &mut self,
        lhs: &[&Atom],
        rhs: &[&Atom],
        exact: bool,
    ) -> Result<Option<Witness>, Undecided> {
        if included(lhs, rhs, exact) {
            return Ok(None);
        }
        let (x, totals, scale) = self.cell_totals(&[lhs, rhs])?;
        let [l, r] = <[Z3Int; 2]>::try_from(totals).map_err(|_| Undecided::Unencodable)?;
        let bad = if exact { l._eq(&r).not() } else { l.gt(&r) };
        self.cell_witness(x, (&l, &r), bad, &scale)
    }

    /// A smallest cell `x` where `bad` holds, with the two totals it compares named for the
    /// counterexample.
    pub(super) fn cell_witness(
        &mut self,
        x: Z3Int,
        (lhs, rhs): (&Z3Int, &Z3Int),
        bad: Z3Bool,
        scale: &BigInt,
    ) -> Result<Option<Witness>, Undecided> {
        let (lv, rv) = (named_int(self.tr, "lhs total"), named_int(self.tr, "rhs total"));
        let q = [lv._eq(lhs), rv._eq(rhs), bad];
        let obj = [("the cell".to_string(), x), ("lhs total".into(), lv), ("rhs total".into(), rv)];
        Ok(self.sat_min(&q, &obj)?.map(|cx| witness(&cx, "the cell", &[], scale)))
    }

    /// A thread and a cell where the thread's `lhs` amounts add up to more than its `rhs`.
    pub fn local_violation(
        &mut self,
        lhs: &[&Atom],
        rhs: &[&Atom],
    ) -> Result<Option<Witness>, Undecided> {
        if included(lhs, rhs, false) {
            return Ok(None);
        }
        let all: Vec<&Atom> = lhs.iter().chain(rhs).copied().collect();
        let scale = Self::scale_of(&all);
        let named = self.named_threads("thread");
        let ts: Vec<Z3Int> = named.iter().map(|(_, t)| t.clone()).collect();
        let x = named_int(self.tr, "the cell");
        let l = self.local_sum(lhs, &ts, &x, &scale).ok_or(Undecided::Unencodable)?;
        let r = self.local_sum(rhs, &ts, &x, &scale).ok_or(Undecided::Unencodable)?;
        let (lv, rv) = (named_int(self.tr, "lhs total"), named_int(self.tr, "rhs total"));
        let q = [self.range(&ts), lv._eq(&l), rv._eq(&r), l.gt(&r)];
        let labels: Vec<(String, String)> =
            named.iter().map(|(n, _)| (n.clone(), format!("thread {n}"))).collect();
        let mut obj: Vec<(String, Z3Int)> =
            named.iter().map(|(n, t)| (format!("thread {n}"), t.clone())).collect();
        obj.push(("the cell".into(), x));
        obj.push(("lhs total".into(), lv));
        obj.push(("rhs total".into(), rv));
        Ok(self.sat_min(&q, &obj)?.map(|cx| witness(&cx, "the cell", &labels, &scale)))
    }

    /// The inter-block question for one array: a cell touched by `t1` through `k1` and by `t2`
    /// through `k2`, one of them writing, with `t1 / ts != t2 / ts`. One-dimensional only.
    pub fn cross_block(
        &mut self,
        k1: &[&Atom],
        k2: &[&Atom],
        block: &Z3Int,
    ) -> Result<Option<(String, String, String)>, Undecided> {
        let c = z3ctx();
        let t1 = named_int(self.tr, "thread in kernel 1");
        let t2 = named_int(self.tr, "thread in kernel 2");
        let x = named_int(self.tr, "cell");
        let cov = |an: &mut Self, v: &[&Atom], t: &Z3Int, w: bool| -> Result<Z3Bool, Undecided> {
            let mut parts = Vec::new();
            for a in v.iter().filter(|a| !w || a.is_write()) {
                parts.push(
                    an.local_cov(a, std::slice::from_ref(t), &x, false)
                        .ok_or(Undecided::Unencodable)?,
                );
            }
            Ok(Bool::or(c, &parts.iter().collect::<Vec<_>>()))
        };
        let a1 = cov(self, k1, &t1, false)?;
        let w1 = cov(self, k1, &t1, true)?;
        let a2 = cov(self, k2, &t2, false)?;
        let w2 = cov(self, k2, &t2, true)?;
        let conflict = Bool::or(c, &[&Bool::and(c, &[&w1, &a2]), &Bool::and(c, &[&a1, &w2])]);
        let q = [
            self.range(std::slice::from_ref(&t1)),
            self.range(std::slice::from_ref(&t2)),
            conflict,
            t1.div(block)._eq(&t2.div(block)).not(),
        ];
        let obj = [
            ("cell".to_string(), x),
            ("thread in kernel 1".into(), t1),
            ("thread in kernel 2".into(), t2),
        ];
        Ok(self.sat_min(&q, &obj)?.map(|cx| {
            let pick = |n: &str| cx.get(n).map(int_text).unwrap_or_else(|| "?".into());
            (pick("thread in kernel 1"), pick("thread in kernel 2"), pick("cell"))
        }))
    }
}

/// One guard conjunct of another atom with its thread variable replaced, normalised when it
/// is a linear comparison.
pub(super) fn guard_cond(c: &Expr, src: &str, sub: &Subst, vars: &[&str]) -> Cond {
    if let ExprKind::Binary(op, l, r) = &c.kind {
        let arith = |e: &Expr| {
            matches!(
                e.kind,
                ExprKind::Int(_)
                    | ExprKind::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, ..)
                    | ExprKind::Unary(UnOp::Neg, _)
            )
        };
        if let Some(rel) = Rel::of(*op) {
            let ordered = !matches!(rel, Rel::Eq | Rel::Ne);
            if ordered || arith(l) || arith(r) {
                return Cond::compare(
                    &Lin::of(l, src, Some(sub)),
                    rel,
                    &Lin::of(r, src, Some(sub)),
                    vars,
                );
            }
        }
    }
    Cond::opaque(subst_var(src, c, sub.name, &sub.value.print()))
}

/// An integer literal of any size.
pub(super) fn big(v: &BigInt) -> Z3Int {
    Int::from_str(z3ctx(), &v.to_string()).unwrap_or_else(|| Int::from_i64(z3ctx(), 0))
}

fn exists(vars: &[Z3Int], body: Z3Bool, free: bool) -> Z3Bool {
    if vars.is_empty() || free {
        body
    } else {
        let vs: Vec<&dyn Ast<'static>> = vars.iter().map(|j| j as &dyn Ast<'static>).collect();
        z3::ast::exists_const(z3ctx(), &vs, &[], &body)
    }
}

/// An integer constant that shows up in counterexamples under `name`.
pub(super) fn named_int(tr: &mut Translator, name: &str) -> Z3Int {
    match tr.var(name) {
        Term::Int(i) => i,
        _ => tr.fresh_int(name),
    }
}

/// Does the term contain a quantifier? (Walks the term: printing it, as this once did, cost
/// most of fusion's time.)
fn has_quantifier(b: &Z3Bool) -> bool {
    check::has_quantifier(b)
}

/// Z3 prints negative integers as `(- 3)`.
fn int_text(s: &str) -> String {
    let t = s.trim();
    match t.strip_prefix("(-").and_then(|r| r.strip_suffix(')')) {
        Some(v) => format!("-{}", v.trim()),
        None => t.to_string(),
    }
}

fn witness(
    cx: &Counterexample,
    cell: &str,
    threads: &[(String, String)],
    scale: &BigInt,
) -> Witness {
    let total = |n: &str| -> Frac {
        cx.get(n)
            .map(int_text)
            .and_then(|v| v.parse::<BigInt>().ok())
            .map(|v| Frac::new(v, scale.clone()))
            .unwrap_or_default()
    };
    Witness {
        cell: cx.get(cell).map(int_text).unwrap_or_else(|| "?".into()),
        threads: threads
            .iter()
            .map(|(n, label)| {
                (n.clone(), cx.get(label).map(int_text).unwrap_or_else(|| "?".into()))
            })
            .collect(),
        lhs: total("lhs total"),
        rhs: total("rhs total"),
    }
}

/// `1\2`-style text of an amount (`0` for none).
pub(super) fn amount_text(f: &Frac) -> String {
    if f.is_zero() {
        "0".into()
    } else {
        frac_text(f)
    }
}

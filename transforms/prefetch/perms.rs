//! Permission atoms of a segment precondition and the load guard they give (optimizations.md
//! §4(d)4), and the array access path a location belongs to (§4(d)1).

use crate::Ctx;
use analyze::facts::Facts;
use check::translate::{Z3Bool, Z3Int};
use front::ast::*;
use front::exprtext::subst_names;
use front::printer::print_expr;
use front::Dialect;
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use std::collections::BTreeMap;
use z3::ast::{Ast, Bool};

/// The prefetched array: a name (or `this.f`), or a row `m[i]` of an array of arrays.
pub(super) struct ArrPath {
    /// The variable or field holding the array (of arrays).
    pub(super) base: String,
    /// The row index, for a row of an array of arrays.
    pub(super) row: Option<Expr>,
}

impl ArrPath {
    /// The path of `e`: `a`, `this.a` or `m[i]` (`m` a name or `this.m`); None otherwise.
    pub(super) fn of(e: &Expr) -> Option<ArrPath> {
        match &e.kind {
            ExprKind::Name(id) => Some(ArrPath { base: id.name.clone(), row: None }),
            ExprKind::Field(r, f) if matches!(r.kind, ExprKind::This) => {
                Some(ArrPath { base: f.name.clone(), row: None })
            }
            ExprKind::Index(m, i) => {
                let inner = ArrPath::of(m)?;
                if inner.row.is_some() {
                    return None;
                }
                Some(ArrPath { base: inner.base, row: Some((**i).clone()) })
            }
            _ => None,
        }
    }

    /// If `a` (the array operand of an index expression) is an array of this path's kind:
    /// `Some(row index of a)` (`Some(None)` for a one-dimensional path).
    pub(super) fn row_of<'e>(&self, a: &'e Expr) -> Option<Option<&'e Expr>> {
        match (&self.row, &a.kind) {
            (None, _) => base_is(a, &self.base).then_some(None),
            (Some(_), ExprKind::Index(m, ri)) if base_is(m, &self.base) => Some(Some(ri)),
            _ => None,
        }
    }

    /// The solver's `row == path row && idx == p` for a cell `…[row][idx]`; None when a part
    /// cannot be encoded.
    pub(super) fn cell_eq(
        &self,
        f: &mut Facts,
        row: Option<&Expr>,
        idx: &Expr,
        pt: &Z3Int,
    ) -> Option<Z3Bool> {
        let eq = f.tr.int(idx).ok()?._eq(pt);
        match (&self.row, row) {
            (Some(r), Some(ri)) => {
                let a = f.tr.int(r).ok()?;
                let b = f.tr.int(ri).ok()?;
                Some(Bool::and(check::ctx(), &[&a._eq(&b), &eq]))
            }
            (None, None) => Some(eq),
            _ => None,
        }
    }
}

fn base_is(a: &Expr, base: &str) -> bool {
    match &a.kind {
        ExprKind::Name(id) => id.name == base,
        ExprKind::Field(r, f) => matches!(r.kind, ExprKind::This) && f.name == base,
        _ => false,
    }
}

/// A model for users: versioned names (`tid (version 1002)`) read as the plain name, the last
/// version wins, and bare array references (`a = 0`) are dropped.
pub(super) fn clean_model(m: &str) -> String {
    let mut out: Vec<(String, String)> = Vec::new();
    for part in m.split(", ") {
        let Some((k, v)) = part.split_once(" = ") else {
            continue;
        };
        let k = k.split(" (version").next().unwrap_or(k).to_string();
        out.retain(|(x, _)| *x != k);
        out.push((k, v.to_string()));
    }
    out.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>().join(", ")
}

pub(super) fn paren(s: &str) -> String {
    if s.contains(' ') {
        format!("({s})")
    } else {
        s.to_string()
    }
}

/// The guard `g` (disjunction of the candidates' conjunctions), with conjuncts that the facts
/// already prove dropped; `None` when the guard is provably true.
pub(super) fn simplify_guard(
    f: &mut Facts,
    timeout: u32,
    dialect: Dialect,
    cands: &[(Vec<Expr>, bool)],
) -> Option<String> {
    let mut disj = Vec::new();
    for (conds, _) in cands {
        let mut kept = Vec::new();
        for c in conds {
            for cj in c.conjuncts() {
                let proved =
                    f.tr.bool(cj).map(|b| check::holds(&f.facts, &b, timeout)).unwrap_or(false);
                if !proved {
                    kept.push(cj.clone());
                }
            }
        }
        if kept.is_empty() {
            return None;
        }
        // A conjunct prefetching does not rewrite stands as `false`: no load under it.
        let conj = kept
            .iter()
            .map(|e| {
                subst_names(e, &BTreeMap::new())
                    .unwrap_or_else(|| Expr::synth(ExprKind::Bool(false)))
            })
            .reduce(|a, b| Expr::bin(BinOp::And, a, b))?;
        disj.push(print_expr(&conj, dialect));
    }
    disj.dedup();
    if disj.len() == 1 {
        disj.pop()
    } else {
        Some(disj.iter().map(|d| format!("({d})")).collect::<Vec<_>>().join(" || "))
    }
}

/// Atoms giving permission to cells of `arr`: `(conditions, atom)`.
pub(super) enum Atom<'a> {
    /// `Perm(arr[e], π)` (or PointsTo / Value).
    Direct { idx: &'a Expr, row: Option<&'a Expr> },
    /// `(\forall* int k; cond; Perm(arr[k + d], π))`.
    Forall { var: String, domain: Vec<Expr>, idx: &'a Expr, row: Option<&'a Expr> },
}

pub(super) fn perm_atoms<'a>(
    e: &'a Expr,
    arr: &ArrPath,
    conds: &mut Vec<Expr>,
    out: &mut dyn FnMut(&[Expr], Atom<'a>),
) {
    match &e.kind {
        ExprKind::Binary(BinOp::And | BinOp::Star, l, r) => {
            perm_atoms(l, arr, conds, out);
            perm_atoms(r, arr, conds, out);
        }
        ExprKind::Binary(BinOp::Implies, l, r) => {
            conds.push((**l).clone());
            perm_atoms(r, arr, conds, out);
            conds.pop();
        }
        ExprKind::Cond(c, a, b) => {
            conds.push((**c).clone());
            perm_atoms(a, arr, conds, out);
            conds.pop();
            conds.push(Expr::not((**c).clone()));
            perm_atoms(b, arr, conds, out);
            conds.pop();
        }
        ExprKind::Builtin(Builtin::Perm | Builtin::PointsTo | Builtin::Value, args) => {
            if let Some(ExprKind::Index(a, i)) = args.first().map(|x| &x.kind) {
                if let Some(row) = arr.row_of(a) {
                    out(conds, Atom::Direct { idx: i, row });
                }
            }
        }
        ExprKind::Quant { kind: QuantKind::ForallStar, bindings, cond, body }
            if bindings.len() == 1 =>
        {
            let b = &bindings[0];
            let mut domain = Vec::new();
            if let Some((lo, hi)) = &b.range {
                domain.push(Expr::bin(BinOp::Le, (**lo).clone(), Expr::name(&b.name.name)));
                domain.push(Expr::bin(BinOp::Lt, Expr::name(&b.name.name), (**hi).clone()));
            }
            if let Some(c) = cond {
                domain.push((**c).clone());
            }
            let mut inner = Vec::new();
            perm_atoms(body, arr, &mut inner, &mut |ic, atom| {
                if let Atom::Direct { idx, row } = atom {
                    let mut d = domain.clone();
                    d.extend(ic.iter().cloned());
                    out(conds, Atom::Forall { var: b.name.name.clone(), domain: d, idx, row });
                }
            });
        }
        _ => {}
    }
}

/// What an atom says about `arr[p]`.
pub(super) enum Cover<'a> {
    /// Permission under these conditions (and whether they come from a quantifier).
    Yes(Vec<Expr>, bool),
    No,
    /// A quantified permission whose index cannot be solved for its bound variable.
    NotInvertible(&'a Expr),
}

/// Does `atom` (under `conds`) give permission for `arr[p]`? For a quantified permission the
/// location is solved for the bound variable (`a[2 * k]` covers `a[p]` where `p % 2 == 0`, with
/// `k = p / 2` in the domain).
pub(super) fn cover<'a>(
    f: &mut Facts,
    ctx: &Ctx,
    arr: &ArrPath,
    atom: Atom<'a>,
    p: &Expr,
    pt: &check::translate::Z3Int,
    conds: &[Expr],
) -> Cover<'a> {
    match atom {
        Atom::Direct { idx, row } => {
            let Some(eq) = arr.cell_eq(f, row, idx, pt) else {
                return Cover::No;
            };
            if check::holds(&f.facts, &eq, ctx.timeout_ms) {
                Cover::Yes(conds.to_vec(), false)
            } else {
                Cover::No
            }
        }
        Atom::Forall { var, domain, idx, row } => {
            // The row of a quantified permission must be the location's row, for every value of
            // the bound variable.
            if let (Some(r), Some(ri)) = (&arr.row, row) {
                if mentions_name(ri, &var) {
                    return Cover::No;
                }
                let (Ok(a), Ok(b)) = (f.tr.int(r), f.tr.int(ri)) else {
                    return Cover::No;
                };
                if !check::holds(&f.facts, &a._eq(&b), ctx.timeout_ms) {
                    return Cover::No;
                }
            }
            // Solve idx(k) == p for the bound variable: idx = c * k + d (c and d free of k).
            let Some((c, d)) = affine(idx, &var) else {
                return Cover::NotInvertible(idx);
            };
            let minus = |a: Expr, b: Option<Expr>| match b {
                Some(b) => Expr::bin(BinOp::Sub, a, b),
                None => a,
            };
            let mut extra = Vec::new();
            let k_val = match c.as_int().and_then(|v| v.to_i64()) {
                Some(1) => minus(p.clone(), d),
                Some(-1) => minus(d.unwrap_or_else(|| Expr::int(0)), Some(p.clone())),
                Some(0) => return Cover::NotInvertible(idx),
                lit => {
                    // k = (p - d) / c, when c divides p - d (and c != 0 for a symbolic c).
                    let diff = minus(p.clone(), d);
                    if lit.is_none() {
                        extra.push(Expr::bin(BinOp::Ne, c.clone(), Expr::int(0)));
                    }
                    extra.push(Expr::bin(
                        BinOp::Eq,
                        Expr::bin(BinOp::Mod, diff.clone(), c.clone()),
                        Expr::int(0),
                    ));
                    Expr::bin(BinOp::Div, diff, c)
                }
            };
            let mut map = BTreeMap::new();
            map.insert(var.clone(), k_val);
            let mut out = conds.to_vec();
            for (e, m) in extra
                .iter()
                .map(|e| (e, BTreeMap::new()))
                .chain(domain.iter().map(|e| (e, map.clone())))
            {
                let Some(e) = subst_names(e, &m) else {
                    return Cover::No;
                };
                out.push(e);
            }
            Cover::Yes(out, true)
        }
    }
}

/// `e` as `c * k + d` with `c` and `d` free of `k` (`d` absent when 0); None when `e` is not
/// affine in `k` (`k * k`, `k / 2`, `f(k)`).
fn affine(e: &Expr, k: &str) -> Option<(Expr, Option<Expr>)> {
    use ExprKind as K;
    if !mentions_name(e, k) {
        return Some((Expr::int(0), Some(e.clone())));
    }
    let add = |a: Option<Expr>, b: Option<Expr>, sub: bool| match (a, b) {
        (None, None) => None,
        (Some(a), None) => Some(a),
        (None, Some(b)) if sub => Some(Expr::synth(K::Unary(UnOp::Neg, Box::new(b)))),
        (None, Some(b)) => Some(b),
        (Some(a), Some(b)) => Some(Expr::bin(if sub { BinOp::Sub } else { BinOp::Add }, a, b)),
    };
    let lit = |e: &Expr| e.as_int().cloned();
    let coef = |a: Expr, b: Expr, sub: bool| match (lit(&a), lit(&b)) {
        (Some(x), Some(y)) => Expr::synth(K::Int(if sub { x - y } else { x + y })),
        (Some(x), _) if x == BigInt::from(0) && !sub => b,
        (_, Some(y)) if y == BigInt::from(0) => a,
        _ => Expr::bin(if sub { BinOp::Sub } else { BinOp::Add }, a, b),
    };
    match &e.kind {
        K::Name(id) if id.name == k => Some((Expr::int(1), None)),
        K::Binary(op @ (BinOp::Add | BinOp::Sub), l, r) => {
            let sub = *op == BinOp::Sub;
            let (cl, dl) = affine(l, k)?;
            let (cr, dr) = affine(r, k)?;
            let dl = dl.filter(|d| lit(d) != Some(BigInt::from(0)));
            let dr = dr.filter(|d| lit(d) != Some(BigInt::from(0)));
            Some((coef(cl, cr, sub), add(dl, dr, sub)))
        }
        K::Binary(BinOp::Mul, l, r) => {
            let (x, f) = if mentions_name(l, k) && !mentions_name(r, k) {
                (l, r)
            } else if mentions_name(r, k) && !mentions_name(l, k) {
                (r, l)
            } else {
                return None;
            };
            let (c, d) = affine(x, k)?;
            let scale = |v: Expr| match (lit(&v), lit(f)) {
                (Some(a), Some(b)) => Expr::synth(K::Int(a * b)),
                (Some(a), _) if a == BigInt::from(1) => (**f).clone(),
                _ => Expr::bin(BinOp::Mul, v, (**f).clone()),
            };
            Some((scale(c), d.map(scale)))
        }
        K::Unary(UnOp::Neg, x) => {
            let (c, d) = affine(x, k)?;
            let neg = |v: Expr| match lit(&v) {
                Some(a) => Expr::synth(K::Int(-a)),
                None => Expr::synth(K::Unary(UnOp::Neg, Box::new(v))),
            };
            Some((neg(c), d.map(neg)))
        }
        _ => None,
    }
}

pub(super) use front::visit::mentions_name;

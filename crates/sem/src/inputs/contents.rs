//! Array and sequence contents a precondition fixes cell by cell: `(\forall int i; lo <= i &&
//! i < hi; a[i] == E)`, with `E` an integer expression of `i`, the scalar inputs, lengths and
//! cells of other inputs (`b[i] == i`, `a[i] == 2 * i + n`, `c[i] == b[i]`). After the solver
//! has fixed the sizes and scalars, such cells are set to `E`'s value, in clause order, instead
//! of hoping that a random fill meets the equation. Anything the small evaluator here cannot
//! compute is left as drawn: the precondition still filters the input afterwards.
//!
//! Maps likewise: `(\forall int i; lo <= i && i < hi; i in keysMap(m) && m[i] == E)` gives
//! `m` the keys `[lo, hi)`, with the values `E` where an equation fixes them, a value other
//! than `E` where `m[i] != E` asks for one (`!E`, `E + 1`), and the value type's default
//! otherwise.

use super::InVal;
use crate::compile::{Binder, CClause, GOp, Ty, CE};
use front::ast::{BinOp, QuantKind};
use std::collections::BTreeMap;

/// What the evaluator sees: input values by name, the names of the entry's parameter slots,
/// and the binder's slot and value.
struct Scope<'a> {
    vals: &'a BTreeMap<String, InVal>,
    names: &'a BTreeMap<u32, String>,
    binder: (u32, i64),
}

impl Scope<'_> {
    fn bool(&self, e: &CE) -> Option<bool> {
        match e {
            CE::Bool(b) => Some(*b),
            CE::Not(x) => Some(!self.bool(x)?),
            CE::Bin(BinOp::And, l, r, _) => Some(self.bool(l)? && self.bool(r)?),
            CE::Bin(BinOp::Or, l, r, _) => Some(self.bool(l)? || self.bool(r)?),
            CE::Bin(op, l, r, _) => {
                let (a, b) = (self.int(l)?, self.int(r)?);
                match op {
                    BinOp::Lt => Some(a < b),
                    BinOp::Le => Some(a <= b),
                    BinOp::Gt => Some(a > b),
                    BinOp::Ge => Some(a >= b),
                    BinOp::Eq => Some(a == b),
                    BinOp::Ne => Some(a != b),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The binder's range `[lo, hi)`: the largest lower and the smallest upper bound; `None`
    /// when it has none or one cannot be computed.
    fn range(&self, b: &Binder) -> Option<(i64, i64)> {
        let lo = b.lows.iter().map(|x| self.int(x)).collect::<Option<Vec<_>>>()?;
        let hi = b.highs.iter().map(|x| self.int(x)).collect::<Option<Vec<_>>>()?;
        Some((lo.into_iter().max()?, hi.into_iter().min()?))
    }

    fn var(&self, e: &CE) -> Option<&InVal> {
        match e {
            CE::Local(s) => self.vals.get(self.names.get(s)?),
            _ => None,
        }
    }

    /// `e`'s value: an integer as [`Self::int`] computes it, a boolean literal, or the value
    /// of an existing entry `m[k]` of a map input.
    fn value(&self, e: &CE) -> Option<InVal> {
        match e {
            CE::Bool(b) => Some(InVal::Bool(*b)),
            CE::Index(m, k, _) if matches!(self.var(m), Some(InVal::Map(_))) => {
                let Some(InVal::Map(es)) = self.var(m) else { return None };
                let k = InVal::Int(self.int(k)?);
                es.iter().find(|(x, _)| *x == k).map(|(_, v)| v.clone())
            }
            _ => self.int(e).map(InVal::Int),
        }
    }

    fn int(&self, e: &CE) -> Option<i64> {
        match e {
            CE::Int(k) => Some(*k),
            CE::Local(s) if *s == self.binder.0 => Some(self.binder.1),
            CE::Local(_) => match self.var(e)? {
                InVal::Int(k) => Some(*k),
                _ => None,
            },
            CE::Length(x, _) => match self.var(x)? {
                InVal::Array(_, v) | InVal::Seq(v) => Some(v.len() as i64),
                _ => None,
            },
            CE::Index(a, i, _) => match self.var(a)? {
                InVal::Array(_, v) | InVal::Seq(v) => {
                    match v.get(usize::try_from(self.int(i)?).ok()?)? {
                        InVal::Int(k) => Some(*k),
                        _ => None,
                    }
                }
                _ => None,
            },
            CE::Neg(x, _) => self.int(x)?.checked_neg(),
            CE::Bin(op, l, r, _) => {
                let (a, b) = (self.int(l)?, self.int(r)?);
                match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    // PVL's `/` and `%` on negative operands are left to the filter.
                    BinOp::Div | BinOp::TruncDiv if a >= 0 && b > 0 => Some(a / b),
                    BinOp::Mod | BinOp::TruncMod if a >= 0 && b > 0 => Some(a % b),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// Set the cells that `clauses` fix (see the module comment) in `vals`. `bodies` gives the
/// parameter slots and body of each predicate and pure function (by method id), so that a
/// predicate the precondition asks for is looked into, its parameters named by the inputs
/// passed to it.
pub(super) fn solve(
    clauses: &[&CClause],
    names: &BTreeMap<u32, String>,
    bodies: &[Option<(Vec<u32>, CE)>],
    map_values: &BTreeMap<String, Ty>,
    vals: &mut BTreeMap<String, InVal>,
) {
    let cx = Cx { bodies, map_values };
    for c in clauses {
        solve_expr(&c.e, names, &cx, vals, 0);
    }
}

/// What every level of [`solve_expr`] needs: predicate bodies, and the value type of each map
/// input (by name).
struct Cx<'a> {
    bodies: &'a [Option<(Vec<u32>, CE)>],
    map_values: &'a BTreeMap<String, Ty>,
}

fn solve_expr(
    e: &CE,
    names: &BTreeMap<u32, String>,
    cx: &Cx,
    vals: &mut BTreeMap<String, InVal>,
    depth: u32,
) {
    let mut conj = Vec::new();
    e.conjuncts(&mut conj);
    for e in conj {
        if let CE::Let(..) = e {
            // An inline predicate: its parameters named by the inputs passed to it.
            let (binds, body) = super::let_chain(e);
            let mut inner = names.clone();
            for (s, v) in binds {
                if let CE::Local(x) = v {
                    if let Some(n) = names.get(x) {
                        inner.insert(s, n.clone());
                    }
                }
            }
            if depth < 2 {
                solve_expr(body, &inner, cx, vals, depth + 1);
            }
            continue;
        }
        if let CE::Pred { pred: m, recv: None, args, .. } = e {
            let Some(Some((params, body))) = cx.bodies.get(*m as usize) else { continue };
            if depth >= 2 || params.len() != args.len() {
                continue;
            }
            // The callee's parameters that are passed an input, by the input's name.
            let inner: BTreeMap<u32, String> = params
                .iter()
                .zip(args)
                .filter_map(|(p, a)| match a {
                    CE::Local(s) => Some((*p, names.get(s)?.clone())),
                    _ => None,
                })
                .collect();
            solve_expr(body, &inner, cx, vals, depth + 1);
            continue;
        }
        let CE::Quant { kind: QuantKind::Forall, binders, cond, body, .. } = e else {
            continue;
        };
        let [b] = binders.as_slice() else { continue };
        let mut eqs = Vec::new();
        body.conjuncts(&mut eqs);
        map_entries(b, cond.as_deref(), &eqs, names, cx.map_values, vals);
        for eq in eqs {
            let CE::Bin(BinOp::Eq, l, r, _) = eq else { continue };
            for (cell, value) in [(l, r), (r, l)] {
                let CE::Index(arr, i, _) = &**cell else { continue };
                if !matches!(**i, CE::Local(s) if s == b.slot) {
                    continue;
                }
                let CE::Local(a) = **arr else { continue };
                let Some(name) = names.get(&a) else { continue };
                if fill(b, cond.as_deref(), a, value, name, names, vals) {
                    break;
                }
            }
        }
    }
}

/// Cells `[lo, hi)` of input `name` (slot `a`) set to `value`; false when nothing could be
/// computed.
#[allow(clippy::too_many_arguments)]
fn fill(
    b: &Binder,
    cond: Option<&CE>,
    a: u32,
    value: &CE,
    name: &str,
    names: &BTreeMap<u32, String>,
    vals: &mut BTreeMap<String, InVal>,
) -> bool {
    if b.lows.is_empty() || b.highs.is_empty() || value.reads_local(a) {
        return false;
    }
    let cells = {
        let sc = Scope { vals, names, binder: (u32::MAX, 0) };
        let Some((lo, hi)) = sc.range(b) else { return false };
        let lo = lo.max(0);
        let len = match vals.get(name) {
            Some(InVal::Array(_, v) | InVal::Seq(v)) => v.len() as i64,
            _ => return false,
        };
        let hi = hi.min(len);
        let mut cells = Vec::new();
        for i in lo..hi {
            let sc = Scope { vals, names, binder: (b.slot, i) };
            // The condition beyond the bounds decides which cells the equation is about.
            match cond.map(|c| sc.bool(c)) {
                Some(Some(false)) => continue,
                Some(None) => return false,
                _ => {}
            }
            match sc.int(value) {
                Some(v) => cells.push((i as usize, v)),
                None => return false,
            }
        }
        cells
    };
    if let Some(InVal::Array(_, v) | InVal::Seq(v)) = vals.get_mut(name) {
        for (i, x) in cells {
            if matches!(v[i], InVal::Int(_)) {
                v[i] = InVal::Int(x);
            }
        }
    }
    true
}

/// The entries of map inputs that a quantifier over `[lo, hi)` requires (`i in keysMap(m)`),
/// with the values its equations fix (`m[i] == E`).
fn map_entries(
    b: &Binder,
    cond: Option<&CE>,
    conjuncts: &[&CE],
    names: &BTreeMap<u32, String>,
    map_values: &BTreeMap<String, Ty>,
    vals: &mut BTreeMap<String, InVal>,
) {
    let bare = |e: &CE| matches!(e, CE::Local(s) if *s == b.slot);
    let map_of = |e: &CE, op: GOp| -> Option<u32> {
        match e {
            CE::Ghost(o, args, _) if *o == op => match args.first() {
                Some(CE::Local(m)) => Some(*m),
                _ => None,
            },
            _ => None,
        }
    };
    for c in conjuncts {
        let CE::Bin(BinOp::In, k, keys, _) = c else { continue };
        let Some(m) = map_of(keys, GOp::Keys).filter(|_| bare(k)) else { continue };
        let Some(name) = names.get(&m) else { continue };
        // The value each key's equation (`m[i] == E`) or disequation (`m[i] != E`) gives, if
        // any: `E`, or a value other than `E`.
        let value = conjuncts.iter().find_map(|e| {
            let CE::Bin(op @ (BinOp::Eq | BinOp::Ne), l, r, _) = e else { return None };
            // `m[i]` (an index the interpreter resolves on the map) or `getFromMap(m, i)`.
            let at = |x: &CE, i: &CE| matches!(x, CE::Local(x) if *x == m) && bare(i);
            [(l, r), (r, l)].into_iter().find_map(|(get, v)| {
                let hit = match &**get {
                    CE::Index(x, i, _) => at(x, i),
                    CE::Ghost(GOp::MapGet, args, _) => {
                        matches!(args.as_slice(), [x, i] if at(x, i))
                    }
                    _ => false,
                };
                (hit && !v.reads_local(m)).then_some((*op == BinOp::Ne, &**v))
            })
        });
        let entries = {
            let sc = Scope { vals, names, binder: (u32::MAX, 0) };
            let Some((lo, hi)) = sc.range(b) else { continue };
            // A map of more keys than this is not an input worth building.
            if hi.saturating_sub(lo) > 4096 {
                continue;
            }
            let mut entries = Vec::new();
            for i in lo..hi {
                let sc = Scope { vals, names, binder: (b.slot, i) };
                match cond.map(|c| sc.bool(c)) {
                    Some(Some(false)) => continue,
                    Some(None) => break,
                    _ => {}
                }
                let v = value.and_then(|(ne, v)| match sc.value(v)? {
                    InVal::Bool(x) if ne => Some(InVal::Bool(!x)),
                    InVal::Int(x) if ne => x.checked_add(1).map(InVal::Int),
                    x => Some(x),
                });
                entries.push((i, v));
            }
            entries
        };
        let Some(InVal::Map(es)) = vals.get_mut(name) else { continue };
        // The value type's default for a key no equation fixes: from the input's type, else
        // from the other entries; with neither, such keys are left to the drawn map.
        let typed = match map_values.get(name) {
            Some(Ty::Bool) => Some(true),
            Some(Ty::Int) => Some(false),
            _ => es.first().map(|(_, x)| matches!(x, InVal::Bool(_))),
        };
        for (k, v) in entries {
            if v.is_none() && typed.is_none() {
                continue;
            }
            let key = InVal::Int(k);
            match es.iter_mut().find(|(x, _)| *x == key) {
                Some((_, x)) => {
                    if let Some(v) = v.filter(|v| same_kind(v, x)) {
                        *x = v;
                    }
                }
                // A new key: the computed value, or the value type's default.
                None => {
                    let dflt = if typed == Some(true) { InVal::Bool(false) } else { InVal::Int(0) };
                    es.push((key, v.filter(|v| same_kind(v, &dflt)).unwrap_or(dflt)));
                }
            }
        }
    }
}

/// Are `a` and `b` both integers or both booleans?
fn same_kind(a: &InVal, b: &InVal) -> bool {
    matches!((a, b), (InVal::Int(_), InVal::Int(_)) | (InVal::Bool(_), InVal::Bool(_)))
}

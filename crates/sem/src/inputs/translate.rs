//! The translation of a precondition into Z3 constraints on the generated inputs (sizes,
//! lengths, scalars, nullness): what `generate` asks the solver to satisfy. A clause that does
//! not translate is dropped, or only its translatable conjuncts are kept (`tr_necessary`); pure
//! functions and predicates are inlined a few calls deep.

use super::super::compile::{Ty, CE};
use front::ast::{BinOp, QuantKind};
use std::collections::BTreeMap;
use z3::ast::{Ast, Bool, Int};

/// The key under which an inlined call's frame keeps its receiver (no parameter has this slot).
const THIS_SLOT: u32 = u32::MAX;

pub(super) struct Vars<'c> {
    pub(super) ctx: &'c z3::Context,
    pub(super) ints: BTreeMap<String, Int<'c>>,
    pub(super) bools: BTreeMap<String, Bool<'c>>,
    pub(super) slot_names: BTreeMap<u32, (String, Ty)>,
    pub(super) field_names: Vec<String>,
    pub(super) this_fields: BTreeMap<String, Ty>,
    /// Every class's fields (name, type), by class name.
    pub(super) classes: BTreeMap<String, Vec<(String, Ty)>>,
    /// Pure functions the translation inlines: the callee's parameter slots and its body.
    pub(super) funcs: Vec<Option<(Vec<u32>, CE)>>,
    /// Inlined calls, innermost last: each maps the callee's parameter slots to the caller's
    /// arguments, and [`THIS_SLOT`] to its receiver, which are translated one level further out.
    pub(super) subst: Vec<BTreeMap<u32, CE>>,
    /// The level names are resolved at: `subst.len()` while translating the innermost body.
    pub(super) level: std::cell::Cell<usize>,
}

impl<'c> Vars<'c> {
    pub(super) fn int(&mut self, n: &str) -> Int<'c> {
        let ctx = self.ctx;
        self.ints.entry(n.to_string()).or_insert_with(|| Int::new_const(ctx, n)).clone()
    }
    pub(super) fn boolean(&mut self, n: &str) -> Bool<'c> {
        let ctx = self.ctx;
        self.bools.entry(n.to_string()).or_insert_with(|| Bool::new_const(ctx, n)).clone()
    }
    /// The input variable a reference expression stands for.
    pub(super) fn var_name(&self, e: &CE) -> Option<(String, Ty)> {
        match e {
            CE::Local(s) if self.level.get() > 0 => {
                let l = self.level.get();
                let x = self.subst[l - 1].get(s)?;
                self.level.set(l - 1);
                let r = self.var_name(x);
                self.level.set(l);
                r
            }
            CE::Local(s) => self.slot_names.get(s).cloned(),
            // `this` in an inlined body is the call's receiver, one level out.
            CE::Field(o, f, span) if matches!(**o, CE::This) && self.level.get() > 0 => {
                let l = self.level.get();
                let r = self.subst[l - 1].get(&THIS_SLOT)?;
                let x = CE::Field(Box::new(r.clone()), *f, *span);
                self.level.set(l - 1);
                let n = self.var_name(&x);
                self.level.set(l);
                n
            }
            CE::Field(o, f, _) if matches!(**o, CE::This) => {
                let n = self.field_names.get(*f as usize)?;
                let t = self.this_fields.get(n)?;
                Some((format!("this.{n}"), t.clone()))
            }
            // A field of an object input: `b.n`, `this.b.n`.
            CE::Field(o, f, _) => {
                let (n, Ty::Class(c)) = self.var_name(o)? else { return None };
                let name = self.field_names.get(*f as usize)?;
                let t = self.classes.get(&c)?.iter().find(|(x, _)| x == name)?.1.clone();
                Some((format!("{n}.{name}"), t))
            }
            _ => None,
        }
    }

    /// The object inputs `e` reads a field of or compares with `null` (`b.n`, `b != null`).
    pub(super) fn mentioned(&self, e: &CE, out: &mut BTreeMap<String, String>) {
        let mut note = |x: &CE| {
            if let Some((n, Ty::Class(c))) = self.var_name(x) {
                out.insert(n, c);
            }
        };
        match e {
            CE::Field(o, ..) => note(o),
            CE::Bin(BinOp::Eq | BinOp::Ne, l, r, _) if matches!(**r, CE::Null) => note(l),
            CE::Bin(BinOp::Eq | BinOp::Ne, l, r, _) if matches!(**l, CE::Null) => note(r),
            _ => {}
        }
        e.for_each_sub(&mut |x| self.mentioned(x, out));
    }
    /// Run `f` on an inlined callee's argument for slot `s`, one level further out.
    pub(super) fn outer<T>(
        &mut self,
        s: u32,
        f: impl FnOnce(&mut Self, &CE) -> Option<T>,
    ) -> Option<T> {
        let l = self.level.get();
        let x = self.subst.get(l.checked_sub(1)?)?.get(&s)?.clone();
        self.level.set(l - 1);
        let r = f(self, &x);
        self.level.set(l);
        r
    }

    /// The body of pure function `method` with its parameters bound to `args`: translated by
    /// `f` one level further in. Recursion stops at a small depth (the clause is then left to
    /// the filter).
    pub(super) fn inline<T>(
        &mut self,
        method: u32,
        recv: Option<&CE>,
        args: &[CE],
        f: impl FnOnce(&mut Self, &CE) -> Option<T>,
    ) -> Option<T> {
        if self.subst.len() >= 3 {
            return None;
        }
        let (params, body) = self.funcs.get(method as usize)?.clone()?;
        if params.len() != args.len() || self.level.get() != self.subst.len() {
            return None;
        }
        let mut frame: BTreeMap<u32, CE> = params.into_iter().zip(args.iter().cloned()).collect();
        frame.insert(THIS_SLOT, recv.cloned().unwrap_or(CE::This));
        self.subst.push(frame);
        self.level.set(self.subst.len());
        let r = f(self, &body);
        self.subst.pop();
        self.level.set(self.subst.len());
        r
    }

    /// A constraint every valid input meets, from clause `e`: `e` itself where it translates,
    /// else the conjuncts that do (a dropped conjunct only weakens it; the precondition itself
    /// filters the inputs afterwards).
    pub(super) fn tr_necessary(&mut self, e: &CE) -> Option<Bool<'c>> {
        if let Some(b) = self.tr_bool(e) {
            return Some(b);
        }
        match e {
            CE::Bin(BinOp::And | BinOp::Star, l, r, _) => {
                match (self.tr_necessary(l), self.tr_necessary(r)) {
                    (Some(a), Some(b)) => Some(Bool::and(self.ctx, &[&a, &b])),
                    (a, b) => a.or(b),
                }
            }
            // An inline predicate: its body under `let`s of its arguments.
            CE::Let(..) => {
                let (binds, body) = let_chain(e);
                if self.level.get() != self.subst.len() || self.subst.len() >= 3 {
                    return None;
                }
                self.subst.push(binds.into_iter().map(|(s, v)| (s, v.clone())).collect());
                self.level.set(self.subst.len());
                let r = self.tr_necessary(body);
                self.subst.pop();
                self.level.set(self.subst.len());
                r
            }
            // A predicate the precondition asks for holds its body (permissions count as true).
            CE::CallPure { method: m, recv, args, .. } | CE::Pred { pred: m, recv, args, .. } => {
                self.inline(*m, recv.as_deref(), args, |v, b| v.tr_necessary(b))
            }
            _ => None,
        }
    }

    pub(super) fn tr_int(&mut self, e: &CE) -> Option<Int<'c>> {
        Some(match e {
            CE::Int(i) => Int::from_i64(self.ctx, *i),
            CE::Local(s) if self.level.get() > 0 => self.outer(*s, |v, x| v.tr_int(x))?,
            CE::CallPure { method, recv, args, .. } => {
                self.inline(*method, recv.as_deref(), args, |v, b| v.tr_int(b))?
            }
            CE::Local(_) | CE::Field(..) => {
                let (n, t) = self.var_name(e)?;
                if t != Ty::Int {
                    return None;
                }
                self.int(&n)
            }
            CE::Length(x, _) => {
                let (n, t) = self.var_name(x)?;
                match t {
                    Ty::Array(_) => self.int(&format!("len:{n}")),
                    // `|xs|` of a sequence input: its length is solved like an array's.
                    Ty::Seq(_) => self.int(&format!("slen:{n}")),
                    _ => return None,
                }
            }
            CE::Neg(x, _) => self.tr_int(x)?.unary_minus(),
            CE::Bin(op, l, r, _) => {
                let (a, b) = (self.tr_int(l)?, self.tr_int(r)?);
                match op {
                    BinOp::Add => Int::add(self.ctx, &[&a, &b]),
                    BinOp::Sub => Int::sub(self.ctx, &[&a, &b]),
                    BinOp::Mul => Int::mul(self.ctx, &[&a, &b]),
                    BinOp::Div => a.div(&b),
                    BinOp::Mod => a.modulo(&b),
                    BinOp::TruncDiv | BinOp::TruncMod => {
                        check::translate::truncated(*op == BinOp::TruncDiv, &a, &b)
                    }
                    _ => return None,
                }
            }
            CE::Cond(c, a, b) => {
                let c = self.tr_bool(c)?;
                c.ite(&self.tr_int(a)?, &self.tr_int(b)?)
            }
            _ => return None,
        })
    }
    /// `m[r].length == E` conjuncts (r the bound `slot`, E free of it) as `cols:m == E`.
    pub(super) fn row_lengths(&mut self, e: &CE, slot: u32, out: &mut Vec<Bool<'c>>) {
        match e {
            CE::Bin(BinOp::And | BinOp::Star, l, r, _) => {
                self.row_lengths(l, slot, out);
                self.row_lengths(r, slot, out);
            }
            CE::Bin(BinOp::Eq, l, r, _) => {
                for (len, other) in [(l, r), (r, l)] {
                    let CE::Length(x, _) = &**len else { continue };
                    let CE::Index(m, i, _) = &**x else { continue };
                    if !matches!(**i, CE::Local(s) if s == slot) {
                        continue;
                    }
                    let Some((name, Ty::Array(inner))) = self.var_name(m) else {
                        continue;
                    };
                    if !matches!(*inner, Ty::Array(_)) {
                        continue;
                    }
                    if let Some(v) = self.tr_int(other) {
                        let cols = self.int(&format!("cols:{name}"));
                        out.push(cols._eq(&v));
                    }
                }
            }
            _ => {}
        }
    }

    /// Bounds that permissions in `e` imply (VerCors: a permission to `a[i]` means `i` is in
    /// bounds): for `Perm(a[i], p)` with `i` ranging over `[lo, hi)` of an enclosing quantifier,
    /// `lo < hi ==> 0 <= lo && hi <= a.length`; for a fixed `i`, `0 <= i < a.length`; matrix
    /// cells `m[i][j]` bound the rows and the columns. Only unconditional positions (conjuncts
    /// and quantifier bodies whose condition is only the binders' bounds) count, so every
    /// constraint is necessary for the precondition: no valid input is lost.
    pub(super) fn perm_bounds(
        &mut self,
        e: &CE,
        ranges: &mut Vec<(u32, Int<'c>, Int<'c>)>,
        out: &mut Vec<Bool<'c>>,
    ) {
        match e {
            CE::Bin(BinOp::And | BinOp::Star, l, r, _) => {
                self.perm_bounds(l, ranges, out);
                self.perm_bounds(r, ranges, out);
            }
            CE::Quant {
                kind: QuantKind::Forall | QuantKind::ForallStar,
                binders,
                implied: true,
                body,
                ..
            } => {
                let depth = ranges.len();
                for b in binders {
                    // One bound on each side, both inputs' terms (several: the tightest is
                    // unknown here).
                    let bounds = match (&b.lows[..], &b.highs[..]) {
                        ([lo], [hi]) => self.tr_int(lo).zip(self.tr_int(hi)),
                        _ => None,
                    };
                    let Some((lo, hi)) = bounds else {
                        ranges.truncate(depth);
                        return;
                    };
                    ranges.push((b.slot, lo, hi));
                }
                self.perm_bounds(body, ranges, out);
                ranges.truncate(depth);
            }
            CE::Perm(loc, _, _) | CE::PointsTo(loc, _, _, _) => {
                let CE::Index(a, i, _) = &**loc else { return };
                if let Some((n, Ty::Array(_))) = self.var_name(a) {
                    let len = self.int(&format!("len:{n}"));
                    self.index_bound(i, len, ranges, out);
                } else if let CE::Index(m, r, _) = &**a {
                    if let Some((n, Ty::Array(inner))) = self.var_name(m) {
                        if matches!(*inner, Ty::Array(_)) {
                            let len = self.int(&format!("len:{n}"));
                            let cols = self.int(&format!("cols:{n}"));
                            self.index_bound(r, len, ranges, out);
                            self.index_bound(i, cols, ranges, out);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// `i` is a valid index below `len` (see [`Self::perm_bounds`]).
    pub(super) fn index_bound(
        &mut self,
        i: &CE,
        len: Int<'c>,
        ranges: &[(u32, Int<'c>, Int<'c>)],
        out: &mut Vec<Bool<'c>>,
    ) {
        let zero = Int::from_i64(self.ctx, 0);
        if let CE::Local(s) = i {
            if let Some((_, lo, hi)) = ranges.iter().find(|r| r.0 == *s) {
                let nonempty = lo.lt(hi);
                let inside = Bool::and(self.ctx, &[&zero.le(lo), &hi.le(&len)]);
                out.push(nonempty.implies(&inside));
                return;
            }
        }
        if let Some(v) = self.tr_int(i) {
            out.push(Bool::and(self.ctx, &[&zero.le(&v), &v.lt(&len)]));
        }
    }

    pub(super) fn tr_bool(&mut self, e: &CE) -> Option<Bool<'c>> {
        let ctx = self.ctx;
        Some(match e {
            CE::Bool(b) => Bool::from_bool(ctx, *b),
            CE::Local(s) if self.level.get() > 0 => self.outer(*s, |v, x| v.tr_bool(x))?,
            CE::CallPure { method, recv, args, .. } => {
                self.inline(*method, recv.as_deref(), args, |v, b| v.tr_bool(b))?
            }
            CE::Local(_) | CE::Field(..) => {
                let (n, t) = self.var_name(e)?;
                if t != Ty::Bool {
                    return None;
                }
                self.boolean(&n)
            }
            CE::Not(x) => self.tr_bool(x)?.not(),
            // Permissions are the filter's business, not the shape's.
            CE::Perm(..) => Bool::from_bool(ctx, true),
            CE::PointsTo(l, _, v, _) => {
                let a = self.tr_int(l)?;
                let b = self.tr_int(v)?;
                a._eq(&b)
            }
            CE::ArrayShape(a, n) => {
                let (name, _) = self.var_name(a)?;
                let nn = self.boolean(&format!("nn:{name}"));
                let len = self.int(&format!("len:{name}"));
                let n = self.tr_int(n)?;
                Bool::and(ctx, &[&nn, &len._eq(&n)])
            }
            CE::MatrixShape(m, r, c) => {
                let (name, _) = self.var_name(m)?;
                let nn = self.boolean(&format!("nn:{name}"));
                let len = self.int(&format!("len:{name}"));
                let r = self.tr_int(r)?;
                match c {
                    Some(c) => {
                        let cols = self.int(&format!("cols:{name}"));
                        let c = self.tr_int(c)?;
                        Bool::and(ctx, &[&nn, &len._eq(&r), &cols._eq(&c)])
                    }
                    None => Bool::and(ctx, &[&nn, &len._eq(&r)]),
                }
            }
            CE::Cond(c, a, b) => {
                let c = self.tr_bool(c)?;
                c.ite(&self.tr_bool(a)?, &self.tr_bool(b)?)
            }
            // Row lengths of a matrix stated per row: `(\forall int r; …; m[r].length == E)`.
            CE::Quant { kind: QuantKind::Forall, binders, body, .. } if binders.len() == 1 => {
                let slot = binders[0].slot;
                let mut eqs = Vec::new();
                self.row_lengths(body, slot, &mut eqs);
                if eqs.is_empty() {
                    return None;
                }
                Bool::and(ctx, &eqs.iter().collect::<Vec<_>>())
            }
            CE::Bin(op, l, r, _) => match op {
                BinOp::And | BinOp::Star => Bool::and(ctx, &[&self.tr_bool(l)?, &self.tr_bool(r)?]),
                BinOp::Or => Bool::or(ctx, &[&self.tr_bool(l)?, &self.tr_bool(r)?]),
                BinOp::Implies => self.tr_bool(l)?.implies(&self.tr_bool(r)?),
                BinOp::Eq | BinOp::Ne => {
                    let eq = if matches!(**r, CE::Null) || matches!(**l, CE::Null) {
                        let x = if matches!(**r, CE::Null) { l } else { r };
                        let (name, _) = self.var_name(x)?;
                        self.boolean(&format!("nn:{name}")).not()
                    } else if let (Some(a), Some(b)) = (self.tr_int(l), self.tr_int(r)) {
                        a._eq(&b)
                    } else {
                        let (a, b) = (self.tr_bool(l)?, self.tr_bool(r)?);
                        a._eq(&b)
                    };
                    if *op == BinOp::Eq {
                        eq
                    } else {
                        eq.not()
                    }
                }
                BinOp::Lt => self.tr_int(l)?.lt(&self.tr_int(r)?),
                BinOp::Le => self.tr_int(l)?.le(&self.tr_int(r)?),
                BinOp::Gt => self.tr_int(l)?.gt(&self.tr_int(r)?),
                BinOp::Ge => self.tr_int(l)?.ge(&self.tr_int(r)?),
                _ => return None,
            },
            _ => return None,
        })
    }
}

/// `let x = v in let y = w in body` (an inline predicate with its arguments): the bindings and
/// the body.
pub(super) fn let_chain(mut e: &CE) -> (Vec<(u32, &CE)>, &CE) {
    let mut binds = Vec::new();
    while let CE::Let(s, v, b) = e {
        binds.push((*s, &**v));
        e = b;
    }
    (binds, e)
}

//! Light arithmetic simplification for generated expressions ([`simplify_arith`]).

use crate::ast::*;
use num_bigint::BigInt;
use num_traits::{One, Signed, Zero};

/// Fold literal arithmetic in a generated expression (pvl.md §9.3), bottom-up everywhere in `e`:
/// * `2 * 3` → `6`, `0 + 5` → `5`, `2 - 5` → `-3` (as unary minus: there are no negative
///   literals), `7 / 2` → `3` and `7 % 2` → `1` for a non-negative dividend and positive divisor
///   (where truncating and Euclidean division agree);
/// * `e + 0`, `e - 0`, `0 + e`, `e * 1`, `e / 1` → `e`; `-(-k)` → `k` for a literal `k`;
/// * a literal chain at the end of a sum: `(e + 1) + 1` → `e + 2`, `(e + 1) - 3` → `e - 2`;
/// * `e + -k` → `e - k` and `e - -k` → `e + k` for a literal `k`.
///
/// Nothing is reordered: `n - 1 - t` stays as it is, and `e` always keeps its place. Fractions
/// (`\`) are never folded. Meant for bounds, indices and counters the optimizer builds; the
/// printer never applies it to parsed expressions.
pub fn simplify_arith(e: &Expr) -> Expr {
    let e = map_children(e, &mut simplify_arith);
    let span = e.span;
    match e.kind {
        ExprKind::Unary(UnOp::Neg, x) => match lit(&x) {
            Some(v) if v.is_negative() => int_expr(-v, span),
            _ => Expr::new(ExprKind::Unary(UnOp::Neg, x), span),
        },
        ExprKind::Binary(op, l, r) => fold_binary(op, *l, *r, span),
        kind => Expr::new(kind, span),
    }
}

/// The value of an integer literal or a negated one.
fn lit(e: &Expr) -> Option<BigInt> {
    match &e.kind {
        ExprKind::Int(v) => Some(v.clone()),
        ExprKind::Unary(UnOp::Neg, x) => match &x.kind {
            ExprKind::Int(v) => Some(-v.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// A literal: `-k` as unary minus applied to `k`.
fn int_expr(v: BigInt, span: crate::span::Span) -> Expr {
    if v.is_negative() {
        Expr::new(ExprKind::Unary(UnOp::Neg, Box::new(Expr::new(ExprKind::Int(-v), span))), span)
    } else {
        Expr::new(ExprKind::Int(v), span)
    }
}

fn fold_binary(op: BinOp, l: Expr, r: Expr, span: crate::span::Span) -> Expr {
    let (lv, rv) = (lit(&l), lit(&r));
    if let (Some(a), Some(b)) = (&lv, &rv) {
        let folded = match op {
            BinOp::Add => Some(a + b),
            BinOp::Sub => Some(a - b),
            BinOp::Mul => Some(a * b),
            BinOp::Div | BinOp::Mod | BinOp::TruncDiv | BinOp::TruncMod
                if !a.is_negative() && b.is_positive() =>
            {
                Some(if matches!(op, BinOp::Div | BinOp::TruncDiv) { a / b } else { a % b })
            }
            _ => None,
        };
        if let Some(v) = folded {
            return int_expr(v, span);
        }
    }
    match op {
        BinOp::Add | BinOp::Sub => {
            let sign = |o: BinOp, v: BigInt| if o == BinOp::Add { v } else { -v };
            if let Some(b) = &rv {
                if b.is_zero() {
                    return l;
                }
                // `(e ± a) ± b` → `e ± (±a ± b)`: only the literals move together.
                if let ExprKind::Binary(inner @ (BinOp::Add | BinOp::Sub), ll, lr) = &l.kind {
                    if let Some(a) = lit(lr) {
                        let total = sign(*inner, a) + sign(op, b.clone());
                        return offset(*ll.clone(), total, span);
                    }
                }
                return offset(l, sign(op, b.clone()), span);
            }
            if op == BinOp::Add && lv.as_ref().is_some_and(Zero::is_zero) {
                return r;
            }
        }
        BinOp::Mul | BinOp::Div | BinOp::TruncDiv if rv.as_ref().is_some_and(One::is_one) => {
            return l
        }
        _ => {}
    }
    Expr::new(ExprKind::Binary(op, Box::new(l), Box::new(r)), span)
}

/// `e + v` written as `e + v`, `e - |v|` or `e`.
fn offset(e: Expr, v: BigInt, span: crate::span::Span) -> Expr {
    if v.is_zero() {
        return e;
    }
    let (op, mag) = if v.is_negative() { (BinOp::Sub, -v) } else { (BinOp::Add, v) };
    Expr::new(
        ExprKind::Binary(op, Box::new(e), Box::new(Expr::new(ExprKind::Int(mag), span))),
        span,
    )
}

/// Rebuild `e` with `f` applied to each direct sub-expression (statements inside ghost blocks
/// are left as they are).
pub fn map_children(e: &Expr, f: &mut dyn FnMut(&Expr) -> Expr) -> Expr {
    let mut bx = |x: &Expr| Box::new(f(x));
    let kind = match &e.kind {
        ExprKind::Unary(op, x) => ExprKind::Unary(*op, bx(x)),
        ExprKind::Binary(op, l, r) => {
            let l = bx(l);
            ExprKind::Binary(*op, l, bx(r))
        }
        ExprKind::Cond(c, a, b) => {
            let c = bx(c);
            let a = bx(a);
            ExprKind::Cond(c, a, bx(b))
        }
        ExprKind::Field(x, n) => ExprKind::Field(bx(x), n.clone()),
        ExprKind::Index(x, i) => {
            let x = bx(x);
            ExprKind::Index(x, bx(i))
        }
        ExprKind::Slice(x, lo, hi) => {
            let x = bx(x);
            let lo = lo.as_deref().map(&mut bx);
            ExprKind::Slice(x, lo, hi.as_deref().map(&mut bx))
        }
        ExprKind::SeqUpdate(x, i, v) => {
            let x = bx(x);
            let i = bx(i);
            ExprKind::SeqUpdate(x, i, bx(v))
        }
        ExprKind::Call { recv, name, args, ghost, null_safe } => {
            let recv = recv.as_deref().map(&mut bx);
            let args = args.iter().map(|a| *bx(a)).collect();
            let given = ghost.given.iter().map(|(n, v)| (n.clone(), *bx(v))).collect();
            ExprKind::Call {
                recv,
                name: name.clone(),
                args,
                ghost: Box::new(GhostArgs { given, ..(**ghost).clone() }),
                null_safe: *null_safe,
            }
        }
        ExprKind::Builtin(b, args) => ExprKind::Builtin(*b, args.iter().map(|a| *bx(a)).collect()),
        ExprKind::Old(x, l) => ExprKind::Old(bx(x), l.clone()),
        ExprKind::Length(x) => ExprKind::Length(bx(x)),
        ExprKind::Quant { kind, bindings, cond, body } => {
            let bindings = bindings
                .iter()
                .map(|b| Binding {
                    range: b.range.as_ref().map(|(lo, hi)| (bx(lo), bx(hi))),
                    ..b.clone()
                })
                .collect();
            let cond = cond.as_deref().map(&mut bx);
            ExprKind::Quant { kind: *kind, bindings, cond, body: bx(body) }
        }
        ExprKind::Let { ty, name, value, body } => {
            let value = bx(value);
            ExprKind::Let { ty: ty.clone(), name: name.clone(), value, body: bx(body) }
        }
        ExprKind::Sum { ty, name, cond, body } => {
            let cond = bx(cond);
            ExprKind::Sum { ty: ty.clone(), name: name.clone(), cond, body: bx(body) }
        }
        ExprKind::NewObject(n, args, ghost) => {
            ExprKind::NewObject(n.clone(), args.iter().map(|a| *bx(a)).collect(), ghost.clone())
        }
        ExprKind::NewArray(t, dims) => {
            ExprKind::NewArray(t.clone(), dims.iter().map(|a| *bx(a)).collect())
        }
        ExprKind::Collection { kind, elem_ty, elems } => ExprKind::Collection {
            kind: *kind,
            elem_ty: elem_ty.clone(),
            elems: elems.iter().map(|a| *bx(a)).collect(),
        },
        ExprKind::Tuple(elems) => ExprKind::Tuple(elems.iter().map(|a| *bx(a)).collect()),
        ExprKind::TupleLit(t, a, b) => ExprKind::TupleLit(t.clone(), bx(a), bx(b)),
        ExprKind::MapLit { key_ty, val_ty, entries } => ExprKind::MapLit {
            key_ty: key_ty.clone(),
            val_ty: val_ty.clone(),
            entries: entries.iter().map(|(k, v)| (*bx(k), *bx(v))).collect(),
        },
        ExprKind::SetComprehension(c) => {
            let body = *bx(&c.body);
            let gens = c
                .gens
                .iter()
                .map(|g| Generator { source: g.source.as_ref().map(|s| *bx(s)), ..g.clone() })
                .collect();
            let cond = c.cond.as_ref().map(|x| *bx(x));
            ExprKind::SetComprehension(Box::new(Comprehension {
                elem_ty: c.elem_ty.clone(),
                body,
                gens,
                cond,
            }))
        }
        ExprKind::Range(k, lo, hi) => {
            let lo = bx(lo);
            ExprKind::Range(*k, lo, bx(hi))
        }
        ExprKind::Trigger(t, x) => ExprKind::Trigger(*t, bx(x)),
        ExprKind::Unfolding(p, x) => {
            let p = bx(p);
            ExprKind::Unfolding(p, bx(x))
        }
        ExprKind::Scale(p, r) => {
            let p = bx(p);
            ExprKind::Scale(p, bx(r))
        }
        ExprKind::Labelled(l, x) => ExprKind::Labelled(l.clone(), bx(x)),
        k => k.clone(),
    };
    Expr::new(kind, e.span)
}

//! Evaluation of simple expressions (see [`is_simple`](super::compile::is_simple)) for all active
//! lanes of a warp at once, one expression node at a time.
//!
//! This is a fast path only. Simple expressions read no heap location, so they need no
//! permission, record no access for the race detector and have no side effects. The result
//! for a lane is therefore the same whether the lanes are evaluated one after another or
//! column by column. Whenever something is not plain (a value of an unexpected kind, an
//! overflow, a division by zero, a null array), the evaluator gives up and returns `None`; the
//! caller then runs the ordinary lane-by-lane evaluation, which reports the error exactly as
//! it would have anyway, at the first lane in lane order.

use super::compile::CE;
use super::interp::{Heap, Lane};
use super::value::Value;
use crate::front::ast::BinOp;

/// The kind of a column: all lanes' values have the same kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    /// 0 or 1.
    Bool,
    /// An object id, or -1 for `null`.
    Ref,
}

pub const MAX_LANES: usize = 64;

/// One value per lane, indexed by lane number; only the lanes of the evaluation mask are
/// meaningful.
#[derive(Clone, Copy)]
pub struct Col {
    pub kind: Kind,
    pub v: [i64; MAX_LANES],
}

impl Col {
    fn splat(kind: Kind, x: i64) -> Col {
        Col {
            kind,
            v: [x; MAX_LANES],
        }
    }

    /// Lanes of `mask` whose (boolean) value is true.
    pub fn true_mask(&self, mask: u64) -> u64 {
        let mut out = 0;
        for l in lanes(mask) {
            if self.v[l] != 0 {
                out |= 1 << l;
            }
        }
        out
    }

    pub fn value(&self, l: usize) -> Value {
        let x = self.v[l];
        match self.kind {
            Kind::Int => Value::Int(x),
            Kind::Bool => Value::Bool(x != 0),
            Kind::Ref if x < 0 => Value::Null,
            Kind::Ref => Value::Ref(x as u32),
        }
    }
}

pub fn lanes(mask: u64) -> impl Iterator<Item = usize> {
    let mut m = mask;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(i)
        }
    })
}

fn classify(v: &Value) -> Option<(Kind, i64)> {
    match v {
        Value::Int(i) => Some((Kind::Int, *i)),
        Value::Bool(b) => Some((Kind::Bool, *b as i64)),
        Value::Ref(r) => Some((Kind::Ref, *r as i64)),
        Value::Null => Some((Kind::Ref, -1)),
        _ => None,
    }
}

/// Evaluate `e` for the lanes of `mask` (at most [`MAX_LANES`], all with a frame), in the
/// innermost frame of each lane. `None`: not evaluable here; use the lane-by-lane path.
pub fn eval(heap: &Heap, lanes_: &[Lane], mask: u64, e: &CE) -> Option<Col> {
    let mut out = Col::splat(Kind::Bool, 0);
    eval_into(heap, lanes_, mask, e, &mut out)?;
    Some(out)
}

/// [`eval`] into `out` (columns are large; children are evaluated into the caller's
/// temporaries instead of being returned by value).
fn eval_into(heap: &Heap, lanes_: &[Lane], mask: u64, e: &CE, out: &mut Col) -> Option<()> {
    if mask == 0 {
        // Nothing to evaluate: any kind will do, the caller reads no lane.
        out.kind = Kind::Bool;
        return Some(());
    }
    match e {
        CE::Int(i) => fill(out, mask, Kind::Int, *i),
        CE::Bool(b) => fill(out, mask, Kind::Bool, *b as i64),
        CE::Null => fill(out, mask, Kind::Ref, -1),
        CE::Local(s) => {
            let mut kind = None;
            for l in lanes(mask) {
                let fr = lanes_[l].frames.last()?;
                let (k, x) = classify(fr.store.get(*s as usize)?)?;
                if *kind.get_or_insert(k) != k {
                    return None;
                }
                out.v[l] = x;
            }
            out.kind = kind?;
        }
        CE::This => {
            for l in lanes(mask) {
                let (k, x) = classify(&lanes_[l].frames.last()?.this)?;
                if k != Kind::Ref {
                    return None;
                }
                out.v[l] = x;
            }
            out.kind = Kind::Ref;
        }
        CE::Not(x) => {
            eval_into(heap, lanes_, mask, x, out)?;
            if out.kind != Kind::Bool {
                return None;
            }
            for l in lanes(mask) {
                out.v[l] ^= 1;
            }
        }
        CE::Neg(x, _) => {
            eval_into(heap, lanes_, mask, x, out)?;
            if out.kind != Kind::Int {
                return None;
            }
            for l in lanes(mask) {
                out.v[l] = 0i64.checked_sub(out.v[l])?;
            }
        }
        CE::Length(x, _) => {
            eval_into(heap, lanes_, mask, x, out)?;
            if out.kind != Kind::Ref {
                return None;
            }
            for l in lanes(mask) {
                // `len_of` as the lane-by-lane evaluator (an object's "length" is its field
                // count); null falls back and is reported there.
                let id = u32::try_from(out.v[l]).ok()?;
                out.v[l] = heap.len_of(id) as i64;
            }
            out.kind = Kind::Int;
        }
        CE::ArrayShape(a, n) => {
            let mut cn = Col::splat(Kind::Int, 0);
            eval_into(heap, lanes_, mask, a, out)?;
            eval_into(heap, lanes_, mask, n, &mut cn)?;
            if out.kind != Kind::Ref || cn.kind != Kind::Int {
                return None;
            }
            for l in lanes(mask) {
                out.v[l] = match u32::try_from(out.v[l]) {
                    Ok(id) => (heap.len_of(id) as i64 == cn.v[l]) as i64,
                    Err(_) => 0,
                };
            }
            out.kind = Kind::Bool;
        }
        CE::Cond(c, a, b) => {
            eval_into(heap, lanes_, mask, c, out)?;
            if out.kind != Kind::Bool {
                return None;
            }
            let mt = out.true_mask(mask);
            let mf = mask & !mt;
            let mut cb = Col::splat(Kind::Bool, 0);
            // `out` may be overwritten by the then-side: the masks are known already.
            eval_into(heap, lanes_, mt, a, out)?;
            eval_into(heap, lanes_, mf, b, &mut cb)?;
            let kind = match (mt, mf) {
                (0, _) => cb.kind,
                (_, 0) => out.kind,
                _ if out.kind == cb.kind => out.kind,
                _ => return None,
            };
            for l in lanes(mf) {
                out.v[l] = cb.v[l];
            }
            out.kind = kind;
        }
        CE::Bin(op, l, r, _) => binary(heap, lanes_, mask, *op, l, r, out)?,
        _ => return None,
    }
    Some(())
}

fn fill(out: &mut Col, mask: u64, kind: Kind, x: i64) {
    out.kind = kind;
    for l in lanes(mask) {
        out.v[l] = x;
    }
}

fn binary(
    heap: &Heap,
    lanes_: &[Lane],
    mask: u64,
    op: BinOp,
    l: &CE,
    r: &CE,
    out: &mut Col,
) -> Option<()> {
    match op {
        // Short-circuit: the right side is evaluated only for the lanes that need it, as the
        // lane-by-lane evaluator does.
        BinOp::And | BinOp::Star | BinOp::Or | BinOp::Implies => {
            eval_into(heap, lanes_, mask, l, out)?;
            if out.kind != Kind::Bool {
                return None;
            }
            let lt = out.true_mask(mask);
            let need = if op == BinOp::Or { mask & !lt } else { lt };
            let mut cr = Col::splat(Kind::Bool, 0);
            eval_into(heap, lanes_, need, r, &mut cr)?;
            if need != 0 && cr.kind != Kind::Bool {
                return None;
            }
            for i in lanes(mask) {
                let x = lt >> i & 1 == 1;
                let y = || cr.v[i] != 0;
                out.v[i] = match op {
                    BinOp::Or => x || y(),
                    BinOp::Implies => !x || y(),
                    _ => x && y(),
                } as i64;
            }
            out.kind = Kind::Bool;
        }
        _ => {
            let mut b = Col::splat(Kind::Bool, 0);
            eval_into(heap, lanes_, mask, l, out)?;
            eval_into(heap, lanes_, mask, r, &mut b)?;
            let ak = out.kind;
            match op {
                BinOp::Eq | BinOp::Ne => {
                    // Values of different kinds are never equal (`Value`'s equality).
                    let same_kind = ak == b.kind;
                    for i in lanes(mask) {
                        let eq = same_kind && out.v[i] == b.v[i];
                        out.v[i] = (eq == (op == BinOp::Eq)) as i64;
                    }
                    out.kind = Kind::Bool;
                }
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                    if ak != Kind::Int || b.kind != Kind::Int {
                        return None;
                    }
                    for i in lanes(mask) {
                        let (x, y) = (out.v[i], b.v[i]);
                        out.v[i] = match op {
                            BinOp::Lt => x < y,
                            BinOp::Le => x <= y,
                            BinOp::Gt => x > y,
                            _ => x >= y,
                        } as i64;
                    }
                    out.kind = Kind::Bool;
                }
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => {
                    if ak != Kind::Int || b.kind != Kind::Int {
                        return None;
                    }
                    for i in lanes(mask) {
                        let (x, y) = (out.v[i], b.v[i]);
                        // Euclidean division, as the lane-by-lane evaluator; `None` on
                        // overflow or a zero divisor.
                        out.v[i] = match op {
                            BinOp::Add => x.checked_add(y),
                            BinOp::Sub => x.checked_sub(y),
                            BinOp::Mul => x.checked_mul(y),
                            BinOp::Div => x.checked_div_euclid(y),
                            _ => x.checked_rem_euclid(y),
                        }?;
                    }
                }
                _ => return None,
            }
        }
    }
    Some(())
}

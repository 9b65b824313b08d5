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
//!
//! With a [`Reads`] context, array element reads are evaluated too ([`eval_reads`]). Each read
//! must be in bounds and permitted (the context's check), else the evaluator gives up as above;
//! so a read that succeeds here is one the lane-by-lane evaluator would have made without a
//! diagnostic. The reads are logged with their lane; a caller that records accesses for the
//! race detector replays the log sorted by lane (stably), which is the order the lane-by-lane
//! evaluator makes them in: per lane, children are evaluated in the same order here.

use super::compile::CE;
use super::heap::{HObj, Heap};
use super::interp::Lane;
use super::value::{Loc, Value};
use front::ast::BinOp;
use front::Span;

/// Where each lane's locals live.
#[derive(Clone, Copy)]
pub enum Locals<'a> {
    /// The innermost frame of each lane.
    Lanes(&'a [Lane]),
    /// One store for all lanes, except that slot `slot` holds `vals[l]` in lane `l` (the
    /// instances of a quantifier's body).
    Binder { store: &'a [Value], slot: u32, vals: &'a [i64] },
    /// Threads kept column-wise (a launch run in bulk): slot `s` holds column `c` when
    /// `(s, c)` is in `cols`, every other slot the shared `store`'s value; `this` is shared.
    Columns { store: &'a [Value], this: &'a Value, cols: &'a [(u32, Col)] },
}

impl Locals<'_> {
    fn this(&self, l: usize) -> Option<(Kind, i64)> {
        match self {
            Locals::Lanes(ls) => classify(&ls[l].frames.last()?.this),
            Locals::Binder { .. } => None,
            Locals::Columns { this, .. } => classify(this),
        }
    }
}

/// May lane `l` read location `loc`?
pub type ElemCheck<'a> = &'a dyn Fn(usize, Loc) -> bool;
/// May each lane `l` of `mask` (lanes `0..n`) read element `base + l` of `obj`?
pub type RunCheck<'a> = &'a dyn Fn(u64, u32, i64) -> bool;

/// Array element reads: who may read what, and the log of what was read.
pub struct Reads<'a> {
    /// May lane `l` read location `loc`?
    pub check: ElemCheck<'a>,
    /// `run(mask, obj, base)`: may each lane `l` of `mask` (lanes `0..n`) read element
    /// `base + l` of `obj`? A quicker answer for a run of consecutive elements, which is what
    /// most reads in a kernel or a quantifier are. False when not known at once: the lanes
    /// are then checked one by one.
    pub run: Option<RunCheck<'a>>,
    /// Every read made, with its lane and the span of the access, in evaluation order (when
    /// the caller wants them: contract clauses record no access).
    pub log: Option<Vec<(usize, Loc, Span)>>,
    /// When set (and `log` too), the reads of a run (see `run`) are logged here instead, as
    /// `(object, first element, lanes, span of the access)`: lane `l` read element `first + l`. For a caller that
    /// needs the set of reads, not their order.
    pub runs: Option<Vec<(u32, usize, usize, Span)>>,
}

struct Ctx<'a, 'r> {
    heap: &'a Heap,
    locals: Locals<'a>,
    reads: Option<&'r mut Reads<'a>>,
}

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

/// Lane numbers, as values.
const LANE: [i64; MAX_LANES] = {
    let mut a = [0; MAX_LANES];
    let mut i = 0;
    while i < MAX_LANES {
        a[i] = i as i64;
        i += 1;
    }
    a
};

/// One value per lane, indexed by lane number; only the lanes of the evaluation mask are
/// meaningful.
#[derive(Clone, Copy)]
pub struct Col {
    pub kind: Kind,
    pub v: [i64; MAX_LANES],
}

impl Col {
    pub fn splat(kind: Kind, x: i64) -> Col {
        Col { kind, v: [x; MAX_LANES] }
    }

    /// Lanes of `mask` whose (boolean) value is true.
    pub fn true_mask(&self, mask: u64) -> u64 {
        if let Some(n) = prefix(mask) {
            let mut out = 0;
            for (l, x) in self.v[..n].iter().enumerate() {
                out |= ((*x != 0) as u64) << l;
            }
            return out;
        }
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

/// `Some(n)` when `mask` is the lanes `0..n` (n > 0), the usual shape: a full warp, a chunk of
/// quantifier instances. Loops over such a mask are plain counted loops.
#[inline]
fn prefix(mask: u64) -> Option<usize> {
    (mask != 0 && mask & mask.wrapping_add(1) == 0).then(|| mask.count_ones() as usize)
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

pub fn classify(v: &Value) -> Option<(Kind, i64)> {
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
    let mut cx = Ctx { heap, locals: Locals::Lanes(lanes_), reads: None };
    eval_into(&mut cx, mask, e, &mut out)?;
    Some(out)
}

/// [`eval`] with array element reads allowed, as `reads` permits and logs them, and locals
/// from `locals`. The log is left as far as evaluation got when this returns `None`.
pub fn eval_reads<'a>(
    heap: &'a Heap,
    locals: Locals<'a>,
    reads: &mut Reads<'a>,
    mask: u64,
    e: &CE,
    out: &mut Col,
) -> Option<()> {
    let mut cx = Ctx { heap, locals, reads: Some(reads) };
    eval_into(&mut cx, mask, e, out)
}

/// An empty column, to evaluate into.
pub fn col() -> Col {
    Col::splat(Kind::Bool, 0)
}

/// [`eval`] into `out` (columns are large; children are evaluated into the caller's
/// temporaries instead of being returned by value).
fn eval_into(cx: &mut Ctx, mask: u64, e: &CE, out: &mut Col) -> Option<()> {
    if mask == 0 {
        // Nothing to evaluate: any kind will do, the caller reads no lane.
        out.kind = Kind::Bool;
        return Some(());
    }
    match e {
        CE::Int(i) => fill(out, Kind::Int, *i),
        CE::Bool(b) => fill(out, Kind::Bool, *b as i64),
        CE::Null => fill(out, Kind::Ref, -1),
        CE::Local(s) => match cx.locals {
            // One loop per layout: this is the most frequent node.
            Locals::Lanes(ls) => {
                let mut kind = None;
                for l in lanes(mask) {
                    let (k, x) = classify(ls[l].frames.last()?.store.get(*s as usize)?)?;
                    if *kind.get_or_insert(k) != k {
                        return None;
                    }
                    out.v[l] = x;
                }
                out.kind = kind?;
            }
            Locals::Binder { slot, vals, .. } if slot == *s => {
                match prefix(mask) {
                    Some(n) => out.v[..n].copy_from_slice(vals.get(..n)?),
                    None => {
                        for l in lanes(mask) {
                            out.v[l] = *vals.get(l)?;
                        }
                    }
                }
                out.kind = Kind::Int;
            }
            Locals::Binder { store, .. } => {
                let (k, x) = classify(store.get(*s as usize)?)?;
                fill(out, k, x);
            }
            Locals::Columns { store, cols, .. } => match cols.iter().find(|c| c.0 == *s) {
                Some((_, c)) => {
                    // Lanes outside the mask carry no meaning: copy them all.
                    out.v = c.v;
                    out.kind = c.kind;
                }
                None => {
                    let (k, x) = classify(store.get(*s as usize)?)?;
                    fill(out, k, x);
                }
            },
        },
        CE::This => {
            for l in lanes(mask) {
                let (k, x) = cx.locals.this(l)?;
                if k != Kind::Ref {
                    return None;
                }
                out.v[l] = x;
            }
            out.kind = Kind::Ref;
        }
        CE::Index(a, i, span) => index(cx, mask, a, i, *span, out)?,
        CE::Not(x) => {
            eval_into(cx, mask, x, out)?;
            if out.kind != Kind::Bool {
                return None;
            }
            for l in lanes(mask) {
                out.v[l] ^= 1;
            }
        }
        CE::Neg(x, _) => {
            eval_into(cx, mask, x, out)?;
            if out.kind != Kind::Int {
                return None;
            }
            for l in lanes(mask) {
                out.v[l] = 0i64.checked_sub(out.v[l])?;
            }
        }
        CE::Length(x, _) => {
            eval_into(cx, mask, x, out)?;
            if out.kind != Kind::Ref {
                return None;
            }
            for l in lanes(mask) {
                // `len_of` as the lane-by-lane evaluator (an object's "length" is its field
                // count); null falls back and is reported there.
                let id = u32::try_from(out.v[l]).ok()?;
                out.v[l] = cx.heap.len_of(id) as i64;
            }
            out.kind = Kind::Int;
        }
        CE::ArrayShape(a, n) => {
            let mut cn = Col::splat(Kind::Int, 0);
            eval_into(cx, mask, a, out)?;
            eval_into(cx, mask, n, &mut cn)?;
            if out.kind != Kind::Ref || cn.kind != Kind::Int {
                return None;
            }
            for l in lanes(mask) {
                out.v[l] = match u32::try_from(out.v[l]) {
                    Ok(id) => (cx.heap.len_of(id) as i64 == cn.v[l]) as i64,
                    Err(_) => 0,
                };
            }
            out.kind = Kind::Bool;
        }
        CE::Cond(c, a, b) => {
            eval_into(cx, mask, c, out)?;
            if out.kind != Kind::Bool {
                return None;
            }
            let mt = out.true_mask(mask);
            let mf = mask & !mt;
            let mut cb = Col::splat(Kind::Bool, 0);
            // `out` may be overwritten by the then-side: the masks are known already.
            eval_into(cx, mt, a, out)?;
            eval_into(cx, mf, b, &mut cb)?;
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
        CE::Bin(op, l, r, _) => binary(cx, mask, *op, l, r, out)?,
        _ => return None,
    }
    Some(())
}

/// `x[i] op= y[i]` for `+`, `-`, `*` over lanes `0..n`; `None` when one overflows (the caller
/// gives up, as it does lane by lane).
fn arith_prefix(op: BinOp, x: &mut [i64], y: &[i64]) -> Option<()> {
    // One monomorphic loop per operator, with the overflow flags or-ed together.
    fn go(x: &mut [i64], y: &[i64], f: impl Fn(i64, i64) -> (i64, bool)) -> Option<()> {
        let mut bad = false;
        for (a, b) in x.iter_mut().zip(y) {
            let (r, o) = f(*a, *b);
            *a = r;
            bad |= o;
        }
        (!bad).then_some(())
    }
    match op {
        BinOp::Add => go(x, y, i64::overflowing_add),
        BinOp::Sub => go(x, y, i64::overflowing_sub),
        _ => go(x, y, i64::overflowing_mul),
    }
}

/// An array element read (only with a [`Reads`] context). Out of line: its temporary column
/// would otherwise enlarge every frame of the recursive evaluator.
#[inline(never)]
fn index(cx: &mut Ctx, mask: u64, a: &CE, i: &CE, span: Span, out: &mut Col) -> Option<()> {
    cx.reads.as_ref()?;
    let mut ci = Col::splat(Kind::Int, 0);
    eval_into(cx, mask, a, out)?;
    eval_into(cx, mask, i, &mut ci)?;
    if out.kind != Kind::Ref || ci.kind != Kind::Int {
        return None;
    }
    let heap = cx.heap;
    let reads = cx.reads.as_mut()?;
    if run_read(heap, reads, mask, span, out, &ci) {
        return Some(());
    }
    let mut kind = None;
    // Lanes usually index one array: look it up once (`cur` is the reference of `data`).
    let mut cur = -1i64;
    let mut data: &[Value] = &[];
    for l in lanes(mask) {
        let r = out.v[l];
        if r != cur || cur < 0 {
            let id = u32::try_from(r).ok()?;
            let HObj::Array { data: d, .. } = heap.objs.get(id as usize)? else {
                return None;
            };
            (cur, data) = (r, d);
        }
        let i = ci.v[l];
        let v = data.get(usize::try_from(i).ok()?)?;
        let loc = Loc::new(cur as u32, i as u32);
        if !(reads.check)(l, loc) {
            return None;
        }
        if let Some(log) = reads.log.as_mut() {
            log.push((l, loc, span));
        }
        let (k, x) = match v {
            Value::Int(x) => (Kind::Int, *x),
            _ => classify(v)?,
        };
        if *kind.get_or_insert(k) != k {
            return None;
        }
        out.v[l] = x;
    }
    out.kind = kind?;
    Some(())
}

/// The read of a run: lanes `0..n` (the whole mask) read consecutive elements of one array
/// of ints, all in bounds and permitted (`reads.run`). Then one bounds check and one
/// permission check serve all lanes. False (with `out` unchanged) when the read is not such
/// a run; the caller reads lane by lane.
fn run_read(
    heap: &Heap,
    reads: &mut Reads,
    mask: u64,
    span: Span,
    out: &mut Col,
    ci: &Col,
) -> bool {
    let (Some(run), Some(n)) = (reads.run, prefix(mask)) else {
        return false;
    };
    let (r, base) = (out.v[0], ci.v[0]);
    // Without early exits or index arithmetic, so that the compiler can vectorize the loop.
    let mut consecutive = true;
    for ((a, i), k) in out.v[..n].iter().zip(&ci.v[..n]).zip(&LANE[..n]) {
        consecutive &= (*a == r) & (i.wrapping_sub(*k) == base);
    }
    let (Ok(id), Ok(start)) = (u32::try_from(r), usize::try_from(base)) else {
        return false;
    };
    if !consecutive {
        return false;
    }
    let Some(HObj::Array { data, .. }) = heap.objs.get(id as usize) else {
        return false;
    };
    let Some(vals) = data.get(start..start + n) else {
        return false;
    };
    if !run(mask, id, base) {
        return false;
    }
    let mut ints = true;
    for (o, v) in out.v.iter_mut().zip(vals) {
        match v {
            Value::Int(x) => *o = *x,
            _ => ints = false,
        }
    }
    if !ints {
        // Put the array column back for the lane-by-lane read.
        out.v[..n].fill(r);
        return false;
    }
    out.kind = Kind::Int;
    match (reads.log.as_mut(), reads.runs.as_mut()) {
        (Some(_), Some(runs)) => runs.push((id, start, n, span)),
        (Some(log), None) => {
            log.extend((0..n).map(|l| (l, Loc::new(id, (start + l) as u32), span)))
        }
        _ => {}
    }
    true
}

fn fill(out: &mut Col, kind: Kind, x: i64) {
    out.kind = kind;
    // Lanes outside the mask carry no meaning: fill them all.
    out.v = [x; MAX_LANES];
}

fn binary(cx: &mut Ctx, mask: u64, op: BinOp, l: &CE, r: &CE, out: &mut Col) -> Option<()> {
    match op {
        // Short-circuit: the right side is evaluated only for the lanes that need it, as the
        // lane-by-lane evaluator does.
        BinOp::And | BinOp::Star | BinOp::Or | BinOp::Implies => {
            eval_into(cx, mask, l, out)?;
            if out.kind != Kind::Bool {
                return None;
            }
            let lt = out.true_mask(mask);
            let need = if op == BinOp::Or { mask & !lt } else { lt };
            let mut cr = Col::splat(Kind::Bool, 0);
            eval_into(cx, need, r, &mut cr)?;
            if need != 0 && cr.kind != Kind::Bool {
                return None;
            }
            // Over all lanes, without branches: where the right side was not evaluated, the
            // left decides (x = 1 for `||`, x = 0 otherwise), whatever `cr` holds there;
            // lanes outside the mask carry no meaning.
            let (x, y) = (&mut out.v, &cr.v);
            match op {
                BinOp::Or => {
                    for i in 0..MAX_LANES {
                        x[i] = ((x[i] != 0) | (y[i] != 0)) as i64;
                    }
                }
                BinOp::Implies => {
                    for i in 0..MAX_LANES {
                        x[i] = ((x[i] == 0) | (y[i] != 0)) as i64;
                    }
                }
                _ => {
                    for i in 0..MAX_LANES {
                        x[i] = ((x[i] != 0) & (y[i] != 0)) as i64;
                    }
                }
            }
            out.kind = Kind::Bool;
        }
        _ => {
            let mut b = Col::splat(Kind::Bool, 0);
            eval_into(cx, mask, l, out)?;
            eval_into(cx, mask, r, &mut b)?;
            let ak = out.kind;
            match op {
                BinOp::Eq | BinOp::Ne => {
                    // Values of different kinds are never equal (`Value`'s equality).
                    let same_kind = ak == b.kind;
                    let ne = (op == BinOp::Ne) as i64;
                    for i in 0..MAX_LANES {
                        let eq = (same_kind & (out.v[i] == b.v[i])) as i64;
                        out.v[i] = eq ^ ne;
                    }
                    out.kind = Kind::Bool;
                }
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                    if ak != Kind::Int || b.kind != Kind::Int {
                        return None;
                    }
                    // One loop per operator over all lanes (lanes outside the mask carry
                    // no meaning): plain comparisons the compiler vectorizes.
                    let (x, y) = (&mut out.v, &b.v);
                    match op {
                        BinOp::Lt => (0..MAX_LANES).for_each(|i| x[i] = (x[i] < y[i]) as i64),
                        BinOp::Le => (0..MAX_LANES).for_each(|i| x[i] = (x[i] <= y[i]) as i64),
                        BinOp::Gt => (0..MAX_LANES).for_each(|i| x[i] = (x[i] > y[i]) as i64),
                        _ => (0..MAX_LANES).for_each(|i| x[i] = (x[i] >= y[i]) as i64),
                    }
                    out.kind = Kind::Bool;
                }
                _ if op.is_int_arith() => {
                    if ak != Kind::Int || b.kind != Kind::Int {
                        return None;
                    }
                    if let (Some(n), BinOp::Add | BinOp::Sub | BinOp::Mul) = (prefix(mask), op) {
                        return arith_prefix(op, &mut out.v[..n], &b.v[..n]);
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
                            BinOp::Mod => x.checked_rem_euclid(y),
                            BinOp::TruncDiv => x.checked_div(y),
                            _ => x.checked_rem(y),
                        }?;
                    }
                }
                _ => return None,
            }
        }
    }
    Some(())
}

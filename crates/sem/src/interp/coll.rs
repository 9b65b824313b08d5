//! Sets, bags, maps, options and tuples (VerCors' ghost collections), set comprehensions,
//! and the operators on values other than two integers (dispatched here from the evaluator;
//! numbers go on to `num`). The values are canonical (see [`Value`]), so `==` is the
//! evaluator's value equality.
//!
//! | PVL | here |
//! |---|---|
//! | `x in s` (set) / `x in b` (bag) | membership / multiplicity (an `int`) |
//! | `s + t`, `s - t`, `s * t` | union (bags: sum), difference, intersection |
//! | `s < t`, `s <= t` (`>`, `>=` reversed) | strict subset / subset (bags: by multiplicity) |
//! | `m[k]`, `getFromMap(m, k)` | the value at `k`; outside the domain the default of the value type ([`MapVal`]) |
//! | `m ++ (k, v)`, `buildMap(m, k, v)` | `m` with `k` bound to `v` |
//! | `s ++ x` (`x` not a sequence) | `s` with `x` appended |
//! | `getOption(None)` | R-OPTION-NONE (VerCors checks that the option is a `Some`) |

use super::num::is_number;
use super::*;
use std::collections::BTreeMap;

/// Enumerations larger than this are R-QUANT-LIMIT (as quantifier domains).
const LIMIT: usize = 10_000_000;

impl Interp {
    /// `a op b` where `a` and `b` are not both integers (those are the evaluator's fast path).
    pub(super) fn binary_other(
        &mut self,
        op: BinOp,
        a: Value,
        b: Value,
        span: Span,
    ) -> Result<Value, Stop> {
        if is_number(&a) && is_number(&b) {
            return self.num_binary(op, &a, &b, span);
        }
        Ok(match (op, &a, &b) {
            (BinOp::In, x, Value::Set(s)) => Value::Bool(s.binary_search(x).is_ok()),
            (BinOp::In, x, Value::Bag(s)) => Value::Int(count(s, x) as i64),
            (BinOp::Add, Value::Set(s), Value::Set(t)) => {
                Value::set(s.iter().chain(t.iter()).cloned().collect())
            }
            (BinOp::Add, Value::Bag(s), Value::Bag(t)) => {
                Value::bag(s.iter().chain(t.iter()).cloned().collect())
            }
            (BinOp::Sub, Value::Set(s), Value::Set(t)) => Value::Set(Rc::new(
                s.iter().filter(|x| t.binary_search(x).is_err()).cloned().collect(),
            )),
            (BinOp::Mul, Value::Set(s), Value::Set(t)) => Value::Set(Rc::new(
                s.iter().filter(|x| t.binary_search(x).is_ok()).cloned().collect(),
            )),
            (BinOp::Sub | BinOp::Mul, Value::Bag(s), Value::Bag(t)) => {
                let (cs, ct) = (counts(s), counts(t));
                let mut out = Vec::new();
                for (x, n) in cs {
                    let m = ct.get(x).copied().unwrap_or(0);
                    let keep = if op == BinOp::Sub { n.saturating_sub(m) } else { n.min(m) };
                    out.extend(std::iter::repeat_n(x.clone(), keep));
                }
                Value::Bag(Rc::new(out))
            }
            (
                BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge,
                Value::Set(_) | Value::Bag(_),
                Value::Set(_) | Value::Bag(_),
            ) if std::mem::discriminant(&a) == std::mem::discriminant(&b) => {
                let (small, large) =
                    if matches!(op, BinOp::Lt | BinOp::Le) { (&a, &b) } else { (&b, &a) };
                let sub = included(small, large);
                let strict = matches!(op, BinOp::Lt | BinOp::Gt);
                Value::Bool(sub && !(strict && small == large))
            }
            // `s ++ x` with an element `x` appends it (a sequence on the right is the
            // evaluator's concatenation).
            (BinOp::Concat, Value::Seq(s), x) if !matches!(x, Value::Seq(_)) => {
                let mut v = (**s).clone();
                v.push(x.clone());
                Value::Seq(Rc::new(v))
            }
            (BinOp::Concat, Value::Map(m), Value::Tuple(kv)) if kv.len() == 2 => {
                Value::Map(Rc::new(m.with(kv[0].clone(), kv[1].clone())))
            }
            _ => return Err(self.bad_operands(op, &a, &b, span)),
        })
    }

    /// A [`CE::Ghost`] operation.
    pub(super) fn ghost(
        &mut self,
        op: GOp,
        args: &[CE],
        span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<Value, Stop> {
        let mut v = Vec::with_capacity(args.len());
        for a in args {
            v.push(self.ev(a, env, pv)?);
        }
        Ok(match (op, v.as_slice()) {
            (GOp::ArrayValues, [a, Value::Int(lo), Value::Int(hi)]) => {
                let len = match a {
                    Value::Ref(id) => self.heap.len_of(*id) as i64,
                    _ => 0,
                };
                if !(0 <= *lo && lo <= hi && *hi <= len) {
                    let msg =
                        format!("`\\values` of cells {lo} .. {hi} of an array of length {len}");
                    return Err(err("R-OOB", msg, span, "out of bounds"));
                }
                let mut cells = Vec::with_capacity((hi - lo) as usize);
                for i in *lo..*hi {
                    let l = self.index_loc(a.clone(), i, span)?;
                    cells.push(self.read(l, span, env, pv));
                }
                Value::Seq(Rc::new(cells))
            }
            (GOp::SetLit, _) => Value::set(v),
            (GOp::BagLit, _) => Value::bag(v),
            (GOp::Tuple, _) => Value::Tuple(Rc::new(v)),
            (GOp::Fst, [Value::Tuple(t)]) if !t.is_empty() => t[0].clone(),
            (GOp::Snd, [Value::Tuple(t)]) if t.len() > 1 => t[1].clone(),
            (GOp::SetRange, [Value::Int(lo), Value::Int(hi)]) => {
                if hi.saturating_sub(*lo) > LIMIT as i64 {
                    return Err(inconclusive("R-QUANT-LIMIT", "set range larger than 10^7", span));
                }
                Value::Set(Rc::new((*lo..*hi).map(Value::Int).collect()))
            }
            (GOp::MapLit, [dflt, kvs @ ..]) if kvs.len() % 2 == 0 => Value::map(
                kvs.chunks(2).map(|kv| (kv[0].clone(), kv[1].clone())).collect(),
                dflt.clone(),
            ),
            (GOp::Some, [x]) => Value::Opt(Some(Rc::new(x.clone()))),
            (GOp::GetOption, [Value::Opt(o)]) => match o {
                Some(x) => (**x).clone(),
                None => {
                    return Err(err(
                        "R-OPTION-NONE",
                        format!("`{}` of `None`", self.text(span)),
                        span,
                        "the option is `None`",
                    ))
                }
            },
            (GOp::GetOrElse, [Value::Opt(o), d]) => match o {
                Some(x) => (**x).clone(),
                None => d.clone(),
            },
            (GOp::MapGet, [Value::Map(m), k]) => m.get(k),
            (GOp::MapBuild, [Value::Map(m), k, x]) => {
                Value::Map(Rc::new(m.with(k.clone(), x.clone())))
            }
            (GOp::MapRemove, [Value::Map(m), k]) => Value::Map(Rc::new(m.without(k))),
            // The keys are sorted and distinct already.
            (GOp::Keys, [Value::Map(m)]) => {
                Value::Set(Rc::new(m.entries.iter().map(|e| e.0.clone()).collect()))
            }
            (GOp::Values, [Value::Map(m)]) => {
                Value::set(m.entries.iter().map(|e| e.1.clone()).collect())
            }
            // Ordered by their first component, the distinct keys.
            (GOp::Items, [Value::Map(m)]) => Value::Set(Rc::new(
                m.entries
                    .iter()
                    .map(|(k, x)| Value::Tuple(Rc::new(vec![k.clone(), x.clone()])))
                    .collect(),
            )),
            (GOp::Disjoint, [Value::Map(a), Value::Map(b)]) => {
                Value::Bool(a.entries.iter().all(|(k, _)| b.find(k).is_err()))
            }
            (GOp::Trunc, [Value::Perm(a)]) if a.k == 0 => {
                Value::big(a.q.to_big().trunc().to_integer())
            }
            (GOp::Trunc, [x]) => x.clone(),
            (GOp::ToRat, [x]) => match x {
                Value::Int(_) | Value::Big(_) => Value::perm(x.amount().unwrap_or(Amt::NONE)),
                _ => x.clone(),
            },
            _ => return Err(inconclusive("R-TYPE", format!("`{}` on {v:?}", op.name()), span)),
        })
    }

    /// `set<T>{body | gens; cond}`: every tuple of the generators' values (sources in order,
    /// ranges from the bounds), filtered by `cond`.
    pub(super) fn comprehension(
        &mut self,
        gens: &[CompGen],
        cond: Option<&CE>,
        body: &CE,
        span: Span,
        env: &mut Env,
        pv: PV,
    ) -> Result<Value, Stop> {
        let mut out = Vec::new();
        let mut steps = 0usize;
        self.comp_rec(gens, cond, body, span, env, pv, &mut out, &mut steps)?;
        Ok(Value::set(out))
    }

    #[allow(clippy::too_many_arguments)]
    fn comp_rec(
        &mut self,
        gens: &[CompGen],
        cond: Option<&CE>,
        body: &CE,
        span: Span,
        env: &mut Env,
        pv: PV,
        out: &mut Vec<Value>,
        steps: &mut usize,
    ) -> Result<(), Stop> {
        let Some((g, rest)) = gens.split_first() else {
            *steps += 1;
            if *steps > LIMIT {
                return Err(inconclusive(
                    "R-QUANT-LIMIT",
                    "set comprehension over more than 10^7 values",
                    span,
                ));
            }
            let keep = match cond {
                Some(c) => {
                    let v = self.ev(c, env, pv)?;
                    self.as_bool(v, span)?
                }
                None => true,
            };
            if keep {
                out.push(self.ev(body, env, pv)?);
            }
            return Ok(());
        };
        let vals: Vec<Value> = match &g.source {
            Some(s) => match self.ev(s, env, pv)? {
                Value::Set(v) | Value::Bag(v) | Value::Seq(v) => v.to_vec(),
                other => {
                    return Err(inconclusive(
                        "R-TYPE",
                        format!("a comprehension over {other:?}, not a collection"),
                        span,
                    ))
                }
            },
            None => {
                let b = &g.binder;
                if b.lows.is_empty() || b.highs.is_empty() {
                    return Err(unsupported(
                        format!(
                            "a set comprehension over every value of `{}` (no {} bound in its \
                             condition): the set may be infinite",
                            b.name,
                            if b.lows.is_empty() { "lower" } else { "upper" }
                        ),
                        span,
                    ));
                }
                let (lo, hi) = self.binder_range(b, span, env, pv)?;
                (lo..hi).map(Value::Int).collect()
            }
        };
        for v in vals {
            env.store[g.binder.slot as usize] = v;
            self.comp_rec(rest, cond, body, span, env, pv, out, steps)?;
        }
        Ok(())
    }
}

/// The multiplicity of `x` in the sorted `s`.
fn count(s: &[Value], x: &Value) -> usize {
    let lo = s.partition_point(|y| y < x);
    let hi = s.partition_point(|y| y <= x);
    hi - lo
}

fn counts(s: &[Value]) -> BTreeMap<&Value, usize> {
    let mut m = BTreeMap::new();
    for x in s {
        *m.entry(x).or_insert(0) += 1;
    }
    m
}

/// Is the set or bag `a` included in `b` (bags: every multiplicity at most `b`'s)?
fn included(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Set(s), Value::Set(t)) => s.iter().all(|x| t.binary_search(x).is_ok()),
        (Value::Bag(s), Value::Bag(t)) => {
            let ct = counts(t);
            counts(s).into_iter().all(|(x, n)| ct.get(x).is_some_and(|m| n <= *m))
        }
        _ => false,
    }
}

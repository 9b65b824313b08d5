//! A quantified variable that the guards determine, found with Z3.
//!
//! After a nested quantifier has been re-indexed, the guards of the outer one may fix one of
//! its variables without any syntactic window: over (b, j), the guards of a block's tiled
//! cells `b * 64 + t + i * 16` (t < 16, t + i * 16 < 64) say `0 <= j - b * 64 < 64` only
//! through `%` and `\` of `j - b * 64`. For a candidate value `E \ K` of `b`, read off a
//! subterm `E - b * K` of the guards, Z3 checks that the guards imply `b == E \ K`. Where they
//! do, substituting it keeps the same instances (each instance has that value of `b`), and the
//! quantifier loses a variable whose receiver Silicon could not prove injective.
//!
//! The guards are translated to linear integer arithmetic with `\` and `%` as SMT's `div` and
//! `mod` (Viper's semantics). A term outside that fragment (a field, a function application) is
//! a fresh constant named by its text, and a guard that cannot be translated is left out: both
//! only weaken the hypothesis, so an implication proved stays valid. The solver runs under a
//! resource limit, not a time limit, so the answer does not depend on the machine's load.

use super::{int, lit, text};
use crate::ast::{Exp, ExpKind};
use num_traits::Signed;
use z3::ast::{Ast, Bool, Int};

/// Resource limit of one implication check (a few milliseconds of Z3's work).
const RLIMIT: u32 = 2_000_000;

thread_local! {
    // One context per thread, created on first use: most programs never need one.
    static CTX: &'static z3::Context = Box::leak(Box::new(z3::Context::new(&z3::Config::new())));
}

/// A variable of `vars` and its value, when the guards determine it as `E \ K`.
pub(super) fn determined(vars: &[String], guards: &[Exp]) -> Option<(String, Exp)> {
    for v in vars {
        for cand in candidates(v, guards) {
            // The value may mention the other variables, never `v` itself.
            if cand.mentions_var(v) {
                continue;
            }
            if CTX.with(|ctx| implied(ctx, guards, v, &cand)) {
                return Some((v.clone(), cand));
            }
        }
    }
    None
}

/// `E \ K` for every subterm `E - v * K` (or `E - K * v`) of the guards, and `(E - c + K - 1) \ K`
/// for every subterm `v * K + c - E` (a mirrored block, `b * 64 + 63 - j`), `K` a positive
/// literal and `E`, `c` free of `v`; each distinct candidate once, in the order found.
fn candidates(v: &str, guards: &[Exp]) -> Vec<Exp> {
    let is_v = |e: &Exp| matches!(&e.kind, ExpKind::Var(n) if n == v);
    // `v * K` or `K * v`: K.
    let scaled = |p: &Exp| {
        let ExpKind::Binary("*", a, b) = &p.kind else { return None };
        let k = if is_v(a) {
            lit(b)
        } else if is_v(b) {
            lit(a)
        } else {
            None
        };
        k.filter(|k| k.is_positive())
    };
    let mut out: Vec<Exp> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for g in guards {
        g.visit(&mut |n| {
            let ExpKind::Binary("-", x, y) = &n.kind else { return };
            let cand = if let Some(k) = scaled(y).filter(|_| !x.mentions_var(v)) {
                Exp::bin("\\", (**x).clone(), int(&k))
            } else if y.mentions_var(v) {
                return;
            } else {
                // `v * K + c - E`, or `v * K - E`.
                let (k, c) = match &x.kind {
                    ExpKind::Binary("+", p, c) if !c.mentions_var(v) => (scaled(p), (**c).clone()),
                    _ => (scaled(x), Exp::int(0)),
                };
                let Some(k) = k else { return };
                let up = Exp::bin("+", Exp::bin("-", (**y).clone(), c), int(&(k.clone() - 1)));
                Exp::bin("\\", up, int(&k))
            };
            let key = text(&cand);
            if !seen.contains(&key) {
                seen.push(key);
                out.push(cand);
            }
        });
    }
    out
}

/// Whether the guards imply `v == cand` (Z3 answers unsat for the guards and `v != cand`).
fn implied(ctx: &z3::Context, guards: &[Exp], v: &str, cand: &Exp) -> bool {
    let tr = Tr { ctx };
    let (Some(value), Some(var)) = (tr.int(cand), tr.int(&Exp::var(v))) else {
        return false;
    };
    let solver = z3::Solver::new(ctx);
    let mut p = z3::Params::new(ctx);
    p.set_u32("rlimit", RLIMIT);
    p.set_u32("random_seed", 0);
    solver.set_params(&p);
    for g in guards {
        if let Some(b) = tr.bool(g) {
            solver.assert(&b);
        }
    }
    solver.assert(&var._eq(&value).not());
    solver.check() == z3::SatResult::Unsat
}

struct Tr<'c> {
    ctx: &'c z3::Context,
}

impl<'c> Tr<'c> {
    fn int(&self, e: &Exp) -> Option<Int<'c>> {
        Some(match &e.kind {
            ExpKind::Int(v) => Int::from_str(self.ctx, &v.to_string())?,
            ExpKind::Var(n) => Int::new_const(self.ctx, format!("v!{n}")),
            ExpKind::Unary("-", a) => self.int(a)?.unary_minus(),
            ExpKind::Binary(op, a, b) => {
                let (x, y) = (self.int(a)?, self.int(b)?);
                match *op {
                    "+" => Int::add(self.ctx, &[&x, &y]),
                    "-" => Int::sub(self.ctx, &[&x, &y]),
                    "*" => Int::mul(self.ctx, &[&x, &y]),
                    "\\" => x.div(&y),
                    "%" => x.modulo(&y),
                    _ => return None,
                }
            }
            ExpKind::Cond(c, a, b) => self.bool(c)?.ite(&self.int(a)?, &self.int(b)?),
            // Reads and applications: a constant per distinct term.
            ExpKind::Field(..) | ExpKind::App(..) | ExpKind::Len(..) | ExpKind::SeqIndex(..) => {
                Int::new_const(self.ctx, format!("t!{}", text(e)))
            }
            _ => return None,
        })
    }

    fn bool(&self, e: &Exp) -> Option<Bool<'c>> {
        Some(match &e.kind {
            ExpKind::Bool(b) => Bool::from_bool(self.ctx, *b),
            ExpKind::Var(n) => Bool::new_const(self.ctx, format!("v!{n}")),
            ExpKind::Field(..) | ExpKind::App(..) => {
                Bool::new_const(self.ctx, format!("t!{}", text(e)))
            }
            ExpKind::Unary("!", a) => self.bool(a)?.not(),
            ExpKind::Binary(op @ ("&&" | "||" | "==>"), a, b) => {
                let (x, y) = (self.bool(a)?, self.bool(b)?);
                match *op {
                    "&&" => Bool::and(self.ctx, &[&x, &y]),
                    "||" => Bool::or(self.ctx, &[&x, &y]),
                    _ => x.implies(&y),
                }
            }
            ExpKind::Binary(op @ ("<" | "<=" | ">" | ">="), a, b) => {
                let (x, y) = (self.int(a)?, self.int(b)?);
                match *op {
                    "<" => x.lt(&y),
                    "<=" => x.le(&y),
                    ">" => x.gt(&y),
                    _ => x.ge(&y),
                }
            }
            ExpKind::Binary(op @ ("==" | "!="), a, b) => {
                let eq = match (self.int(a), self.int(b)) {
                    (Some(x), Some(y)) => x._eq(&y),
                    _ => self.bool(a)?._eq(&self.bool(b)?),
                };
                if *op == "==" {
                    eq
                } else {
                    eq.not()
                }
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: &str) -> Exp {
        Exp::var(n)
    }
    fn cell() -> Exp {
        Exp::bin("-", v("j"), Exp::bin("*", v("b"), Exp::int(64)))
    }
    fn vars() -> Vec<String> {
        vec!["b".into(), "j".into()]
    }

    #[test]
    fn a_block_is_determined_by_its_cell() {
        let guards = vec![
            Exp::bin("<=", Exp::int(0), cell()),
            Exp::bin("<", cell(), Exp::int(64)),
            Exp::bin("<", v("b"), Exp::app("alen", vec![v("a")])),
        ];
        let (var, val) = determined(&vars(), &guards).expect("b is determined");
        assert_eq!(var, "b");
        assert_eq!(text(&val), "j \\ 64");
    }

    #[test]
    fn overlapping_blocks_determine_nothing() {
        // Windows of 128 cells every 64: two blocks hold each cell.
        let guards =
            vec![Exp::bin("<=", Exp::int(0), cell()), Exp::bin("<", cell(), Exp::int(128))];
        assert!(determined(&vars(), &guards).is_none());
        // An untranslatable guard is left out, never assumed.
        let guards = vec![Exp::bin("<=", Exp::int(0), cell()), Exp::synth(ExpKind::Wildcard)];
        assert!(determined(&vars(), &guards).is_none());
    }
}

//! Set comprehensions `set<T> { body | T x <- S, int y; cond }` over finite domains.
//!
//! Viper has no set binder, so a comprehension is encoded in one of two ways:
//! - every generator ranges over a few literal values (a literal collection, or an `int` with
//!   literal bounds in the condition): the set is written out, `(c1 ? Set(b1) : Set()) union …`,
//!   which Silicon decides without quantifier instantiation;
//! - otherwise, in code, over sources and symbolic `int` bounds: a fresh variable with the
//!   set's two defining facts inhaled (every member is some `body` of a tuple in range that
//!   satisfies `cond`; every such `body` is a member). A set with those facts exists because
//!   every domain is finite, so the inhale assumes nothing false.
//!
//! A generator with no finite domain (`int x; x > 0`, or a type other than `int` without a
//! source) is refused: Viper's sets are finite, so facts about an infinite one could be false.
//! So is a symbolic comprehension in a contract (there is no statement to hoist the facts to).

use super::{Encoder, R};
use crate::ast::{Exp, ExpKind, Origin, Stmt, StmtKind, Ty};
use front::ast_comp::Comprehension;
use front::span::Span;
use num_bigint::BigInt;

/// At most this many tuples are written out; beyond it the symbolic encoding is used.
const MAX_EXPANDED: usize = 256;

/// What one generator ranges over.
enum Domain {
    /// These values, written out.
    Values(Vec<Exp>),
    /// The members of a collection (`x in S`).
    Members(Exp),
    /// `lo <= x && x < hi`, from the condition.
    Ints(Exp, Exp),
}

impl Encoder<'_> {
    pub fn set_comprehension(&mut self, c: &Comprehension, code: bool, span: Span) -> R<Exp> {
        let elem = self.viper_ty(&c.elem_ty)?;
        self.scopes.push(Default::default());
        let r = self.comprehension_in_scope(c, elem, code, span);
        self.scopes.pop();
        r
    }

    fn comprehension_in_scope(
        &mut self,
        c: &Comprehension,
        elem: Ty,
        code: bool,
        span: Span,
    ) -> R<Exp> {
        let mut vars = Vec::new();
        let mut sources = Vec::new();
        for g in &c.gens {
            // A source is evaluated before its binder is in scope.
            let source = match &g.source {
                Some(s) => Some(self.spec(s)?),
                None => None,
            };
            let ty = self.viper_ty(&g.ty)?;
            let v = self.fresh_name(&g.name.name);
            self.bind_name(&g.name.name, &v, &g.ty);
            vars.push((v, ty));
            sources.push(source);
        }
        let mut guards = Vec::new();
        if let Some(cond) = &c.cond {
            super::quant::split_and(self.spec(cond)?, &mut guards);
        }
        let body = self.spec(&c.body)?;
        let names: Vec<String> = vars.iter().map(|(v, _)| v.clone()).collect();
        let mut domains = Vec::new();
        for (((v, ty), source), g) in vars.iter().zip(sources).zip(&c.gens) {
            let d = match source {
                Some(s) => match &s.kind {
                    ExpKind::SetLit(_, xs) | ExpKind::SeqLit(_, xs) => Domain::Values(xs.clone()),
                    _ => Domain::Members(s),
                },
                None if *ty == Ty::Int => match int_bounds(&guards, v, &names) {
                    Some((lo, hi)) => match (lit(&lo), lit(&hi)) {
                        (Some(l), Some(h)) if h <= l || &h - &l <= BigInt::from(MAX_EXPANDED) => {
                            let mut xs = Vec::new();
                            let mut k = l;
                            while k < h {
                                xs.push(Exp::synth(ExpKind::Int(k.clone())));
                                k += 1;
                            }
                            Domain::Values(xs)
                        }
                        _ => Domain::Ints(lo, hi),
                    },
                    None => return self.unbounded(g.name.name.as_str(), g.span),
                },
                None => return self.unbounded(g.name.name.as_str(), g.span),
            };
            domains.push(d);
        }
        let cond = Exp::and_all(guards);
        let lists: Option<Vec<&Vec<Exp>>> = domains
            .iter()
            .map(|d| match d {
                Domain::Values(xs) => Some(xs),
                _ => None,
            })
            .collect();
        let small = |ls: &Vec<&Vec<Exp>>| {
            ls.iter()
                .try_fold(1usize, |n, xs| n.checked_mul(xs.len()))
                .is_some_and(|n| n <= MAX_EXPANDED)
        };
        if let Some(lists) = lists.filter(small) {
            return Ok(expand(&names, &lists, &cond, &body, &elem).with_span(Some(span)));
        }
        if !code {
            self.unsupported(
                "a set comprehension over a symbolic range in a specification (assign it to \
                 a local first)",
                span,
            );
            return Err(());
        }
        let set = self.temp("comp", Ty::Set(Box::new(elem.clone())));
        let mut range = Vec::new();
        for ((v, ty), d) in vars.iter().zip(&domains) {
            range.push(match d {
                Domain::Values(xs) => {
                    Exp::bin("in", Exp::var(v), Exp::synth(ExpKind::SetLit(ty.clone(), xs.clone())))
                }
                Domain::Members(s) => Exp::bin("in", Exp::var(v), s.clone()),
                Domain::Ints(lo, hi) => Exp::and(
                    Exp::bin("<=", lo.clone(), Exp::var(v)),
                    Exp::bin("<", Exp::var(v), hi.clone()),
                ),
            });
        }
        let inside = Exp::and(Exp::and_all(range), cond);
        let y = self.fresh_name("elem");
        let member = Exp::bin("in", Exp::var(&y), Exp::var(&set));
        let only = Exp::synth(ExpKind::Forall(
            vec![(y.clone(), elem.clone())],
            vec![vec![member.clone()]],
            Box::new(Exp::implies(
                member,
                Exp::synth(ExpKind::Exists(
                    vars.clone(),
                    vec![],
                    Box::new(Exp::and(inside.clone(), Exp::bin("==", Exp::var(&y), body.clone()))),
                )),
            )),
        ));
        let every = Exp::synth(ExpKind::Forall(
            vars,
            vec![],
            Box::new(Exp::implies(inside, Exp::bin("in", body, Exp::var(&set)))),
        ));
        self.pending.push(Stmt::new(StmtKind::Inhale(Exp::and(only, every)), Origin::synthetic()));
        Ok(Exp::new(ExpKind::Var(set), Some(span)))
    }

    fn unbounded(&mut self, name: &str, span: Span) -> R<Exp> {
        self.unsupported(
            &format!(
                "a set comprehension whose generator `{name}` has no finite range (give it a \
                 source `<- S`, or bounds `lo <= {name} && {name} < hi` in the condition)"
            ),
            span,
        );
        Err(())
    }
}

/// The written-out set: one conditional singleton per tuple of the domains' values.
fn expand(names: &[String], lists: &[&Vec<Exp>], cond: &Exp, body: &Exp, elem: &Ty) -> Exp {
    let mut tuples: Vec<Vec<Exp>> = vec![Vec::new()];
    for xs in lists {
        tuples = tuples
            .into_iter()
            .flat_map(|t| {
                xs.iter().map(move |x| {
                    let mut t = t.clone();
                    t.push(x.clone());
                    t
                })
            })
            .collect();
    }
    let empty = Exp::synth(ExpKind::SetLit(elem.clone(), Vec::new()));
    let mut parts = Vec::new();
    for t in tuples {
        let (mut c, mut b) = (cond.clone(), body.clone());
        for (n, x) in names.iter().zip(&t) {
            c = c.subst(n, x);
            b = b.subst(n, x);
        }
        let one = Exp::synth(ExpKind::SetLit(elem.clone(), vec![b]));
        parts.push(match c.kind {
            ExpKind::Bool(true) => one,
            _ => Exp::synth(ExpKind::Cond(Box::new(c), Box::new(one), Box::new(empty.clone()))),
        });
    }
    parts.into_iter().reduce(|a, b| Exp::bin("union", a, b)).unwrap_or(empty)
}

pub(super) fn lit(e: &Exp) -> Option<BigInt> {
    match &e.kind {
        ExpKind::Int(v) => Some(v.clone()),
        ExpKind::Unary("-", x) => lit(x).map(|v| -v),
        _ => None,
    }
}

/// `lo <= v && v < hi` from the guards (any of `<`, `<=`, `>`, `>=` on either side), with
/// bounds free of every generator variable.
pub(super) fn int_bounds(guards: &[Exp], v: &str, vars: &[String]) -> Option<(Exp, Exp)> {
    int_bounds_at(guards, v, vars).map(|(lo, hi, _)| (lo, hi))
}

/// [`int_bounds`], with the positions of the two guards the bounds come from (which say
/// exactly `lo <= v` and `v < hi`).
pub(super) fn int_bounds_at(
    guards: &[Exp],
    v: &str,
    vars: &[String],
) -> Option<(Exp, Exp, [usize; 2])> {
    let free = |e: &Exp| !vars.iter().any(|x| e.mentions_var(x));
    let is_v = |e: &Exp| matches!(&e.kind, ExpKind::Var(n) if n == v);
    let plus1 = |e: &Exp| match lit(e) {
        Some(k) => Exp::synth(ExpKind::Int(k + 1)),
        None => Exp::bin("+", e.clone(), Exp::synth(ExpKind::Int(BigInt::from(1)))),
    };
    let (mut lo, mut hi) = (None, None);
    for (at, g) in guards.iter().enumerate() {
        let ExpKind::Binary(op, a, b) = &g.kind else { continue };
        let (a, b) = (&**a, &**b);
        let (bound, is_lo) = match *op {
            "<=" if is_v(b) && free(a) => (a.clone(), true),
            ">=" if is_v(a) && free(b) => (b.clone(), true),
            "<" if is_v(b) && free(a) => (plus1(a), true),
            ">" if is_v(a) && free(b) => (plus1(b), true),
            "<" if is_v(a) && free(b) => (b.clone(), false),
            ">" if is_v(b) && free(a) => (a.clone(), false),
            "<=" if is_v(a) && free(b) => (plus1(b), false),
            ">=" if is_v(b) && free(a) => (plus1(a), false),
            _ => continue,
        };
        let slot = if is_lo { &mut lo } else { &mut hi };
        if slot.is_none() {
            *slot = Some((bound, at));
        }
    }
    let ((lo, l), (hi, h)) = (lo?, hi?);
    Some((lo, hi, [l, h]))
}

//! Injectivity of quantified permissions whose receivers are references read from the heap or a
//! sequence (`\forall* int i; …; Perm(xs[i].f, p)`, `idle(ts[i])`).
//!
//! Silicon checks that such a receiver is injective wherever the assertion is inhaled, also
//! where the program has no way to prove it (a method's own precondition). VerCors 1.4 verifies
//! these programs: injectivity is assumed where the permission is received and checked where it
//! is given away, as Silicon's `--assumeInjectivityOnInhale` does (our Silicon predates it).
//! VerCors 2 checks it where it is received too (its `seq-item-access.pvl` expects the failure,
//! and its `array-item-access.pvl` states injectivity to verify): for a VerCors 2 program the
//! rewrite is left out (`Encoder::v2`).
//! The encoding states it: `inj ? QP : false`, where `inj` says that distinct values of the
//! variables denote distinct receivers. Inhaled, the `false` branch is infeasible, so `inj` is
//! assumed; exhaled, the `false` branch fails, so `inj` must hold, which is what Silicon checks
//! for the exhale of a quantified permission anyway.

use super::quant::Fresh;
use crate::ast::{Exp, ExpKind, Ty};

/// Rewrite every quantified permission of `q` (top-level conjuncts) whose receiver needs it.
pub fn assume_injective(fresh: &mut dyn Fresh, q: Exp) -> Exp {
    match q.kind {
        ExpKind::Binary("&&", a, b) => Exp {
            kind: ExpKind::Binary(
                "&&",
                Box::new(assume_injective(fresh, *a)),
                Box::new(assume_injective(fresh, *b)),
            ),
            span: q.span,
        },
        ExpKind::Forall(vars, trig, body) => {
            let inj = injectivity(fresh, &vars, &body);
            let q = Exp { kind: ExpKind::Forall(vars, trig, body), span: q.span };
            match inj {
                Some(inj) => {
                    let span = q.span;
                    let kind =
                        ExpKind::Cond(Box::new(inj), Box::new(q), Box::new(Exp::bool(false)));
                    Exp { kind, span }
                }
                None => q,
            }
        }
        kind => Exp { kind, span: q.span },
    }
}

/// The receiver terms of the one accessibility predicate of `guard ==> acc(loc, p)` that need an
/// injectivity fact: the object of a field location, unless it is an array cell (`aloc(a, i)`,
/// injective by the array axioms); the arguments of a predicate instance, unless one of them is a
/// bare variable of the quantifier.
fn receivers<'a>(vars: &[(String, Ty)], loc: &'a Exp) -> Option<Vec<&'a Exp>> {
    let mentions = |e: &Exp| vars.iter().any(|(v, _)| e.mentions_var(v));
    let bare = |e: &Exp| matches!(&e.kind, ExpKind::Var(n) if vars.iter().any(|(v, _)| v == n));
    match &loc.kind {
        ExpKind::Field(r, _) => {
            let cell = matches!(&r.kind, ExpKind::App(f, _) if f == "aloc");
            (mentions(r) && !cell && !bare(r)).then(|| vec![&**r])
        }
        ExpKind::App(_, args) => {
            (args.iter().any(mentions) && !args.iter().any(bare)).then(|| args.iter().collect())
        }
        _ => None,
    }
}

fn injectivity(fresh: &mut dyn Fresh, vars: &[(String, Ty)], body: &Exp) -> Option<Exp> {
    let (guard, acc) = match &body.kind {
        ExpKind::Binary("==>", g, a) => (Some(&**g), &**a),
        _ => (None, body),
    };
    let ExpKind::Acc(loc, _) = &acc.kind else { return None };
    let recv = receivers(vars, loc)?;
    // Two copies of the variables, both under fresh names: the quantifier may later be
    // re-indexed by substituting an expression over its own variable for an enclosing one (a
    // thread's), which must not be captured here.
    let mut copy = || -> Vec<(String, Ty)> {
        vars.iter().map(|(v, t)| (fresh.fresh(&format!("{v}_")), t.clone())).collect()
    };
    let (ones, twins) = (copy(), copy());
    let rename = |e: &Exp, to: &[(String, Ty)]| {
        vars.iter().zip(to).fold(e.clone(), |e, ((v, _), (w, _))| e.subst(v, &Exp::var(w)))
    };
    let one = |e: &Exp| rename(e, &ones);
    let twin = |e: &Exp| rename(e, &twins);
    let differ = |pairs: Vec<(Exp, Exp)>| {
        pairs
            .into_iter()
            .map(|(a, b)| Exp::bin("!=", a, b))
            .reduce(|a, b| Exp::bin("||", a, b))
            .unwrap_or_else(|| Exp::bool(false))
    };
    let vars_differ = differ(
        ones.iter().zip(&twins).map(|((v, _), (w, _))| (Exp::var(v), Exp::var(w))).collect(),
    );
    let recv_differ = differ(recv.iter().map(|r| (one(r), twin(r))).collect());
    let mut hyp = Vec::new();
    if let Some(g) = guard {
        hyp.push(one(g));
        hyp.push(twin(g));
    }
    hyp.push(vars_differ);
    let all: Vec<(String, Ty)> = ones.into_iter().chain(twins).collect();
    Some(Exp::synth(ExpKind::Forall(
        all,
        vec![],
        Box::new(Exp::implies(Exp::and_all(hyp), recv_differ)),
    )))
}

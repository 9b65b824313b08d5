//! Building a universal quantifier with its triggers: the rules of `quant` hand over the
//! trigger they re-indexed by; terms Viper rejects in a trigger are dropped, and a pure fact
//! about several arrays' cells gets one trigger per cell.

use crate::ast::{Exp, ExpKind, Ty};

/// Whether `e` may stand in a Viper trigger: Viper rejects arithmetic anywhere inside a
/// trigger term, also below the application the trigger is about (`aloc(aloc(t, l - 1).f, j)`).
pub(super) fn trigger_term_ok(e: &Exp) -> bool {
    let mut ok = true;
    e.visit(&mut |n| {
        if matches!(n.kind, ExpKind::Binary(..) | ExpKind::Unary(..) | ExpKind::Cond(..)) {
            ok = false;
        }
    });
    ok
}

/// `e` without source positions (for comparing terms by shape).
fn unspanned(e: &Exp) -> Exp {
    e.clone().map(&mut |n| Exp { kind: n.kind, span: None })
}

pub(super) fn forall(vars: Vec<String>, trig: Vec<Vec<Exp>>, body: Exp) -> Exp {
    // A trigger set with an invalid term is dropped (Silicon then chooses its own): triggers
    // only guide instantiation, so this costs completeness at worst, never soundness.
    let mut trig: Vec<Vec<Exp>> =
        trig.into_iter().filter(|ts| ts.iter().all(trigger_term_ok)).collect();
    // A pure fact about several arrays' cells at the variable (`a[j] == b[j]`) is found from
    // any of them: one trigger per cell term, so that a query about `b[j]` instantiates it as
    // well as one about `a[j]` (with only the first, a par block's `ensures a[2t+1] ==
    // b[2t+1]` told nothing about `b`).
    if !trig.is_empty() && !body.has_acc() {
        if let [v] = vars.as_slice() {
            let mut extra: Vec<Exp> = Vec::new();
            body.visit(&mut |n| {
                if let ExpKind::App(f, args) = &n.kind {
                    let at_v = matches!(args.as_slice(), [_, i] if matches!(&i.kind, ExpKind::Var(x) if x == v));
                    // Compared by shape: a term of the body has a span, a generated trigger none.
                    let n = unspanned(n);
                    if f == "aloc"
                        && at_v
                        && trigger_term_ok(&n)
                        && !trig.iter().any(|ts| ts.len() == 1 && unspanned(&ts[0]) == n)
                        && !extra.contains(&n)
                    {
                        extra.push(n);
                    }
                }
            });
            trig.extend(extra.into_iter().map(|t| vec![t]));
        }
    }
    Exp::synth(ExpKind::Forall(
        vars.into_iter().map(|v| (v, Ty::Int)).collect(),
        trig,
        Box::new(body),
    ))
}

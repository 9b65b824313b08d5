//! Arithmetic in a pure quantifier's trigger term, named: `forall c :: P(aloc(aloc(A, t + i * 2).arr_val, c))`
//! with `t` and `i` free becomes `forall r, c :: r == t + i * 2 ==> P(aloc(aloc(A, r).arr_val,
//! c))`.
//!
//! Viper forbids arithmetic anywhere in a trigger, so such a quantifier had none, and Silicon
//! never instantiated it where a cell of that row was named another way (a loop's row `r` that
//! equals `t + i * 2` only by arithmetic). With the row a bound variable, the cell is a valid
//! trigger that matches every access to the row, and the equality is left to arithmetic. By the
//! one-point rule the quantifier means the same.

use super::{forall, replace_term, text, trigger_term_ok, Fresh};
use crate::ast::{Exp, ExpKind};

/// `forall vars {trig} whole`, with the arithmetic sub-terms of the trigger terms that mention
/// no bound variable named by fresh bound variables when that makes the trigger valid.
pub(super) fn triggered(
    fresh: &mut dyn Fresh,
    vars: Vec<String>,
    trig: Vec<Exp>,
    whole: Exp,
) -> Exp {
    // Only pure quantifiers: a quantified permission whose receiver reads a row held by a
    // single chunk (`Perm(m[k - 1], 1\2)`) lost its match with the concrete accesses of that
    // row when the row became a bound variable (tests/viper_types.rs, trigger_arith).
    if trig.iter().all(trigger_term_ok) || has_acc(&whole) {
        return forall(vars, vec![trig], whole);
    }
    let mut found: Vec<Exp> = Vec::new();
    for t in &trig {
        arithmetic_arguments(t, &vars, &mut found);
    }
    let mut names: Vec<String> = Vec::new();
    found.retain(|s| {
        let t = text(s);
        let new = !names.contains(&t);
        names.push(t);
        new
    });
    if found.is_empty() {
        return forall(vars, vec![trig], whole);
    }
    let (mut new_vars, mut new_trig, mut new_whole) = (vars.clone(), trig.clone(), whole.clone());
    let mut eqs = Vec::new();
    for s in found {
        let r = fresh.fresh("r");
        let rv = Exp::var(&r);
        let st = text(&s);
        new_trig = new_trig.into_iter().map(|t| replace_term(t, &st, &rv)).collect();
        new_whole = replace_term(new_whole, &st, &rv);
        eqs.push(Exp::bin("==", rv, s));
        new_vars.push(r);
    }
    if !new_trig.iter().all(trigger_term_ok) {
        return forall(vars, vec![trig], whole);
    }
    forall(new_vars, vec![new_trig], Exp::implies(Exp::and_all(eqs), new_whole))
}

/// The outermost arguments of applications in `e` that are arithmetic and free of `vars`.
fn arithmetic_arguments(e: &Exp, vars: &[String], out: &mut Vec<Exp>) {
    match &e.kind {
        ExpKind::App(_, args) => {
            for a in args {
                let arith = matches!(a.kind, ExpKind::Binary(..) | ExpKind::Unary(..));
                if arith && !vars.iter().any(|v| a.mentions_var(v)) {
                    out.push(a.clone());
                } else {
                    arithmetic_arguments(a, vars, out);
                }
            }
        }
        ExpKind::Field(r, _) => arithmetic_arguments(r, vars, out),
        _ => {}
    }
}

fn has_acc(e: &Exp) -> bool {
    let mut found = false;
    e.visit(&mut |n| found |= matches!(n.kind, ExpKind::Acc(..)));
    found
}

//! Free variables of Viper expressions and statements.

use crate::ast::*;

/// Free variables of an expression, in order of first occurrence.
pub fn exp_vars(e: &Exp, bound: &mut Vec<String>, out: &mut Vec<String>) {
    match &e.kind {
        ExpKind::Var(n) => {
            if !bound.contains(n) && !out.contains(n) {
                out.push(n.clone());
            }
        }
        ExpKind::Forall(vs, trs, b) | ExpKind::Exists(vs, trs, b) => {
            let k = bound.len();
            bound.extend(vs.iter().map(|(n, _)| n.clone()));
            for t in trs.iter().flatten() {
                exp_vars(t, bound, out);
            }
            exp_vars(b, bound, out);
            bound.truncate(k);
        }
        ExpKind::Let(n, v, b) => {
            exp_vars(v, bound, out);
            bound.push(n.clone());
            exp_vars(b, bound, out);
            bound.pop();
        }
        _ => e.for_each_child(false, &mut |k| exp_vars(k, bound, out)),
    }
}

/// Free variables of a generated method's contract and body, in order of first occurrence:
/// what it must take as parameters from the method it is generated for.
pub fn captured(contracts: &[&Contract], body: &[Stmt]) -> Vec<String> {
    let mut out = Vec::new();
    let mut bound = Vec::new();
    for c in contracts {
        exp_vars(&c.exp, &mut bound, &mut out);
    }
    for s in body {
        stmt_vars(s, &mut out);
    }
    out
}

pub fn stmt_vars(s: &Stmt, out: &mut Vec<String>) {
    let mut b = Vec::new();
    let push = |n: &String, out: &mut Vec<String>| {
        if !out.contains(n) {
            out.push(n.clone());
        }
    };
    match &s.kind {
        StmtKind::VarDecl(..) | StmtKind::Label(_) | StmtKind::Goto(_) | StmtKind::Comment(_) => {}
        StmtKind::Assign(l, r) => {
            exp_vars(l, &mut b, out);
            exp_vars(r, &mut b, out);
        }
        StmtKind::Call(ts, _, args) => {
            for t in ts {
                push(t, out);
            }
            for a in args {
                exp_vars(a, &mut b, out);
            }
        }
        StmtKind::New(x, _) => push(x, out),
        StmtKind::Inhale(e)
        | StmtKind::Exhale(e)
        | StmtKind::Assert(e)
        | StmtKind::Assume(e)
        | StmtKind::Fold(e)
        | StmtKind::Unfold(e)
        | StmtKind::Apply(e) => exp_vars(e, &mut b, out),
        StmtKind::Package(e, proof) => {
            exp_vars(e, &mut b, out);
            proof.iter().for_each(|s| stmt_vars(s, out));
        }
        StmtKind::If(c, t, e) => {
            exp_vars(c, &mut b, out);
            t.iter().chain(e).for_each(|s| stmt_vars(s, out));
        }
        StmtKind::While(c, invs, body) => {
            exp_vars(c, &mut b, out);
            invs.iter().for_each(|i| exp_vars(&i.exp, &mut b, out));
            body.iter().for_each(|s| stmt_vars(s, out));
        }
    }
}

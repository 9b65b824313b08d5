//! A kernel that assigns one of its scalar parameters (`n = n / 2;`, `i += stride;`): in CUDA
//! every thread has its own copy of the parameters. The verifier's kernel form runs the body as
//! a `par` over threads inside a method whose parameters are shared, and a shared variable
//! cannot be assigned by a thread; so in that form the body first copies each such parameter
//! into a thread-local variable and uses the copy. The contract keeps the parameter, whose
//! value is the one the kernel was launched with. The form the optimizations edit keeps the
//! text's names: this is the verifier's reading only.

use crate::ast::*;
use crate::visit::{map_expr, map_stmt, walk_stmts};
use std::collections::BTreeSet;

/// Give every scalar parameter that `m`'s body assigns a thread-local copy.
pub(super) fn thread_copies(m: &mut Method) {
    let MethodBody::Block(body) = &mut m.body else { return };
    let (assigned, declared) = writes(&body.stmts);
    let mut taken: BTreeSet<String> = declared.clone();
    for s in &body.stmts {
        crate::visit::all_exprs(s, &mut |e| {
            crate::visit::walk_expr(e, &mut |x| {
                if let ExprKind::Name(n) = &x.kind {
                    taken.insert(n.name.clone());
                }
            })
        });
    }
    taken.extend(m.params.iter().map(|p| p.name.name.clone()));
    let mut copies = Vec::new();
    for p in &m.params {
        let name = &p.name.name;
        // A body that declares a variable of the same name means that variable: left alone.
        if !assigned.contains(name) || declared.contains(name) || !scalar(&p.ty) {
            continue;
        }
        let mut fresh = format!("{name}_thread");
        let mut k = 1;
        while taken.contains(&fresh) {
            k += 1;
            fresh = format!("{name}_thread{k}");
        }
        taken.insert(fresh.clone());
        copies.push((name.clone(), fresh, p.ty.clone()));
    }
    if copies.is_empty() {
        return;
    }
    for s in &mut body.stmts {
        map_stmt(s, &mut |e| rename(e, &copies));
    }
    let decls = copies.into_iter().map(|(name, fresh, ty)| {
        let span = body.span;
        let init = Expr::new(ExprKind::Name(Ident::synth(&name)), span);
        let var = Declarator { name: Ident::synth(&fresh), init: Some(init), span };
        Stmt { kind: StmtKind::Decl { ty, vars: vec![var] }, span }
    });
    let rest = std::mem::take(&mut body.stmts);
    body.stmts = decls.chain(rest).collect();
}

/// The names the statements assign, and the names they declare.
pub(super) fn writes(stmts: &[Stmt]) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut assigned, mut declared) = (BTreeSet::new(), BTreeSet::new());
    for s in stmts {
        walk_stmts(s, &mut |st| match &st.kind {
            StmtKind::Assign { target, .. }
            | StmtKind::CompoundAssign { target, .. }
            | StmtKind::IncDec { target, .. } => {
                if let ExprKind::Name(id) = &target.kind {
                    assigned.insert(id.name.clone());
                }
            }
            StmtKind::Decl { vars, .. } => {
                declared.extend(vars.iter().map(|d| d.name.name.clone()));
            }
            _ => {}
        });
    }
    (assigned, declared)
}

fn scalar(ty: &Type) -> bool {
    matches!(
        ty.kind,
        TypeKind::Int | TypeKind::Bool | TypeKind::Boolean | TypeKind::Float32 | TypeKind::Float64
    )
}

/// One node: a parameter with a copy is the copy. A quantifier or `let` that binds the name
/// means its own variable inside.
fn rename(e: &mut Expr, copies: &[(String, String, Type)]) -> bool {
    match &mut e.kind {
        ExprKind::Name(n) => {
            if let Some((_, fresh, _)) = copies.iter().find(|(p, _, _)| *p == n.name) {
                n.name = fresh.clone();
            }
            true
        }
        ExprKind::Quant { bindings, cond, body, .. } => {
            let bound: Vec<String> = bindings.iter().map(|b| b.name.name.clone()).collect();
            if !copies.iter().any(|(p, _, _)| bound.contains(p)) {
                return false;
            }
            // The ranges are read outside the binder, the rest inside it.
            for b in bindings.iter_mut() {
                if let Some((lo, hi)) = &mut b.range {
                    map_expr(lo, &mut |y| rename(y, copies));
                    map_expr(hi, &mut |y| rename(y, copies));
                }
            }
            let inner: Vec<_> =
                copies.iter().filter(|(p, _, _)| !bound.contains(p)).cloned().collect();
            if let Some(c) = cond {
                map_expr(c, &mut |y| rename(y, &inner));
            }
            map_expr(body, &mut |y| rename(y, &inner));
            true
        }
        _ => false,
    }
}

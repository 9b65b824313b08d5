//! Variables and arrays a statement assigns, and names it mentions.

use front::ast::*;
use front::span::Span;
use front::visit::{all_exprs, walk_stmts};
use std::collections::BTreeSet;

/// The root array name of an assignment target `a[i]`, `a[i][j]`, `this.a[i]`.
pub fn target_array(target: &Expr) -> Option<&str> {
    match &target.kind {
        ExprKind::Index(a, _) => match &a.kind {
            ExprKind::Name(id) => Some(&id.name),
            ExprKind::Field(r, f) if matches!(r.kind, ExprKind::This) => Some(&f.name),
            ExprKind::Index(..) => target_array(a),
            _ => None,
        },
        _ => None,
    }
}

/// Scalar variables assigned (or declared) anywhere in `s`, in sorted order.
pub fn assigned_vars(s: &Stmt) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk_stmts(s, &mut |st| match &st.kind {
        StmtKind::Assign { target, .. }
        | StmtKind::CompoundAssign { target, .. }
        | StmtKind::IncDec { target, .. } => {
            if let ExprKind::Name(id) = &target.kind {
                out.insert(id.name.clone());
            }
            if let ExprKind::Field(r, f) = &target.kind {
                if matches!(r.kind, ExprKind::This) {
                    out.insert(f.name.clone());
                }
            }
        }
        StmtKind::Decl { vars, .. } => {
            for d in vars {
                out.insert(d.name.name.clone());
            }
        }
        _ => {}
    });
    out
}

/// Arrays whose elements are assigned anywhere in `s`.
pub fn assigned_arrays(s: &Stmt) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    walk_stmts(s, &mut |st| {
        if let StmtKind::Assign { target, .. }
        | StmtKind::CompoundAssign { target, .. }
        | StmtKind::IncDec { target, .. } = &st.kind
        {
            if let Some(a) = target_array(target) {
                out.insert(a.to_string());
            }
            if let Some(key) = field_key(target) {
                out.insert(key);
            }
        }
    });
    out
}

/// The heap key `.f` of a field `o.f` of another object (`this.f` is a variable, `a.length`
/// never changes): the Z3 translator versions such fields like array contents.
pub fn field_key(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Field(r, f) if !matches!(r.kind, ExprKind::This) && f.name != "length" => {
            Some(format!(".{}", f.name))
        }
        // A cell of an array field of another object, `o.a[i]` or `o.m[i][j]`.
        ExprKind::Index(a, _) => field_key(a),
        _ => None,
    }
}

/// Does `s` possibly change heap locations it does not name: a call statement, an assignment
/// of a call's result, or an object creation? Calls inside larger expressions are functions;
/// a call as the whole statement or value may be a method with effects unless `pure` says
/// that the called name is a pure function.
pub fn may_change_heap(s: &Stmt, pure: &dyn Fn(&str) -> bool) -> bool {
    let effect = |e: &Expr| match &e.kind {
        ExprKind::Call { recv, name, .. } => {
            !(matches!(recv.as_deref(), None | Some(Expr { kind: ExprKind::This, .. }))
                && pure(&name.name))
        }
        ExprKind::NewObject(..) => true,
        _ => false,
    };
    let mut found = false;
    walk_stmts(s, &mut |st| match &st.kind {
        StmtKind::Expr(_) => found = true,
        StmtKind::Assign { value, .. } | StmtKind::CompoundAssign { value, .. } => {
            found |= effect(value);
        }
        StmtKind::Decl { vars, .. } => {
            found |= vars.iter().any(|d| d.init.as_ref().is_some_and(effect));
        }
        _ => {}
    });
    found
}

/// Every name used in `s` (variables, arrays, called functions).
pub fn mentioned_names(s: &Stmt) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    all_exprs(s, &mut |e| match &e.kind {
        ExprKind::Name(id) => {
            out.insert(id.name.clone());
        }
        ExprKind::Call { name, .. } => {
            out.insert(name.name.clone());
        }
        _ => {}
    });
    out
}

/// Calls of `name` anywhere in the program.
pub fn calls_of(p: &Program, name: &str) -> Vec<Span> {
    let mut out = Vec::new();
    let mut visit_m = |m: &Method| {
        let mut f = |e: &Expr| {
            if let ExprKind::Call { name: n, .. } = &e.kind {
                if n.name == name {
                    out.push(e.span);
                }
            }
        };
        for c in &m.prefix.clauses {
            if let Some(e) = c.expr() {
                front::visit::walk_expr(e, &mut f);
            }
        }
        match &m.body {
            MethodBody::Block(b) => {
                for s in &b.stmts {
                    all_exprs(s, &mut f);
                }
            }
            MethodBody::Expr(e) => front::visit::walk_expr(e, &mut f),
            MethodBody::Abstract => {}
        }
    };
    p.methods().for_each(|(_, m)| visit_m(m));
    out
}

//! Read-only traversal helpers over statements and expressions.

use super::ast::*;

/// Call `f` on every statement in `s` (pre-order, `s` included), descending into blocks, branches,
/// loop bodies and headers, par arms, ghost statements and with/then blocks are not included.
pub fn walk_stmts<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Stmt)) {
    f(s);
    match &s.kind {
        StmtKind::Block(b) => b.stmts.iter().for_each(|x| walk_stmts(x, f)),
        StmtKind::If { then, els, .. } => {
            walk_stmts(then, f);
            if let Some(e) = els {
                walk_stmts(e, f);
            }
        }
        StmtKind::While(l) | StmtKind::For(l) => {
            l.init.iter().for_each(|x| walk_stmts(x, f));
            l.update.iter().for_each(|x| walk_stmts(x, f));
            walk_stmts(&l.body, f);
        }
        StmtKind::RangedFor { body, .. } => walk_stmts(body, f),
        StmtKind::Par(p) => p.arms.iter().for_each(|a| walk_stmts(&a.body, f)),
        StmtKind::Parallel { body, .. } => body.iter().for_each(|x| walk_stmts(x, f)),
        StmtKind::Barrier(b) => {
            if let Some(body) = &b.body {
                body.stmts.iter().for_each(|x| walk_stmts(x, f));
            }
        }
        StmtKind::Invariant { body, .. } | StmtKind::Atomic { body, .. } => {
            body.stmts.iter().for_each(|x| walk_stmts(x, f))
        }
        StmtKind::Ghost(inner) => walk_stmts(inner, f),
        _ => {}
    }
}

/// Call `f` on every expression directly held by statement `s` (not in nested statements),
/// including contract clauses of loops, par arms and barriers.
pub fn stmt_exprs<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Expr)) {
    let clauses = |cs: &'a [Clause], f: &mut dyn FnMut(&'a Expr)| {
        for c in cs {
            match &c.body {
                ClauseBody::Expr(e) | ClauseBody::Signals(_, _, e) => f(e),
                ClauseBody::List(v) => v.iter().for_each(&mut *f),
                _ => {}
            }
        }
    };
    match &s.kind {
        StmtKind::Decl { vars, .. } => vars
            .iter()
            .filter_map(|d| d.init.as_ref())
            .for_each(&mut *f),
        StmtKind::Assign { target, value } | StmtKind::CompoundAssign { target, value, .. } => {
            f(target);
            f(value);
        }
        StmtKind::IncDec { target, .. } => f(target),
        StmtKind::Expr(e) | StmtKind::Spec { expr: e, .. } => f(e),
        StmtKind::Return(Some(e)) => f(e),
        StmtKind::If { cond, .. } => f(cond),
        StmtKind::While(l) | StmtKind::For(l) => {
            clauses(&l.prefix.clauses, f);
            if let Some(c) = &l.cond {
                f(c);
            }
        }
        StmtKind::RangedFor { prefix, lo, hi, .. } => {
            clauses(&prefix.clauses, f);
            f(lo);
            f(hi);
        }
        StmtKind::Par(p) => {
            clauses(&p.prefix.clauses, f);
            for a in &p.arms {
                for it in &a.iters {
                    f(&it.lo);
                    f(&it.hi);
                }
                clauses(&a.contract, f);
            }
        }
        StmtKind::Barrier(b) => clauses(&b.contract, f),
        StmtKind::Invariant { resource, .. } => f(resource),
        _ => {}
    }
}

/// Call `f` on `e` and every sub-expression (pre-order).
pub fn walk_expr<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    f(e);
    use ExprKind as K;
    match &e.kind {
        K::Unary(_, x) | K::Old(x, _) | K::Length(x) | K::Trigger(x) | K::Labelled(_, x) => {
            walk_expr(x, f)
        }
        K::Binary(_, l, r)
        | K::Index(l, r)
        | K::Unfolding(l, r)
        | K::Scale(l, r)
        | K::Range(_, l, r) => {
            walk_expr(l, f);
            walk_expr(r, f);
        }
        K::Cond(a, b, c) | K::SeqUpdate(a, b, c) => {
            walk_expr(a, f);
            walk_expr(b, f);
            walk_expr(c, f);
        }
        K::Field(x, _) => walk_expr(x, f),
        K::Slice(x, a, b) => {
            walk_expr(x, f);
            if let Some(a) = a {
                walk_expr(a, f);
            }
            if let Some(b) = b {
                walk_expr(b, f);
            }
        }
        K::Call { recv, args, .. } => {
            if let Some(r) = recv {
                walk_expr(r, f);
            }
            args.iter().for_each(|a| walk_expr(a, f));
        }
        K::Builtin(_, args) | K::NewObject(_, args) | K::NewArray(_, args) => {
            args.iter().for_each(|a| walk_expr(a, f))
        }
        K::Collection { elems, .. } => elems.iter().for_each(|a| walk_expr(a, f)),
        K::Quant {
            bindings,
            cond,
            body,
            ..
        } => {
            for b in bindings {
                if let Some((lo, hi)) = &b.range {
                    walk_expr(lo, f);
                    walk_expr(hi, f);
                }
            }
            if let Some(c) = cond {
                walk_expr(c, f);
            }
            walk_expr(body, f);
        }
        K::Let { value, body, .. } => {
            walk_expr(value, f);
            walk_expr(body, f);
        }
        K::Sum { cond, body, .. } => {
            walk_expr(cond, f);
            walk_expr(body, f);
        }
        _ => {}
    }
}

/// Every expression in `s` and its nested statements.
pub fn all_exprs<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Expr)) {
    walk_stmts(s, &mut |st| stmt_exprs(st, &mut |e| walk_expr(e, f)));
}

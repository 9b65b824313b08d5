//! Traversal helpers over statements and expressions: read-only (`walk_*`, `for_each_child`)
//! and rewriting (`map_*`: a callback that may replace an expression in place). Every pass
//! that reads or rewrites the tree uses these, so a new construct is added in one place.

use super::ast::*;

/// Call `f` on every statement in `s` (pre-order, `s` included), descending into blocks, branches,
/// loop bodies and headers, par arms, ghost statements and with/then blocks are not included.
pub fn walk_stmts<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Stmt)) {
    f(s);
    child_stmts(s, &mut |c| walk_stmts(c, f));
}

/// Call `f` on the statements directly nested in `s` (those [`walk_stmts`] descends into), in
/// order; for a pass that carries context down the tree (the loop or `par` a statement is in).
pub fn child_stmts<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Stmt)) {
    match &s.kind {
        StmtKind::Block(b) => b.stmts.iter().for_each(f),
        StmtKind::If { then, els, .. } => {
            f(then);
            if let Some(e) = els {
                f(e);
            }
        }
        StmtKind::While(l) | StmtKind::For(l) => {
            l.init.iter().for_each(&mut *f);
            l.update.iter().for_each(&mut *f);
            f(&l.body);
        }
        StmtKind::RangedFor { body, .. } => f(body),
        StmtKind::Par(p) => p.arms.iter().for_each(|a| f(&a.body)),
        StmtKind::Parallel { body, .. } => body.iter().for_each(f),
        StmtKind::Barrier(b) => {
            if let Some(body) = &b.body {
                body.stmts.iter().for_each(f);
            }
        }
        StmtKind::Invariant { body, .. }
        | StmtKind::Atomic { body, .. }
        | StmtKind::Vec { body, .. } => body.stmts.iter().for_each(f),
        StmtKind::Ghost(inner) => f(inner),
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
        StmtKind::Decl { vars, .. } => {
            vars.iter().filter_map(|d| d.init.as_ref()).for_each(&mut *f)
        }
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
        StmtKind::Vec { iter, .. } => {
            f(&iter.lo);
            f(&iter.hi);
        }
        _ => {}
    }
}

/// Call `f` on `e` and every sub-expression (pre-order).
pub fn walk_expr<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    f(e);
    for_each_child(e, &mut |c, _| walk_expr(c, f));
}

/// Does `e` or a sub-expression satisfy `pred`? (Stops at the first that does.)
pub fn any_expr(e: &Expr, pred: &mut dyn FnMut(&Expr) -> bool) -> bool {
    if pred(e) {
        return true;
    }
    let mut hit = false;
    for_each_child(e, &mut |c, _| hit = hit || any_expr(c, pred));
    hit
}

/// Does the name `n` occur in `e` (syntactically, binders not considered: see
/// `exprtext::mentions` for free occurrences)?
pub fn mentions_name(e: &Expr, n: &str) -> bool {
    any_expr(e, &mut |x| x.as_name() == Some(n))
}

/// Call `f` on each direct sub-expression of `e`, left to right, with whether it stands in a
/// *delimited* position (an index, a call or builtin argument, a collection element, a
/// quantifier's condition or body, …), where a compound expression needs no parentheses.
pub fn for_each_child<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr, bool)) {
    use ExprKind as K;
    match &e.kind {
        K::Unary(_, x) | K::Length(x) | K::Field(x, _) => f(x, false),
        K::Old(x, _) | K::Trigger(_, x) | K::Labelled(_, x) => f(x, true),
        K::TupleLit(_, l, r) => {
            f(l, true);
            f(r, true);
        }
        K::Binary(_, l, r) | K::Unfolding(l, r) | K::Scale(l, r) | K::Range(_, l, r) => {
            f(l, false);
            f(r, false);
        }
        K::Index(a, i) => {
            f(a, false);
            f(i, true);
        }
        K::Cond(a, b, c) | K::SeqUpdate(a, b, c) => {
            f(a, false);
            f(b, false);
            f(c, false);
        }
        K::Slice(x, a, b) => {
            f(x, false);
            if let Some(a) = a {
                f(a, false);
            }
            if let Some(b) = b {
                f(b, false);
            }
        }
        K::Call { recv, args, .. } => {
            if let Some(r) = recv {
                f(r, false);
            }
            args.iter().for_each(|a| f(a, true));
        }
        K::Builtin(_, args) | K::NewObject(_, args, _) | K::NewArray(_, args) => {
            args.iter().for_each(|a| f(a, true))
        }
        K::Collection { elems, .. } | K::Tuple(elems) => elems.iter().for_each(|a| f(a, true)),
        K::MapLit { entries, .. } => {
            for (k, v) in entries {
                f(k, true);
                f(v, true);
            }
        }
        K::SetComprehension(c) => {
            f(&c.body, true);
            c.gens.iter().filter_map(|g| g.source.as_ref()).for_each(|s| f(s, true));
            if let Some(x) = &c.cond {
                f(x, true);
            }
        }
        K::Quant { bindings, cond, body, .. } => {
            for b in bindings {
                if let Some((lo, hi)) = &b.range {
                    f(lo, false);
                    f(hi, false);
                }
            }
            if let Some(c) = cond {
                f(c, true);
            }
            f(body, true);
        }
        K::Let { value, body, .. } => {
            f(value, true);
            f(body, true);
        }
        K::Sum { cond, body, .. } => {
            f(cond, true);
            f(body, true);
        }
        _ => {}
    }
}

/// Every expression in `s` and its nested statements.
pub fn all_exprs<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Expr)) {
    walk_stmts(s, &mut |st| stmt_exprs(st, &mut |e| walk_expr(e, f)));
}

/// Apply `f` to `e` and, where it declines (returns `false`), to every sub-expression.
pub fn map_expr(e: &mut Expr, f: &mut dyn FnMut(&mut Expr) -> bool) {
    if f(e) {
        return;
    }
    let mut go = |x: &mut Expr| map_expr(x, f);
    match &mut e.kind {
        ExprKind::Unary(_, a)
        | ExprKind::Field(a, _)
        | ExprKind::Old(a, _)
        | ExprKind::Length(a)
        | ExprKind::Trigger(_, a)
        | ExprKind::Labelled(_, a) => go(a),
        ExprKind::Binary(_, a, b)
        | ExprKind::Index(a, b)
        | ExprKind::Unfolding(a, b)
        | ExprKind::Scale(a, b)
        | ExprKind::Range(_, a, b)
        | ExprKind::TupleLit(_, a, b) => {
            go(a);
            go(b);
        }
        ExprKind::Cond(a, b, c) | ExprKind::SeqUpdate(a, b, c) => {
            go(a);
            go(b);
            go(c);
        }
        ExprKind::Slice(a, b, c) => {
            go(a);
            b.iter_mut().chain(c.iter_mut()).for_each(|x| go(x));
        }
        ExprKind::Call { recv, args, ghost, .. } => {
            if let Some(r) = recv {
                go(r);
            }
            args.iter_mut().for_each(&mut go);
            map_ghost(ghost, f);
        }
        ExprKind::NewObject(_, args, ghost) => {
            args.iter_mut().for_each(go);
            map_ghost(ghost, f);
        }
        ExprKind::Builtin(_, args)
        | ExprKind::NewArray(_, args)
        | ExprKind::Tuple(args)
        | ExprKind::Collection { elems: args, .. } => args.iter_mut().for_each(go),
        ExprKind::Quant { bindings, cond, body, .. } => {
            for b in bindings {
                if let Some((lo, hi)) = &mut b.range {
                    go(lo);
                    go(hi);
                }
            }
            if let Some(c) = cond {
                go(c);
            }
            go(body);
        }
        ExprKind::Let { value, body, .. } => {
            go(value);
            go(body);
        }
        ExprKind::Sum { cond, body, .. } => {
            go(cond);
            go(body);
        }
        ExprKind::MapLit { entries, .. } => {
            for (k, v) in entries {
                go(k);
                go(v);
            }
        }
        ExprKind::SetComprehension(c) => {
            go(&mut c.body);
            c.gens.iter_mut().filter_map(|g| g.source.as_mut()).for_each(&mut go);
            if let Some(x) = &mut c.cond {
                go(x);
            }
        }
        _ => {}
    }
}

/// The ghost arguments of a call: `given { x = e }` values and `with`/`then` blocks.
fn map_ghost(g: &mut GhostArgs, f: &mut dyn FnMut(&mut Expr) -> bool) {
    g.given.iter_mut().for_each(|(_, e)| map_expr(e, f));
    for b in [&mut g.with, &mut g.then].into_iter().flatten() {
        b.stmts.iter_mut().for_each(|s| map_stmt(s, f));
    }
}

/// The expressions of a statement and of the statements inside it, mutably (contracts of
/// loops, par blocks and barriers included).
pub fn map_stmt(s: &mut Stmt, f: &mut dyn FnMut(&mut Expr) -> bool) {
    let clauses = |cs: &mut Vec<Clause>, f: &mut dyn FnMut(&mut Expr) -> bool| {
        for c in cs {
            map_clause(c, f);
        }
    };
    let block = |b: &mut Block, f: &mut dyn FnMut(&mut Expr) -> bool| {
        b.stmts.iter_mut().for_each(|s| map_stmt(s, f))
    };
    match &mut s.kind {
        StmtKind::Block(b) => block(b, f),
        StmtKind::Decl { vars, .. } => {
            for v in vars {
                if let Some(i) = &mut v.init {
                    map_expr(i, f);
                }
            }
        }
        StmtKind::Assign { target, value } | StmtKind::CompoundAssign { target, value, .. } => {
            map_expr(target, f);
            map_expr(value, f);
        }
        StmtKind::IncDec { target, .. } => map_expr(target, f),
        StmtKind::Expr(e) | StmtKind::Spec { expr: e, .. } | StmtKind::Return(Some(e)) => {
            map_expr(e, f)
        }
        StmtKind::If { cond, then, els } => {
            map_expr(cond, f);
            map_stmt(then, f);
            if let Some(e) = els {
                map_stmt(e, f);
            }
        }
        StmtKind::While(l) | StmtKind::For(l) => {
            clauses(&mut l.prefix.clauses, f);
            l.init.iter_mut().for_each(|s| map_stmt(s, f));
            if let Some(c) = &mut l.cond {
                map_expr(c, f);
            }
            l.update.iter_mut().for_each(|s| map_stmt(s, f));
            map_stmt(&mut l.body, f);
        }
        StmtKind::RangedFor { prefix, lo, hi, body, .. } => {
            clauses(&mut prefix.clauses, f);
            map_expr(lo, f);
            map_expr(hi, f);
            map_stmt(body, f);
        }
        StmtKind::Barrier(b) => {
            clauses(&mut b.contract, f);
            if let Some(body) = &mut b.body {
                block(body, f);
            }
        }
        StmtKind::Ghost(g) => map_stmt(g, f),
        StmtKind::Par(p) => {
            clauses(&mut p.prefix.clauses, f);
            for a in &mut p.arms {
                for it in &mut a.iters {
                    map_expr(&mut it.lo, f);
                    map_expr(&mut it.hi, f);
                }
                clauses(&mut a.contract, f);
                map_stmt(&mut a.body, f);
            }
        }
        StmtKind::Parallel { body, .. } => body.iter_mut().for_each(|s| map_stmt(s, f)),
        StmtKind::Invariant { resource, body, .. } => {
            map_expr(resource, f);
            block(body, f);
        }
        StmtKind::Atomic { body, .. } => block(body, f),
        StmtKind::Vec { iter, body } => {
            map_expr(&mut iter.lo, f);
            map_expr(&mut iter.hi, f);
            block(body, f);
        }
        _ => {}
    }
}

/// Every statement of `s`, nested ones first, given to `f` to change in place.
pub fn map_stmts(s: &mut Stmt, f: &mut dyn FnMut(&mut Stmt)) {
    let block = |b: &mut Block, f: &mut dyn FnMut(&mut Stmt)| {
        b.stmts.iter_mut().for_each(|s| map_stmts(s, f))
    };
    match &mut s.kind {
        StmtKind::Block(b) => block(b, f),
        StmtKind::If { then, els, .. } => {
            map_stmts(then, f);
            if let Some(e) = els {
                map_stmts(e, f);
            }
        }
        StmtKind::While(l) | StmtKind::For(l) => {
            l.init.iter_mut().for_each(|s| map_stmts(s, f));
            l.update.iter_mut().for_each(|s| map_stmts(s, f));
            map_stmts(&mut l.body, f);
        }
        StmtKind::RangedFor { body, .. } | StmtKind::Ghost(body) => map_stmts(body, f),
        StmtKind::Barrier(b) => {
            if let Some(body) = &mut b.body {
                block(body, f);
            }
        }
        StmtKind::Par(p) => p.arms.iter_mut().for_each(|a| map_stmts(&mut a.body, f)),
        StmtKind::Parallel { body, .. } => body.iter_mut().for_each(|s| map_stmts(s, f)),
        StmtKind::Invariant { body, .. }
        | StmtKind::Atomic { body, .. }
        | StmtKind::Vec { body, .. } => block(body, f),
        _ => {}
    }
    f(s);
}

pub fn map_clause(c: &mut Clause, f: &mut dyn FnMut(&mut Expr) -> bool) {
    match &mut c.body {
        ClauseBody::Expr(e) | ClauseBody::Signals(_, _, e) => map_expr(e, f),
        ClauseBody::List(es) => es.iter_mut().for_each(|e| map_expr(e, f)),
        _ => {}
    }
}

/// A method's contract and body, mutably.
pub fn map_method(m: &mut Method, f: &mut dyn FnMut(&mut Expr) -> bool) {
    for c in &mut m.prefix.clauses {
        map_clause(c, f);
    }
    match &mut m.body {
        MethodBody::Block(b) => b.stmts.iter_mut().for_each(|s| map_stmt(s, f)),
        MethodBody::Expr(e) => map_expr(e, f),
        MethodBody::Abstract => {}
    }
}

/// Every expression of a program (methods, fields' initialisers excluded: PVL has none), mutably.
pub fn map_program(p: &mut Program, f: &mut dyn FnMut(&mut Expr) -> bool) {
    for item in &mut p.items {
        match item {
            Item::Method(m) => map_method(m, f),
            Item::Class(c) => {
                for m in &mut c.members {
                    if let Member::Method(m) = m {
                        map_method(m, f);
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(b) = &mut p.main {
        b.stmts.iter_mut().for_each(|s| map_stmt(s, f));
    }
}

/// The variables `s` assigns (as a whole: `x = …`, `x += …`, `x++`) or declares, anywhere in it.
pub fn assigned_names(s: &Stmt) -> std::collections::BTreeSet<String> {
    let mut out = std::collections::BTreeSet::new();
    walk_stmts(s, &mut |st| match &st.kind {
        StmtKind::Assign { target, .. }
        | StmtKind::CompoundAssign { target, .. }
        | StmtKind::IncDec { target, .. } => {
            if let ExprKind::Name(id) = &target.kind {
                out.insert(id.name.clone());
            }
        }
        StmtKind::Decl { vars, .. } => out.extend(vars.iter().map(|d| d.name.name.clone())),
        _ => {}
    });
    out
}

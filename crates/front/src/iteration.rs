//! VerCors' iteration contracts: a `for` loop whose contract holds `requires`/`ensures`/
//! `context` clauses says what each iteration needs and gives on its own, so the iterations
//! are independent and the loop is the parallel block `par (int i = lo .. hi) contract { body }`
//! (VerCors verifies it so). The C front end reads such a contract between the header and the
//! body (`cuda/iteration.rs`), PVL before the loop (VerCors 2's `context … for (…)`); both build
//! the block here, so the verifier, the interpreter (which runs the iterations as threads and
//! checks that they do not race) and the sites see one construct.

use super::ast::*;
use super::span::Span;

/// `l` with the contract `prefix` in front of it: the parallel block when `prefix` is an
/// iteration contract, the loop itself when it holds only loop invariants (the loop's own);
/// otherwise why it cannot be a block, with the loop handed back holding every clause.
pub fn parallel_loop(
    l: Loop,
    prefix: Prefix,
    span: Span,
) -> Result<Stmt, (Loop, &'static str, Span)> {
    // The loop with `prefix` before its own clauses.
    let with_prefix = |mut l: Loop, mut prefix: Prefix| {
        prefix.clauses.extend(std::mem::take(&mut l.prefix.clauses));
        prefix.annotations.extend(std::mem::take(&mut l.prefix.annotations));
        l.prefix = prefix;
        l
    };
    let invariant =
        |c: &Clause| matches!(c.kind, ClauseKind::LoopInvariant | ClauseKind::Decreases);
    if prefix.clauses.iter().all(invariant) {
        return Ok(Stmt { kind: StmtKind::For(with_prefix(l, prefix)), span });
    }
    if let Some(c) = prefix.clauses.iter().find(|c| invariant(c)) {
        let at = c.span;
        return Err((with_prefix(l, prefix), "an iteration contract with loop invariants", at));
    }
    let Some((iter, declared)) = counted(&l, span) else {
        let at = l.keyword;
        return Err((
            with_prefix(l, prefix),
            "an iteration contract on a loop other than `for (int i = lo; i < hi; i++)`",
            at,
        ));
    };
    // `for (i = lo; …)` on a variable declared before: C leaves it at the end of the range
    // afterwards, which the block states by assigning it. That value is only known when the
    // bounds read no memory the iterations may change.
    let after = match declared {
        true => None,
        false if heap_free(&iter.lo) && heap_free(&iter.hi) => Some(end_value(&iter)),
        false => {
            let at = l.keyword;
            return Err((
                with_prefix(l, prefix),
                "an iteration contract on a loop over a variable declared before it, whose bounds read memory",
                at,
            ));
        }
    };
    let arm = ParArm {
        label: None,
        iters: vec![iter],
        wait: None,
        contract: prefix.clauses,
        body: l.body,
        span,
    };
    let par = Par {
        prefix: Prefix { annotations: prefix.annotations, ..Prefix::default() },
        arms: vec![arm],
        keyword: l.keyword,
        loop_form: true,
    };
    let par = Stmt { kind: StmtKind::Par(par), span };
    Ok(match after {
        None => par,
        Some(set) => {
            let block = Block { stmts: vec![par, set], span };
            Stmt { kind: StmtKind::Block(block), span }
        }
    })
}

/// VerCors 2's ranged loop with an iteration contract (`context Perm(a[i], write); for (int i =
/// lo .. hi) body`): the parallel block over `lo .. hi`. `None` when `prefix` holds only loop
/// invariants (the loop stays a loop) or mixes them with an iteration contract (the loop keeps
/// every clause, which the oracles refuse by name).
pub fn parallel_ranged(prefix: &Prefix, iter: &Iter, body: &Stmt, keyword: Span) -> Option<Stmt> {
    let invariant =
        |c: &Clause| matches!(c.kind, ClauseKind::LoopInvariant | ClauseKind::Decreases);
    if prefix.clauses.is_empty() || prefix.clauses.iter().any(invariant) {
        return None;
    }
    let span = Span::new(keyword.start(), body.span.end());
    let arm = ParArm {
        label: None,
        iters: vec![iter.clone()],
        wait: None,
        contract: prefix.clauses.clone(),
        body: Box::new(body.clone()),
        span,
    };
    let prefix = Prefix { annotations: prefix.annotations.clone(), ..Prefix::default() };
    let par = Par { prefix, arms: vec![arm], keyword, loop_form: true };
    Some(Stmt { kind: StmtKind::Par(par), span })
}

/// Does `e` read no memory (only variables, literals and arithmetic)?
fn heap_free(e: &Expr) -> bool {
    let mut ok = true;
    crate::visit::walk_expr(e, &mut |x: &Expr| {
        ok &= matches!(
            x.kind,
            ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Unary(..) | ExprKind::Binary(..)
        );
    });
    ok
}

/// `i = lo < hi ? hi : lo;`: the loop variable after a loop over `lo .. hi` (synthesised).
fn end_value(it: &Iter) -> Stmt {
    let var = Expr::name(&it.name.name);
    let nonempty = Expr::bin(BinOp::Lt, it.lo.clone(), it.hi.clone());
    let value = Expr::synth(ExprKind::Cond(
        Box::new(nonempty),
        Box::new(it.hi.clone()),
        Box::new(it.lo.clone()),
    ));
    Stmt { kind: StmtKind::Assign { target: var, value }, span: Span::DUMMY }
}

/// `for (int i = lo; i < hi; i++)` (also `i <= hi`, `hi > i`, `++i`, `i += 1`, `i = i + 1`)
/// as the range `int i = lo .. hi`, when the body does not assign `i`; also `for (i = lo; …)`
/// over a variable declared before (then `false`: not declared by the loop).
fn counted(l: &Loop, span: Span) -> Option<(Iter, bool)> {
    let (ty, name, lo, declared) = match l.init.as_slice() {
        [Stmt { kind: StmtKind::Decl { ty, vars }, .. }] => {
            let [Declarator { name, init: Some(lo), .. }] = vars.as_slice() else { return None };
            (ty.clone(), name.clone(), lo, true)
        }
        [Stmt { kind: StmtKind::Assign { target, value }, .. }] => {
            let ExprKind::Name(name) = &target.kind else { return None };
            (Type::int(), name.clone(), value, false)
        }
        _ => return None,
    };
    if !matches!(ty.kind, TypeKind::Int) {
        return None;
    }
    let var = name.name.as_str();
    let is_var = |e: &Expr| e.as_name() == Some(var);
    let hi = match &l.cond.as_ref()?.kind {
        ExprKind::Binary(BinOp::Lt, a, b) if is_var(a) => (**b).clone(),
        ExprKind::Binary(BinOp::Gt, a, b) if is_var(b) => (**a).clone(),
        ExprKind::Binary(BinOp::Le, a, b) if is_var(a) => plus_one(b),
        ExprKind::Binary(BinOp::Ge, a, b) if is_var(b) => plus_one(a),
        _ => return None,
    };
    let mut hi_reads_var = false;
    crate::visit::walk_expr(&hi, &mut |e: &Expr| hi_reads_var |= is_var(e));
    if hi_reads_var {
        return None;
    }
    let one = |e: &Expr| e.as_int().is_some_and(|v| *v == 1.into());
    let step = match l.update.as_slice() {
        [Stmt { kind: StmtKind::IncDec { target, inc: true }, .. }] => is_var(target),
        [Stmt { kind: StmtKind::CompoundAssign { target, op: CompoundOp::Add, value }, .. }] => {
            is_var(target) && one(value)
        }
        [Stmt { kind: StmtKind::Assign { target, value }, .. }] => {
            is_var(target)
                && matches!(&value.kind, ExprKind::Binary(BinOp::Add, a, b)
                    if (is_var(a) && one(b)) || (one(a) && is_var(b)))
        }
        _ => false,
    };
    if !step || assigns(&l.body, var) {
        return None;
    }
    Some((Iter { ty, name, lo: lo.clone(), hi, span }, declared))
}

/// `e + 1`, synthesised (no span: it is not text of the file).
fn plus_one(e: &Expr) -> Expr {
    Expr::bin(BinOp::Add, e.clone(), Expr::int(1))
}

/// Does `s` assign the variable `var` (which a parallel block could not express)?
fn assigns(s: &Stmt, var: &str) -> bool {
    let mut found = false;
    crate::visit::walk_stmts(s, &mut |t: &Stmt| {
        let target = match &t.kind {
            StmtKind::Assign { target, .. }
            | StmtKind::CompoundAssign { target, .. }
            | StmtKind::IncDec { target, .. } => Some(target),
            _ => None,
        };
        found |= target.is_some_and(|t| t.as_name() == Some(var));
    });
    found
}

//! VerCors' iteration contracts in C: an annotation between a `for` header and its body.
//!
//! ```c
//! for (int i = 0; i < len; i++)
//!   /*@ context Perm(ar[i], write); ensures ar[i] == 0; @*/
//! { ar[i] = 0; }
//! ```
//!
//! A contract of `requires`/`ensures`/`context` there says what each iteration needs and gives,
//! on its own: the iterations are independent, and VerCors verifies the loop as the parallel
//! block `par (int i = 0 .. len) contract { body }` (its C examples `zero-loop.c`,
//! `forward-loop.c`, the `*-ic-*` array examples). The front end builds exactly that block, so
//! the verifier, the interpreter (which runs the iterations as threads and checks that they do
//! not race) and the sites see one construct. Loop invariants there are the loop's own
//! (`l.prefix`). What cannot be read as a parallel block is refused (A0014) rather than run as
//! a sequential loop that ignores its contract.

use super::convert::Conv;
use crate::front::ast::*;
use crate::front::parser::FragItem;
use crate::front::span::Span;

impl Conv<'_> {
    /// `l` with the annotations between its header (from `start`) and its body (at `body`):
    /// a loop with those invariants, or the parallel block of an iteration contract.
    pub(super) fn loop_with_header_annotations(
        &mut self,
        mut l: Loop,
        start: usize,
        body: usize,
        span: Span,
    ) -> Stmt {
        let frags = self.annotations_in(start, body);
        if frags.is_empty() {
            return Stmt { kind: StmtKind::For(l), span };
        }
        let mut prefix = Prefix { span: Span::new(body, body), ..Prefix::default() };
        for f in frags {
            match f {
                FragItem::Prefix(p) => {
                    prefix.span = if prefix.clauses.is_empty() && prefix.annotations.is_empty() {
                        p.span
                    } else {
                        prefix.span.to(p.span)
                    };
                    prefix.clauses.extend(p.clauses);
                    prefix.annotations.extend(p.annotations);
                }
                FragItem::Stmt(s) => {
                    self.unsupported("a statement between a loop header and its body", s.span)
                }
            }
        }
        let invariant =
            |c: &Clause| matches!(c.kind, ClauseKind::LoopInvariant | ClauseKind::Decreases);
        if prefix.clauses.iter().all(invariant) {
            prefix.clauses.extend(std::mem::take(&mut l.prefix.clauses));
            prefix.annotations.extend(std::mem::take(&mut l.prefix.annotations));
            l.prefix = prefix;
            return Stmt { kind: StmtKind::For(l), span };
        }
        if let Some(c) = prefix.clauses.iter().find(|c| invariant(c)) {
            self.unsupported("an iteration contract with loop invariants", c.span);
            return Stmt { kind: StmtKind::For(l), span };
        }
        let Some((iter, declared)) = counted(&l, span) else {
            self.unsupported(
                "an iteration contract on a loop other than `for (int i = lo; i < hi; i++)`",
                l.keyword,
            );
            return Stmt { kind: StmtKind::For(l), span };
        };
        // `for (i = lo; …)` on a variable declared before: C leaves it at the end of the range
        // afterwards, which the block states by assigning it. That value is only known when the
        // bounds read no memory the iterations may change.
        let after = match declared {
            true => None,
            false if heap_free(&iter.lo) && heap_free(&iter.hi) => Some(end_value(&iter)),
            false => {
                self.unsupported(
                    "an iteration contract on a loop over a variable declared before it, whose bounds read memory",
                    l.keyword,
                );
                return Stmt { kind: StmtKind::For(l), span };
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
        match after {
            None => par,
            Some(set) => {
                let block = Block { stmts: vec![par, set], span };
                Stmt { kind: StmtKind::Block(block), span }
            }
        }
    }
}

/// Does `e` read no memory (only variables, literals and arithmetic)?
fn heap_free(e: &Expr) -> bool {
    let mut ok = true;
    crate::front::visit::walk_expr(e, &mut |x: &Expr| {
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
    Stmt { kind: StmtKind::Assign { target: var, value }, span: crate::front::span::Span::DUMMY }
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
    crate::front::visit::walk_expr(&hi, &mut |e: &Expr| hi_reads_var |= is_var(e));
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
    crate::front::visit::walk_stmts(s, &mut |t: &Stmt| {
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

#[cfg(test)]
mod tests {
    use crate::front::ast::*;

    /// The statements of the only function of a C file.
    fn body(c: &str) -> (Vec<Stmt>, usize) {
        let parsed = crate::front::cuda::parse_cuda(c);
        let errors = parsed.errors().count();
        let stmts = parsed
            .program
            .methods()
            .find_map(|(_, m)| match &m.body {
                MethodBody::Block(b) => Some(b.stmts.clone()),
                _ => None,
            })
            .unwrap_or_default();
        (stmts, errors)
    }

    fn with_loop(header: &str, body_stmt: &str) -> String {
        format!(
            "/*@ context_everywhere a != NULL; @*/\nvoid f(int a[], int n) {{\n  for ({header})\n    /*@ context Perm(a[i], write); @*/\n  {{\n    {body_stmt}\n  }}\n}}\n"
        )
    }

    #[test]
    fn counted_loops_become_par_blocks() {
        for (header, hi) in [
            ("int i = 0; i < n; i++", "n"),
            ("int i = 0; n > i; ++i", "n"),
            ("int i = 1; i <= n; i += 1", "n + 1"),
            ("int i = 0; i < n; i = i + 1", "n"),
        ] {
            let (stmts, errors) = body(&with_loop(header, "a[i] = 0;"));
            assert_eq!(errors, 0, "{header}");
            let Some(StmtKind::Par(p)) = stmts.first().map(|s| &s.kind) else {
                panic!("{header}: {stmts:?}")
            };
            assert!(p.loop_form && p.arms.len() == 1, "{header}");
            let it = &p.arms[0].iters[0];
            assert_eq!(it.name.name, "i", "{header}");
            assert_eq!(
                crate::front::printer::print_expr(&it.hi, crate::front::Dialect::V2),
                hi,
                "{header}"
            );
            assert_eq!(p.arms[0].contract.len(), 1, "{header}");
        }
    }

    #[test]
    fn other_loops_with_iteration_contracts_are_refused() {
        for (header, body_stmt) in [
            ("int i = 0; i < n; i += 2", "a[i] = 0;"),
            ("int i = 0; i < n; i--", "a[i] = 0;"),
            ("int i = 0; i < i + n; i++", "a[i] = 0;"),
            ("int i = 0; i < n; i++", "a[i] = 0; i = i + 1;"),
            ("; i < n; i++", "a[i] = 0;"),
        ] {
            let parsed = crate::front::cuda::parse_cuda(&with_loop(header, body_stmt));
            assert!(
                parsed.errors().any(|d| d.code == "A0014"),
                "{header}: {:?}",
                parsed.diagnostics
            );
        }
    }

    #[test]
    fn invariants_between_header_and_body_stay_the_loops() {
        let c = "void f(int n) {\n  int s = 0;\n  for (int i = 0; i < n; i++)\n    /*@ loop_invariant 0 <= i && i <= n; @*/\n  {\n    s = s + 1;\n  }\n}\n";
        let (stmts, errors) = body(c);
        assert_eq!(errors, 0);
        let Some(StmtKind::For(l)) = stmts.get(1).map(|s| &s.kind) else { panic!("{stmts:?}") };
        assert_eq!(l.prefix.clauses.len(), 1);
    }
}

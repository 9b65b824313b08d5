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
//! not race) and the sites see one construct (`front::iteration`, shared with PVL's `for`
//! loops with iteration contracts). Loop invariants there are the loop's own (`l.prefix`).
//! What cannot be read as a parallel block is refused (A0014) rather than run as a sequential
//! loop that ignores its contract.

use super::convert::Conv;
use crate::ast::*;
use crate::parser::FragItem;
use crate::span::Span;

impl Conv<'_> {
    /// `l` with the annotations between its header (from `start`) and its body (at `body`):
    /// a loop with those invariants, or the parallel block of an iteration contract.
    pub(super) fn loop_with_header_annotations(
        &mut self,
        l: Loop,
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
        match crate::iteration::parallel_loop(l, prefix, span) {
            Ok(st) => st,
            Err((l, why, at)) => {
                self.unsupported(why, at);
                Stmt { kind: StmtKind::For(l), span }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::*;

    /// The statements of the only function of a C file.
    fn body(c: &str) -> (Vec<Stmt>, usize) {
        let parsed = crate::cuda::parse_cuda(c);
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
            assert_eq!(crate::printer::print_expr(&it.hi, crate::Dialect::V2), hi, "{header}");
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
            let parsed = crate::cuda::parse_cuda(&with_loop(header, body_stmt));
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

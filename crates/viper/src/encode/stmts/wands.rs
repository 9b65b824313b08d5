//! VerCors 1 magic wands as Viper's: `A -* B` is the resource `A --* B`;
//! `create { use U; …; qed A -* B; }` packages it, with the statements between as the proof
//! script; `apply A -* B;` trades the wand and `A` for `B`.
//!
//! `use e;` names what the wand keeps from the current state. Viper's `package` takes the
//! permissions its proof needs from the current state by itself; a fact `use`d is asserted
//! before the package (so it must hold), and a resource `use`d is left to that transfer.

use crate::ast::*;
use crate::encode::{Encoder, R};
use front::ast::{self, StmtKind as P};
use front::dialect::Dialect;
use front::span::Span;

impl Encoder<'_> {
    /// `create`, `apply`, and `use`/`qed` out of place; `false` for other opaque statements.
    pub(super) fn wand_stmt(&mut self, op: &ast::Opaque, out: &mut Vec<Stmt>) -> R<bool> {
        match op.keyword.as_str() {
            "create" => self.wand_create(op, out).map(|_| true),
            "apply" => {
                let e = self.opaque_operand(op)?;
                let w = self.wand_exp(&e, "apply")?;
                self.flush_pending(out);
                out.push(Stmt::new(StmtKind::Apply(w), Origin::new(Role::Code, Some(op.span))));
                Ok(true)
            }
            "use" | "qed" => {
                self.bad(format!("`{}` outside a `create` block", op.keyword), op.span);
                Err(())
            }
            _ => Ok(false),
        }
    }

    /// The wand `e` (refused unless it is one).
    fn wand_exp(&mut self, e: &ast::Expr, what: &str) -> R<Exp> {
        if !matches!(e.kind, ast::ExprKind::Binary(ast::BinOp::Wand, ..)) {
            self.bad(format!("`{what}` needs a magic wand `A -* B`"), e.span);
            return Err(());
        }
        self.spec(e)
    }

    fn wand_create(&mut self, op: &ast::Opaque, out: &mut Vec<Stmt>) -> R<()> {
        let start = op.span.start() + op.keyword.len();
        let span = Span::new(start, op.span.end());
        let text = &self.src.text;
        let parsed = front::parser::parse_stmt_at(text, span, Dialect::V1)
            .or_else(|_| front::parser::parse_stmt_at(text, span, Dialect::V2));
        let Ok(ast::Stmt { kind: P::Block(block), .. }) = parsed else {
            self.bad(
                "cannot read the body of `create`: expected `create { … qed A -* B; }`",
                op.span,
            );
            return Err(());
        };
        let mut proof = Vec::new();
        let mut wand = None;
        let mut uses = Vec::new();
        for (k, s) in block.stmts.iter().enumerate() {
            match &s.kind {
                P::Opaque(o) if o.keyword == "qed" => {
                    if k + 1 != block.stmts.len() {
                        self.bad("`qed` must end the `create` block", o.span);
                        return Err(());
                    }
                    let e = self.opaque_operand(o)?;
                    wand = Some(self.wand_exp(&e, "qed")?);
                }
                P::Opaque(o) if o.keyword == "use" => uses.push(self.opaque_operand(o)?),
                _ => proof.push(s.clone()),
            }
        }
        let Some(wand) = wand else {
            self.bad("a `create` block must end with `qed A -* B;`", op.span);
            return Err(());
        };
        self.flush_pending(out);
        for u in &uses {
            let x = self.spec(u)?;
            if !x.has_acc() {
                out.push(Stmt::new(
                    StmtKind::Assert(x),
                    Origin::new(Role::UserAssert, Some(u.span)),
                ));
            }
        }
        // The proof script runs in the wand's own state; jumps cannot leave it.
        self.fence += 1;
        let mut stmts = Vec::new();
        let mut r = Ok(());
        for s in &proof {
            if let Err(()) = self.stmt(s, false, &mut stmts) {
                r = Err(());
            }
        }
        self.fence -= 1;
        r?;
        out.push(Stmt::new(StmtKind::Package(wand, stmts), Origin::new(Role::Code, Some(op.span))));
        Ok(())
    }
}

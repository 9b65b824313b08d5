//! Statements: blocks, control flow, `par` blocks and barriers, simple statements.

use super::{comma_separated, in_block, Printer};
use crate::ast::*;

/// Does a statement end in an `if` without `else` (which would capture a following `else`)?
fn ends_in_open_if(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::If { els: None, .. } => true,
        StmtKind::If { els: Some(e), .. } => ends_in_open_if(e),
        StmtKind::While(l) | StmtKind::For(l) => ends_in_open_if(&l.body),
        StmtKind::RangedFor { body, .. } => ends_in_open_if(body),
        StmtKind::Ghost(inner) => ends_in_open_if(inner),
        StmtKind::Par(p) => p.arms.last().is_some_and(|a| ends_in_open_if(&a.body)),
        _ => false,
    }
}

/// Does a statement start with contract clauses (which a preceding `par` or barrier header
/// would take as its own)?
fn starts_with_clause(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::While(l) | StmtKind::For(l) => {
            l.prefix.annotations.is_empty() && !l.prefix.clauses.is_empty()
        }
        StmtKind::RangedFor { prefix, .. } => {
            prefix.annotations.is_empty() && !prefix.clauses.is_empty()
        }
        StmtKind::Par(p) => p.prefix.annotations.is_empty() && !p.prefix.clauses.is_empty(),
        _ => false,
    }
}

impl Printer {
    /// A statement; see [`print_stmt`](super::print_stmt) for the layout.
    pub fn stmt(&self, s: &Stmt, indent: &str) -> String {
        let mut out = String::new();
        self.stmt_into(&mut out, s, indent);
        out
    }

    /// `{ … }` starting at the cursor; the closing brace at `ind`, no line break after it.
    pub(super) fn block(&self, out: &mut String, b: &Block, ind: &str) {
        self.stmt_list(out, &b.stmts, ind);
    }

    fn stmt_list(&self, out: &mut String, stmts: &[Stmt], ind: &str) {
        if stmts.is_empty() {
            out.push_str("{ }");
            return;
        }
        out.push('{');
        out.push_str(&self.newline);
        let inner = format!("{ind}{}", self.unit);
        for s in stmts {
            self.stmt_into(out, s, &inner);
            out.push_str(&self.newline);
        }
        out.push_str(ind);
        out.push('}');
    }

    /// A statement body after a header (`while (…)`, `else`, …) that has already been written:
    /// a block continues the header line; anything else goes on its own line, one unit deeper.
    fn body(&self, out: &mut String, s: &Stmt, ind: &str) {
        if let StmtKind::Block(b) = &s.kind {
            out.push(' ');
            self.block(out, b, ind);
        } else {
            out.push_str(&self.newline);
            self.stmt_into(out, s, &format!("{ind}{}", self.unit));
        }
    }

    /// Write `s` at indentation `ind` (the first line too), without a final line break.
    fn stmt_into(&self, out: &mut String, s: &Stmt, ind: &str) {
        match &s.kind {
            // The parser keeps a run of unattached annotations as one block-less `Block`
            // statement; printed in braces it would read as a block around such a run.
            StmtKind::Block(b)
                if b.stmts.len() >= 2
                    && b.stmts.iter().all(|s| matches!(s.kind, StmtKind::Annotation(_))) =>
            {
                for (i, a) in b.stmts.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&self.newline);
                    }
                    self.stmt_into(out, a, ind);
                }
            }
            StmtKind::Block(b) => {
                out.push_str(ind);
                self.block(out, b, ind);
            }
            StmtKind::Decl { .. }
            | StmtKind::Assign { .. }
            | StmtKind::CompoundAssign { .. }
            | StmtKind::IncDec { .. }
            | StmtKind::Expr(_) => {
                out.push_str(ind);
                self.simple(out, s);
                out.push(';');
            }
            StmtKind::If { cond, then, els } => {
                out.push_str(ind);
                out.push_str("if (");
                self.expr_into(out, cond);
                out.push(')');
                // A then-branch ending in an open `if` would take our `else`: brace it.
                let braced;
                let then: &Stmt = if els.is_some() && ends_in_open_if(then) {
                    braced = in_block(then);
                    &braced
                } else {
                    then
                };
                self.body(out, then, ind);
                if let Some(e) = els {
                    if matches!(then.kind, StmtKind::Block(_)) {
                        out.push(' ');
                    } else {
                        out.push_str(&self.newline);
                        out.push_str(ind);
                    }
                    out.push_str("else");
                    if let StmtKind::If { .. } = e.kind {
                        // `else if` on one line: print the nested `if` at our indentation.
                        out.push(' ');
                        let nested = self.stmt(e, ind);
                        out.push_str(&nested[ind.len()..]);
                    } else {
                        self.body(out, e, ind);
                    }
                }
            }
            StmtKind::While(l) => self.loop_stmt(out, &l.prefix, "while", &l.body, ind, |out| {
                if let Some(c) = &l.cond {
                    self.expr_into(out, c);
                }
            }),
            StmtKind::For(l) => self.loop_stmt(out, &l.prefix, "for", &l.body, ind, |out| {
                self.simple_list(out, &l.init);
                out.push(';');
                if let Some(c) = &l.cond {
                    out.push(' ');
                    self.expr_into(out, c);
                }
                out.push(';');
                if !l.update.is_empty() {
                    out.push(' ');
                    self.simple_list(out, &l.update);
                }
            }),
            StmtKind::RangedFor { prefix, ty, var, lo, hi, body, .. } => {
                self.loop_stmt(out, prefix, "for", body, ind, |out| {
                    self.typed_range(out, ty, var, lo, hi)
                })
            }
            StmtKind::Par(p) => self.par(out, p, ind),
            StmtKind::Parallel { sequential, body } => {
                out.push_str(ind);
                out.push_str(if *sequential { "sequential " } else { "parallel " });
                self.stmt_list(out, body, ind);
            }
            StmtKind::Barrier(b) => self.barrier(out, b, ind),
            StmtKind::Invariant { name, resource, body } => {
                let head = format!("invariant {}", self.ident(name));
                self.headed_block(out, &head, body, ind, |out| self.expr_into(out, resource))
            }
            StmtKind::Atomic { names, body } => {
                self.headed_block(out, "atomic", body, ind, |out| self.idents(out, names))
            }
            StmtKind::Vec { iter, body } => self.headed_block(out, "vec ", body, ind, |out| {
                self.typed_range(out, &iter.ty, &iter.name, &iter.lo, &iter.hi)
            }),
            StmtKind::Return(e) => {
                out.push_str(ind);
                out.push_str("return");
                if let Some(e) = e {
                    out.push(' ');
                    self.expr_into(out, e);
                }
                out.push(';');
            }
            StmtKind::Spec { kind, expr } => {
                out.push_str(ind);
                out.push_str(kind.keyword());
                out.push(' ');
                self.expr_into(out, expr);
                out.push(';');
            }
            StmtKind::Ghost(inner) => {
                out.push_str(ind);
                out.push_str("ghost ");
                let text = self.stmt(inner, ind);
                out.push_str(&text[ind.len()..]);
            }
            StmtKind::Annotation(a) => {
                out.push_str(ind);
                out.push_str(&self.annotation(a));
            }
            StmtKind::Opaque(o) => {
                out.push_str(ind);
                out.push_str(&o.text);
            }
        }
    }

    /// A loop at `ind`: its prefix, then `keyword (`, the header `head` writes, `)` and the body.
    fn loop_stmt(
        &self,
        out: &mut String,
        prefix: &Prefix,
        keyword: &str,
        body: &Stmt,
        ind: &str,
        head: impl FnOnce(&mut String),
    ) {
        self.prefix(out, prefix, ind);
        out.push_str(ind);
        out.push_str(keyword);
        out.push_str(" (");
        head(out);
        out.push(')');
        self.body(out, body, ind);
    }

    /// A block statement with a header at `ind`: `head(`, what `inside` writes, `) ` and the
    /// block.
    fn headed_block(
        &self,
        out: &mut String,
        head: &str,
        body: &Block,
        ind: &str,
        inside: impl FnOnce(&mut String),
    ) {
        out.push_str(ind);
        out.push_str(head);
        out.push('(');
        inside(out);
        out.push_str(") ");
        self.block(out, body, ind);
    }

    /// A simple statement without its `;` (also the parts of a `for` header).
    fn simple(&self, out: &mut String, s: &Stmt) {
        match &s.kind {
            StmtKind::Decl { ty, vars } => {
                out.push_str(&self.ty(ty));
                if !vars.is_empty() {
                    out.push(' ');
                }
                comma_separated(out, vars, |out, d| {
                    out.push_str(&self.ident(&d.name));
                    if let Some(e) = &d.init {
                        out.push_str(" = ");
                        self.expr_into(out, e);
                    }
                });
            }
            StmtKind::Assign { target, value } => {
                self.expr_into(out, target);
                out.push_str(" = ");
                self.expr_into(out, value);
            }
            StmtKind::CompoundAssign { target, op, value } => {
                self.expr_into(out, target);
                out.push(' ');
                out.push_str(op.bin_op().symbol());
                out.push_str("= ");
                self.expr_into(out, value);
            }
            StmtKind::IncDec { target, inc } => {
                self.expr_into(out, target);
                out.push_str(if *inc { "++" } else { "--" });
            }
            StmtKind::Expr(e) => self.expr_into(out, e),
            _ => {
                // Not a simple statement (only a generated AST can put one in a `for` header):
                // print it whole, without its final `;`.
                let text = self.stmt(s, "");
                out.push_str(text.strip_suffix(';').unwrap_or(&text));
            }
        }
    }

    fn simple_list(&self, out: &mut String, stmts: &[Stmt]) {
        comma_separated(out, stmts, |out, s| self.simple(out, s));
    }

    fn par(&self, out: &mut String, p: &Par, ind: &str) {
        self.prefix(out, &p.prefix, ind);
        let inner = format!("{ind}{}", self.unit);
        for (i, arm) in p.arms.iter().enumerate() {
            if i > 0 {
                out.push_str(&self.newline);
            }
            out.push_str(ind);
            out.push_str(if i == 0 { "par" } else { "and" });
            if let Some(l) = &arm.label {
                out.push(' ');
                out.push_str(&self.ident(l));
            }
            if !arm.iters.is_empty() || arm.wait.is_some() {
                out.push_str(" (");
                comma_separated(out, &arm.iters, |out, it| {
                    self.typed_range(out, &it.ty, &it.name, &it.lo, &it.hi)
                });
                if let Some(w) = &arm.wait {
                    // The wait list keeps its text, which starts with its `;`.
                    out.push_str(&w.text);
                }
                out.push(')');
            }
            // A body that starts with clauses would lose them to the per-thread contract.
            let braced;
            let body: &Stmt = if starts_with_clause(&arm.body) {
                braced = in_block(&arm.body);
                &braced
            } else {
                &arm.body
            };
            if arm.contract.is_empty() {
                self.body(out, body, ind);
            } else {
                // Per-thread clauses one unit below the header, the block at the header's level.
                out.push_str(&self.newline);
                self.clauses(out, &arm.contract, &inner);
                match &body.kind {
                    StmtKind::Block(b) => {
                        out.push_str(ind);
                        self.block(out, b, ind);
                    }
                    _ => self.stmt_into(out, body, &inner),
                }
            }
        }
    }

    fn barrier(&self, out: &mut String, b: &Barrier, ind: &str) {
        out.push_str(ind);
        out.push_str("barrier(");
        out.push_str(&self.ident(&b.label));
        if !b.tags.is_empty() {
            out.push_str("; ");
        }
        self.idents(out, &b.tags);
        out.push(')');
        let inner = format!("{ind}{}", self.unit);
        if b.contract_in_braces || (b.body.is_none() && b.contract.is_empty()) {
            // `barrier(L) {` clauses `}`: the canonical form of generated barriers.
            if b.contract.is_empty() {
                out.push_str(" { }");
            } else {
                out.push_str(" {");
                out.push_str(&self.newline);
                self.clauses(out, &b.contract, &inner);
                out.push_str(ind);
                out.push('}');
            }
            return;
        }
        // `barrier(L)` clauses `{ body }`, kept for barriers parsed in that form.
        let empty = Block { stmts: Vec::new(), span: Default::default() };
        let body = b.body.as_ref().unwrap_or(&empty);
        if b.contract.is_empty() {
            out.push(' ');
        } else {
            out.push_str(&self.newline);
            self.clauses(out, &b.contract, &inner);
            out.push_str(ind);
        }
        self.block(out, body, ind);
    }
}

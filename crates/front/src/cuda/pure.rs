//! `/*@ pure @*/` C functions (VerCors' spelling of a PVL `pure` function in C): the modifier
//! stands in an annotation before the function or among its specifiers
//! (`int /*@ pure @*/ f(int x)`), and the body, which a pure function has as one expression,
//! is read from the C statements that compute it: local declarations whose values are
//! substituted where they are used, `if`/`else` whose branches return, and a final `return`.
//! A body that assigns, loops or calls for effect is refused by name.

use super::convert::Conv;
use crate::ast::*;
use crate::span::Span;
use crate::visit::map_expr;

/// The modifiers an annotation holds, when it holds nothing else (`pure`, `inline`).
pub(super) fn modifiers_only(text: &str) -> Option<Vec<Modifier>> {
    let mut out = Vec::new();
    for w in text.split_whitespace() {
        out.push(match w {
            "pure" => Modifier::Pure,
            "inline" => Modifier::Inline,
            _ => return None,
        });
    }
    (!out.is_empty()).then_some(out)
}

impl Conv<'_> {
    /// The modifiers of modifier-only annotations between `lo` and `hi` (taken: used).
    pub(super) fn modifier_annotations(&mut self, lo: usize, hi: usize) -> Vec<Modifier> {
        let mut out = Vec::new();
        for k in 0..self.prep.annots.len() {
            let a = &self.prep.annots[k];
            if self.used[k] || a.span.start() < lo || a.span.end() > hi {
                continue;
            }
            if let Some(ms) = modifiers_only(a.body.text(self.norm)) {
                self.used[k] = true;
                out.extend(ms);
            }
        }
        out
    }

    /// The expression a pure function's body computes, or a refusal at `span`.
    pub(super) fn pure_body(&mut self, body: &Block, span: Span) -> Option<Expr> {
        let e = value_of(&body.stmts);
        if e.is_none() {
            self.unsupported(
                "a pure function whose body is not local declarations, `if`/`else` and `return`",
                span,
            );
        }
        e
    }
}

/// What `stmts` return, as one expression (see the module doc).
fn value_of(stmts: &[Stmt]) -> Option<Expr> {
    let (first, rest) = stmts.split_first()?;
    match &first.kind {
        StmtKind::Return(Some(e)) => Some(e.clone()),
        StmtKind::Block(b) if rest.is_empty() => value_of(&b.stmts),
        StmtKind::Decl { vars, .. } => {
            let mut e = value_of(rest)?;
            for v in vars.iter().rev() {
                let init = v.init.clone()?;
                map_expr(&mut e, &mut |x| {
                    if matches!(&x.kind, ExprKind::Name(n) if n.name == v.name.name) {
                        *x = Expr { span: x.span, ..init.clone() };
                        return true;
                    }
                    false
                });
            }
            Some(e)
        }
        StmtKind::If { cond, then, els } => {
            let t = value_of(std::slice::from_ref(then))?;
            let e = match els {
                Some(e) if rest.is_empty() => value_of(std::slice::from_ref(e))?,
                None => value_of(rest)?,
                Some(_) => return None,
            };
            let kind = ExprKind::Cond(Box::new(cond.clone()), Box::new(t), Box::new(e));
            Some(Expr::new(kind, first.span))
        }
        _ => None,
    }
}

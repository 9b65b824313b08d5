//! VerCors' `//@ spec_ignore {` … `//@ spec_ignore }`: code between the two markers is left
//! out of verification (I/O, timing, calls into libraries without contracts). The user marks
//! it, so leaving it out is the program's own instruction; an unmatched marker is an error,
//! never a silent cut to the end of the block.

use crate::ast::*;
use diag::Diagnostic;

/// Remove every marked stretch from the bodies of `items`, reporting unmatched markers.
pub(super) fn strip(items: &mut [Item], src: &str, diags: &mut Vec<Diagnostic>) {
    for item in items {
        if let Item::Method(m) = item {
            if let MethodBody::Block(b) = &mut m.body {
                block(&mut b.stmts, src, diags);
            }
        }
    }
}

/// `Some(true)` for an opening marker, `Some(false)` for a closing one.
fn marker(s: &Stmt, src: &str) -> Option<bool> {
    let StmtKind::Opaque(o) = &s.kind else { return None };
    if o.keyword != "spec_ignore" {
        return None;
    }
    Some(o.span.text(src).trim_end().ends_with('{'))
}

fn block(stmts: &mut Vec<Stmt>, src: &str, diags: &mut Vec<Diagnostic>) {
    let mut out = Vec::with_capacity(stmts.len());
    let mut open: Option<crate::span::Span> = None;
    for mut s in std::mem::take(stmts) {
        match (marker(&s, src), open) {
            (Some(true), None) => open = Some(s.span),
            (Some(false), Some(_)) => open = None,
            (Some(_), _) => diags.push(unmatched(&s)),
            (None, Some(_)) => {}
            (None, None) => {
                nested(&mut s, src, diags);
                out.push(s);
            }
        }
    }
    if let Some(at) = open {
        diags.push(
            Diagnostic::error("A0001", "`spec_ignore {` without a closing `spec_ignore }`")
                .with_primary(at, "opened here")
                .with_help("close the ignored code with `//@ spec_ignore }` in the same block"),
        );
    }
    *stmts = out;
}

fn unmatched(s: &Stmt) -> Diagnostic {
    Diagnostic::error("A0001", "unmatched `spec_ignore` marker")
        .with_primary(s.span, "no matching marker in this block")
        .with_help("write `//@ spec_ignore {` before the ignored code and `//@ spec_ignore }` after it, in one block")
}

/// Strip the blocks nested in `s`.
fn nested(s: &mut Stmt, src: &str, diags: &mut Vec<Diagnostic>) {
    match &mut s.kind {
        StmtKind::Block(b) => block(&mut b.stmts, src, diags),
        StmtKind::If { then, els, .. } => {
            nested(then, src, diags);
            if let Some(e) = els {
                nested(e, src, diags);
            }
        }
        StmtKind::While(l) | StmtKind::For(l) => nested(&mut l.body, src, diags),
        StmtKind::RangedFor { body, .. } => nested(body, src, diags),
        StmtKind::Par(p) => p.arms.iter_mut().for_each(|a| nested(&mut a.body, src, diags)),
        StmtKind::Ghost(inner) => nested(inner, src, diags),
        _ => {}
    }
}

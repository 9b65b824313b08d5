//! Calls to the C library's output functions (`printf`, `puts`, `putchar`) in statement
//! position, when the file does not declare them itself.
//!
//! Writing to standard output changes no memory the program's contracts speak of, so such a
//! call verifies as the evaluation of its arguments: each argument that is not a string
//! literal becomes `assert e == e;`, which checks that reading it is allowed (permission,
//! bounds) and states nothing else. `%n`, with which `printf` writes through a pointer, is
//! refused.

use super::convert::{Body, Conv};
use crate::ast::*;
use crate::span::Span;
use lang_c::ast as c;
use lang_c::span::Node;

/// The output functions read this way.
pub(super) const OUTPUT: [&str; 3] = ["printf", "puts", "putchar"];

impl Conv<'_> {
    pub(super) fn output_call(
        &mut self,
        call: &Node<c::CallExpression>,
        span: Span,
        out: &mut Body,
    ) {
        for a in &call.node.arguments {
            if let c::Expression::StringLiteral(lit) = &a.node {
                if lit.node.iter().any(|part| writes_through_pointer(part)) {
                    let at = self.sp(a.span);
                    self.unsupported(
                        "a `printf` format with `%n` (it writes through a pointer)",
                        at,
                    );
                }
                continue;
            }
            let Ok(e) = self.expr(a) else { continue };
            let at = e.span;
            let read = Expr::new(ExprKind::Binary(BinOp::Eq, Box::new(e.clone()), Box::new(e)), at);
            out.stmts
                .push(Stmt { kind: StmtKind::Spec { kind: SpecKind::Assert, expr: read }, span });
        }
    }
}

/// Does a format string contain the conversion `%n` (with flags, width or length between)?
fn writes_through_pointer(lit: &str) -> bool {
    let b = lit.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let mut j = i + 1;
            if b.get(j) == Some(&b'%') {
                i = j + 1;
                continue;
            }
            while j < b.len()
                && (b"-+ #0.*'".contains(&b[j])
                    || b[j].is_ascii_digit()
                    || b"hljztL".contains(&b[j]))
            {
                j += 1;
            }
            if b.get(j) == Some(&b'n') {
                return true;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::writes_through_pointer;

    #[test]
    fn percent_n_is_found_behind_flags_and_lengths() {
        assert!(writes_through_pointer("\"%n\""));
        assert!(writes_through_pointer("\"count %5hhn\""));
        assert!(!writes_through_pointer("\"%d items, 100%% done\\n\""));
        assert!(!writes_through_pointer("\"%%n\""));
    }
}

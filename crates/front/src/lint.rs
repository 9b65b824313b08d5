//! Warnings on programs that parse (pvl.md §2.5): things that are valid PVL but almost never
//! what the author meant.
//!
//! * `A0012`: integer `/` between two literals in a permission amount. `Perm(a[i], 1/2)` asks
//!   for permission 0 (integer division), not one half; the fraction is written `1\2`.

use super::ast::*;
use super::visit::walk_expr;
use diag::Diagnostic;

/// A0012 for every `lit / lit` in the amount argument of the permission built-in `b` applied
/// to `args` (the parser calls this as it builds the built-in, so only the small amount
/// expression is walked).
pub fn permission_amount(b: Builtin, args: &[Expr], out: &mut Vec<Diagnostic>) {
    let amount = match b {
        Builtin::Perm | Builtin::PointsTo | Builtin::HPerm | Builtin::APerm => args.get(1),
        Builtin::Pointer | Builtin::PointerIndex => args.get(2),
        _ => None,
    };
    let Some(amount) = amount else {
        return;
    };
    walk_expr(amount, &mut |x| {
        if let ExprKind::Binary(BinOp::Div, l, r) = &x.kind {
            if let (ExprKind::Int(n), ExprKind::Int(d)) = (&l.kind, &r.kind) {
                // A construct parsed twice (after backtracking) warns once.
                // (`Span`'s `==` ignores positions: compare places.)
                let seen = |o: &Diagnostic| {
                    o.code == "A0012" && o.primary_span().is_some_and(|s| s.same_place(x.span))
                };
                if out.iter().any(seen) {
                    return;
                }
                out.push(
                    Diagnostic::warning(
                        "A0012",
                        format!("`{n}/{d}` is integer division here: the amount is {}", {
                            if d == &num_bigint::BigInt::from(0) {
                                "undefined".to_string()
                            } else {
                                (n / d).to_string()
                            }
                        }),
                    )
                    .with_primary(x.span, "integer division of two literals")
                    .with_help(format!("write the fraction as `{n}\\{d}`")),
                );
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use crate::{parse, ParseOptions};

    #[test]
    fn integer_division_in_a_permission_is_a_warning() {
        let src = "class C {\n  requires Perm(a[0], 1/2) ** Perm(a[1], 1\\2) ** Perm(a[2], 1/4);\n  void m(int[] a) { }\n}\n";
        let p = parse(src, &ParseOptions::default());
        let warns: Vec<_> = p.diagnostics.iter().filter(|d| d.code == "A0012").collect();
        assert_eq!(warns.len(), 2, "{:?}", p.diagnostics);
        assert!(!p.has_errors());
        assert!(warns[0].message.contains("the amount is 0"));
        // Outside a permission, `1/2` is ordinary arithmetic.
        let src = "class C {\n  requires x == 1/2;\n  void m(int x) { }\n}\n";
        assert!(parse(src, &ParseOptions::default()).diagnostics.is_empty());
    }
}

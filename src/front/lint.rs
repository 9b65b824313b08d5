//! Warnings on programs that parse (pvl.md §2.5): things that are valid PVL but almost never
//! what the author meant.
//!
//! * `A0012`: integer `/` between two literals in a permission amount. `Perm(a[i], 1/2)` asks
//!   for permission 0 (integer division), not one half; the fraction is written `1\2`.

use super::ast::*;
use super::visit::{all_exprs, walk_expr};
use crate::diag::Diagnostic;

/// The warnings of `program`, in source order.
pub fn lint(program: &Program) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut check = |e: &Expr| permission_amounts(e, &mut out);
    let mut method = |m: &Method| {
        for c in &m.prefix.clauses {
            if let Some(e) = c.expr() {
                walk_expr(e, &mut check);
            }
        }
        match &m.body {
            MethodBody::Block(b) => b.stmts.iter().for_each(|s| all_exprs(s, &mut check)),
            MethodBody::Expr(e) => walk_expr(e, &mut check),
            MethodBody::Abstract => {}
        }
    };
    for item in &program.items {
        match item {
            Item::Class(c) => {
                for mem in &c.members {
                    if let Member::Method(m) = mem {
                        method(m);
                    }
                }
            }
            Item::Method(m) => method(m),
            _ => {}
        }
    }
    if let Some(b) = &program.main {
        b.stmts.iter().for_each(|s| all_exprs(s, &mut check));
    }
    out.sort_by_key(|d| d.primary_span().map_or(0, |s| s.lo));
    out
}

/// A0012 for every `lit / lit` in the amount argument of a permission built-in at `e`.
fn permission_amounts(e: &Expr, out: &mut Vec<Diagnostic>) {
    let ExprKind::Builtin(b, args) = &e.kind else {
        return;
    };
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
    use crate::front::{parse, ParseOptions};

    #[test]
    fn integer_division_in_a_permission_is_a_warning() {
        let src = "class C {\n  requires Perm(a[0], 1/2) ** Perm(a[1], 1\\2);\n  void m(int[] a) { }\n}\n";
        let p = parse(src, &ParseOptions::default());
        let warns: Vec<_> = p.diagnostics.iter().filter(|d| d.code == "A0012").collect();
        assert_eq!(warns.len(), 1, "{:?}", p.diagnostics);
        assert!(!p.has_errors());
        assert!(warns[0].message.contains("the amount is 0"));
        // Outside a permission, `1/2` is ordinary arithmetic.
        let src = "class C {\n  requires x == 1/2;\n  void m(int x) { }\n}\n";
        assert!(parse(src, &ParseOptions::default()).diagnostics.is_empty());
    }
}

//! Pointers into an array, as kernels name a row or a block's slice: `int *row = a + r * n;`
//! then `row[k]`, `*row`.
//!
//! Such a local is an alias of `a` shifted by `r * n`. When it is never assigned again, nor
//! anything its offset reads, each `row[k]` means `a[r * n + k]`: the uses are rewritten to
//! that, in code and in annotations, and the declaration is dropped. The rewritten nodes carry
//! the span of the use, so diagnostics and edits point at the text the user wrote. Any other use
//! of the pointer (passed on, compared, moved) leaves it as it was: the oracles then refuse it
//! by name, never reading it wrongly.

use crate::ast::*;
use crate::visit::{map_expr, map_stmt, walk_expr, walk_stmts};
use std::collections::BTreeSet;

/// One alias: `name` is `base + offset`.
struct Alias {
    name: String,
    base: Expr,
    offset: Expr,
}

/// Resolve the aliases of `m`'s body (module doc).
pub(super) fn resolve(m: &mut Method) {
    let MethodBody::Block(body) = &mut m.body else { return };
    // Names assigned by a statement other than their declaration.
    let (reassigned, _) = super::params::writes(&body.stmts);
    let arrays: BTreeSet<String> =
        m.params.iter().filter(|p| p.ty.array_dims() > 0).map(|p| p.name.name.clone()).collect();
    let mut found: Vec<Alias> = Vec::new();
    for s in &body.stmts {
        walk_stmts(s, &mut |st| found.extend(alias(st, &arrays, &reassigned)));
    }
    for a in found {
        // One declaration of the name in the body (another block's `p` would be another
        // variable) and no use but as an array.
        let declared = found_decls(&body.stmts, &a.name);
        if declared != 1 || !only_indexed(&body.stmts, &a.name) {
            continue;
        }
        for s in body.stmts.iter_mut() {
            drop_decl(s, &a.name);
            map_stmt(s, &mut |e| substitute(e, &a));
        }
    }
}

/// `T *name = base + offset;` (or `offset + base`) with `base` an array parameter, `name` and
/// every variable of `offset` never assigned after their declarations.
fn alias(st: &Stmt, arrays: &BTreeSet<String>, reassigned: &BTreeSet<String>) -> Option<Alias> {
    let StmtKind::Decl { ty, vars } = &st.kind else { return None };
    let [v] = vars.as_slice() else { return None };
    if ty.array_dims() == 0 || reassigned.contains(&v.name.name) {
        return None;
    }
    let ExprKind::Binary(BinOp::Add, l, r) = &v.init.as_ref()?.kind else { return None };
    let is_base = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if arrays.contains(&n.name));
    let (base, offset) = match (is_base(l), is_base(r)) {
        (true, false) => (l, r),
        (false, true) => (r, l),
        _ => return None,
    };
    let mut stable = true;
    walk_expr(offset, &mut |x| match &x.kind {
        ExprKind::Name(n) if reassigned.contains(&n.name) || arrays.contains(&n.name) => {
            stable = false
        }
        // A call or a read of memory could change between the declaration and a use.
        ExprKind::Call { .. } | ExprKind::Index(..) | ExprKind::Field(..) => stable = false,
        _ => {}
    });
    stable.then(|| Alias {
        name: v.name.name.clone(),
        base: base.as_ref().clone(),
        offset: offset.as_ref().clone(),
    })
}

/// How many declarations of `name` the statements hold.
fn found_decls(stmts: &[Stmt], name: &str) -> usize {
    let mut n = 0;
    for s in stmts {
        walk_stmts(s, &mut |st| {
            if let StmtKind::Decl { vars, .. } = &st.kind {
                n += vars.iter().filter(|v| v.name.name == name).count();
            }
        });
    }
    n
}

/// Every use of `name` is the array of an index (`name[k]`, `*name`), in code and annotations,
/// and no construct kept as text (an undeclared call, an operator not read) mentions it.
fn only_indexed(stmts: &[Stmt], name: &str) -> bool {
    let (mut indexed, mut all) = (0usize, 0usize);
    let word =
        |text: &str| text.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == name);
    let mut in_text = false;
    for s in stmts {
        walk_stmts(s, &mut |st| {
            if let StmtKind::Opaque(o) = &st.kind {
                in_text |= word(&o.text);
            }
        });
        crate::visit::all_exprs(s, &mut |x| {
            if let ExprKind::Opaque(o) = &x.kind {
                in_text |= word(&o.text);
            }
        });
    }
    if in_text {
        return false;
    }
    for s in stmts {
        crate::visit::all_exprs(s, &mut |x| match &x.kind {
            ExprKind::Index(a, _) if matches!(&a.kind, ExprKind::Name(n) if n.name == name) => {
                indexed += 1
            }
            ExprKind::Name(n) if n.name == name => all += 1,
            _ => {}
        });
    }
    // The declaration's own name is no expression; every name counted sits under an index.
    all == indexed
}

/// Replace the declaration of `name` (the only one) by an empty block (its text stays; it
/// declares nothing the rewritten uses need).
fn drop_decl(s: &mut Stmt, name: &str) {
    crate::visit::map_stmts(s, &mut |st| {
        if matches!(&st.kind, StmtKind::Decl { vars, .. } if vars.iter().any(|v| v.name.name == name))
        {
            st.kind = StmtKind::Block(Block { stmts: vec![], span: st.span });
        }
    });
}

/// `name[k]` becomes `base[offset + k]` (`base[offset]` for `k` = 0), with the span of the use.
fn substitute(e: &mut Expr, a: &Alias) -> bool {
    let ExprKind::Index(arr, k) = &mut e.kind else { return false };
    if !matches!(&arr.kind, ExprKind::Name(n) if n.name == a.name) {
        return false;
    }
    let span = e.span;
    let at = |mut x: Expr| {
        map_expr(&mut x, &mut |y| {
            y.span = span;
            false
        });
        x
    };
    let index = match k.as_int() {
        Some(v) if *v == 0.into() => at(a.offset.clone()),
        _ => {
            Expr::new(ExprKind::Binary(BinOp::Add, Box::new(at(a.offset.clone())), k.clone()), span)
        }
    };
    **arr = at(a.base.clone());
    **k = index;
    // Declined, so that the index's own uses of aliases are rewritten too.
    false
}

#[cfg(test)]
mod tests {
    fn lowered(body: &str) -> String {
        let src = format!("__global__ void k(int *a, int n) {{\n{body}\n}}\n");
        let parsed = crate::cuda::parse_cuda(&src);
        crate::printer::print_program(&parsed.program, parsed.dialect)
    }

    #[test]
    fn an_alias_read_through_an_index_is_the_array_shifted() {
        let out = lowered("  int t = threadIdx.x;\n  int *p = t * n + a;\n  p[1] = *p;");
        assert!(out.contains("a[t * n + 1] = a[t * n];"), "{out}");
        assert!(!out.contains("p["), "{out}");
    }

    #[test]
    fn aliases_that_move_or_escape_are_left_as_written() {
        // The pointer moves; its offset's variable changes; it is passed on.
        for body in [
            "  int *p = a + 1;\n  p = p + 1;\n  p[0] = 1;",
            "  int o = 1;\n  int *p = a + o;\n  o = 2;\n  p[0] = 1;",
            "  int *p = a + 1;\n  f(p);",
        ] {
            let out = lowered(body);
            assert!(out.contains("p = a + ") || out.contains("p = a+"), "{body}\n{out}");
        }
    }
}

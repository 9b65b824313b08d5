//! Sweep candidates: every `T[][]` parameter or local whose dimensions the facts give, in
//! every layout, with the validation adapter of the output.

use crate::sweep::{choices, method_of, operand, Candidates, Choice, SweepSite};
use analyze::sites::Site;
use front::ast::*;
use front::printer::print_expr;
use front::visit::{mentions_name as mentions, walk_expr, walk_stmts};
use front::Dialect;

/// A choice per matrix and layout.
pub fn candidates(s: &SweepSite) -> Candidates {
    let ms = matrices(&s.parsed.program, s.site, s.parsed.dialect);
    if ms.is_empty() {
        return Err("no `T[][]` with dimensions in the facts".into());
    }
    let mut out = Vec::new();
    for m in &ms {
        for (value, word) in choices(s.opt, "layout") {
            let mut c = Choice::new(
                vec![
                    ("array", m.name.clone()),
                    ("layout", value.into()),
                    ("dims", format!("{},{}", m.rows, m.cols)),
                ],
                Some(m.source.clone()),
            );
            c.adapter =
                Some(format!("matrix_lin {} {word} {} {}", m.name, operand(&m.rows), operand(&m.cols)));
            out.push(c);
        }
    }
    Ok(out)
}

struct Matrix {
    name: String,
    rows: String,
    cols: String,
    /// Where the dimensions come from.
    source: String,
}

fn matrices(program: &Program, site: &Site, dialect: Dialect) -> Vec<Matrix> {
    let Some(m) = method_of(program, site) else { return Vec::new() };
    let pr = |e: &Expr| print_expr(e, dialect);
    let mut out = Vec::new();
    let mut names: Vec<(String, Option<(String, String)>)> = m
        .params
        .iter()
        .filter(|p| p.ty.array_dims() == 2)
        .map(|p| (p.name.name.clone(), None))
        .collect();
    if let MethodBody::Block(b) = &m.body {
        for s in &b.stmts {
            walk_stmts(s, &mut |st| {
                if let StmtKind::Decl { ty, vars } = &st.kind {
                    for v in vars {
                        let dims = match v.init.as_ref().map(|e| &e.kind) {
                            Some(ExprKind::NewArray(_, args)) if args.len() == 2 => {
                                Some((pr(&args[0]), pr(&args[1])))
                            }
                            _ => None,
                        };
                        if ty.array_dims() == 2 || dims.is_some() {
                            names.push((v.name.name.clone(), dims));
                        }
                    }
                }
            });
        }
    }
    for (g, alloc) in names {
        if let Some((rows, cols)) = alloc {
            out.push(Matrix { name: g, rows, cols, source: "dimensions of its allocation".into() });
            continue;
        }
        let (mut rows, mut cols, mut matrix) = (None, None, None);
        for c in &m.prefix.clauses {
            let Some(e) = c.expr() else { continue };
            walk_expr(e, &mut |x| match &x.kind {
                ExprKind::Binary(BinOp::Eq, l, r) => {
                    for (a, b) in [(l, r), (r, l)] {
                        if is_length_of(a, &g, false) && rows.is_none() && !mentions(b, &g) {
                            rows = Some(b.as_ref().clone());
                        }
                        if is_length_of(a, &g, true) && cols.is_none() && !mentions(b, &g) {
                            cols = Some(b.as_ref().clone());
                        }
                    }
                }
                ExprKind::Builtin(Builtin::Matrix, args) if args.len() == 3 && matrix.is_none() => {
                    if matches!(&args[0].kind, ExprKind::Name(n) if n.name == g) {
                        matrix = Some((pr(&args[1]), pr(&args[2])));
                    }
                }
                _ => {}
            });
        }
        let found = match (matrix, rows, cols) {
            (Some((r, c)), _, _) => Some((r, c, "`\\matrix` fact")),
            (None, Some(r), Some(c)) => Some((pr(&r), pr(&c), "length facts")),
            (None, Some(r), None) => match &r.kind {
                ExprKind::Binary(BinOp::Mul, a, b) => {
                    Some((pr(a), pr(b), "linear length fact `length == rows * cols`"))
                }
                _ => None,
            },
            _ => None,
        };
        if let Some((rows, cols, how)) = found {
            out.push(Matrix { name: g, rows, cols, source: format!("dimensions from the {how}") });
        }
    }
    out
}

/// `g.length` (`rows = false`) or `g[_].length` (`rows = true`).
fn is_length_of(e: &Expr, g: &str, row: bool) -> bool {
    let ExprKind::Field(b, f) = &e.kind else { return false };
    if f.name != "length" {
        return false;
    }
    let base = match (&b.kind, row) {
        (ExprKind::Index(a, _), true) => a,
        (_, false) => b,
        _ => return false,
    };
    matches!(&base.kind, ExprKind::Name(n) if n.name == g)
}

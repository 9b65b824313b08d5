//! Sweep candidates: every `T[][]` parameter or local whose dimensions the facts give, with the
//! validation adapter of the output, in the layout that coalesces its accesses (both layouts
//! when its accesses do not tell).

use crate::sweep::{choices, method_of, Candidates, Choice, SweepSite};
use analyze::sites::Site;
use front::ast::*;
use front::printer::print_expr;
use front::visit::{assigned_names, child_stmts, mentions_name as mentions, walk_expr, walk_stmts};
use front::Dialect;

/// A choice per matrix and layout.
pub fn candidates(s: &SweepSite) -> Candidates {
    let ms = matrices(&s.parsed.program, s.site, s.parsed.dialect);
    if ms.is_empty() {
        return Err("no `T[][]` with dimensions in the facts".into());
    }
    let method = method_of(&s.parsed.program, s.site);
    let mut out = Vec::new();
    for m in &ms {
        let votes = method.map(|k| layout_votes(k, &m.name)).unwrap_or_default();
        let (keep, why) = match votes.row.cmp(&votes.col) {
            std::cmp::Ordering::Greater => (Some("R"), "; row-major: neighbouring threads or iterations read along a row"),
            std::cmp::Ordering::Less => (Some("C"), "; column-major: neighbouring threads or iterations read down a column"),
            std::cmp::Ordering::Equal => (None, ""),
        };
        for (value, word) in choices(s.opt, "layout") {
            if keep.is_some_and(|k| k != word) {
                continue;
            }
            let mut c = Choice::new(
                vec![
                    ("array", m.name.clone()),
                    ("layout", value.into()),
                    ("dims", format!("{},{}", m.rows, m.cols)),
                ],
                Some(format!("{}{why}", m.source)),
            );
            c.adapter = Some(super::adapter_spec(&m.name, word == "R", &m.rows, &m.cols));
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

/// How many accesses `g[r][c]` the row-major layout keeps side by side (`c` moves with the
/// fastest-changing variable and `r` does not) and how many the column-major one does.
#[derive(Default, Debug, PartialEq)]
struct Votes {
    row: usize,
    col: usize,
}

/// The accesses of `g` in the code of `m` (not its contracts), each judged by the variable that
/// changes fastest where it runs: a `par` block's last iterator (its lanes run side by side, the
/// last iterator fastest, as the cost model numbers them), else the innermost loop's counter.
fn layout_votes(m: &Method, g: &str) -> Votes {
    let mut votes = Votes::default();
    if let MethodBody::Block(b) = &m.body {
        for st in &b.stmts {
            visit(st, g, None, &mut votes);
        }
    }
    votes
}

/// `fast`: the fastest variable here and whether it numbers lanes (lanes outrank a loop inside
/// a thread: coalescing is across the lanes of one statement).
fn visit(s: &Stmt, g: &str, fast: Option<(&str, bool)>, votes: &mut Votes) {
    let fast = match &s.kind {
        StmtKind::Par(_) => None,
        StmtKind::While(l) | StmtKind::For(l) if !fast.is_some_and(|(_, lane)| lane) => {
            let mut written = assigned_names(&l.body);
            l.update.iter().for_each(|u| written.extend(assigned_names(u)));
            let mut counter = None;
            if let Some(c) = &l.cond {
                walk_expr(c, &mut |x| {
                    if let (ExprKind::Name(n), None) = (&x.kind, counter) {
                        counter = written.contains(&n.name).then_some(n.name.as_str());
                    }
                });
            }
            counter.map(|v| (v, false)).or(fast)
        }
        StmtKind::RangedFor { var, .. } if !fast.is_some_and(|(_, lane)| lane) => {
            Some((var.name.as_str(), false))
        }
        _ => fast,
    };
    if let StmtKind::Par(p) = &s.kind {
        for arm in &p.arms {
            let lane = arm.iters.last().map(|i| (i.name.name.as_str(), true));
            visit(&arm.body, g, lane, votes);
        }
        return;
    }
    let mut judge = |e: &Expr| {
        let Some((v, _)) = fast else { return };
        walk_expr(e, &mut |x| {
            let ExprKind::Index(row, c) = &x.kind else { return };
            let ExprKind::Index(base, r) = &row.kind else { return };
            if !matches!(&base.kind, ExprKind::Name(n) if n.name == g) {
                return;
            }
            match (mentions(r, v), mentions(c, v)) {
                (false, true) => votes.row += 1,
                (true, false) => votes.col += 1,
                _ => {}
            }
        })
    };
    // Code only: contracts and invariants are not executed.
    match &s.kind {
        StmtKind::Decl { vars, .. } => vars.iter().filter_map(|d| d.init.as_ref()).for_each(judge),
        StmtKind::Assign { target, value } | StmtKind::CompoundAssign { target, value, .. } => {
            judge(target);
            judge(value);
        }
        StmtKind::IncDec { target: e, .. } | StmtKind::Expr(e) | StmtKind::Return(Some(e)) => {
            judge(e)
        }
        StmtKind::If { cond, .. } => judge(cond),
        StmtKind::While(l) | StmtKind::For(l) => l.cond.iter().for_each(judge),
        _ => {}
    }
    child_stmts(s, &mut |c| visit(c, g, fast, votes));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn votes(src: &str) -> Votes {
        let parsed = front::parse(src, &front::ParseOptions::default());
        assert!(!parsed.has_errors(), "{src}");
        let (_, m) = parsed.program.methods().next().expect("a method");
        layout_votes(m, "g")
    }

    #[test]
    fn lanes_of_a_par_decide_over_a_loop_inside_a_thread() {
        // Each thread walks its own row: the lanes stand a row apart, so column-major coalesces.
        let src = "void f(int n, int[][] g) {\n  par (int t = 0 .. n) {\n    int c = 0;\n    while (c < 8) { g[t][c] = c; c = c + 1; }\n  }\n}\n";
        assert_eq!(votes(src), Votes { row: 0, col: 1 });
        // The last iterator of a two-dimensional par is the fastest.
        let src = "void f(int n, int[][] g) {\n  par (int x = 0 .. n, int y = 0 .. n) { g[x][y] = g[x][y] + 1; }\n}\n";
        assert_eq!(votes(src), Votes { row: 2, col: 0 });
    }

    #[test]
    fn sequential_code_follows_the_innermost_loop_and_ignores_contracts() {
        let src = "void f(int n, int[][] g) {\n  for (int i = 0; i < n; i++) {\n    loop_invariant g[i][0] == 0;\n    for (int j = 0; j < n; j++) { g[j][i] = 0; }\n  }\n}\n";
        assert_eq!(votes(src), Votes { row: 0, col: 1 });
        let src = "void f(int n, int[][] g) {\n  g[0][0] = 1;\n}\n";
        assert_eq!(votes(src), Votes::default());
    }
}

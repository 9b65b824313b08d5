//! Sweep candidates: every 1-D array location read at least twice in one barrier-separated
//! segment of a par body (a read inside a loop counts once per iteration it is the same cell).

use crate::sweep::{pars_of, Candidates, Choice, SweepSite};
use analyze::sites::Site;
use front::ast::*;
use front::printer::print_expr;
use front::visit::{for_each_child, walk_stmts};
use front::Dialect;

/// A choice per repeated location.
pub fn candidates(s: &SweepSite) -> Candidates {
    let locs = repeated_reads(&s.parsed.program, s.site, s.parsed.dialect);
    if locs.is_empty() {
        return Err("no array location is read twice in a segment".into());
    }
    Ok(locs
        .into_iter()
        .map(|(arr, loc)| Choice::new(vec![("array", arr), ("locations", loc)], None))
        .collect())
}

/// `(array, index text)` of every 1-D array location read more than once in one segment of a
/// par body (same array name, same printed index), in order of first appearance.
fn repeated_reads(program: &Program, site: &Site, dialect: Dialect) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for par in pars_of(program, site) {
        let StmtKind::Par(p) = &par.kind else { continue };
        for arm in &p.arms {
            let StmtKind::Block(body) = &arm.body.kind else { continue };
            let mut segments: Vec<Vec<(String, String)>> = vec![Vec::new()];
            for s in &body.stmts {
                if matches!(s.kind, StmtKind::Barrier(_)) {
                    segments.push(Vec::new());
                    continue;
                }
                if let Some(seg) = segments.last_mut() {
                    walk_stmts(s, &mut |st| stmt_reads(st, dialect, seg));
                    // Reads as executed: a cell a loop reads on every iteration (its index
                    // names nothing the loop assigns) is read again by the next iteration.
                    walk_stmts(s, &mut |st| loop_invariant_reads(st, dialect, seg));
                }
            }
            for seg in &segments {
                for r in seg {
                    if seg.iter().filter(|x| *x == r).count() > 1 && !out.contains(r) {
                        out.push(r.clone());
                    }
                }
            }
        }
    }
    out
}

/// The reads in the body of loop `s` whose location names no variable the loop assigns (the
/// same cell on every iteration), once more each.
fn loop_invariant_reads(s: &Stmt, dialect: Dialect, out: &mut Vec<(String, String)>) {
    let (StmtKind::While(l) | StmtKind::For(l)) = &s.kind else { return };
    let mut assigned = front::visit::assigned_names(&l.body);
    for st in l.init.iter().chain(&l.update) {
        assigned.extend(front::visit::assigned_names(st));
    }
    let mut inside = Vec::new();
    walk_stmts(&l.body, &mut |st| stmt_reads(st, dialect, &mut inside));
    for (arr, loc) in inside {
        let names_assigned = loc
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .any(|w| assigned.contains(w));
        if !names_assigned {
            out.push((arr, loc));
        }
    }
}

/// The array reads of the code a statement holds directly (not its annotations).
fn stmt_reads(s: &Stmt, dialect: Dialect, out: &mut Vec<(String, String)>) {
    match &s.kind {
        StmtKind::Decl { vars, .. } => {
            vars.iter().filter_map(|d| d.init.as_ref()).for_each(|e| reads(e, dialect, out))
        }
        StmtKind::Assign { target, value } => {
            indices(target, dialect, out);
            reads(value, dialect, out);
        }
        StmtKind::CompoundAssign { target, value, .. } => {
            reads(target, dialect, out);
            reads(value, dialect, out);
        }
        StmtKind::IncDec { target, .. } => reads(target, dialect, out),
        StmtKind::Expr(e) | StmtKind::Return(Some(e)) | StmtKind::If { cond: e, .. } => {
            reads(e, dialect, out)
        }
        StmtKind::While(l) | StmtKind::For(l) => {
            if let Some(c) = &l.cond {
                reads(c, dialect, out);
            }
        }
        StmtKind::RangedFor { lo, hi, .. } => {
            reads(lo, dialect, out);
            reads(hi, dialect, out);
        }
        _ => {}
    }
}

/// The reads in the indices of an assignment target (the target cell itself is written).
fn indices(target: &Expr, dialect: Dialect, out: &mut Vec<(String, String)>) {
    match &target.kind {
        ExprKind::Index(b, i) => {
            indices(b, dialect, out);
            reads(i, dialect, out);
        }
        ExprKind::Field(b, _) => reads(b, dialect, out),
        _ => {}
    }
}

/// Every `a[i]` with `a` a name in `e`; a matrix access `m[i][j]` is no such location.
fn reads(e: &Expr, dialect: Dialect, out: &mut Vec<(String, String)>) {
    if let ExprKind::Index(b, i) = &e.kind {
        match &b.kind {
            ExprKind::Name(a) => {
                out.push((a.name.clone(), print_expr(i, dialect)));
                reads(i, dialect, out);
                return;
            }
            ExprKind::Index(bb, ii) => {
                indices_of_matrix(bb, ii, i, dialect, out);
                return;
            }
            _ => {}
        }
    }
    for_each_child(e, &mut |c, _| reads(c, dialect, out));
}

fn indices_of_matrix(base: &Expr, i: &Expr, j: &Expr, d: Dialect, out: &mut Vec<(String, String)>) {
    if !matches!(base.kind, ExprKind::Name(_)) {
        reads(base, d, out);
    }
    reads(i, d, out);
    reads(j, d, out);
}

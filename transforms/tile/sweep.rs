//! Sweep candidates: tile sizes that divide the thread count, one that does not, every mode.

use crate::sweep::{choices, method_of, pars_of, Candidates, Choice, SweepSite};
use crate::Opt;
use analyze::sites::Site;
use front::ast::*;
use front::printer::print_expr;
use front::Dialect;

/// A choice per mode and size.
pub fn candidates(s: &SweepSite) -> Candidates {
    Ok(tile_sizes(s.opt, &s.parsed.program, s.site, s.parsed.dialect)
        .into_iter()
        .map(|(mode, size, note)| Choice::new(vec![("mode", mode), ("tile_size", size)], note))
        .collect())
}

/// `(mode, size, note)` for a par site: for a literal thread count T (or a name the method's
/// contract fixes to a literal) the smallest and the largest divisor in `2..T` and the smallest
/// non-divisor; otherwise size 2. Every mode of the schema's choice.
fn tile_sizes(
    opt: Opt,
    program: &Program,
    site: &Site,
    dialect: Dialect,
) -> Vec<(String, String, Option<String>)> {
    let count = match pars_of(program, site).first() {
        Some(p) => thread_count(program, site, p, dialect),
        None => Count::Symbolic("no par block".into()),
    };
    let sizes: Vec<(u64, Option<String>)> = match count {
        Count::Known(t, how) if t > 2 => {
            let divisors: Vec<u64> = (2..t).filter(|d| t % d == 0).collect();
            let mut v: Vec<(u64, Option<String>)> = Vec::new();
            for d in [divisors.first(), divisors.last()].into_iter().flatten() {
                if !v.iter().any(|(x, _)| x == d) {
                    v.push((*d, Some(format!("divides the {how} {t}"))));
                }
            }
            if let Some(n) = (2..t).find(|d| t % d != 0) {
                v.push((n, Some(format!("does not divide the {how} {t}"))));
            }
            v
        }
        Count::Known(t, how) => vec![(2, Some(format!("{how} {t} leaves no size in 2..{t}")))],
        Count::Symbolic(why) => vec![(2, Some(format!("{why}: tried a small literal size")))],
    };
    let mut out = Vec::new();
    for (mode, _) in choices(opt, "mode") {
        for (size, note) in &sizes {
            out.push((mode.to_string(), size.to_string(), note.clone()));
        }
    }
    out
}

/// A thread count: known, with where it comes from, or why not.
enum Count {
    Known(u64, &'static str),
    Symbolic(String),
}

fn thread_count(program: &Program, site: &Site, par: &Stmt, dialect: Dialect) -> Count {
    let StmtKind::Par(p) = &par.kind else { return Count::Symbolic("no par block".into()) };
    let [arm] = p.arms.as_slice() else {
        return Count::Symbolic("several par arms".into());
    };
    let [it] = arm.iters.as_slice() else {
        return Count::Symbolic("not a single-iterator par block".into());
    };
    let lo = it.lo.as_int().and_then(|v| u64::try_from(v).ok());
    let hi = match it.hi.as_int().and_then(|v| u64::try_from(v).ok()) {
        Some(h) => Some((h, "thread count")),
        None => match &it.hi.kind {
            ExprKind::Name(n) => {
                fixed_value(program, site, &n.name).map(|v| (v, "fixed thread count"))
            }
            _ => None,
        },
    };
    match (lo, hi) {
        (Some(lo), Some((hi, how))) if hi > lo => Count::Known(hi - lo, how),
        _ => Count::Symbolic(format!("symbolic thread count `{}`", print_expr(&it.hi, dialect))),
    }
}

/// A literal `name == K` (or `K == name`) that the method's contract states as a conjunct.
fn fixed_value(program: &Program, site: &Site, name: &str) -> Option<u64> {
    let m = method_of(program, site)?;
    let is_name = |e: &Expr| matches!(&e.kind, ExprKind::Name(n) if n.name == name);
    let lit = |e: &Expr| e.as_int().and_then(|v| u64::try_from(v).ok());
    for c in &m.prefix.clauses {
        let Some(e) = c.expr() else { continue };
        for cj in e.conjuncts() {
            if let ExprKind::Binary(BinOp::Eq, l, r) = &cj.kind {
                match (is_name(l), is_name(r)) {
                    (true, false) if lit(r).is_some() => return lit(r),
                    (false, true) if lit(l).is_some() => return lit(l),
                    _ => {}
                }
            }
        }
    }
    None
}

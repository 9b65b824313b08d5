//! What `sweep` tries: for every site of a file and every optimization whose registered site
//! kinds admit it, the parameters to try (issue 22). The optimizations and the constructs they
//! apply to come from the registry; only the choice of parameter values is per optimization,
//! and an optimization without a rule here is tried with its defaults.

use crate::analyze::sites::{find_method, sites, Site, SiteKind};
use crate::front::ast::*;
use crate::front::printer::print_expr;
use crate::front::span::LineIndex;
use crate::front::visit::{for_each_child, walk_expr, walk_stmts};
use crate::front::{Dialect, Parsed};
use crate::transforms::params::Kind;
use crate::transforms::registry;
use crate::transforms::{MethodPar, Opt};

/// One attempt to make: an optimization at a site with parameters (plan keys and values).
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    pub(crate) opt: Opt,
    pub(super) site: Site,
    pub(crate) line: usize,
    pub(crate) col: usize,
    pub(crate) params: Vec<(&'static str, String)>,
    /// Why these values (a symbolic thread count, the dimensions' source), for the report.
    pub(crate) note: Option<String>,
    /// `validate --adapter` for the output (a linearized signature).
    pub(crate) adapter: Option<String>,
}

/// A site and optimization that got no attempt, with the reason.
#[derive(Clone, Debug)]
pub(crate) struct Skipped {
    pub(crate) opt: &'static str,
    pub(crate) line: usize,
    pub(crate) col: usize,
    pub(crate) reason: String,
}

/// Everything to try on one parsed file, in source order of the sites and registry order of
/// the optimizations.
pub(crate) fn candidates(src: &str, parsed: &Parsed) -> (Vec<Candidate>, Vec<Skipped>) {
    let lines = LineIndex::new(src);
    let program = &parsed.program;
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for site in sites(program) {
        let (line, col) = lines.line_col(src, site.keyword.start());
        for &opt in registry::ALL {
            let meta = opt.meta();
            if !meta.sites.contains(&site.kind) {
                continue;
            }
            if site.kind == SiteKind::Method && meta.sites.contains(&SiteKind::Par) {
                // On a method such an optimization means par blocks of the method: with
                // `--at`, the method's only par block (tried at the block itself), or, for
                // one without that rule, all of them (tried when there are several).
                if meta.method_par != MethodPar::None || outer_pars(program, &site).len() < 2 {
                    continue;
                }
            }
            let mk = |params: Vec<(&'static str, String)>, note: Option<String>| Candidate {
                opt,
                site: site.clone(),
                line,
                col,
                params,
                note,
                adapter: None,
            };
            let before = out.len();
            let reason = match meta.name {
                "unroll" => {
                    out.extend(["1", "2"].map(|k| mk(vec![("factor", k.into())], None)));
                    None
                }
                "merge" => {
                    out.extend(["2", "3"].map(|k| mk(vec![("factor", k.into())], None)));
                    None
                }
                "prefetch" => {
                    let locs = repeated_reads(program, &site, parsed.dialect);
                    for (arr, loc) in &locs {
                        out.push(mk(
                            vec![("array", arr.clone()), ("locations", loc.clone())],
                            None,
                        ));
                    }
                    locs.is_empty().then(|| "no array location is read twice in a segment".into())
                }
                "tile" => {
                    for (mode, size, note) in tile_sizes(opt, program, &site, parsed.dialect) {
                        out.push(mk(vec![("mode", mode), ("tile_size", size)], note));
                    }
                    None
                }
                // A CUDA kernel is fused with the kernel launched after it (the launches, not
                // the kernel form, say which: the step refuses with A601 when none is).
                "fuse" if crate::front::looks_like_cuda(src) => {
                    let note = "a CUDA kernel: fused with the kernel launched after it";
                    out.push(mk(vec![("kernels", "2".into())], Some(note.to_string())));
                    None
                }
                "fuse" => match next_par(program, &site) {
                    Some(between) => {
                        let note = between.then(|| "statements lie between the blocks".to_string());
                        out.push(mk(vec![("kernels", "2".into())], note));
                        None
                    }
                    None => Some("no later par block in the same statement list".into()),
                },
                "linearize" => {
                    let ms = matrices(program, &site, parsed.dialect);
                    for m in &ms {
                        for (value, word) in choices(opt, "layout") {
                            let mut c = mk(
                                vec![
                                    ("array", m.name.clone()),
                                    ("layout", value.into()),
                                    ("dims", format!("{},{}", m.rows, m.cols)),
                                ],
                                Some(m.source.clone()),
                            );
                            c.adapter = Some(format!(
                                "matrix_lin {} {word} {} {}",
                                m.name,
                                operand(&m.rows),
                                operand(&m.cols)
                            ));
                            out.push(c);
                        }
                    }
                    ms.is_empty().then(|| "no `T[][]` with dimensions in the facts".into())
                }
                _ => {
                    // An optimization without a rule here: its defaults, if they suffice.
                    if meta.params.iter().all(|p| !p.required || p.default.is_some()) {
                        out.push(mk(Vec::new(), Some("default parameters".into())));
                        None
                    } else {
                        Some("no rule for its required parameters".into())
                    }
                }
            };
            if let (Some(reason), true) = (reason, out.len() == before) {
                skipped.push(Skipped { opt: meta.name, line, col, reason });
            }
        }
    }
    (out, skipped)
}

/// The values of a choice parameter, with their annotation words (`row`/`R`, `col`/`C`).
fn choices(opt: Opt, key: &str) -> Vec<(&'static str, &'static str)> {
    opt.meta()
        .params
        .iter()
        .filter(|p| p.key == key)
        .flat_map(|p| match p.kind {
            Kind::Choice(cs) => cs.iter().map(|c| (c.value, c.word)).collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// An expression as an annotation operand (a literal or name as is, anything else in
/// parentheses).
fn operand(text: &str) -> String {
    if text.chars().all(|c| c.is_alphanumeric() || c == '_') {
        text.to_string()
    } else {
        format!("({text})")
    }
}

fn method_of<'p>(program: &'p Program, site: &Site) -> Option<&'p Method> {
    find_method(program, site.class.as_deref(), &site.method).map(|(_, m)| m)
}

/// The outermost par statements of the site's method.
fn outer_pars<'p>(program: &'p Program, site: &Site) -> Vec<&'p Stmt> {
    let mut pars: Vec<&Stmt> = Vec::new();
    if let Some(MethodBody::Block(b)) = method_of(program, site).map(|m| &m.body) {
        for s in &b.stmts {
            walk_stmts(s, &mut |st| {
                if matches!(st.kind, StmtKind::Par(_))
                    && !pars.iter().any(|p| p.span.contains(st.span))
                {
                    pars.push(st);
                }
            });
        }
    }
    pars
}

/// The par statements a site stands for: the block itself, or the method's outermost ones.
fn pars_of<'p>(program: &'p Program, site: &Site) -> Vec<&'p Stmt> {
    match site.kind {
        SiteKind::Par => outer_pars(program, site)
            .into_iter()
            .flat_map(|p| {
                let mut found = Vec::new();
                walk_stmts(p, &mut |st| {
                    if st.span.same_place(site.span) && matches!(st.kind, StmtKind::Par(_)) {
                        found.push(st);
                    }
                });
                found
            })
            .take(1)
            .collect(),
        _ => outer_pars(program, site),
    }
}

// ---------------------------------------------------------------------------------------------
// Prefetch: locations read at least twice in one barrier-separated segment

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
    let mut assigned = crate::front::visit::assigned_names(&l.body);
    for st in l.init.iter().chain(&l.update) {
        assigned.extend(crate::front::visit::assigned_names(st));
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

// ---------------------------------------------------------------------------------------------
// Tile: sizes that divide the thread count, one that does not, every mode

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

// ---------------------------------------------------------------------------------------------
// Fuse: the next par block of the same statement list

/// `Some(statements_between)` when a later statement of the list holding the site's par
/// block is a par block.
fn next_par(program: &Program, site: &Site) -> Option<bool> {
    let m = method_of(program, site)?;
    let MethodBody::Block(b) = &m.body else { return None };
    let mut lists: Vec<&[Stmt]> = vec![b.stmts.as_slice()];
    for s in &b.stmts {
        walk_stmts(s, &mut |st| {
            if let StmtKind::Block(bb) = &st.kind {
                lists.push(bb.stmts.as_slice());
            }
        });
    }
    for list in lists {
        let Some(i) = list.iter().position(|s| s.span.same_place(site.span)) else { continue };
        let rest = &list[i + 1..];
        return rest.iter().position(|s| matches!(s.kind, StmtKind::Par(_))).map(|j| j > 0);
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Linearize: every T[][] parameter or local with the dimensions the facts give

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

fn mentions(e: &Expr, g: &str) -> bool {
    let mut hit = false;
    walk_expr(e, &mut |x| {
        if matches!(&x.kind, ExprKind::Name(n) if n.name == g) {
            hit = true;
        }
    });
    hit
}

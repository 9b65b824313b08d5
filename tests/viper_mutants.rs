//! Soundness: mutants of verified corpus programs must fail, at the right place
//! (`verification.md` §7.2). Mutants are made with span edits (`alpine_rs::edit`) at sites
//! found in the AST; all of them go through Silicon in one batch.
//!
//! Runs Silicon for real: needs the backend (`alpine-rs backend install`, done by `.ci/run`);
//! without it the test fails with the provisioning message.

use alpine_rs::diag::{render_plain, SourceFile};
use alpine_rs::edit::EditSet;
use alpine_rs::front::ast::*;
use alpine_rs::front::visit::walk_stmts;
use alpine_rs::front::Span;
use alpine_rs::viper::{self, Verdict, VerifyOptions};
use std::path::Path;

/// Corpus programs the suite mutates (all `verifies: yes`).
const PROGRAMS: &[&str] = &[
    "syntax/barrier_forms.pvl",
    "syntax/kernel_forms.pvl",
    "syntax/host_loop_kernel.pvl",
    "syntax/par_and_blocks.pvl",
    "syntax/loops.pvl",
    "syntax/quantifiers.pvl",
    "prefetch/ok_barrier_segments.pvl",
    "prefetch/ok_conditional_left.pvl",
    "prefetch/ok_loop_in_segment.pvl",
    "prefetch/ok_two_arrays.pvl",
    "fuse/ok_neighbour_barrier.pvl",
    "fuse/ok_readonly_shared.pvl",
    "fuse/ok_three_kernels.pvl",
    "tile/ok_vadd_inter.pvl",
    "tile/ok_scale_intra.pvl",
    "unroll/ok_loop_in_par.pvl",
    "unroll/ok_while_add_const.pvl",
    "unroll/ok_nested_inner.pvl",
    "merge/ok_const_remainder.pvl",
    "chain/ok_fuse_unroll_prefetch.pvl",
];

/// Mutants that still verify, each with the reason it is semantically harmless.
const HARMLESS: &[(&str, &str, &str)] = &[];

struct Mutant {
    program: &'static str,
    op: &'static str,
    text: String,
    /// Where a diagnostic must point, in the mutant's coordinates.
    region: Span,
}

fn methods(p: &Program) -> Vec<&Method> {
    let mut v = Vec::new();
    for i in &p.items {
        if let Item::Class(c) = i {
            for m in &c.members {
                if let Member::Method(m) = m {
                    v.push(m);
                }
            }
        }
    }
    v
}

fn all_stmts(p: &Program) -> Vec<(&Method, &Stmt)> {
    let mut v = Vec::new();
    for m in methods(p) {
        if let MethodBody::Block(b) = &m.body {
            for s in &b.stmts {
                walk_stmts(s, &mut |x| v.push((m, x)));
            }
        }
    }
    v
}

fn assigned_names(s: &Stmt, out: &mut Vec<String>) {
    walk_stmts(s, &mut |x| match &x.kind {
        StmtKind::Assign { target, .. }
        | StmtKind::IncDec { target, .. }
        | StmtKind::CompoundAssign { target, .. } => {
            if let Some(n) = target.as_name() {
                out.push(n.to_string());
            }
        }
        _ => {}
    });
}

fn mentions(e: &Expr, names: &[String]) -> bool {
    fn go(e: &Expr, names: &[String]) -> bool {
        if let Some(n) = e.as_name() {
            return names.iter().any(|x| x == n);
        }
        let t = format!("{:?}", e.kind);
        names.iter().any(|n| t.contains(&format!("name: \"{n}\"")))
    }
    go(e, names)
}

/// Apply one edit and shift the region end by the length difference when the edit lies inside.
fn mutate(
    program: &'static str,
    op: &'static str,
    src: &str,
    at: Span,
    by: &str,
    region: Span,
) -> Option<Mutant> {
    let mut es = EditSet::new();
    es.replace(at, by);
    let text = es.apply(src).ok()?;
    let delta = by.len() as i64 - at.len() as i64;
    let hi = if region.contains(at) { (region.hi as i64 + delta) as usize } else { region.end() };
    Some(Mutant { program, op, text, region: Span::new(region.start(), hi) })
}

fn mutants_of(program: &'static str, src: &str) -> Vec<Mutant> {
    let parsed = alpine_rs::front::parse(src, &Default::default());
    assert!(!parsed.has_errors(), "{program} does not parse");
    let p = &parsed.program;
    let stmts = all_stmts(p);
    let mut out = Vec::new();
    let pars: Vec<(&Method, &Stmt, &Par)> = stmts
        .iter()
        .filter_map(|(m, s)| match &s.kind {
            StmtKind::Par(par) => Some((*m, *s, par)),
            _ => None,
        })
        .collect();

    // M-PERM-DROP: the first Perm conjunct of a par contract.
    'drop: for (_, s, par) in &pars {
        for arm in &par.arms {
            for c in &arm.contract {
                for x in c.expr().map(|e| e.conjuncts()).unwrap_or_default() {
                    if matches!(x.kind, ExprKind::Builtin(Builtin::Perm, _)) {
                        out.extend(mutate(program, "M-PERM-DROP", src, x.span, "true", s.span));
                        break 'drop;
                    }
                }
            }
        }
    }
    // M-PERM-HALF: `write` → `1\2` on a location the thread writes.
    'half: for (_, s, par) in &pars {
        for arm in &par.arms {
            let mut targets = Vec::new();
            walk_stmts(&arm.body, &mut |x| {
                if let StmtKind::Assign { target, .. } = &x.kind {
                    targets.push(target.clone());
                }
            });
            for c in &arm.contract {
                for x in c.expr().map(|e| e.conjuncts()).unwrap_or_default() {
                    if let ExprKind::Builtin(Builtin::Perm, args) = &x.kind {
                        if matches!(args[1].kind, ExprKind::Write)
                            && targets.iter().any(|t| *t == args[0])
                        {
                            out.extend(mutate(
                                program,
                                "M-PERM-HALF",
                                src,
                                args[1].span,
                                "1\\2",
                                s.span,
                            ));
                            break 'half;
                        }
                    }
                }
            }
        }
    }
    // M-INV-WEAKEN: drop the last invariant conjunct that mentions a loop-modified variable.
    'inv: for (m, s) in &stmts {
        if let StmtKind::While(l) | StmtKind::For(l) = &s.kind {
            let mut modified = Vec::new();
            assigned_names(&l.body, &mut modified);
            l.update.iter().for_each(|u| assigned_names(u, &mut modified));
            let cands: Vec<&Expr> = l
                .prefix
                .clauses_of(ClauseKind::LoopInvariant)
                .flat_map(|c| c.expr().map(|e| e.conjuncts()).unwrap_or_default())
                .filter(|x| !matches!(x.kind, ExprKind::Quant { kind: QuantKind::ForallStar, .. }))
                .filter(|x| !matches!(x.kind, ExprKind::Builtin(..)))
                .filter(|x| mentions(x, &modified))
                .collect();
            if let Some(x) = cands.last() {
                out.extend(mutate(program, "M-INV-WEAKEN", src, x.span, "true", m.span));
                break 'inv;
            }
        }
    }
    // M-IDX-OFF: `a[e]` → `a[(e) + 1]` in the first array write (in a par body if any).
    let in_par: Vec<&Stmt> = {
        let mut v = Vec::new();
        for (_, _, par) in &pars {
            for arm in &par.arms {
                walk_stmts(&arm.body, &mut |x| v.push(x));
            }
        }
        if v.is_empty() {
            stmts.iter().map(|(_, s)| *s).collect()
        } else {
            v
        }
    };
    for s in in_par {
        if let StmtKind::Assign { target, .. } = &s.kind {
            if let ExprKind::Index(_, i) = &target.kind {
                // The wrong cell shows up at the write itself (permission, bounds) or where the
                // intended cell is relied on: an invariant of the enclosing loop, or the
                // contract of the enclosing par block or method.
                let region = stmts
                    .iter()
                    .filter(|(_, x)| {
                        matches!(x.kind, StmtKind::While(_) | StmtKind::For(_) | StmtKind::Par(_))
                            && x.span.contains(s.span)
                    })
                    .map(|(_, x)| x.span)
                    .min_by_key(|x| x.len())
                    .or_else(|| {
                        stmts.iter().find(|(_, x)| x.span.same_place(s.span)).map(|(m, _)| m.span)
                    })
                    .unwrap_or(s.span);
                let by = format!("({}) + 1", i.span.text(src));
                out.extend(mutate(program, "M-IDX-OFF", src, i.span, &by, region));
                break;
            }
        }
    }
    // M-BAR-SWAP / M-BAR-DROP on the first barrier.
    if let Some((s, b)) = stmts.iter().find_map(|(_, s)| match &s.kind {
        StmtKind::Barrier(b) => Some((*s, b)),
        _ => None,
    }) {
        let mut es = EditSet::new();
        for c in &b.contract {
            let kw = Span::new(c.span.start(), c.span.start() + c.kind.keyword().len());
            match c.kind {
                ClauseKind::Requires => es.replace(kw, "ensures"),
                ClauseKind::Ensures => es.replace(kw, "requires"),
                _ => {}
            }
        }
        if let Ok(text) = es.apply(src) {
            // Keyword lengths differ by one; the region end moves by the net difference.
            let delta = text.len() as i64 - src.len() as i64;
            out.push(Mutant {
                program,
                op: "M-BAR-SWAP",
                text,
                region: Span::new(s.span.start(), (s.span.hi as i64 + delta) as usize),
            });
        }
        let arm_span = pars
            .iter()
            .flat_map(|(_, _, p)| p.arms.iter())
            .find(|a| a.span.contains(s.span))
            .map_or(s.span, |a| a.span);
        out.extend(mutate(program, "M-BAR-DROP", src, s.span, "", arm_span));
    }
    // M-RANGE-OFF: the first par iterator's upper bound + 1.
    if let Some((_, s, par)) = pars.first() {
        if let Some(it) = par.arms.first().and_then(|a| a.iters.first()) {
            let by = format!("({}) + 1", it.hi.span.text(src));
            out.extend(mutate(program, "M-RANGE-OFF", src, it.hi.span, &by, s.span));
        }
    }
    out
}

#[test]
fn mutants_fail_at_the_right_place() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut mutants = Vec::new();
    for p in PROGRAMS {
        let src = std::fs::read_to_string(root.join(p)).unwrap();
        mutants.extend(mutants_of(p, &src));
    }
    let srcs: Vec<SourceFile> = mutants
        .iter()
        .map(|m| SourceFile::new(format!("{}#{}", m.program, m.op), m.text.clone()))
        .collect();
    let t = std::time::Instant::now();
    let opts = VerifyOptions {
        timeout_s: 0,
        keep_vpr: std::env::var("VIPER_KEEP").ok().map(std::path::PathBuf::from),
        no_cache: true,
        ..VerifyOptions::default()
    };
    let reports = viper::verify_batch(&srcs, &opts);
    let mut bad = Vec::new();
    let mut programs = std::collections::BTreeSet::new();
    for ((m, src), r) in mutants.iter().zip(&srcs).zip(&reports) {
        let placed =
            r.diagnostics.iter().any(|d| d.primary_span().is_some_and(|s| m.region.contains(s)));
        let harmless = HARMLESS.iter().any(|(p, o, _)| *p == m.program && *o == m.op);
        let ok = match r.verdict {
            Verdict::Failed => placed,
            Verdict::Verified => harmless,
            _ => false,
        };
        println!(
            "{}\t{:?}\t{}\t{}\t{}",
            if ok { "ok" } else { "BAD" },
            r.verdict,
            if placed { "placed" } else { "-" },
            m.program,
            m.op
        );
        if !ok {
            println!("{}", render_plain(&[src], &r.diagnostics));
            bad.push(format!("{} {}", m.program, m.op));
        } else {
            programs.insert(m.program);
        }
    }
    println!(
        "{} mutants of {} programs, Silicon batch {:.1}s",
        mutants.len(),
        programs.len(),
        t.elapsed().as_secs_f64()
    );
    assert!(programs.len() >= 15, "fewer than 15 programs with checked mutants");
    assert!(bad.is_empty(), "mutants not reported at the right place: {bad:#?}");
}

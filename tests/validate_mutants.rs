//! Validation as a mutation oracle on real code (issue 21): VerCors' own examples that
//! `validate F F` judges equivalent are mutated by one token in a method body, and
//! `validate F MUTANT` must report the change. Three operators, each applied at its first
//! sites in every file: `+` → `-` in an assigned value, an integer literal `k` → `k + 1` in an
//! assigned value (off by one), and a dropped assignment. The files are read from
//! ../shared/peer at test time; nothing of them is copied into the repository.
//!
//! CI runs the first mutant of each operator in every judged file; `ALPINE_SLOW=1` runs all
//! of them (`MUTANTS_PER_OP` per operator and file). Mutants that cannot change behaviour are
//! listed in [`HARMLESS`] with the reason; every other one must be reported as different.

mod common;

use alpine_rs::front::ast::{BinOp, Program};
use alpine_rs::front::ast::{ExprKind, Method, MethodBody, Stmt, StmtKind};
use alpine_rs::front::visit::walk_stmts;
use alpine_rs::front::{parse, ParseOptions};
use alpine_rs::sem::{self, Verdict};
use std::path::{Path, PathBuf};

const MUTANTS_PER_OP: usize = 3;

/// Mutants that keep the behaviour, by file and mutant label, with the reason: behaviour is
/// what a run observes (results, final heap, faults) on the inputs where ORIG runs without
/// error; a change of ghost state or of annotations alone is not one.
const HARMLESS: &[(&str, &str, &str)] = &[
    ("carp/summation-kernel-0.pvl", "drop@19", "`temp[0]=0` right after `new int[1]`: the cells of a new array are 0 already"),
    ("carp/summation-kernel-1.pvl", "drop@25", "`temp[0]=0` right after `new int[1]`: the cells of a new array are 0 already"),
    ("graphs/reach.pvl", "drop@33", "`marked[i] = false` on a `new boolean[n]`: its cells are false already"),
    ("parallel/ForWithinParallel.pvl", "lit@11", "the loop only updates its own counter `i`; the method has no result and writes no heap"),
    ("parallel/ForWithinParallel.pvl", "drop@11", "the loop only updates its own counter `i`; the method has no result and writes no heap"),
    ("parallel/inv-test.pvl", "plus@16", "`t` is assigned and never read"),
    ("predicates/minmax-list.pvl", "drop@27", "`l = this.next.length()` is overwritten by `l = 1` right after, and the call changes no state"),
    ("sequential/nested-loops.pvl", "drop@11", "`i = 0` right after `int i;`: a declared local starts at its type's default, 0 (VerCors leaves it unknown, so the mutant would not verify, but it runs the same)"),
    ("verifythis/2015/prefix.pvl", "drop@34", "`splitpoint` is ghost (only the loop invariants read it): the result is the same; the invariant would fail only on a relaxed prefix whose mismatch is past index 0"),
    ("verifythis/2017/submission/VerCors_challenge3.pvl", "plus@34", "the swap runs only for N >= 3, where ORIG fails its own barrier checks (our verifier agrees: V-BAR-INCONSISTENT); no valid input reaches it"),
    ("verifythis/2017/submission/VerCors_challenge3.pvl", "lit@34", "the swap runs only for N >= 3, where ORIG fails its own barrier checks (our verifier agrees: V-BAR-INCONSISTENT); no valid input reaches it"),
    ("verifythis/2017/submission/VerCors_challenge3.pvl", "drop@34", "the swap runs only for N >= 3, where ORIG fails its own barrier checks (our verifier agrees: V-BAR-INCONSISTENT); no valid input reaches it"),
];

/// The examples VerCors verifies (verdicts.tsv: `Pass`, one file per case) that `validate F F`
/// judges equivalent today; the list grows as validation learns more of the language.
const JUDGED: &[&str] = &[
    "arrays/BinarySearch.pvl",
    "arrays/DutchNationalFlag.pvl",
    "arrays/Transpose.pvl",
    "arrays/forward-dep-noauto.pvl",
    "arrays/forward-dep.pvl",
    "arrays/kernel-example-v2.pvl",
    "arrays/kernel-example-v3.pvl",
    "arrays/kernel-example.pvl",
    "arrays/vector-add.pvl",
    "basic/InlineFunctions.pvl",
    "basic/MethodCallNegation.pvl",
    "basic/array-item-access.pvl",
    "basic/bracket-issues.pvl",
    "basic/for.pvl",
    "basic/postfix-increment.pvl",
    "basic/pvl-array.pvl",
    "basic/satcheck-check.pvl",
    "basic/seq-item-access.pvl",
    "basic/seq-length.pvl",
    "basic/seq-seq-length.pvl",
    "basic/sumints.pvl",
    "basic/yield.pvl",
    "carp/summation-kernel-0.pvl",
    "carp/summation-kernel-1.pvl",
    "carp/zero-kernel.pvl",
    "demo/demo2.pvl",
    "demo/demo3a.pvl",
    "fixed-known-problems/rewriterIssue6.pvl",
    "forkjoin/forkjoininforloop.pvl",
    "graphs/reach.pvl",
    "known-problems/case-studies/prefixsum-drf.pvl",
    "known-problems/verifythis/2019/challenge2a.pvl",
    "known-problems/verifythis/2019/challenge3.pvl",
    "lists/linkedlist.pvl",
    "manual/fibonacci.pvl",
    "manual/functions.pvl",
    "manual/induction-lemma.pvl",
    "manual/list.pvl",
    "manual/zero_array.pvl",
    "parallel/ForWithinParallel.pvl",
    "parallel/ParBothRead.pvl",
    "parallel/ParNestedInvariant.pvl",
    "parallel/array_par.pvl",
    "parallel/block-par.pvl",
    "parallel/inv-test.pvl",
    "predicates/minmax-list.pvl",
    "sequences/bubble-sort.pvl",
    "sequences/max-sort.pvl",
    "sequences/remove-value.pvl",
    "sequences/sequence-constructors.pvl",
    "sequences/slicing.pvl",
    "sequences/updating.pvl",
    "sequential/nested-loops.pvl",
    "type-casts/cast-example.pvl",
    "verifythis/2012/lcp.pvl",
    "verifythis/2015/prefix.pvl",
    "verifythis/2017/submission/VerCors_challenge3.pvl",
    "verifythis/2017/submission/VerCors_challenge4.pvl",
    "verifythis/2017/submission/Vercors_challenge3_2D.pvl",
    "verifythis/2017/submission/challenge1.pvl",
];

fn peer_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peer/vercors-v1.4.1")
}

#[derive(Clone, Debug)]
struct Mutant {
    label: String,
    text: String,
}

fn splice(src: &str, lo: usize, hi: usize, with: &str) -> String {
    format!("{}{with}{}", &src[..lo], &src[hi..])
}

/// The statements of every method body with code, in source order.
fn body_stmts(p: &Program) -> Vec<&Stmt> {
    let mut out = Vec::new();
    for (_, m) in p.methods() {
        let m: &Method = m;
        if let MethodBody::Block(b) = &m.body {
            for s in &b.stmts {
                walk_stmts(s, &mut |x| out.push(x));
            }
        }
    }
    out
}

/// The mutants of `src`: up to `per_op` per operator, in source order.
fn mutants(src: &str, per_op: usize) -> Vec<Mutant> {
    let parsed = parse(src, &ParseOptions::default());
    let (mut plus, mut lit, mut drop) = (Vec::new(), Vec::new(), Vec::new());
    for s in body_stmts(&parsed.program) {
        let StmtKind::Assign { value, .. } = &s.kind else { continue };
        let line = src[..s.span.lo as usize].lines().count().max(1);
        if drop.len() < per_op {
            drop.push(Mutant {
                label: format!("drop@{line}"),
                text: splice(src, s.span.lo as usize, s.span.hi as usize, ""),
            });
        }
        let mut found_plus = None;
        let mut found_lit = None;
        alpine_rs::front::visit::walk_expr(value, &mut |e| match &e.kind {
            ExprKind::Binary(BinOp::Add, l, r) if found_plus.is_none() => {
                let gap = &src[l.span.hi as usize..r.span.lo as usize];
                if let Some(k) = gap.find('+') {
                    found_plus = Some(l.span.hi as usize + k);
                }
            }
            ExprKind::Int(_) if found_lit.is_none() => {
                found_lit = Some((e.span.lo as usize, e.span.hi as usize));
            }
            _ => {}
        });
        if let (Some(at), true) = (found_plus, plus.len() < per_op) {
            plus.push(Mutant { label: format!("plus@{line}"), text: splice(src, at, at + 1, "-") });
        }
        if let (Some((lo, hi)), true) = (found_lit, lit.len() < per_op) {
            let k = &src[lo..hi];
            lit.push(Mutant {
                label: format!("lit@{line}"),
                text: splice(src, lo, hi, &format!("({k} + 1)")),
            });
        }
    }
    plus.into_iter().chain(lit).chain(drop).collect()
}

fn verdict(orig: &str, opt: &str) -> (Verdict, Option<String>) {
    let out = sem::validate(orig, opt, &alpine_rs::validate_options());
    (out.verdict, out.reason)
}

#[test]
fn one_token_mutants_of_real_programs_are_reported() {
    if !peer_root().is_dir() {
        eprintln!("../shared/peer is not there: nothing to mutate");
        return;
    }
    let per_op = if std::env::var_os("ALPINE_SLOW").is_some() { MUTANTS_PER_OP } else { 1 };
    let (mut judged, mut differs, mut missed, mut undecided, mut harmless) = (0, 0, 0, 0, 0);
    let mut ill_typed = 0;
    let mut stale = Vec::new();
    let mut misses = Vec::new();
    // Each file and its mutants are judged on a thread of their own; counted in file order.
    let per_file = common::par_map(JUDGED, |f| {
        let src = std::fs::read_to_string(peer_root().join(f)).ok()?;
        let (v, why) = verdict(&src, &src);
        assert_eq!(v, Verdict::Same, "{f} against itself: {why:?}");
        let judged: Vec<(String, Verdict, Option<String>)> = mutants(&src, per_op)
            .into_iter()
            .filter(|m| m.text != src)
            .map(|m| {
                let (v, reason) = verdict(&src, &m.text);
                (m.label, v, reason)
            })
            .collect();
        Some(judged)
    });
    for (f, results) in JUDGED.iter().zip(per_file) {
        let Some(results) = results else { continue };
        judged += 1;
        for (label, v, reason) in results {
            let known = HARMLESS.iter().find(|(hf, hl, _)| hf == f && *hl == label);
            match v {
                Verdict::Different if known.is_some() => stale.push(format!("{f} {label}")),
                Verdict::Different => differs += 1,
                // Not a program (`-` on sequences, say): VerCors rejects it too.
                Verdict::BadInput => ill_typed += 1,
                _ if known.is_some() => harmless += 1,
                Verdict::Same => {
                    missed += 1;
                    misses.push(format!("{f} {label}: equivalent"));
                }
                _ => {
                    undecided += 1;
                    misses.push(format!("{f} {label}: {v:?} {}", reason.unwrap_or_default()));
                }
            }
        }
    }
    let changing = differs + missed + undecided;
    eprintln!(
        "mutants: {judged} files judged; {differs} differ, {missed} equivalent, {undecided} \
         undecided, {harmless} harmless (listed), {ill_typed} ill-typed (skipped) of {} mutants",
        changing + harmless + ill_typed
    );
    for m in &misses {
        eprintln!("  not reported: {m}");
    }
    assert!(judged >= 15, "only {judged} peer files validate against themselves");
    assert!(changing >= 15, "only {changing} mutants");
    // The goal is 90% (issue 21). Measured (session 18): 93 of 95 behaviour-changing
    // mutants (109 in all: 12 harmless, listed with the reason, and 2 ill-typed); the two
    // missed are the `+` and the dropped assignment at line 100 of
    // known-problems/verifythis/2019/challenge3.pvl, judged equivalent. A listed
    // mutant that starts being reported fails the test, so the list stays true.
    assert!(stale.is_empty(), "listed as harmless but reported as different: {stale:?}");
    assert!(
        differs * 100 >= changing * 90,
        "{differs} of {changing} behaviour-changing mutants reported as different"
    );
}

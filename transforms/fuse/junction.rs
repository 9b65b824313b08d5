//! One junction: fusing the kernel built so far with the next one (paper Algorithms 1–4,
//! optimizations.md §7d–e), followed by the self-checks that must pass before anything is
//! emitted.
//!
//! Permissions are handed over **per cell**. The paper's Algorithms 1 and 2 give the second
//! kernel's deficit and the first kernel's leftover as uniform fractions (`1 - cperm(P1)`,
//! `1 - cperm(P2)`), which is only right on cells both kernels hold. Where one kernel's pattern
//! reaches cells the other's does not (a shifted or guarded index), a uniform leftover loses
//! permission on the boundary cells. Here the leftover of each atom is computed on its own cell:
//! its fraction minus what the other kernel's atoms take there, split by a printed guard where
//! that amount depends on the thread ([`Analysis::complement`]).

use super::affine::retain_framed;
use super::model::{merge_dups, Atom, Frac, Func, Kernel};
use super::rewrite::print_contract;
use super::solver::{amount_text, Analysis, ComplementError, Undecided, Witness};
use check::translate::Z3Int;
use diag::Diagnostic;
use front::span::Span;
use std::collections::BTreeSet;

pub(super) enum JunctionError {
    Diag(Diagnostic),
    /// Message and counterexample note.
    InterBlock(String, String),
}

/// The diagnostic for a question the solver could not answer; `what` names the question.
fn undecided(u: Undecided, what: &str) -> JunctionError {
    JunctionError::Diag(match u {
        Undecided::Unknown => Diagnostic::error(
            "A0020",
            format!("the solver could not decide {what}"),
        )
        .with_help("simplify the kernel contracts or raise --z3-timeout"),
        Undecided::Unencodable => Diagnostic::error(
            "A604",
            format!("cannot fuse: a permission pattern cannot be encoded for the solver (deciding {what})"),
        )
        .with_help("use guards and indices over integers, array lengths and pure functions"),
    })
}

/// `map_err` adapter naming the question.
fn und(what: &'static str) -> impl Fn(Undecided) -> JunctionError {
    move |u| undecided(u, what)
}

/// Where the fused kernel's permissions come from and go to, per role.
#[derive(Default)]
struct Plan {
    /// Fused pre: what kernel 1's body needs.
    pre_a: Vec<Atom>,
    /// Fused pre: held from the start for kernel 2 (its arrays, its deficits).
    pre_b: Vec<Atom>,
    /// Fused post: what kernel 2's body returns.
    post_b: Vec<Atom>,
    /// Fused post: what kernel 1 leaves that kernel 2 does not take.
    post_a: Vec<Atom>,
    /// The kernels' contracts as the fused body uses them (rescaled in case 2).
    p1: Vec<Atom>,
    q1: Vec<Atom>,
    p2: Vec<Atom>,
    q2: Vec<Atom>,
    /// Arrays whose atoms were rescaled (case 2).
    rescaled: Vec<String>,
}

impl Plan {
    /// Each kernel keeps its own atoms (arrays of one kernel, case 1, case 2).
    fn separate(&mut self, p1: Vec<Atom>, q1: Vec<Atom>, p2: Vec<Atom>, q2: Vec<Atom>) {
        self.pre_a.extend(p1.iter().cloned());
        self.pre_b.extend(p2.iter().cloned());
        self.post_b.extend(q2.iter().cloned());
        self.post_a.extend(q1.iter().cloned());
        self.p1.extend(p1);
        self.q1.extend(q1);
        self.p2.extend(p2);
        self.q2.extend(q2);
    }
}

/// The design's case for a shared array (§7d table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Case {
    Same,
    Budget,
    ReadOnly,
    Dependent,
}

fn refs(v: &[Atom]) -> Vec<&Atom> {
    v.iter().collect()
}

fn of_array<'a>(v: &'a [Atom], arr: &str) -> Vec<&'a Atom> {
    v.iter().filter(|a| a.array == arr).collect()
}

/// Secondary labels on the distinct source conjuncts of some atoms.
fn label_atoms(mut d: Diagnostic, atoms: &[&Atom], msg: &str) -> Diagnostic {
    let mut seen: Vec<Span> = Vec::new();
    for a in atoms {
        // By place: `Span`'s `==` ignores positions, so `contains` would match any span.
        if !seen.iter().any(|s| s.same_place(a.span)) {
            seen.push(a.span);
            d = d.with_secondary(a.span, msg.to_string());
        }
    }
    d
}

/// Fuse `k1` (the kernels fused so far) with `k2`. `names` are the kernels' numbers for
/// messages; `block` is the thread-block size for the inter-block check.
pub(super) fn junction(
    an: &mut Analysis,
    k1: &Kernel,
    k2: &Kernel,
    names: (&str, &str),
    block: Option<&Z3Int>,
) -> Result<(Kernel, bool), JunctionError> {
    let mut arrays = k1.arrays();
    for a in k2.arrays() {
        if !arrays.contains(&a) {
            arrays.push(a);
        }
    }
    // Opaque resources on arrays of both kernels cannot be analysed: one on an array the other
    // kernel names otherwise (by atoms, or by a different opaque resource: `\pointer_index(a,
    // t, write)` and `\pointer_index(a, t, 1\2)`) would be carried next to it, asking for
    // more than there is. The same resource in both kernels is held once, one kernel after the
    // other, and is carried once.
    for (ka, kb) in [(k1, k2), (k2, k1)] {
        for cr in ka.carried_pre.iter().chain(&ka.carried_post) {
            let other = |n: &String| {
                kb.uses(n)
                    || kb
                        .carried_pre
                        .iter()
                        .chain(&kb.carried_post)
                        .any(|c| c.text != cr.text && c.arrays.contains(n))
            };
            let both_atoms = |n: &String| k1.uses(n) && k2.uses(n);
            if let Some(n) = cr.arrays.iter().find(|n| both_atoms(n) || other(n)) {
                return Err(JunctionError::Diag(
                    Diagnostic::error(
                        "A604",
                        format!(
                            "cannot fuse: the resource `{}` mentions `{n}`, which the other kernel holds through other permissions",
                            cr.text
                        ),
                    )
                    .with_help("express the permissions on the array with Perm(a[i], π) atoms in both kernels"),
                ));
            }
        }
    }
    // A kernel may drop permission (permissions are affine), but its post cannot claim more
    // than its pre on any cell: such a kernel cannot verify (A606).
    an.any_witness(|an| {
        if k1.original {
            no_gain(an, k1, names.0)?;
        }
        no_gain(an, k2, names.1)
    })?;

    let mut plan = Plan::default();
    let mut dp_arrays: Vec<String> = Vec::new();
    for arr in &arrays {
        let sel =
            |v: &[Atom]| -> Vec<Atom> { v.iter().filter(|a| &a.array == arr).cloned().collect() };
        let (p1, q1, p2, q2) = (sel(&k1.pre), sel(&k1.post), sel(&k2.pre), sel(&k2.post));
        if !(k1.uses(arr) && k2.uses(arr)) {
            plan.separate(p1, q1, p2, q2);
            continue;
        }
        an.any_witness(|an| {
            for a in p1.iter().chain(&q1).chain(&p2).chain(&q2) {
                if !an.injective(a).map_err(und("whether a permission is per-thread"))? {
                    let d = Diagnostic::error(
                        "A604",
                        format!("cannot fuse: `{}` gives two threads the same cell", a.print()),
                    )
                    .with_secondary(a.span, "this permission is not per-thread")
                    .with_help("kernel permissions must be injective in the thread variables");
                    return Err(JunctionError::Diag(d));
                }
            }
            Ok(())
        })?;
        for (k, name) in [(k1, names.0), (k2, names.1)] {
            if k.original {
                uniform(&sel(&k.pre), arr, name, "pre")?;
                uniform(&sel(&k.post), arr, name, "post")?;
            }
        }
        let same = an
            .same_cells(&refs(&p2), &refs(&q1))
            .map_err(und("whether the kernels use the same cells per thread"))?;
        let w1 = an.writes(&p1).map_err(und("whether kernel 1 writes"))?;
        let w2 = an.writes(&p2).map_err(und("whether kernel 2 writes"))?;
        let case = if same {
            Case::Same
        } else if !w1 && !w2 {
            // Only reads. The caller is only known to hold, on each cell, `max(P1, P1 + P2 -
            // Q1)` (module `affine`): the hungrier kernel's share when kernel 1 returns
            // everything, so two shares of one cell cannot simply be added. They can when
            // kernel 1 drops what it reads, and kernel 2's share came from the method anyway.
            let shared = an
                .overlap(&refs(&p1), &refs(&p2))
                .map_err(und("whether both kernels read one cell"))?;
            if shared && !fits_caller(an, &p1, &q1, &p2)? {
                Case::ReadOnly
            } else {
                Case::Budget
            }
        } else {
            let both: Vec<&Atom> = p1.iter().chain(&p2).collect();
            let budget = !an
                .may_exceed_one(&both)
                .map_err(und("whether both kernels fit in one permission per cell"))?;
            if budget {
                Case::Budget
            } else {
                Case::Dependent
            }
        };
        match case {
            Case::Budget => plan.separate(p1, q1, p2, q2),
            Case::ReadOnly => {
                // A barrier inside a body may state amounts of the array that halving breaks.
                if k1.barrier_arrays.contains(arr) || k2.barrier_arrays.contains(arr) {
                    return Err(JunctionError::Diag(
                        Diagnostic::error(
                            "A608",
                            format!("self-check failed: both kernels read cells of `{arr}`, and their shares can only be combined by halving them, but a barrier inside a kernel body states amounts of `{arr}`"),
                        )
                        .with_note("nothing was emitted")
                        .with_help("fuse kernels without inner barriers on the shared read-only array, or give the kernels disjoint read patterns"),
                    ));
                }
                // Every read share at half its fraction: on each cell the fused kernel then
                // asks at most the mean of the two kernels' totals, never more than the larger,
                // and every read keeps a positive share.
                let r = |v: Vec<Atom>| -> Vec<Atom> {
                    v.iter().map(|a| a.with_frac(&a.frac / Frac::from_integer(2.into()))).collect()
                };
                plan.rescaled.push(arr.clone());
                plan.separate(r(p1), r(q1), r(p2), r(q2));
            }
            Case::Same | Case::Dependent => {
                // Hand-over: kernel 2 takes its cells from what kernel 1 returns; only the
                // per-cell deficit is held from the start, only the per-cell leftover of
                // kernel 1 is returned besides kernel 2's post.
                for b in &p2 {
                    plan.pre_b.extend(complement(an, b, &refs(&q1), arr)?);
                }
                for a in &q1 {
                    plan.post_a.extend(complement(an, a, &refs(&p2), arr)?);
                }
                plan.pre_a.extend(p1.iter().cloned());
                plan.post_b.extend(q2.iter().cloned());
                plan.p1.extend(p1.iter().cloned());
                plan.q1.extend(q1.iter().cloned());
                plan.p2.extend(p2.iter().cloned());
                plan.q2.extend(q2.iter().cloned());
                if case == Case::Dependent {
                    dp_arrays.push(arr.clone());
                    if let Some(ts) = block {
                        let k1all: Vec<&Atom> = p1.iter().chain(&q1).collect();
                        if let Some((t1, t2, x)) = an
                            .cross_block(&k1all, &refs(&p2), ts)
                            .map_err(und("whether the dependency crosses thread blocks"))?
                        {
                            return Err(JunctionError::InterBlock(
                                format!("array `{arr}` is written by one thread and accessed by another in a different block"),
                                format!("counterexample: thread {t1} of the kernel(s) fused so far and thread {t2} of the next kernel both access {arr}[{x}]"),
                            ));
                        }
                    }
                }
            }
        }
    }
    let dp = !dp_arrays.is_empty();

    // Functional conjuncts (Algorithm 3). A cell kernel 1 may write is an array it holds write
    // permission on; a conjunct about such an array describes kernel 1's result, so it cannot
    // be a precondition of the fused kernel. Dually for kernel 1's post and kernel 2's writes.
    // The barrier hands over everything a thread holds (a thread keeps only what it ensures).
    let req: Vec<Atom> = plan.q1.iter().chain(&plan.pre_b).cloned().collect();
    let ens: Vec<Atom> = plan.p2.iter().chain(&plan.post_a).cloned().collect();

    let fp2_kept = not_written_by(&k2.fpre, k1);
    // Kernel 1's facts are restated (in the fused post, and first in the barrier's ensures)
    // only where the permission that frames them is still held there.
    let fq: Vec<Atom> = plan.post_b.iter().chain(&plan.post_a).cloned().collect();
    let holders: Vec<&[Atom]> = if dp { vec![&fq, &ens] } else { vec![&fq] };
    let fq1_kept = an
        .any_witness(|an| retain_framed(an, not_written_by(&k1.fpost, k2), &plan.q1, &holders))
        .map_err(und("whether kernel 1's postcondition stays framed"))?;
    let fpre = union_by_text(k1.fpre.clone(), &fp2_kept);
    let fpost = union_by_text(fq1_kept.clone(), &k2.fpost);

    // Self-checks (§7d): nothing is emitted unless the fused contract and barrier add up.
    for arr in &arrays {
        // Asked of the solver as one question when they all pass, the usual case.
        an.any_witness(|an| self_check(an, &plan, dp.then_some((&req, &ens)), arr, (k1, k2)))?;
    }

    // Body (Algorithm 4). A local of the first body would still be in scope in the second
    // (a redeclaration, or a capture of an outer name): then each body is its own block.
    let wrap = k1.decls.iter().any(|d| k2.decls.contains(d) || k2.mentions.contains(d));
    let block = |lines: &[String]| -> Vec<String> {
        let mut out = vec!["{".to_string()];
        out.extend(lines.iter().map(|l| {
            if l.trim().is_empty() {
                l.clone()
            } else {
                format!("\u{1}{l}")
            }
        }));
        out.push("}".into());
        out
    };
    let mut body = if wrap { block(&k1.body) } else { k1.body.clone() };
    if dp {
        let pre_b = merge_dups(plan.pre_b.clone());
        // Both sides of the barrier list, without repeats: their atoms, the carried facts,
        // their functional conjuncts, then the frame of what kernel 2 holds from the start.
        let clauses = |atoms: &[Atom], funcs: [&[Func]; 2]| {
            let carried = k1.carried_post.iter().chain(&k2.carried_pre);
            let texts = merge_dups(atoms.to_vec())
                .into_iter()
                .map(|a| a.print())
                .chain(carried.chain(funcs.into_iter().flatten()).map(|c| c.text.clone()))
                .chain(pre_b.iter().map(Atom::frame));
            let mut v: Vec<String> = Vec::new();
            for s in texts {
                if !v.contains(&s) {
                    v.push(s)
                }
            }
            v
        };
        let r = clauses(&req, [&k1.fpost, &fp2_kept]);
        let e = clauses(&ens, [&k2.fpre, &fq1_kept]);
        // In a barrier's contract `\old` is the state at the barrier, not at the kernel's start
        // as in the kernel's own postcondition: restated there, the fact would say something
        // else (found by writing user programs: the fused output failed both oracles).
        // A frame fact `x == \old(x)` (under a guard `g ==> …`) says the same at the barrier
        // (nothing changed), so it may.
        let frame = |c: &str| {
            let fact = c.rsplit_once(" ==> ").map_or(c, |(_, f)| f);
            fact.split_once(" == \\old(")
                .and_then(|(l, r)| r.strip_suffix(')').map(|r| l.trim() == r.trim()))
                .unwrap_or(false)
        };
        if let Some(c) = r.iter().chain(&e).find(|c| c.contains("\\old(") && !frame(c)) {
            return Err(JunctionError::Diag(
                Diagnostic::error(
                    "A609",
                    "cannot fuse: a fact the barrier between the kernels would pass on mentions `\\old`",
                )
                .with_note(format!("the fact: `{c}`"))
                .with_note("in a barrier's contract `\\old(e)` is `e` when the threads reach the barrier, not when the kernel started")
                .with_help("state kernel 1's postcondition without `\\old` (name the values it relates to in the precondition), or fuse kernels that need no barrier"),
            ));
        }
        body.push("barrier(\u{0}LABEL) {".into());
        for x in r {
            body.push(format!("\u{1}requires {x};"));
        }
        for x in e {
            body.push(format!("\u{1}ensures {x};"));
        }
        body.push("}".into());
    } else {
        // Kernel 1's postcondition as assertions, in clause order. Conjuncts about rescaled
        // arrays are asserted at the amounts the fused body actually holds.
        for (c, perm_arrays) in &k1.post_texts {
            if !perm_arrays.iter().any(|a| plan.rescaled.contains(a)) {
                body.push(format!("assert {c};"));
            }
        }
        for a in merge_dups(plan.q1.clone()) {
            if plan.rescaled.contains(&a.array) {
                body.push(format!("assert {};", a.print()));
            }
        }
    }
    // Kernel 2's own barriers are relabelled to the fused block.
    let body2: Vec<String> = k2
        .body
        .iter()
        .map(|line| match &k2.label {
            Some(l) if line.contains("barrier") => {
                super::model::rename_tokens(line, &[(l.clone(), "\u{0}LABEL".to_string())])
            }
            _ => line.clone(),
        })
        .collect();
    if wrap {
        body.extend(block(&body2));
    } else {
        body.extend(body2);
    }
    // A resource kernel 1 gives back and kernel 2 takes again is held across the junction: the
    // fused kernel takes it once (kernel 1's) and gives it back once (kernel 2's).
    let mut carried_pre = k1.carried_pre.clone();
    carried_pre.extend(minus(&k2.carried_pre, &k1.carried_post));
    let mut carried_post = minus(&k1.carried_post, &k2.carried_pre);
    carried_post.extend(k2.carried_post.iter().cloned());
    let pre = merge_dups(plan.pre_a.iter().chain(&plan.pre_b).cloned().collect());
    let post = merge_dups(plan.post_b.iter().chain(&plan.post_a).cloned().collect());
    let mut fused = Kernel {
        label: k1.label.clone(),
        keyword: k1.keyword,
        iter_text: k1.iter_text.clone(),
        pre,
        post,
        fpre,
        fpost,
        carried_pre,
        carried_post,
        post_texts: Vec::new(),
        body,
        decls: if wrap { Default::default() } else { k1.decls.union(&k2.decls).cloned().collect() },
        mentions: k1.mentions.union(&k2.mentions).cloned().collect(),
        barrier_arrays: {
            let mut b: BTreeSet<String> =
                k1.barrier_arrays.union(&k2.barrier_arrays).cloned().collect();
            if dp {
                b.extend(req.iter().chain(&ens).map(|a| a.array.clone()));
            }
            b
        },
        original: false,
    };
    fused.post_texts = print_contract(&fused)
        .into_iter()
        .filter(|l| l.kw != "requires")
        .map(|l| {
            let arrays = l.perm_array.into_iter().collect();
            (l.text, arrays)
        })
        .collect();
    Ok((fused, dp))
}

/// The functional conjuncts of `fs` about no array `writer` holds write permission on: a
/// conjunct about such an array describes `writer`'s result (Algorithm 3).
fn not_written_by(fs: &[Func], writer: &Kernel) -> Vec<Func> {
    let written: Vec<&String> =
        writer.pre.iter().filter(|a| a.is_write()).map(|a| &a.array).collect();
    fs.iter().filter(|c| !c.arrays.iter().any(|a| written.contains(&a))).cloned().collect()
}

/// `fs` followed by the conjuncts of `more` whose text it does not have yet.
fn union_by_text(mut fs: Vec<Func>, more: &[Func]) -> Vec<Func> {
    for c in more {
        if !fs.iter().any(|f| f.text == c.text) {
            fs.push(c.clone());
        }
    }
    fs
}

/// `complement` with its failures as diagnostics.
fn complement(
    an: &mut Analysis,
    a: &Atom,
    others: &[&Atom],
    arr: &str,
) -> Result<Vec<Atom>, JunctionError> {
    an.complement(a, others).map_err(|e| {
        let d = match e {
            ComplementError::Undecided(u) => return undecided(u, "the permission a kernel leaves on a cell"),
            ComplementError::Inexpressible(s) => Diagnostic::error(
                "A608",
                format!("self-check failed: the permission `{}` leaves on its cell of `{arr}` depends on whether `{s}` reaches that cell, and that cannot be written as a guard", a.print()),
            )
            .with_note("a guard is printed when the reaching thread can be solved for: an index k * t + r in one dimension, or a shift of one iterator in several; nothing was emitted"),
            ComplementError::TooMany => Diagnostic::error(
                "A608",
                format!("self-check failed: the permission left on a cell of `{arr}` by `{}` depends on more than four patterns of the other kernel", a.print()),
            )
            .with_note("nothing was emitted"),
        };
        JunctionError::Diag(
            d.with_secondary(a.span, "this permission")
                .with_help("the kernels' permission patterns are outside what the fusion can hand over; fuse fewer kernels or simplify the patterns"),
        )
    })
}

/// A605: within one kernel, all atoms of an array in its pre (or post) carry one fraction.
fn uniform(v: &[Atom], arr: &str, kernel: &str, side: &str) -> Result<(), JunctionError> {
    let Some(f0) = v.first() else { return Ok(()) };
    if let Some(b) = v.iter().find(|a| a.frac != f0.frac) {
        let d = Diagnostic::error(
            "A605",
            format!(
                "cannot fuse: the {side}conditions of {kernel} use different fractions on array `{arr}` ({} and {})",
                amount_text(&f0.frac),
                amount_text(&b.frac)
            ),
        )
        .with_secondary(f0.span, amount_text(&f0.frac))
        .with_secondary(b.span, amount_text(&b.frac))
        .with_help("use one fraction per array in each kernel's pre- and postcondition (any read fraction works for reads)");
        return Err(JunctionError::Diag(d));
    }
    Ok(())
}

/// A606: for every array, the kernel's threads together return at most what they take, on every
/// cell. Returning less is allowed (the dropped part is not returned by the fused post); a post
/// that claims more cannot verify.
fn no_gain(an: &mut Analysis, k: &Kernel, name: &str) -> Result<(), JunctionError> {
    for arr in k.arrays() {
        let p = of_array(&k.pre, &arr);
        let q = of_array(&k.post, &arr);
        if let Some(w) = an
            .global_violation(&q, &p, false)
            .map_err(und("whether a kernel returns more permission than it takes"))?
        {
            let d = Diagnostic::error(
                "A606",
                format!(
                    "cannot fuse: {name} returns more permission on array `{arr}` than it takes"
                ),
            )
            .with_secondary(k.keyword, name.to_string());
            let d = label_atoms(d, &p, "taken here");
            let d = label_atoms(d, &q, "returned here");
            let d = d
                .with_note(format!(
                    "{}: its threads take {} in total and claim to return {}",
                    w.describe(&arr),
                    amount_text(&w.rhs),
                    amount_text(&w.lhs)
                ))
                .with_help("a kernel can give back at most what it takes (giving back less is fine): its postcondition cannot verify; correct it");
            return Err(JunctionError::Diag(d));
        }
    }
    Ok(())
}

/// Whether both kernels' read shares of an array, added up, stay within what a caller of the
/// two kernels is known to hold on every cell (and within write).
fn fits_caller(
    an: &mut Analysis,
    p1: &[Atom],
    q1: &[Atom],
    p2: &[Atom],
) -> Result<bool, JunctionError> {
    let what = "whether both kernels' read shares fit what the caller holds";
    let both: Vec<&Atom> = p1.iter().chain(p2).collect();
    if an.above_caller(&both, &refs(p1), &refs(q1), &refs(p2)).map_err(und(what))?.is_some() {
        return Ok(false);
    }
    Ok(an.above_write(&both).map_err(und(what))?.is_none())
}

/// The self-checks of §7d on one array (A608). With a barrier, `(requires, ensures)` atoms.
/// The question the self-checks ask, for A0020.
const SELF: &str = "a self-check of the fused permissions";

fn cat<'a>(vs: &[&Vec<&'a Atom>]) -> Vec<&'a Atom> {
    vs.iter().flat_map(|v| v.iter().copied()).collect()
}

fn self_check(
    an: &mut Analysis,
    plan: &Plan,
    barrier: Option<(&Vec<Atom>, &Vec<Atom>)>,
    arr: &str,
    orig: (&Kernel, &Kernel),
) -> Result<(), JunctionError> {
    let fp: Vec<&Atom> =
        of_array(&plan.pre_a, arr).into_iter().chain(of_array(&plan.pre_b, arr)).collect();
    let fq: Vec<&Atom> =
        of_array(&plan.post_b, arr).into_iter().chain(of_array(&plan.post_a, arr)).collect();
    let (p1, q1, p2, q2) = (
        of_array(&plan.p1, arr),
        of_array(&plan.q1, arr),
        of_array(&plan.p2, arr),
        of_array(&plan.q2, arr),
    );
    let fail = |what: &str, w: Option<Witness>| -> JunctionError {
        let mut d = Diagnostic::error("A608", format!("self-check failed: {what}"));
        if let Some(w) = w {
            d = d.with_note(format!(
                "{}: {} against {}",
                w.describe(arr),
                amount_text(&w.lhs),
                amount_text(&w.rhs)
            ));
        }
        JunctionError::Diag(d.with_note("nothing was emitted").with_help(
            "the kernels' permission patterns are outside what the fusion algorithms handle; fuse fewer kernels or restate their contracts",
        ))
    };
    // 1. The fused precondition never asks more of a cell than running the kernels one after
    // the other does, `max(P1, P1 + P2 - Q1)`: that is all the caller is known to hold. Nor
    // more than write: kernel 2 needing what kernel 1 drops must get it from the method.
    let (o1, o2) = (of_array(&orig.0.pre, arr), of_array(&orig.1.pre, arr));
    let (oq1, oq2) = (of_array(&orig.0.post, arr), of_array(&orig.1.post, arr));
    if let Some(w) = an.above_caller(&fp, &o1, &oq1, &o2).map_err(und(SELF))? {
        return Err(fail(&format!("the fused precondition asks more of a cell of `{arr}` than running the kernels one after the other, more than the caller is known to hold (asked against the larger of kernel 1's share and kernel 1's plus kernel 2's less what kernel 1 returns)"), Some(w)));
    }
    if let Some(w) = an.above_write(&fp).map_err(und(SELF))? {
        let e = fail(&format!("the fused precondition asks more than write of a cell of `{arr}`: the second kernel needs permission there that the first takes and does not give back, and the method cannot hold both (asked against write)"), Some(w));
        return Err(match e {
            JunctionError::Diag(d) => JunctionError::Diag(d.with_help("kernel 2 can only use what kernel 1 gives back plus what the method holds beyond kernel 1's share, at most write in all: let kernel 1 return what kernel 2 needs (the kernels cannot run one after the other as written either)")),
            other => other,
        });
    }
    // 2. The fused postcondition returns no more than the precondition takes, and no less than
    // the two kernels give back together: FQ - FP >= Q1 + Q2 - P1 - P2 on every cell.
    if let Some(w) = an.global_violation(&fq, &fp, false).map_err(und(SELF))? {
        return Err(fail(
            &format!(
                "the fused kernel returns more of `{arr}` than it takes (returned against taken)"
            ),
            Some(w),
        ));
    }
    let lost = an
        .global_violation(&cat(&[&fp, &oq1, &oq2]), &cat(&[&fq, &o1, &o2]), false)
        .map_err(und(SELF))?;
    if let Some(w) = lost {
        return Err(fail(&format!("the fused kernel gives back less of `{arr}` than the kernels do one after the other (taken plus what the kernels return, against returned plus what they take)"), Some(w)));
    }
    // Per thread: kernel 1's body starts with what it needs.
    if let Some(w) = an.local_violation(&p1, &fp).map_err(und(SELF))? {
        return Err(fail(&format!("a thread does not start with what the first body needs on `{arr}` (needed against held)"), Some(w)));
    }
    match barrier {
        None => {
            // 4. Without a barrier, after the first body a thread holds what the second needs
            // (P2 + P1 <= FP + Q1), and in the end what the fused post gives back.
            if let Some(w) =
                an.local_violation(&cat(&[&p2, &p1]), &cat(&[&fp, &q1])).map_err(und(SELF))?
            {
                return Err(fail(&format!("after the first body a thread does not hold what the second body needs on `{arr}` (needed against held)"), Some(w)));
            }
            if let Some(w) = an
                .local_violation(&cat(&[&fq, &p2, &p1]), &cat(&[&fp, &q1, &q2]))
                .map_err(und(SELF))?
            {
                return Err(fail(&format!("a thread cannot return the fused postcondition on `{arr}` (promised against held)"), Some(w)));
            }
        }
        Some((req, ens)) => {
            let r = of_array(req, arr);
            let e = of_array(ens, arr);
            if let Some(w) =
                an.local_violation(&cat(&[&r, &p1]), &cat(&[&fp, &q1])).map_err(und(SELF))?
            {
                return Err(fail(&format!("a thread does not hold what the barrier requires on `{arr}` (required against held)"), Some(w)));
            }
            // 3. The barrier's ensures do not exceed its requires, over all threads.
            if let Some(w) = an.global_violation(&e, &r, false).map_err(und(SELF))? {
                return Err(fail(&format!("the barrier hands out more of `{arr}` than it receives (ensured against required)"), Some(w)));
            }
            // 4. After the barrier every thread holds at least what the second body needs.
            if let Some(w) = an.local_violation(&p2, &e).map_err(und(SELF))? {
                return Err(fail(&format!("after the barrier a thread does not hold what the second body needs on `{arr}` (needed against held)"), Some(w)));
            }
            if let Some(w) =
                an.local_violation(&cat(&[&fq, &p2]), &cat(&[&e, &q2])).map_err(und(SELF))?
            {
                return Err(fail(&format!("a thread cannot return the fused postcondition on `{arr}` (promised against held)"), Some(w)));
            }
        }
    }
    Ok(())
}

/// `a` without one element of the same text for each element of `b` (a multiset difference).
fn minus(a: &[Func], b: &[Func]) -> Vec<Func> {
    let mut left: Vec<&str> = b.iter().map(|f| f.text.as_str()).collect();
    a.iter()
        .filter(|f| match left.iter().position(|t| *t == f.text) {
            Some(k) => {
                left.remove(k);
                false
            }
            None => true,
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::model::kernel_model;
    use super::super::solver::Threads;
    use super::*;
    use analyze::facts::{facts_at, Point};
    use front::ast::*;
    use front::parser::{parse, ParseOptions};

    /// Kernel 1 writes `a[i + 1]`; kernel 2 reads `a[i]` for `i > 0`. Cell `m` is reached only
    /// by kernel 1, so kernel 1's leftover there is the whole write permission.
    const SHIFT: &str = "class C {
  context_everywhere a != null && a.length == m + 1 && m > 0;
  context (\\forall* int k; 0 <= k && k < m + 1; Perm(a[k], write));
  void shift(int m, int[] a) {
    par one (int i = 0 .. m)
      context Perm(a[i + 1], write);
      ensures a[i + 1] == i;
    {
      a[i + 1] = i;
    }
    par two (int j = 0 .. m)
      context j > 0 ==> Perm(a[j], 1\\2);
    {
      int v = 0;
    }
  }
}";

    /// Run `f` on the two kernels of `src` (first method of the first class), renamed to `i`.
    fn with_kernels(src: &str, f: impl FnOnce(&mut Analysis, &Kernel, &Kernel)) {
        let parsed = parse(src, &ParseOptions::default());
        let Some(Item::Class(class)) = parsed.program.items.first() else { panic!("a class") };
        let Some(Member::Method(method)) = class.members.first() else { panic!("a method") };
        let MethodBody::Block(body) = &method.body else { panic!("a body") };
        let pars: Vec<&Par> = body
            .stmts
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::Par(p) => Some(p),
                _ => None,
            })
            .collect();
        let tv = vec!["i".to_string()];
        let k: Vec<Kernel> = pars
            .iter()
            .map(|p| {
                kernel_model(src, parsed.dialect, p.keyword, &p.arms[0], &tv, &[]).expect("model")
            })
            .collect();
        let mut facts = facts_at(
            &parsed.program,
            Some(class),
            method,
            Point::Before(body.stmts[0].span.start()),
        );
        let it = &pars[0].arms[0].iters[0];
        let lo = facts.tr.int(&it.lo).expect("lo");
        let hi = facts.tr.int(&it.hi).expect("hi");
        let th = Threads {
            names: tv.clone(),
            lo: vec![lo],
            hi: vec![hi],
            lo_text: vec![it.lo.span.text(src).to_string()],
            hi_text: vec![it.hi.span.text(src).to_string()],
        };
        let mut an = Analysis {
            tr: &mut facts.tr,
            facts: facts.facts.clone(),
            th,
            dialect: parsed.dialect,
            timeout: 5000,
            pending: Default::default(),
        };
        f(&mut an, &k[0], &k[1]);
    }

    fn code(e: JunctionError) -> String {
        match e {
            JunctionError::Diag(d) => format!("{}: {}", d.code, d.message),
            JunctionError::InterBlock(m, _) => format!("inter-block: {m}"),
        }
    }

    /// The plan of Algorithms 1 and 2 as the paper states them (uniform leftover 1 - 1\2).
    fn uniform_plan(k1: &Kernel, k2: &Kernel) -> Plan {
        let half = Frac::new(1.into(), 2.into());
        Plan {
            pre_a: k1.pre.clone(),
            post_b: k2.post.clone(),
            post_a: k1.post.iter().map(|a| a.with_frac(half.clone())).collect(),
            p1: k1.pre.clone(),
            q1: k1.post.clone(),
            p2: k2.pre.clone(),
            q2: k2.post.clone(),
            ..Plan::default()
        }
    }

    /// [`uniform_plan`] with kernel 1 keeping, cell by cell, what kernel 2 does not take.
    fn per_cell_plan(an: &mut Analysis, k1: &Kernel, k2: &Kernel) -> Plan {
        let mut plan = uniform_plan(k1, k2);
        let p2: Vec<&Atom> = k2.pre.iter().collect();
        plan.post_a = an.complement(&k1.post[0], &p2).expect("complement");
        plan
    }

    fn barrier(plan: &Plan) -> (Vec<Atom>, Vec<Atom>) {
        (
            plan.q1.iter().chain(&plan.pre_b).cloned().collect(),
            plan.p2.iter().chain(&plan.post_a).cloned().collect(),
        )
    }

    /// What the self-checks of array `a` say against `plan` (with `barrier`, or none):
    /// the refusal's code and message, or nothing when they pass.
    fn refusal(
        an: &mut Analysis,
        plan: &Plan,
        barrier: Option<(&Vec<Atom>, &Vec<Atom>)>,
        ks: (&Kernel, &Kernel),
    ) -> String {
        self_check(an, plan, barrier, "a", ks).err().map(code).unwrap_or_default()
    }

    /// [`refusal`] with the barrier that hands over everything a thread holds.
    fn full_barrier_refusal(an: &mut Analysis, plan: &Plan, ks: (&Kernel, &Kernel)) -> String {
        let (req, ens) = barrier(plan);
        refusal(an, plan, Some((&req, &ens)), ks)
    }

    #[test]
    fn a_uniform_leftover_that_loses_the_boundary_cell_is_refused() {
        with_kernels(SHIFT, |an, k1, k2| {
            let msg = full_barrier_refusal(an, &uniform_plan(k1, k2), (k1, k2));
            assert!(msg.starts_with("A608") && msg.contains("gives back less"), "{msg}");
        });
    }

    #[test]
    fn the_per_cell_leftover_passes_the_self_checks() {
        with_kernels(SHIFT, |an, k1, k2| {
            let plan = per_cell_plan(an, k1, k2);
            let texts: Vec<String> = plan.post_a.iter().map(Atom::print).collect();
            assert_eq!(
                texts,
                ["i < m - 1 ==> Perm(a[i + 1], 1\\2)", "i >= m - 1 ==> Perm(a[i + 1], write)"]
            );
            assert_eq!(full_barrier_refusal(an, &plan, (k1, k2)), "");
        });
    }

    #[test]
    fn a_barrier_that_hands_out_more_than_it_receives_is_refused() {
        with_kernels(SHIFT, |an, k1, k2| {
            let plan = per_cell_plan(an, k1, k2);
            let (req, mut ens) = barrier(&plan);
            // Kernel 2's read share handed out at write: more than the threads put in.
            ens[0] = ens[0].with_frac(Frac::from_integer(1.into()));
            let msg = refusal(an, &plan, Some((&req, &ens)), (k1, k2));
            assert!(msg.starts_with("A608") && msg.contains("hands out more"), "{msg}");
        });
    }

    #[test]
    fn without_a_barrier_the_second_body_must_find_its_cells() {
        with_kernels(SHIFT, |an, k1, k2| {
            // No hand-over is possible without a barrier: thread i holds a[i + 1], not a[i].
            let plan = per_cell_plan(an, k1, k2);
            let msg = refusal(an, &plan, None, (k1, k2));
            assert!(msg.starts_with("A608") && msg.contains("second body needs"), "{msg}");
        });
    }

    #[test]
    fn a_fused_precondition_above_both_kernels_is_refused() {
        with_kernels(SHIFT, |an, k1, k2| {
            // Holding both kernels' shares from the start asks 1 + 1\2 of a cell.
            let mut plan = uniform_plan(k1, k2);
            plan.pre_b = k2.pre.clone();
            plan.post_a = k1.post.clone();
            let msg = full_barrier_refusal(an, &plan, (k1, k2));
            assert!(msg.starts_with("A608") && msg.contains("one after the other"), "{msg}");
        });
    }

    #[test]
    fn a_kernel_may_drop_permission_but_not_claim_more() {
        // Kernel 2 takes half of a[j] and gives nothing back: allowed (affine permissions).
        let dropping = SHIFT
            .replace("context j > 0 ==> Perm(a[j], 1\\2);", "requires j > 0 ==> Perm(a[j], 1\\2);");
        with_kernels(&dropping, |an, k1, k2| {
            assert!(no_gain(an, k1, "kernel 1").is_ok());
            assert!(no_gain(an, k2, "kernel 2").is_ok());
        });
        // Kernel 2 claims write back for the half it takes: it cannot verify.
        let gaining = SHIFT.replace(
            "context j > 0 ==> Perm(a[j], 1\\2);",
            "requires j > 0 ==> Perm(a[j], 1\\2);\n      ensures j > 0 ==> Perm(a[j], write);",
        );
        with_kernels(&gaining, |an, _, k2| {
            let msg = no_gain(an, k2, "kernel 2").err().map(code).unwrap_or_default();
            assert!(msg.starts_with("A606") && msg.contains("more permission"), "{msg}");
        });
        // Kernel 1 returns its cell's permission one cell further right: more on a[i + 2].
        let shifted = SHIFT.replace(
            "context Perm(a[i + 1], write);",
            "requires Perm(a[i], write);\n      ensures Perm(a[i + 1], write);",
        );
        with_kernels(&shifted, |an, k1, _| {
            let msg = no_gain(an, k1, "kernel 1").err().map(code).unwrap_or_default();
            assert!(msg.starts_with("A606"), "{msg}");
        });
    }

    /// Kernel 1 takes write on a[i] and returns half; kernel 2 reads a[i] at 1\4.
    const DROP_HALF: &str = "class C {
  context_everywhere a != null && a.length == m && m > 0;
  context (\\forall* int k; 0 <= k && k < m; Perm(a[k], write));
  void drop(int m, int[] a) {
    par one (int i = 0 .. m)
      requires Perm(a[i], write);
      ensures Perm(a[i], 1\\2);
    {
      a[i] = i;
    }
    par two (int j = 0 .. m)
      context Perm(a[j], 1\\4);
    {
      int v = a[j];
    }
  }
}";

    #[test]
    fn a_dropping_kernel_hands_over_what_it_returns() {
        with_kernels(DROP_HALF, |an, k1, k2| {
            let (fused, dp) =
                junction(an, k1, k2, ("kernel 1", "kernel 2"), None).map_err(code).expect("fuses");
            assert!(!dp);
            let texts = |v: &[Atom]| v.iter().map(Atom::print).collect::<Vec<_>>();
            assert_eq!(texts(&fused.pre), ["Perm(a[i], write)"]);
            // Kernel 2's 1\4 plus kernel 1's leftover 1\2 - 1\4: what kernel 1 returned.
            assert_eq!(texts(&fused.post), ["Perm(a[i], 1\\2)"]);
        });
    }

    #[test]
    fn a_need_for_what_kernel_1_drops_beyond_write_is_refused() {
        // Kernel 2 needs 3\4 of a[j] after kernel 1 returned 1\2 of the write it took.
        let greedy = DROP_HALF.replace("context Perm(a[j], 1\\4);", "context Perm(a[j], 3\\4);");
        with_kernels(&greedy, |an, k1, k2| {
            let r = junction(an, k1, k2, ("kernel 1", "kernel 2"), None);
            let msg = r.err().map(code).unwrap_or_default();
            assert!(msg.starts_with("A608") && msg.contains("more than write"), "{msg}");
        });
    }
}

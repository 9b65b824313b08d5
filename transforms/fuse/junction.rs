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

use super::model::{merge_dups, Atom, Frac, Func, Kernel};
use super::print_contract;
use super::solver::{amount_text, Analysis, ComplementError, Undecided, Witness};
use crate::check::translate::Z3Int;
use crate::diag::Diagnostic;
use crate::front::span::Span;

pub(super) enum JunctionError {
    Diag(Diagnostic),
    /// Message and counterexample note.
    InterBlock(String, String),
}

impl From<Undecided> for JunctionError {
    fn from(_: Undecided) -> Self {
        JunctionError::Diag(
            Diagnostic::error(
                "A0020",
                "the solver could not decide a permission question of the fusion",
            )
            .with_help("simplify the kernel contracts or raise --z3-timeout"),
        )
    }
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
        if !seen.contains(&a.span) {
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
    // Opaque resources on arrays of both kernels cannot be analysed.
    for cr in k1
        .carried_pre
        .iter()
        .chain(&k1.carried_post)
        .chain(&k2.carried_pre)
        .chain(&k2.carried_post)
    {
        if cr.arrays.iter().any(|n| k1.uses(n) && k2.uses(n)) {
            return Err(JunctionError::Diag(
                Diagnostic::error(
                    "A604",
                    format!(
                        "cannot fuse: the resource `{}` mentions an array both kernels use",
                        cr.text
                    ),
                )
                .with_help("express the permission with Perm(a[i], π) atoms"),
            ));
        }
    }
    // Paper assumption, checked: a kernel returns every permission it takes (A606).
    if k1.original {
        no_loss(an, k1, names.0)?;
    }
    no_loss(an, k2, names.1)?;

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
        for a in p1.iter().chain(&q1).chain(&p2).chain(&q2) {
            if !an.injective(a)? {
                let d = Diagnostic::error(
                    "A604",
                    format!(
                        "cannot fuse: `{}` gives two threads the same cell",
                        a.print()
                    ),
                )
                .with_secondary(a.span, "this permission is not per-thread")
                .with_help("kernel permissions must be injective in the thread variables");
                return Err(JunctionError::Diag(d));
            }
        }
        for (k, name) in [(k1, names.0), (k2, names.1)] {
            if k.original {
                uniform(&sel(&k.pre), arr, name, "pre")?;
                uniform(&sel(&k.post), arr, name, "post")?;
            }
        }
        let same = an.same_cells(&refs(&p2), &refs(&q1))?;
        let both: Vec<&Atom> = p1.iter().chain(&p2).collect();
        let budget = !an.may_exceed_one(&both)?;
        let w1 = an.writes(&p1)?;
        let w2 = an.writes(&p2)?;
        let case = if same {
            Case::Same
        } else if budget {
            Case::Budget
        } else if !w1 && !w2 {
            Case::ReadOnly
        } else {
            Case::Dependent
        };
        match case {
            Case::Budget => plan.separate(p1, q1, p2, q2),
            Case::ReadOnly => {
                // Only reads: every atom of the array at 1\C, C the number of atoms, so no cell
                // is asked for more than 1 (each atom reaches a cell at most once).
                let f = Frac::new(1.into(), ((p1.len() + p2.len()).max(1)).into());
                let r = |v: Vec<Atom>| -> Vec<Atom> {
                    v.iter().map(|a| a.with_frac(f.clone())).collect()
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
                        if let Some((t1, t2, x)) = an.cross_block(&k1all, &refs(&p2), ts)? {
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
    let w1_arrays: Vec<&String> = k1
        .pre
        .iter()
        .filter(|a| a.is_write())
        .map(|a| &a.array)
        .collect();
    let w2_arrays: Vec<&String> = k2
        .pre
        .iter()
        .filter(|a| a.is_write())
        .map(|a| &a.array)
        .collect();
    let fp2_kept: Vec<Func> = k2
        .fpre
        .iter()
        .filter(|c| !c.arrays.iter().any(|a| w1_arrays.contains(&a)))
        .cloned()
        .collect();
    let fq1_kept: Vec<Func> = k1
        .fpost
        .iter()
        .filter(|c| !c.arrays.iter().any(|a| w2_arrays.contains(&a)))
        .cloned()
        .collect();
    let mut fpre = k1.fpre.clone();
    for c in &fp2_kept {
        if !fpre.iter().any(|f| f.text == c.text) {
            fpre.push(c.clone());
        }
    }
    let mut fpost = fq1_kept.clone();
    for c in &k2.fpost {
        if !fpost.iter().any(|f| f.text == c.text) {
            fpost.push(c.clone());
        }
    }

    // The barrier hands over everything a thread holds (a thread keeps only what it ensures).
    let req: Vec<Atom> = plan.q1.iter().chain(&plan.pre_b).cloned().collect();
    let ens: Vec<Atom> = plan.p2.iter().chain(&plan.post_a).cloned().collect();

    // Self-checks (§7d): nothing is emitted unless the fused contract and barrier add up.
    for arr in &arrays {
        self_check(an, &plan, dp.then_some((&req, &ens)), arr)?;
    }

    // Body (Algorithm 4).
    let mut body = k1.body.clone();
    if dp {
        let mut r: Vec<String> = Vec::new();
        let mut e: Vec<String> = Vec::new();
        let push = |v: &mut Vec<String>, s: String| {
            if !v.contains(&s) {
                v.push(s)
            }
        };
        let pre_b = merge_dups(plan.pre_b.clone());
        for a in merge_dups(req.clone()) {
            push(&mut r, a.print());
        }
        for c in k1.carried_post.iter().chain(&k2.carried_pre) {
            push(&mut r, c.text.clone());
        }
        for c in k1.fpost.iter().chain(&fp2_kept) {
            push(&mut r, c.text.clone());
        }
        for a in &pre_b {
            push(&mut r, a.frame());
        }
        for a in merge_dups(ens.clone()) {
            push(&mut e, a.print());
        }
        for c in k1.carried_post.iter().chain(&k2.carried_pre) {
            push(&mut e, c.text.clone());
        }
        for c in k2.fpre.iter().chain(&fq1_kept) {
            push(&mut e, c.text.clone());
        }
        for a in &pre_b {
            push(&mut e, a.frame());
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
    for line in &k2.body {
        let line = match &k2.label {
            Some(l) if line.contains("barrier") => {
                super::model::rename_tokens(line, &[(l.clone(), "\u{0}LABEL".to_string())])
            }
            _ => line.clone(),
        };
        body.push(line);
    }
    let mut carried_pre = k1.carried_pre.clone();
    carried_pre.extend(k2.carried_pre.iter().cloned());
    let mut carried_post = k1.carried_post.clone();
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

/// `complement` with its failures as diagnostics.
fn complement(
    an: &mut Analysis,
    a: &Atom,
    others: &[&Atom],
    arr: &str,
) -> Result<Vec<Atom>, JunctionError> {
    an.complement(a, others).map_err(|e| {
        let d = match e {
            ComplementError::Undecided => return JunctionError::from(Undecided),
            ComplementError::Inexpressible(s) => Diagnostic::error(
                "A608",
                format!("self-check failed: the permission `{}` leaves on its cell of `{arr}` depends on whether `{s}` reaches that cell, and that cannot be written as a guard", a.print()),
            )
            .with_note("guards are printed for one-dimensional indices of the form k * t + r; nothing was emitted"),
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
        .with_secondary(f0.span, format!("{}", amount_text(&f0.frac)))
        .with_secondary(b.span, format!("{}", amount_text(&b.frac)))
        .with_help("use one fraction per array in each kernel's pre- and postcondition (any read fraction works for reads)");
        return Err(JunctionError::Diag(d));
    }
    Ok(())
}

/// A606: for every array, the kernel's threads together return what they take, on every cell.
fn no_loss(an: &mut Analysis, k: &Kernel, name: &str) -> Result<(), JunctionError> {
    for arr in k.arrays() {
        let p = of_array(&k.pre, &arr);
        let q = of_array(&k.post, &arr);
        if let Some(w) = an.global_violation(&q, &p, true)? {
            let d = Diagnostic::error(
                "A606",
                format!(
                    "cannot fuse: {name} does not return the permission it takes on array `{arr}`"
                ),
            )
            .with_secondary(k.keyword, name.to_string());
            let d = label_atoms(d, &p, "taken here");
            let d = label_atoms(d, &q, "returned here");
            let d = d
                .with_note(format!(
                    "{}: its threads take {} in total and return {}",
                    w.describe(&arr),
                    amount_text(&w.rhs),
                    amount_text(&w.lhs)
                ))
                .with_help("make the kernel's postcondition return every permission its precondition takes (the paper assumes kernels lose no permission)");
            return Err(JunctionError::Diag(d));
        }
    }
    Ok(())
}

/// The self-checks of §7d on one array (A608). With a barrier, `(requires, ensures)` atoms.
fn cat<'a>(vs: &[&Vec<&'a Atom>]) -> Vec<&'a Atom> {
    vs.iter().flat_map(|v| v.iter().copied()).collect()
}

fn self_check(
    an: &mut Analysis,
    plan: &Plan,
    barrier: Option<(&Vec<Atom>, &Vec<Atom>)>,
    arr: &str,
) -> Result<(), JunctionError> {
    let fp: Vec<&Atom> = of_array(&plan.pre_a, arr)
        .into_iter()
        .chain(of_array(&plan.pre_b, arr))
        .collect();
    let fq: Vec<&Atom> = of_array(&plan.post_b, arr)
        .into_iter()
        .chain(of_array(&plan.post_a, arr))
        .collect();
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
    // 1. The fused precondition never asks for more than write permission on a cell.
    if fp.len() > 1 && an.may_exceed_one(&fp)? {
        return Err(fail(&format!("the fused precondition may ask for more than write permission on a cell of `{arr}`"), None));
    }
    // 2. The fused postcondition returns exactly what the precondition takes, on every cell.
    if let Some(w) = an.global_violation(&fq, &fp, true)? {
        return Err(fail(&format!("the fused kernel does not return the permission it takes on `{arr}` (returned against taken)"), Some(w)));
    }
    // Per thread: kernel 1's body starts with what it needs.
    if let Some(w) = an.local_violation(&p1, &fp)? {
        return Err(fail(&format!("a thread does not start with what the first body needs on `{arr}` (needed against held)"), Some(w)));
    }
    match barrier {
        None => {
            // 4. Without a barrier, after the first body a thread holds what the second needs
            // (P2 + P1 <= FP + Q1), and in the end what the fused post gives back.
            if let Some(w) = an.local_violation(&cat(&[&p2, &p1]), &cat(&[&fp, &q1]))? {
                return Err(fail(&format!("after the first body a thread does not hold what the second body needs on `{arr}` (needed against held)"), Some(w)));
            }
            if let Some(w) = an.local_violation(&cat(&[&fq, &p2, &p1]), &cat(&[&fp, &q1, &q2]))? {
                return Err(fail(&format!("a thread cannot return the fused postcondition on `{arr}` (promised against held)"), Some(w)));
            }
        }
        Some((req, ens)) => {
            let r = of_array(req, arr);
            let e = of_array(ens, arr);
            if let Some(w) = an.local_violation(&cat(&[&r, &p1]), &cat(&[&fp, &q1]))? {
                return Err(fail(&format!("a thread does not hold what the barrier requires on `{arr}` (required against held)"), Some(w)));
            }
            // 3. The barrier's ensures do not exceed its requires, over all threads.
            if let Some(w) = an.global_violation(&e, &r, false)? {
                return Err(fail(&format!("the barrier hands out more of `{arr}` than it receives (ensured against required)"), Some(w)));
            }
            // 4. After the barrier every thread holds at least what the second body needs.
            if let Some(w) = an.local_violation(&p2, &e)? {
                return Err(fail(&format!("after the barrier a thread does not hold what the second body needs on `{arr}` (needed against held)"), Some(w)));
            }
            if let Some(w) = an.local_violation(&cat(&[&fq, &p2]), &cat(&[&e, &q2]))? {
                return Err(fail(&format!("a thread cannot return the fused postcondition on `{arr}` (promised against held)"), Some(w)));
            }
        }
    }
    Ok(())
}

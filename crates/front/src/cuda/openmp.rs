//! OpenMP directives in C input.
//!
//! `#pragma omp parallel for` before a loop with an iteration contract runs its iterations as
//! threads: exactly the parallel block that the contract already makes of the loop
//! (`iteration.rs`). Its clauses `private`, `shared`, `schedule`, `num_threads` and `default`
//! say nothing that block does not: each thread has its own loop variable and locals, and
//! shares the memory its contract grants. VerCors reads such loops the same way.
//!
//! A `#pragma omp parallel` region whose statements are `#pragma omp for` loops with iteration
//! contracts is a sequence of those parallel blocks: with a barrier between two loops (no
//! `nowait`), one after the other; a `nowait` loop followed by a loop over the same range, both
//! `schedule(static)`, hands iteration `i` of the first to iteration `i` of the second on the
//! same thread (OpenMP's static schedule gives both to the same thread), which VerCors reads as
//! a parallel region whose second arm waits for the first (`and L2(int i = …; L1(i))`). The
//! annotation before the first loop is that region's contract.
//!
//! Every other OpenMP directive changes what the code means in ways not modelled here (other
//! statements in a `parallel` region, `sections`, `nowait` without a static schedule,
//! reductions), and a loop marked parallel without an iteration contract would be verified as
//! if it ran sequentially. They are refused (A0014), never ignored. Pragmas of other tools
//! (`#pragma unroll`, `#pragma once`) do not change the meaning and stay ignored.

use super::convert::Conv;
use crate::ast::*;
use crate::printer::print_expr;
use crate::span::Span;
use crate::Dialect;
use diag::Diagnostic;

/// Clauses of `omp parallel for` that change nothing the parallel block does not say.
const NEUTRAL_CLAUSES: [&str; 5] = ["private", "shared", "schedule", "num_threads", "default"];

/// Clauses of an `omp for` inside a region that change nothing the parallel block does not say
/// (`simd` vectorises iterations the contract already shows independent); `nowait` is read
/// by the region.
const FOR_CLAUSES: [&str; 6] = ["private", "schedule", "nowait", "simd", "simdlen", "safelen"];

/// An `omp for` loop of a parallel region: whether threads go on without a barrier after it,
/// and whether its schedule is static.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct OmpFor {
    nowait: bool,
    static_schedule: bool,
}

impl Conv<'_> {
    /// `st` (a converted `for` loop) with the OpenMP directive right before it taken into
    /// account: a `parallel for` on a loop that became a parallel block is that block.
    pub(super) fn omp_loop(&mut self, st: Stmt) -> Stmt {
        let Some(k) = self.pragma_before(st.span.start()) else { return st };
        let words = omp_words(self.pragma_text(k));
        let is_par = |s: &Stmt| match &s.kind {
            StmtKind::Par(p) => p.loop_form,
            StmtKind::Block(b) => {
                b.stmts.first().is_some_and(|f| matches!(&f.kind, StmtKind::Par(p) if p.loop_form))
            }
            _ => false,
        };
        if let Some(words) = words {
            if parallel_for(&words) && is_par(&st) {
                self.pragma_used[k] = true;
            }
            if self.omp_region && region_for(&words) && is_par(&st) {
                self.pragma_used[k] = true;
                let nowait = words.iter().any(|w| w == "nowait");
                let static_schedule = words.iter().any(|w| {
                    w.strip_prefix("schedule(")
                        .is_some_and(|r| r.trim_start().starts_with("static"))
                });
                self.omp_fors.insert(st.span.start(), OmpFor { nowait, static_schedule });
            }
        }
        st
    }

    /// `#pragma omp parallel` before the block `items` at `span`: the region of parallel
    /// blocks its `omp for` loops make (module doc), or `None` (no such pragma) for an
    /// ordinary block. A region of anything else is left to `unused_pragmas` (refused).
    pub(super) fn omp_region(
        &mut self,
        items: &[lang_c::span::Node<lang_c::ast::BlockItem>],
        span: Span,
    ) -> Option<Stmt> {
        let k = self.pragma_before(span.start())?;
        let words = omp_words(self.pragma_text(k))?;
        let [first, clauses @ ..] = words.as_slice() else { return None };
        let neutral = clauses.iter().all(|c| {
            let name = c.split('(').next().unwrap_or_default().trim();
            ["private", "shared", "num_threads", "default"].contains(&name)
        });
        if first != "parallel" || !neutral {
            return None;
        }
        let outer = std::mem::replace(&mut self.omp_region, true);
        let b = self.block(items, span);
        self.omp_region = outer;
        let mut loops: Vec<(Par, Vec<Stmt>, OmpFor, Span)> = Vec::new();
        for st in b.stmts {
            let at = st.span;
            let info = self.omp_fors.get(&st.span.start()).copied();
            let (par, after) = match (st.kind, info) {
                (StmtKind::Par(p), Some(_)) if p.loop_form => (p, vec![]),
                (StmtKind::Block(mut bl), Some(_)) if matches!(bl.stmts.first().map(|s| &s.kind), Some(StmtKind::Par(p)) if p.loop_form) =>
                {
                    let StmtKind::Par(p) = bl.stmts.remove(0).kind else { return None };
                    (p, bl.stmts)
                }
                _ => {
                    // Something other than an `omp for` loop: the region is not modelled.
                    self.pragma_used[k] = false;
                    self.unsupported("a statement in an OpenMP parallel region other than an `omp for` loop with an iteration contract", st.span);
                    return None;
                }
            };
            loops.push((par, after, info.unwrap_or_default(), at));
        }
        self.pragma_used[k] = true;
        Some(self.region_of(loops, span))
    }

    /// The parallel blocks of a region's loops: a loop after a `nowait` loop with the same
    /// range and static schedules joins its block as an arm waiting for it.
    fn region_of(&mut self, loops: Vec<(Par, Vec<Stmt>, OmpFor, Span)>, span: Span) -> Stmt {
        let mut out: Vec<Stmt> = Vec::new();
        let mut group: Option<(Par, Vec<Stmt>, OmpFor, Span)> = None;
        for (n, (mut par, after, info, at)) in loops.into_iter().enumerate() {
            if let Some(a) = par.arms.first_mut() {
                a.label.get_or_insert_with(|| Ident::synth(format!("omp_for{}", n + 1)));
            }
            let joins = group.as_ref().is_some_and(|(g, _, last, _)| {
                last.nowait
                    && last.static_schedule
                    && info.static_schedule
                    && par.prefix.clauses.is_empty()
                    && same_range(g, &par)
            });
            if joins {
                let (g, g_after, last, _) = group.as_mut().expect("a group");
                let prev = g.arms.last().and_then(|a| a.label.clone());
                let mut arm = par.arms.remove(0);
                if let (Some(p), Some(it)) = (prev, arm.iters.first()) {
                    let text = format!("{}({})", p.name, it.name.name);
                    arm.wait = Some(Opaque { keyword: "wait".into(), text, span: arm.span });
                }
                g.arms.push(arm);
                g_after.extend(after);
                *last = info;
                continue;
            }
            if let Some((last, _, prev, _)) = &group {
                if prev.nowait {
                    // A `nowait` loop whose successor may start iterations it has not finished.
                    let kw = last.keyword;
                    self.unsupported("`nowait` on an `omp for` loop not followed by a loop over the same range with `schedule(static)` on both", kw);
                }
            }
            if let Some((g, g_after, _, gs)) = group.take() {
                out.push(Stmt { kind: StmtKind::Par(g), span: gs });
                out.extend(g_after);
            }
            group = Some((par, after, info, at));
        }
        if let Some((g, g_after, _, gs)) = group.take() {
            out.push(Stmt { kind: StmtKind::Par(g), span: gs });
            out.extend(g_after);
        }
        Stmt { kind: StmtKind::Block(Block { stmts: out, span }), span }
    }

    /// The pragma that ends right before offset `at`, with only white space between.
    fn pragma_before(&self, at: usize) -> Option<usize> {
        self.prep.pragmas.iter().position(|p| {
            p.end() <= at && self.src.get(p.end()..at).is_some_and(|gap| gap.trim().is_empty())
        })
    }

    /// The text of pragma `k` after `#pragma`.
    fn pragma_text(&self, k: usize) -> &str {
        let line = self.prep.pragmas[k].text(self.src).trim_start();
        line.trim_start_matches('#').trim_start().trim_start_matches("pragma").trim()
    }

    /// Report every OpenMP directive no construct took into account.
    pub(super) fn unused_pragmas(&mut self) {
        for k in 0..self.prep.pragmas.len() {
            if self.pragma_used[k] || omp_words(self.pragma_text(k)).is_none() {
                continue;
            }
            let text = self.pragma_text(k).split_whitespace().collect::<Vec<_>>().join(" ");
            self.diags.push(
                Diagnostic::error("A0014", format!("the OpenMP directive `#pragma {text}` is not supported in C/CUDA input"))
                    .with_primary(self.prep.pragmas[k], "not supported")
                    .with_help("only `#pragma omp parallel for` (with private, shared, schedule, num_threads or default clauses) right before a `for` loop with an iteration contract is read, as that loop's parallel block; other directives change what the code means and are not modelled"),
            );
        }
    }
}

/// The words of an OpenMP pragma after `omp` (a clause with its parenthesised arguments is one
/// word), or `None` for a pragma of another tool.
fn omp_words(text: &str) -> Option<Vec<String>> {
    let rest = text.strip_prefix("omp")?;
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in rest.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            c if c.is_whitespace() && depth == 0 => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            ',' if depth == 0 => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    Some(words)
}

/// `for` followed only by clauses an `omp for` in a region may have.
fn region_for(words: &[String]) -> bool {
    let [first, clauses @ ..] = words else { return false };
    first == "for"
        && clauses.iter().all(|c| {
            let name = c.split('(').next().unwrap_or_default().trim();
            FOR_CLAUSES.contains(&name)
        })
}

/// Whether two single-arm loop blocks range over the same bounds (as written).
fn same_range(a: &Par, b: &Par) -> bool {
    let bounds = |p: &Par| {
        p.arms
            .first()
            .and_then(|a| a.iters.first())
            .map(|it| (print_expr(&it.lo, Dialect::V2), print_expr(&it.hi, Dialect::V2)))
    };
    matches!((bounds(a), bounds(b)), (Some(x), Some(y)) if x == y)
}

/// `parallel for` followed only by neutral clauses.
fn parallel_for(words: &[String]) -> bool {
    let [first, second, clauses @ ..] = words else { return false };
    first == "parallel"
        && second == "for"
        && clauses.iter().all(|c| {
            let name = c.split('(').next().unwrap_or_default().trim();
            NEUTRAL_CLAUSES.contains(&name)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_clauses_with_their_arguments() {
        assert_eq!(
            omp_words("omp parallel for private(i, j) schedule(static)").unwrap(),
            ["parallel", "for", "private(i, j)", "schedule(static)"]
        );
        assert!(omp_words("unroll 4").is_none());
        assert!(omp_words("ompx").is_none());
    }

    #[test]
    fn only_neutral_clauses_keep_a_parallel_for() {
        let w = |s: &str| omp_words(s).unwrap();
        assert!(parallel_for(&w("omp parallel for")));
        assert!(parallel_for(&w("omp parallel for num_threads(4) private(i) shared(a)")));
        assert!(!parallel_for(&w("omp parallel for reduction(+:s)")));
        assert!(!parallel_for(&w("omp parallel for collapse(2)")));
        assert!(!parallel_for(&w("omp for")));
        assert!(!parallel_for(&w("omp parallel")));
    }
}

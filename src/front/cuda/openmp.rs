//! OpenMP directives in C input.
//!
//! `#pragma omp parallel for` before a loop with an iteration contract runs its iterations as
//! threads: exactly the parallel block that the contract already makes of the loop
//! (`iteration.rs`). Its clauses `private`, `shared`, `schedule`, `num_threads` and `default`
//! say nothing that block does not: each thread has its own loop variable and locals, and
//! shares the memory its contract grants. VerCors reads such loops the same way.
//!
//! Every other OpenMP directive changes what the code means in ways not modelled here (a
//! `parallel` region run by a team, `sections`, `simd`, `nowait`, reductions), and a loop
//! marked parallel without an iteration contract would be verified as if it ran sequentially.
//! They are refused (A0014), never ignored. Pragmas of other tools (`#pragma unroll`,
//! `#pragma once`) do not change the meaning and stay ignored.

use super::convert::Conv;
use crate::diag::Diagnostic;
use crate::front::ast::*;

/// Clauses of `omp parallel for` that change nothing the parallel block does not say.
const NEUTRAL_CLAUSES: [&str; 5] = ["private", "shared", "schedule", "num_threads", "default"];

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
        }
        st
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

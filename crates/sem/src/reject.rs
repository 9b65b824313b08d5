//! Why no input could be found (semantics.md §10.2 stage 4): the candidates the entry
//! precondition rejected, counted per clause, so that an inconclusive verdict can name the
//! clause that rejected most of them.

use super::{RunResult, Status};
use std::collections::BTreeMap;

/// Rejected input candidates of one method.
#[derive(Clone, Debug, Default)]
pub struct Rejections {
    /// Candidates drawn (accepted or not).
    pub candidates: usize,
    /// Rejections per precondition clause, by the clause's byte range.
    pub by_clause: BTreeMap<(u32, u32), usize>,
    /// Rejections with no clause to point at.
    pub unattributed: usize,
    /// Generation itself failed (the shape part of the precondition is unsatisfiable).
    pub unsat: Option<String>,
}

impl Rejections {
    /// Count one candidate run.
    pub fn add(&mut self, r: &RunResult) {
        self.candidates += 1;
        if r.status != Status::InvalidInput {
            return;
        }
        match r.rejected_by {
            Some(s) => *self.by_clause.entry((s.lo, s.hi)).or_default() += 1,
            None => self.unattributed += 1,
        }
    }

    /// Add another method's or input's counts.
    pub fn merge(&mut self, o: &Rejections) {
        self.candidates += o.candidates;
        for (s, n) in &o.by_clause {
            *self.by_clause.entry(*s).or_default() += n;
        }
        self.unattributed += o.unattributed;
        if self.unsat.is_none() {
            self.unsat.clone_from(&o.unsat);
        }
    }

    pub fn rejected(&self) -> usize {
        self.by_clause.values().sum::<usize>() + self.unattributed
    }

    /// The clause that rejected most candidates (the first in source order on a tie), with its
    /// count.
    pub fn worst(&self) -> Option<((u32, u32), usize)> {
        let mut best: Option<((u32, u32), usize)> = None;
        for (s, n) in &self.by_clause {
            if best.is_none_or(|(_, b)| *n > b) {
                best = Some((*s, *n));
            }
        }
        best
    }

    /// "no input satisfied the precondition: `CLAUSE` (line L) rejected N of M candidates", or
    /// None when nothing was rejected.
    pub fn reason(&self, src: &str) -> Option<String> {
        if let Some(u) = &self.unsat {
            return Some(format!("no input could be generated: {u}"));
        }
        let rejected = self.rejected();
        if rejected == 0 {
            return None;
        }
        let mut s =
            format!("the precondition rejected {rejected} of {} input candidates", self.candidates);
        if let Some((_, n)) = self.worst().filter(|(s, _)| s.0 == s.1) {
            // A clause with no text of its own: a CUDA kernel's launch precondition, which the
            // front end derives from the threads' contract (all threads' clauses at once).
            s.push_str(&format!(
                "; most often the launch's precondition, what all threads of the kernel hold \
                 together ({n} rejections: do two threads' permissions claim more than one \
                 write of a cell?)"
            ));
        } else if let Some((span, n)) = self.worst() {
            let (lo, hi) = (span.0 as usize, span.1 as usize);
            let text = src.get(lo..hi).unwrap_or("?");
            let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let text = if text.chars().count() > 80 {
                format!("{}…", text.chars().take(79).collect::<String>())
            } else {
                text
            };
            let line = src.get(..lo).map_or(0, |p| p.matches('\n').count()) + 1;
            s.push_str(&format!("; most often `{text}` (line {line}, {n} rejections)"));
        }
        s.push_str(" (give inputs that satisfy it with --input FILE or --set NAME=V, or weaken the precondition)");
        Some(s)
    }
}

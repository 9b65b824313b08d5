//! Dynamic data-race detection (semantics.md §6): shadow memory of access records, compared by
//! thread path and barrier epoch.

use super::value::{FxMap, Loc};
use crate::front::Span;
use std::collections::BTreeSet;
use std::rc::Rc;

/// One level of a thread path: which launch, which group (block) of it, which thread, and the
/// group's epoch when the thread at this level spawned the next level (unused for the leaf).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathElem {
    pub launch: u32,
    pub group: u32,
    pub tid: u32,
    pub epoch: u32,
}

#[derive(Debug)]
pub struct Path {
    pub elems: Vec<PathElem>,
    /// Human-readable thread name, e.g. `shift[tid=3]`.
    pub desc: String,
}

#[derive(Clone, Debug)]
struct Rec {
    path: Rc<Path>,
    epoch: u32,
    write: bool,
    span: Span,
    atomic: Option<u32>,
}

/// A race found, for the interpreter to turn into a diagnostic.
#[derive(Clone, Debug)]
pub struct RaceReport {
    pub loc: Loc,
    pub first_write: bool,
    pub first_span: Span,
    pub first_thread: String,
    pub second_write: bool,
    pub second_span: Span,
    pub second_thread: String,
    pub epoch: u32,
}

#[derive(Default)]
pub struct RaceDetector {
    shadow: FxMap<Loc, Vec<Rec>>,
    completed: Vec<bool>,
    reported: BTreeSet<(u32, u32, u32, u32)>,
}

impl RaceDetector {
    pub fn launch_started(&mut self, id: u32) {
        let i = id as usize;
        if self.completed.len() <= i {
            self.completed.resize(i + 1, false);
        }
    }

    /// A launch has completed: its threads' accesses now count as the parent's. For a top-level
    /// launch the parent is the host, whose accesses never race, so everything is dropped.
    pub fn launch_completed(&mut self, id: u32, top_level: bool) {
        if top_level {
            self.shadow.clear();
            for c in &mut self.completed {
                *c = false;
            }
        } else if let Some(c) = self.completed.get_mut(id as usize) {
            *c = true;
        }
    }
}

fn effective_len(completed: &[bool], p: &Path) -> usize {
    p.elems
        .iter()
        .position(|e| completed.get(e.launch as usize).copied().unwrap_or(false))
        .unwrap_or(p.elems.len())
}

fn concurrent(completed: &[bool], a: &Path, ea: u32, b: &Path, eb: u32) -> bool {
    {
        let (na, nb) = (effective_len(completed, a), effective_len(completed, b));
        for k in 0..na.min(nb) {
            let (x, y) = (a.elems[k], b.elems[k]);
            if x.launch == y.launch && x.group == y.group && x.tid == y.tid {
                continue;
            }
            if x.launch != y.launch {
                return false;
            }
            if x.group != y.group {
                return true;
            }
            let ex = if k + 1 == a.elems.len() { ea } else { x.epoch };
            let ey = if k + 1 == b.elems.len() { eb } else { y.epoch };
            return ex == ey;
        }
        false
    }
}

impl RaceDetector {
    /// Record an access; returns a report for a newly found racing pair.
    #[allow(clippy::too_many_arguments)]
    pub fn access(
        &mut self,
        loc: Loc,
        write: bool,
        span: Span,
        path: &Rc<Path>,
        epoch: u32,
        atomic: Option<u32>,
    ) -> Option<RaceReport> {
        let recs = self.shadow.entry(loc).or_default();
        let mut found = None;
        let mut same = None;
        for (i, r) in recs.iter().enumerate() {
            if Rc::ptr_eq(&r.path, path) {
                if r.write == write {
                    same = Some(i);
                }
                continue;
            }
            if !(r.write || write) || found.is_some() {
                continue;
            }
            if atomic.is_some() && r.atomic == atomic {
                continue;
            }
            if concurrent(&self.completed, &r.path, r.epoch, path, epoch) {
                let key = (r.span.lo, r.span.hi, span.lo, span.hi);
                if self.reported.insert(key) {
                    found = Some(RaceReport {
                        loc,
                        first_write: r.write,
                        first_span: r.span,
                        first_thread: r.path.desc.clone(),
                        second_write: write,
                        second_span: span,
                        second_thread: path.desc.clone(),
                        epoch,
                    });
                }
            }
        }
        let rec = Rec {
            path: path.clone(),
            epoch,
            write,
            span,
            atomic,
        };
        match same {
            Some(i) => recs[i] = rec,
            None => recs.push(rec),
        }
        found
    }
}

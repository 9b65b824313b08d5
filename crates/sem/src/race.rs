//! Dynamic data-race detection (semantics.md §6): shadow memory of access records, compared by
//! thread path and barrier epoch.
//!
//! Threads are identified by a path id into a table kept here, so that a record is a small
//! `Copy` value. Shadow memory is dense: one cell per array element or object field, in pages
//! that are allocated on first access. Completing a top-level launch forgets every record by
//! bumping a generation counter instead of clearing the pages.

use super::value::Loc;
use front::Span;
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

/// Names and ranges of a `par` arm's iterators, shared by all its threads.
#[derive(Debug)]
pub struct ThreadNames {
    pub label: String,
    pub iters: Vec<String>,
    /// `[lo, hi)` of each iterator, in the order of `iters`.
    pub ranges: Vec<(i64, i64)>,
}

/// A thread's place in the launch tree. Threads of one launch share the levels above them
/// (`prefix`), so that creating a thread allocates nothing here.
#[derive(Debug)]
pub struct Path {
    /// The levels of the enclosing threads, outermost first, each with the epoch at which it
    /// spawned the next level.
    pub prefix: Rc<[PathElem]>,
    /// This thread's level; `leaf.tid` is its index in the arm.
    pub leaf: PathElem,
    pub names: Rc<ThreadNames>,
}

/// The iterator values of thread `t` of a `par` arm with iterator ranges `ranges` (the last
/// iterator varies fastest).
pub fn thread_vals(ranges: &[(i64, i64)], t: usize, vals: &mut [i64]) {
    let mut rem = t;
    for k in (0..ranges.len()).rev() {
        let ext = (ranges[k].1 - ranges[k].0).max(1) as usize;
        vals[k] = ranges[k].0 + (rem % ext) as i64;
        rem /= ext;
    }
}

impl Path {
    /// Number of levels.
    pub fn len(&self) -> usize {
        self.prefix.len() + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    /// Level `k` (0: outermost).
    pub fn elem(&self, k: usize) -> PathElem {
        self.prefix.get(k).copied().unwrap_or(self.leaf)
    }

    /// All levels; the last one is the leaf with the given epoch (for a child's prefix).
    pub fn with_epoch(&self, epoch: u32) -> Rc<[PathElem]> {
        let mut v = self.prefix.to_vec();
        v.push(PathElem { epoch, ..self.leaf });
        v.into()
    }

    /// Human-readable thread name, e.g. `shift[tid=3]`.
    pub fn desc(&self) -> String {
        let mut vals = vec![0; self.names.ranges.len()];
        thread_vals(&self.names.ranges, self.leaf.tid as usize, &mut vals);
        let mut s = format!("{}[", self.names.label);
        for (k, (n, v)) in self.names.iters.iter().zip(&vals).enumerate() {
            if k > 0 {
                s.push_str(", ");
            }
            s.push_str(&format!("{n}={v}"));
        }
        s.push(']');
        s
    }
}

/// Id of a thread path in the detector's table.
pub type PathId = u32;

const NO_ATOMIC: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Rec {
    path: PathId,
    epoch: u32,
    span: Span,
    atomic: u32,
    write: bool,
}

const INLINE: usize = 2;

/// The records of one location: the first two inline, the rest spilled (rare: a location
/// touched by many threads in one barrier interval is usually a race already).
#[derive(Clone, Debug)]
struct Cell {
    gen: u32,
    n: u32,
    inline: [Rec; INLINE],
    more: Vec<Rec>,
}

const EMPTY_REC: Rec =
    Rec { path: 0, epoch: 0, span: Span::DUMMY, atomic: NO_ATOMIC, write: false };

impl Default for Cell {
    fn default() -> Cell {
        Cell { gen: 0, n: 0, inline: [EMPTY_REC; INLINE], more: Vec::new() }
    }
}

impl Cell {
    fn get(&self, i: usize) -> &Rec {
        if i < INLINE {
            &self.inline[i]
        } else {
            &self.more[i - INLINE]
        }
    }
    fn set(&mut self, i: usize, r: Rec) {
        if i < INLINE {
            self.inline[i] = r;
        } else {
            self.more[i - INLINE] = r;
        }
    }
    fn push(&mut self, r: Rec) {
        let n = self.n as usize;
        if n < INLINE {
            self.inline[n] = r;
        } else {
            self.more.push(r);
        }
        self.n += 1;
    }
}

const PAGE: usize = 64;

#[derive(Default)]
struct ObjShadow {
    pages: Vec<Option<Box<[Cell]>>>,
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

pub struct RaceDetector {
    paths: Vec<Path>,
    shadow: Vec<ObjShadow>,
    /// Cells whose generation differs are empty.
    gen: u32,
    completed: Vec<bool>,
    reported: BTreeSet<(u32, u32, u32, u32)>,
}

impl Default for RaceDetector {
    fn default() -> Self {
        RaceDetector {
            paths: Vec::new(),
            shadow: Vec::new(),
            gen: 1,
            completed: Vec::new(),
            reported: BTreeSet::new(),
        }
    }
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
            self.gen = self.gen.wrapping_add(1);
            if self.gen == 0 {
                // After 2^32 launches a stale cell could look current again: really clear.
                self.shadow.clear();
                self.gen = 1;
            }
            for c in &mut self.completed {
                *c = false;
            }
        } else if let Some(c) = self.completed.get_mut(id as usize) {
            *c = true;
        }
    }

    /// Register a thread path.
    pub fn add_path(&mut self, p: Path) -> PathId {
        self.paths.push(p);
        (self.paths.len() - 1) as PathId
    }

    pub fn path(&self, id: PathId) -> &Path {
        &self.paths[id as usize]
    }

    pub fn desc(&self, id: PathId) -> String {
        self.paths[id as usize].desc()
    }

    fn effective_len(&self, p: &Path) -> usize {
        (0..p.len())
            .position(|k| self.completed.get(p.elem(k).launch as usize).copied().unwrap_or(false))
            .unwrap_or(p.len())
    }

    fn concurrent(&self, a: &Path, ea: u32, b: &Path, eb: u32) -> bool {
        let (na, nb) = (self.effective_len(a), self.effective_len(b));
        for k in 0..na.min(nb) {
            let (x, y) = (a.elem(k), b.elem(k));
            if x.launch == y.launch && x.group == y.group && x.tid == y.tid {
                continue;
            }
            if x.launch != y.launch {
                return false;
            }
            if x.group != y.group {
                return true;
            }
            let ex = if k + 1 == a.len() { ea } else { x.epoch };
            let ey = if k + 1 == b.len() { eb } else { y.epoch };
            return ex == ey;
        }
        false
    }

    fn cell(&mut self, loc: Loc) -> &mut Cell {
        cell_in(&mut self.shadow, self.gen, loc)
    }

    /// Record an access; returns a report for a newly found racing pair.
    pub fn access(
        &mut self,
        loc: Loc,
        write: bool,
        span: Span,
        path: PathId,
        epoch: u32,
        atomic: Option<u32>,
    ) -> Option<RaceReport> {
        let atomic = atomic.unwrap_or(NO_ATOMIC);
        let rec = Rec { path, epoch, span, atomic, write };
        // Fast path: the location's records are all this thread's own (or all reads when this
        // is a read): one lookup of the cell, updated in place. Otherwise the records are
        // copied out, checked against this access, and the cell is updated after.
        let (recs, same) = {
            let c = self.cell(loc);
            let n = c.n as usize;
            let mut same = None;
            let mut other = false;
            for i in 0..n {
                let r = c.get(i);
                if r.path == path {
                    if r.write == write {
                        same = Some(i);
                    }
                } else if r.write || write {
                    other = true;
                }
            }
            if !other {
                match same {
                    Some(i) => c.set(i, rec),
                    None => c.push(rec),
                }
                return None;
            }
            let recs: Vec<Rec> = (0..n).map(|i| *c.get(i)).collect();
            (recs, same)
        };
        let mut found = None;
        for r in &recs {
            if r.path == path || !(r.write || write) {
                continue;
            }
            if atomic != NO_ATOMIC && r.atomic == atomic {
                continue;
            }
            let (pa, pb) = (&self.paths[r.path as usize], &self.paths[path as usize]);
            if self.concurrent(pa, r.epoch, pb, epoch) {
                let key = (r.span.lo, r.span.hi, span.lo, span.hi);
                if self.reported.insert(key) {
                    found = Some(RaceReport {
                        loc,
                        first_write: r.write,
                        first_span: r.span,
                        first_thread: pa.desc(),
                        second_write: write,
                        second_span: span,
                        second_thread: pb.desc(),
                        epoch,
                    });
                    break;
                }
            }
        }
        let c = self.cell(loc);
        match same {
            Some(i) => c.set(i, rec),
            None => c.push(rec),
        }
        found
    }
}

/// The cell of `loc` in `shadow`, emptied if it is from an older generation than `gen`.
fn cell_in(shadow: &mut Vec<ObjShadow>, gen: u32, loc: Loc) -> &mut Cell {
    let o = loc.obj() as usize;
    if shadow.len() <= o {
        shadow.resize_with(o + 1, ObjShadow::default);
    }
    let sh = &mut shadow[o];
    let i = loc.idx() as usize;
    let (p, k) = (i / PAGE, i % PAGE);
    if sh.pages.len() <= p {
        sh.pages.resize_with(p + 1, || None);
    }
    let page = sh.pages[p].get_or_insert_with(|| vec![Cell::default(); PAGE].into_boxed_slice());
    let c = &mut page[k];
    if c.gen != gen {
        c.gen = gen;
        c.n = 0;
        c.more.clear();
    }
    c
}

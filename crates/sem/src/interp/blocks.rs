//! `goto` and `vec` blocks in the warp machine.
//!
//! * A `goto` jumps to its label, leaving the branches and loops between them (the compiler
//!   has checked that the label is in the `goto`'s construct or one around it). The warp's
//!   lanes run in lock step, so the jump is taken only when every lane that entered the
//!   constructs it leaves is at the `goto`; when lanes have diverged, the run is inconclusive.
//! * A `vec (int j = lo .. hi)` block runs its body for every `j` in lock step: the lane that
//!   reaches it launches one thread per `j`, each with the permissions of that lane (the
//!   iterations are not separate threads of the program: the body only reads and writes
//!   what the lane may), and the race detector sees the iterations as threads, so two of them
//!   that access one location, one writing, are reported.

use super::*;

impl Interp {
    /// `goto` for the active lanes: the pc to continue at.
    pub(super) fn exec_goto(
        &mut self,
        w: &mut Warp,
        pc: usize,
        exits: &[Exit],
        span: Span,
    ) -> Result<usize, Stop> {
        let m = w.mask;
        let n = m.count_ones() as u64;
        self.stmts += n;
        self.spend(n, span)?;
        let dead = self.dead(w);
        let base = w.frames.last().expect("frame").ctl_base;
        let diverged =
            || unsupported("`goto` taken by some lanes of a warp only (the lanes diverged)", span);
        // Check first, then leave: nothing changes when the jump cannot be taken.
        let mut k = w.ctl.len();
        for e in exits {
            if k <= base {
                return Err(unsupported("`goto` out of a construct the warp is not in", span));
            }
            let entered = match (&w.ctl[k - 1], e) {
                (Ctl::Join { saved }, Exit::If) | (Ctl::Loop { saved, .. }, Exit::Loop) => *saved,
                // Lanes of the other branch have yet to run it.
                (Ctl::Else { .. }, Exit::If) => return Err(diverged()),
                _ => return Err(unsupported("`goto` out of a construct the warp is not in", span)),
            };
            if entered & !dead != m {
                return Err(diverged());
            }
            k -= 1;
        }
        for e in exits {
            w.ctl.pop();
            if *e == Exit::Loop {
                for l in lanes_of(m) {
                    self.leave_loop(&mut w.lanes[l]);
                }
            }
        }
        Ok(pc)
    }

    /// A `vec` block reached by lane `pl` of `w` (in method `method`).
    pub(super) fn launch_vec(
        &mut self,
        w: &mut Warp,
        pl: usize,
        v: &VecC,
        method: u32,
    ) -> Result<(), Stop> {
        let (lo, hi) = {
            let (lo, hi) = (self.ev_in_lane(w, pl, &v.lo)?, self.ev_in_lane(w, pl, &v.hi)?);
            (self.as_int(lo, v.span)?, self.as_int(hi, v.span)?)
        };
        let count = hi.saturating_sub(lo).max(0);
        if count > 1 << 22 {
            return Err(unsupported("too many iterations in a `vec` block", v.span));
        }
        if count == 0 {
            return Ok(());
        }
        let launch = self.launches;
        self.launches += 1;
        self.race.launch_started(launch);
        let parent = &w.lanes[pl];
        let fr = parent.frames.last().expect("frame");
        let (store, this, old) = (fr.store.clone(), fr.this.clone(), fr.old.clone());
        let view = parent.holders.last().expect("holder").clone();
        let parent_path = parent.path;
        let names = Rc::new(ThreadNames {
            label: "vec".into(),
            iters: vec![v.name.clone()],
            ranges: vec![(lo, hi)],
        });
        let prefix: Rc<[PathElem]> = match parent_path {
            Some(pp) => self.race.path(pp).with_epoch(w.epoch),
            None => Rc::new([]),
        };
        let group = self.groups;
        self.groups += 1;
        let mut lanes = Vec::with_capacity(count as usize);
        for t in 0..count {
            let mut s = store.clone();
            s[v.slot as usize] = Value::Int(lo + t);
            let leaf = PathElem { launch, group, tid: t as u32, epoch: 0 };
            lanes.push(Lane {
                frames: vec![LaneFrame {
                    store: s,
                    this: this.clone(),
                    result: Value::Null,
                    old: old.clone(),
                    holder_base: 0,
                }],
                holders: vec![view.clone()],
                path: Some(self.race.add_path(Path {
                    prefix: prefix.clone(),
                    leaf,
                    names: names.clone(),
                })),
            });
        }
        // The iterations' copies of the permissions are dropped: the body moves none.
        self.run_group(lanes, method, v.body_pc)?;
        self.race.launch_completed(launch, parent_path.is_none());
        Ok(())
    }

    /// `fold`/`unfold` of an inline predicate (VerCors expands it where it is used, so there
    /// is nothing to fold: the statement asserts that its body, scaled, is held), or of a
    /// scaled predicate, which the interpreter does not run.
    pub(super) fn fold_inline(
        &mut self,
        w: &mut Warp,
        p: &CE,
        span: Span,
        kw: &str,
    ) -> Result<(), Stop> {
        let mut inner = p;
        while let CE::Scale(_, r) = inner {
            inner = r;
        }
        if matches!(inner, CE::Pred { .. }) {
            return Err(unsupported(format!("`{kw}` of a scaled predicate"), span));
        }
        if !has_resource(inner) && !matches!(inner, CE::Let(..)) {
            return Err(unsupported(format!("`{kw}` of a non-predicate"), span));
        }
        let cl = [CClause { e: p.clone(), span, pure: false, simple: false, leaf: None }];
        let what = format!("`{kw}` of an inline predicate");
        for l in lanes_of(w.mask) {
            self.check_lane(w, l, &cl, 0, "R-ASSERT", &what, span)?;
        }
        Ok(())
    }
}

//! Forked threads that wait. A thread forked from host code runs at once on a warp of its own
//! (its `run` frame moved off the forking warp), as far as it can: to its end, or to a `wait`,
//! where it gives its lock back and stops. A stopped thread is woken by a `notify` on the
//! same object, and runs again, holding the lock once more, when the thread running blocks:
//! at a `join` of a thread that has not ended, or at a `wait` of its own. Only one thread
//! runs at a time, and a thread runs until it blocks, which is one of the schedules a real
//! machine may choose. A `join` whose thread cannot end, every thread that could wake it
//! waiting too, is a deadlock of that schedule (R-DEADLOCK).

use super::sync::lock_section;
use super::*;

/// A thread stopped at `wait`: its thread object, its warp, the object whose lock it waits
/// for, and whether a `notify` on that object has come since.
pub(super) struct Waiting {
    obj: u32,
    warp: Warp,
    on: u32,
    woken: bool,
}

impl Interp {
    /// Move the `run` frame that `fork` of `obj` just entered on lane `l` of `w` to a warp of
    /// its own, and run it; the forking thread holds `running(obj)` from here.
    pub(super) fn spawn(&mut self, w: &mut Warp, l: usize, obj: u32) -> Result<(), Stop> {
        let wf = w.frames.pop().expect("the run frame");
        let mut lf = w.lanes[l].frames.pop().expect("the run lane frame");
        let h = w.lanes[l].holders.pop().expect("the run holder");
        lf.holder_base = 1;
        let running = self.token_loc(self.tokens().running, obj);
        w.lanes[l].holders.last_mut().expect("holder").add(running, &Amt::write());
        let tw = Warp {
            lanes: vec![Lane { frames: vec![lf], holders: vec![Holder::default(), h], path: None }],
            frames: vec![WFrame { ctl_base: 0, call_mask: 1, ..wf }],
            ctl: Vec::new(),
            mask: 1,
            finished: 0,
            epoch: w.epoch,
            atomic: None,
            kernel: false,
            pool: Holder::default(),
            cost: Default::default(),
            sigma: 0,
            thread: true,
            regions: Vec::new(),
        };
        self.run_thread(tw, obj)
    }

    /// Run thread `obj` on its warp until it ends or waits.
    fn run_thread(&mut self, mut tw: Warp, obj: u32) -> Result<(), Stop> {
        if let WarpStop::Wait(on) = self.run_warp(&mut tw, None)? {
            self.waiting.push(Waiting { obj, warp: tw, on, woken: false });
        }
        Ok(())
    }

    /// A `notify` on `obj`: every thread waiting on it is woken.
    pub(super) fn wake(&mut self, obj: u32) {
        for t in self.waiting.iter_mut().filter(|t| t.on == obj) {
            t.woken = true;
        }
    }

    /// Is thread `obj` stopped at a `wait`?
    pub(super) fn is_waiting(&self, obj: u32) -> bool {
        self.waiting.iter().any(|t| t.obj == obj)
    }

    /// Run woken threads, the first woken whose lock is free first, each until it ends or
    /// waits again, until thread `until` has ended (with `None`: until none can run).
    pub(super) fn run_woken(&mut self, until: Option<u32>) -> Result<(), Stop> {
        loop {
            if until.is_some_and(|t| !self.is_waiting(t)) {
                return Ok(());
            }
            let Some(i) = (0..self.waiting.len())
                .find(|&i| self.waiting[i].woken && self.lock_free(self.waiting[i].on))
            else {
                return Ok(());
            };
            let Waiting { obj, mut warp, on, .. } = self.waiting.remove(i);
            // The thread takes its lock back where `wait` left it.
            let span = warp.frames.last().map_or(Span::DUMMY, |f| f.span);
            self.acquire(&mut warp, 0, on, span)?;
            self.run_thread(warp, obj)?;
        }
    }

    /// `lock o` opening a lock region in a thread's own warp: taken here, and given back at the
    /// region's end, so that a `wait` inside can stop the thread (a host's region runs as one
    /// step instead, `lock_region`).
    pub(super) fn thread_lock(
        &mut self,
        w: &mut Warp,
        obj: &CE,
        end_pc: usize,
        span: Span,
        depth: usize,
    ) -> Result<(), Stop> {
        self.stmts += 1;
        let id = self.sync_object(w, 0, obj, SyncOp::Lock, span)?;
        self.acquire(w, 0, id, span)?;
        w.regions.push((depth, end_pc, id, w.atomic));
        w.atomic = Some(lock_section(id));
        Ok(())
    }

    /// The end of a lock region a thread opened with [`Self::thread_lock`]: the `unlock`.
    pub(super) fn thread_unlock(
        &mut self,
        w: &mut Warp,
        depth: usize,
        pc: usize,
        span: Span,
    ) -> Result<(), Stop> {
        let Some(&(d, end, id, saved)) = w.regions.last() else { return Ok(()) };
        if (d, end) != (depth, pc) {
            return Ok(());
        }
        w.regions.pop();
        w.atomic = saved;
        if w.mask != 0 {
            self.release(w, 0, id, span, "unlock")?;
        }
        Ok(())
    }
}

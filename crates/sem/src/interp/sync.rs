//! Locks and threads, in the pattern VerCors documents ("Locks and threads"; the Viper
//! encoding in `viper/encode/locks.rs` follows the same rules):
//!
//! * An object of a class with `resource lock_invariant() = R;` has a lock. Its constructor
//!   ends by giving `R` to the lock (the invariant is *established*); objects that exist
//!   before the entry call (the inputs) have theirs established from the environment.
//!   `lock o` takes `R`'s permissions and the token `held(o)`; `unlock o` gives both back, `R`
//!   checked (R-LOCK-INV); `wait o` gives them back and takes them again (a thread woken up
//!   holds whatever the invariant says); `notify o` needs the lock. Taking a lock this thread
//!   holds is a deadlock, releasing one it does not hold an error (R-LOCK).
//! * Threads run one at a time: `fork t` runs `t.run()` at once (its precondition and the
//!   token `idle(t)` are taken, its postcondition is kept for `join`, and the forking thread
//!   gets `running(t)`), to its end or, forked from host code, to a `wait`, where it stops
//!   until notified (`threads`); `join t` first runs woken threads until `t` ends (R-DEADLOCK
//!   when it cannot), then trades `running(t)` for the postcondition and `idle(t)` (R-THREAD
//!   when the tokens are missing). A lock held by another thread is therefore one whose holder
//!   cannot run until this one blocks: the run is inconclusive.
//!   Forked threads run on the forking lane (from host code, on a warp of their own), and
//!   their accesses are not recorded for the race detector: only permissions keep them apart (with `--checks` without `perms`, races
//!   between threads go unnoticed).

use super::*;

/// A lock: the invariant's permissions while it is free, and who holds it.
#[derive(Default)]
pub(super) struct LockState {
    inv: Holder,
    held_by: Option<ThreadKey>,
}

/// A thread: the lane's path (`None` on the host) and the serial number of the `fork` that
/// started it (0 for the entry call and `par` threads).
type ThreadKey = (Option<PathId>, u32);

/// The holder of a lock that the entry call's caller holds.
const HELD_ELSEWHERE: Option<ThreadKey> = Some((None, u32::MAX));

/// The race detector's atomic-section id of the lock of object `obj` (apart from the ids of
/// `invariant` blocks, which count up from 0).
pub(super) fn lock_section(obj: u32) -> u32 {
    (1 << 31) | obj
}

impl Interp {
    fn thread_key(w: &Warp, l: usize) -> ThreadKey {
        (w.lanes[l].path, w.frames.iter().rev().map(|f| f.fork).find(|&f| f != 0).unwrap_or(0))
    }

    /// The location of token `pred` (one of [`Tokens`]) of object `obj`.
    pub(super) fn token_loc(&mut self, pred: u32, obj: u32) -> Loc {
        let key = (obj, pred, Vec::new());
        let n = self.pred_store.len() as u32;
        let id = *self.preds.entry(key).or_insert(n);
        if id == n {
            self.pred_store.push(Holder::default());
        }
        Loc::new(PRED_SPACE, id)
    }

    pub(super) fn tokens(&self) -> Tokens {
        self.prog.tokens.unwrap_or(Tokens { held: u32::MAX, idle: u32::MAX, running: u32::MAX })
    }

    fn class_of(&self, obj: u32) -> Option<u32> {
        match self.heap.objs.get(obj as usize) {
            Some(HObj::Object { class, .. }) => Some(*class),
            _ => None,
        }
    }

    fn object_name(&self, obj: u32) -> String {
        match self.class_of(obj) {
            Some(c) => format!("{}#{obj}", self.prog.classes[c as usize].name),
            None => format!("#{obj}"),
        }
    }

    /// The object a `lock`/`fork`/… operand denotes in lane `l`.
    pub(super) fn sync_object(
        &mut self,
        w: &mut Warp,
        l: usize,
        obj: &CE,
        op: SyncOp,
        span: Span,
    ) -> Result<u32, Stop> {
        match self.ev_in_lane(w, l, obj)? {
            Value::Ref(id) if self.class_of(id).is_some() => Ok(id),
            Value::Null => Err(err(
                "R-NULL",
                format!("`{}` of null", op.keyword()),
                span,
                "the object is null",
            )),
            other => Err(inconclusive(
                "R-TYPE",
                format!("`{}` of a value that is not an object: {other:?}", op.keyword()),
                span,
            )),
        }
    }

    /// Move `obj`'s lock invariant from `src` into a new holder (returned, with whether all of
    /// it held), reporting a false part with `code` and a missing permission as R-PERM-TRANSFER,
    /// as `what` says.
    #[allow(clippy::too_many_arguments)]
    fn exhale_lock_inv(
        &mut self,
        obj: u32,
        src: &mut Holder,
        code: &str,
        what: &str,
        site: Span,
        who: Who,
        from_env: bool,
    ) -> Result<(Holder, bool), Stop> {
        let prog = self.prog.clone();
        let Some(class) = self.class_of(obj) else {
            return Ok((Holder::default(), true));
        };
        let Some((pred, cl)) = &prog.classes[class as usize].lock_inv else {
            return Ok((Holder::default(), true));
        };
        let mut store = vec![Value::Null; prog.methods[*pred as usize].nslots as usize];
        let (this, null) = (Value::Ref(obj), Value::Null);
        let mut env = Env::contract(&mut store, &this, &null, None);
        let mut x = Xfer::new(Mode::Exhale, std::mem::take(src), Holder::default());
        x.src_is_env = from_env;
        let rep = Report { code_pure: code, code_perm: "R-PERM-TRANSFER", what, site, who };
        let r = self.clauses(cl, &mut env, &mut x, &rep);
        *src = x.src;
        let ok = r?;
        Ok((x.dst, ok))
    }

    /// Before the entry call: thread objects of the input are idle (the environment holds
    /// their `idle` tokens, for a precondition that asks for them).
    pub(super) fn input_tokens(&mut self) {
        let t = self.tokens();
        for obj in 0..self.heap.objs.len() as u32 {
            let Some(class) = self.class_of(obj) else { continue };
            if self.prog.classes[class as usize].run.is_some() {
                let loc = self.token_loc(t.idle, obj);
                self.env_holder.add(loc, &Amt::write());
            }
        }
    }

    /// After the entry precondition: the objects of the input have been constructed, so the
    /// lock of each holds its invariant, taken from what the environment has left. Where the
    /// precondition took part of it, the caller is in the middle of holding the lock: it stays
    /// taken (by a thread that is not this one). False (with `pre_rejected` set) when an
    /// invariant does not hold for the input.
    pub(super) fn input_locks(&mut self) -> Result<bool, Stop> {
        for obj in 0..self.heap.objs.len() as u32 {
            let Some(class) = self.class_of(obj) else { continue };
            if self.prog.classes[class as usize].lock_inv.is_none() {
                continue;
            }
            let before = (self.errors.len(), self.suppressed);
            let saved = self.env_holder.clone();
            let mut env = std::mem::take(&mut self.env_holder);
            let what = format!("lock invariant of input {}", self.object_name(obj));
            let mut x: Option<bool> = None;
            let r = self.exhale_lock_inv(
                obj,
                &mut env,
                "R-LOCK-INV",
                &what,
                Span::DUMMY,
                Who::Text("the input"),
                true,
            );
            if let Ok((_, false)) = &r {
                // Missing permissions (the precondition's) or a false pure part?
                x = Some(self.errors[before.0..].iter().any(|d| d.code == "R-PERM-TRANSFER"));
            }
            self.env_holder = env;
            let (inv, ok) = r?;
            if ok {
                self.locks.insert(obj, LockState { inv, held_by: None });
                continue;
            }
            let first = self.errors[before.0..].iter().find_map(|d| d.primary_span());
            self.errors.truncate(before.0);
            self.suppressed = before.1;
            self.env_holder = saved;
            if x == Some(true) {
                self.locks
                    .insert(obj, LockState { inv: Holder::default(), held_by: HELD_ELSEWHERE });
                continue;
            }
            self.pre_rejected = first;
            return Ok(false);
        }
        Ok(true)
    }

    /// At the end of a constructor of `obj` (before its postcondition): the lock invariant goes
    /// from the constructor's holder to the lock.
    pub(super) fn ctor_epilogue(
        &mut self,
        obj: &Value,
        frame_h: &mut Holder,
        site: Span,
        who: Who,
    ) -> Result<(), Stop> {
        let Value::Ref(obj) = *obj else { return Ok(()) };
        let Some(class) = self.class_of(obj) else { return Ok(()) };
        if self.prog.classes[class as usize].lock_inv.is_none() {
            return Ok(());
        }
        let what =
            format!("lock invariant of {} at the end of its constructor", self.object_name(obj));
        let (inv, _) = self.exhale_lock_inv(obj, frame_h, "R-LOCK-INV", &what, site, who, false)?;
        self.locks.insert(obj, LockState { inv, held_by: None });
        Ok(())
    }

    /// After a constructor of `obj` returns to `caller`: a thread object starts idle.
    pub(super) fn ctor_tokens(&mut self, obj: &Value, caller: &mut Holder) {
        let Value::Ref(obj) = *obj else { return };
        let Some(class) = self.class_of(obj) else { return };
        if self.prog.classes[class as usize].run.is_some() {
            let loc = self.token_loc(self.tokens().idle, obj);
            caller.add(loc, &Amt::write());
        }
    }

    /// A new object of a class without a constructor, whose fields lane `l` holds.
    pub(super) fn new_without_ctor(
        &mut self,
        w: &mut Warp,
        l: usize,
        obj: u32,
        site: Span,
    ) -> Result<(), Stop> {
        let who = w.lanes[l].who();
        let top = w.lanes[l].holders.last_mut().expect("holder");
        let mut h = std::mem::take(top);
        let r = self.ctor_epilogue(&Value::Ref(obj), &mut h, site, who);
        self.ctor_tokens(&Value::Ref(obj), &mut h);
        *w.lanes[l].holders.last_mut().expect("holder") = h;
        r
    }

    /// `lock`, `unlock`, `wait`, `notify`, `fork` or `join` for the active lanes; `Some(o)` when
    /// this thread's own warp stops at a `wait` on `o` (see `threads`).
    pub(super) fn exec_sync(
        &mut self,
        w: &mut Warp,
        op: SyncOp,
        obj: &CE,
        span: Span,
    ) -> Result<Option<u32>, Stop> {
        let m = w.mask;
        self.stmts += m.count_ones() as u64;
        if op == SyncOp::Fork {
            self.fork(w, obj, span)?;
            return Ok(None);
        }
        for l in lanes_of(m) {
            let id = self.sync_object(w, l, obj, op, span)?;
            if matches!(op, SyncOp::Lock | SyncOp::Unlock) && w.lanes[l].path.is_some() {
                // Threads of one warp run in lock step: a lock they contend for is only run
                // when the region is one block (see `lock_region`).
                return Err(unsupported(
                    format!(
                        "`{}` in a `par` thread without its `{}` in the same block",
                        op.keyword(),
                        if op == SyncOp::Lock { "unlock" } else { "lock" }
                    ),
                    span,
                ));
            }
            match op {
                SyncOp::Lock => self.acquire(w, l, id, span)?,
                SyncOp::Unlock => self.release(w, l, id, span, "unlock")?,
                SyncOp::Wait => {
                    // Give the lock away and take it again: another thread may have run in
                    // between, so what the invariant does not protect may have changed, and
                    // the invariant is all that is known of what it protects. A thread on a
                    // warp of its own stops here; another lets the woken threads run first.
                    self.release(w, l, id, span, "wait")?;
                    if w.thread {
                        return Ok(Some(id));
                    }
                    // When no other thread can run, this one wakes up at once (a spurious
                    // wake-up, which Java's `wait` allows and the loop around it must bear).
                    self.run_woken(None)?;
                    self.acquire(w, l, id, span)?;
                }
                SyncOp::Notify => {
                    if self.locks.get(&id).and_then(|s| s.held_by) != Some(Self::thread_key(w, l)) {
                        let d = Diagnostic::error(
                            "R-LOCK",
                            format!(
                                "`notify` on {} without holding its lock",
                                self.object_name(id)
                            ),
                        )
                        .with_primary(span, "the lock is not held here");
                        self.report(d);
                    }
                    self.wake(id);
                }
                SyncOp::Join => self.join(w, l, id, span)?,
                SyncOp::Fork => unreachable!("handled above"),
            }
        }
        Ok(None)
    }

    /// Is the lock of `obj` free (or not a lock yet)?
    pub(super) fn lock_free(&self, obj: u32) -> bool {
        self.locks.get(&obj).is_none_or(|s| s.held_by.is_none())
    }

    /// Lane `l` takes the lock of `obj`: the invariant's permissions and `held(obj)`.
    pub(super) fn acquire(
        &mut self,
        w: &mut Warp,
        l: usize,
        obj: u32,
        span: Span,
    ) -> Result<(), Stop> {
        let me = Self::thread_key(w, l);
        let has_inv =
            self.class_of(obj).is_some_and(|c| self.prog.classes[c as usize].lock_inv.is_some());
        if !self.locks.contains_key(&obj) {
            if has_inv {
                return Err(unsupported(
                    format!(
                        "`lock` of {} before its constructor has established its lock invariant",
                        self.object_name(obj)
                    ),
                    span,
                ));
            }
            // No invariant: the lock protects nothing.
            self.locks.insert(obj, LockState::default());
        }
        match self.locks.get(&obj).and_then(|s| s.held_by) {
            Some(k) if k == me => {
                return Err(err(
                    "R-LOCK",
                    format!(
                        "`lock` of {}, whose lock this thread holds already: the thread deadlocks",
                        self.object_name(obj)
                    ),
                    span,
                    "locked again here",
                ));
            }
            Some(_) => {
                return Err(unsupported(
                    format!(
                        "`lock` of {}, whose lock another thread holds: the interpreter runs threads one at a time",
                        self.object_name(obj)
                    ),
                    span,
                ));
            }
            None => {}
        }
        let st = self.locks.get_mut(&obj).expect("lock state");
        st.held_by = Some(me);
        let mut inv = std::mem::take(&mut st.inv);
        let held = self.token_loc(self.tokens().held, obj);
        let top = w.lanes[l].holders.last_mut().expect("holder");
        inv.drain_into(top);
        top.add(held, &Amt::write());
        Ok(())
    }

    /// Lane `l` gives the lock of `obj` back: `held(obj)` and the invariant, which must hold.
    pub(super) fn release(
        &mut self,
        w: &mut Warp,
        l: usize,
        obj: u32,
        span: Span,
        kw: &str,
    ) -> Result<(), Stop> {
        let me = Self::thread_key(w, l);
        if self.locks.get(&obj).and_then(|s| s.held_by) != Some(me) {
            return Err(err(
                "R-LOCK",
                format!(
                    "`{kw}` of {}, whose lock this thread does not hold",
                    self.object_name(obj)
                ),
                span,
                "the lock is not held here",
            ));
        }
        let held = self.token_loc(self.tokens().held, obj);
        let who = w.lanes[l].who();
        let mut top = std::mem::take(w.lanes[l].holders.last_mut().expect("holder"));
        if !top.take(held, &Amt::write()) {
            let d = Diagnostic::error(
                "R-LOCK",
                format!("`{kw}` of {} without the token `held`", self.object_name(obj)),
            )
            .with_primary(span, "`held` was given away before this point");
            self.report(d);
        }
        let what = format!("lock invariant of {} at `{kw}`", self.object_name(obj));
        let r = self.exhale_lock_inv(obj, &mut top, "R-LOCK-INV", &what, span, who, false);
        *w.lanes[l].holders.last_mut().expect("holder") = top;
        let (inv, _) = r?;
        let st = self.locks.get_mut(&obj).expect("lock state");
        st.inv = inv;
        st.held_by = None;
        Ok(())
    }

    /// A lock region `lock o; … unlock o;` (see [`Instr::LockBegin`]): the lanes of `w.mask`
    /// run it one after another, each holding the lock; then the warp continues after it.
    pub(super) fn lock_region(
        &mut self,
        w: &mut Warp,
        obj: &CE,
        end_pc: usize,
        span: Span,
        depth: usize,
        pc: usize,
    ) -> Result<(), Stop> {
        let m = w.mask;
        self.stmts += m.count_ones() as u64;
        let prog = self.prog.clone();
        let end_span = match &prog.methods[w.frames[depth - 1].method as usize].body {
            Body::Code(code) => match code.get(end_pc) {
                Some(Instr::LockEnd { span }) => *span,
                _ => span,
            },
            _ => span,
        };
        let saved = w.atomic;
        for l in lanes_of(m) {
            w.mask = 1 << l;
            let id = self.sync_object(w, l, obj, SyncOp::Lock, span)?;
            self.acquire(w, l, id, span)?;
            w.atomic = Some(lock_section(id));
            w.frames.last_mut().expect("frame").pc = pc + 1;
            let r = self.run_warp(w, Some((depth, end_pc)));
            w.atomic = saved;
            if !matches!(r?, WarpStop::AtomicDone) {
                return Err(unsupported("a barrier inside a lock region", span));
            }
            if w.mask & !self.dead(w) != 0 {
                // The `unlock` names the object it names now.
                let id = self.sync_object(w, l, obj, SyncOp::Unlock, end_span)?;
                self.release(w, l, id, end_span, "unlock")?;
            }
        }
        w.mask = m & !self.dead(w);
        w.frames.last_mut().expect("frame").pc = end_pc + 1;
        Ok(())
    }

    /// `fork t` for the active lanes: `t.run()` runs now, on the forking lane (see the module
    /// documentation); `leave_call` keeps its postcondition for `join`.
    fn fork(&mut self, w: &mut Warp, obj: &CE, span: Span) -> Result<(), Stop> {
        let m = w.mask;
        let idle = self.tokens().idle;
        let mut objs = Vec::new();
        let mut run = None;
        for l in lanes_of(m) {
            let id = self.sync_object(w, l, obj, SyncOp::Fork, span)?;
            let class = self.class_of(id).expect("an object");
            let Some(r) = self.prog.classes[class as usize].run else {
                return Err(inconclusive(
                    "R-TYPE",
                    format!("`fork` of {}, whose class has no `void run()`", self.object_name(id)),
                    span,
                ));
            };
            if run.is_some_and(|k| k != r) {
                return Err(unsupported("`fork` of threads of different classes at once", span));
            }
            run = Some(r);
            let loc = self.token_loc(idle, id);
            let top = w.lanes[l].holders.last_mut().expect("holder");
            if !top.take(loc, &Amt::write()) {
                return Err(err(
                    "R-THREAD",
                    format!(
                        "`fork` of {}, which is not idle (forked already and not joined)",
                        self.object_name(id)
                    ),
                    span,
                    "forked here",
                ));
            }
            objs.push((l, id));
        }
        let Some(run) = run else { return Ok(()) };
        if !matches!(self.prog.methods[run as usize].body, Body::Code(_)) {
            return Err(unsupported("`fork` of a thread whose `run` has no body", span));
        }
        self.fork_serial += 1;
        let depth = w.frames.len();
        self.enter_call(w, run, None, Some(&objs), &[], None, span)?;
        if w.frames.len() > depth {
            w.frames.last_mut().expect("frame").fork = self.fork_serial;
            // Host code: the thread gets a warp of its own, so that it may stop at `wait`.
            if let [(l, id)] = objs[..] {
                if w.lanes.len() == 1 && w.lanes[l].path.is_none() {
                    return self.spawn(w, l, id);
                }
            }
        }
        Ok(())
    }

    /// The end of a forked `run` of `obj` (its postcondition exhaled into `post`): kept for
    /// `join`; the forking thread gets `running(obj)`.
    pub(super) fn forked(&mut self, obj: &Value, post: Holder, caller: &mut Holder) {
        let Value::Ref(obj) = *obj else { return };
        let loc = self.token_loc(self.tokens().running, obj);
        caller.add(loc, &Amt::write());
        self.joinable.insert(obj, post);
    }

    fn join(&mut self, w: &mut Warp, l: usize, obj: u32, span: Span) -> Result<(), Stop> {
        if self.is_waiting(obj) {
            self.run_woken(Some(obj))?;
            if self.is_waiting(obj) {
                return Err(err(
                    "R-DEADLOCK",
                    format!(
                        "`join` of {}, which waits for a `notify` that no thread can still give",
                        self.object_name(obj)
                    ),
                    span,
                    "joined here",
                ));
            }
        }
        let t = self.tokens();
        let (running, idle) = (self.token_loc(t.running, obj), self.token_loc(t.idle, obj));
        let top = w.lanes[l].holders.last_mut().expect("holder");
        if !top.take(running, &Amt::write()) {
            return Err(err(
                "R-THREAD",
                format!(
                    "`join` of {}, which is not running (not forked, or joined already)",
                    self.object_name(obj)
                ),
                span,
                "joined here",
            ));
        }
        if let Some(mut post) = self.joinable.remove(&obj) {
            post.drain_into(top);
        }
        top.add(idle, &Amt::write());
        Ok(())
    }
}

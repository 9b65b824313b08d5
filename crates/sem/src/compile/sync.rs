//! Locks, threads, vector blocks and ordered `par` arms: the statements VerCors 1 programs use
//! for concurrency beyond one kernel launch.
//!
//! * `lock e; … unlock e;` in one block becomes a lock region ([`Instr::LockBegin`] …
//!   [`Instr::LockEnd`]): the lanes of a warp run it one at a time, as an `atomic` block.
//!   Other `lock`, `unlock`, `wait`, `notify`, `fork` and `join` statements become
//!   [`Instr::Sync`]. Their operands are opaque to the front end and parsed here, with the
//!   file's offsets.
//! * A class's `resource lock_invariant() = R;` and its thread method `void run()` are noted
//!   on the class; the tokens `held`, `idle` and `running` are bodiless predicates of one
//!   object that the compiler declares ([`Tokens`]).
//! * `vec (int j = lo .. hi) { … }` becomes [`Instr::Vec`].
//! * A `par` whose arms wait for others (`and b(int j = …; a(j))`) runs in stages, one launch
//!   per stage, each arm after the arms it waits for.

use super::*;
use front::Dialect;

/// The statements that may not occur inside a lock region for it to be run as one: they
/// take or give a lock, or leave the region other than at its end.
fn breaks_region(s: &Stmt) -> bool {
    let mut bad = false;
    front::visit::walk_stmts(s, &mut |x| match &x.kind {
        StmtKind::Opaque(o) => {
            bad |= matches!(o.keyword.as_str(), "lock" | "unlock" | "goto" | "label" | "fork")
        }
        StmtKind::Return(_) | StmtKind::Par(_) | StmtKind::Parallel { .. } => bad = true,
        _ => {}
    });
    bad
}

/// The operand text of an opaque `kw e;` statement, without spaces (to pair `lock e` with its
/// `unlock e`).
fn operand_key(o: &Opaque) -> String {
    let body = o.text.strip_prefix(o.keyword.as_str()).unwrap_or("");
    body.chars().filter(|c| !c.is_whitespace() && *c != ';').collect()
}

fn opaque_kw<'s>(s: &'s Stmt, kw: &str) -> Option<&'s Opaque> {
    match &s.kind {
        StmtKind::Opaque(o) if o.keyword == kw => Some(o),
        _ => None,
    }
}

impl<'a> Compiler<'a> {
    /// Declare the token predicates (see [`Tokens`]).
    pub(super) fn declare_tokens(&mut self) {
        if self.out.classes.is_empty() {
            return;
        }
        let mut id = |name: &str| {
            let m = self.out.methods.len() as u32;
            self.out.methods.push(CMethod {
                name: format!("${name}"),
                class: 0,
                is_static: false,
                is_pure: false,
                is_ctor: false,
                is_predicate: true,
                params: Vec::new(),
                given_from: 0,
                yields: Vec::new(),
                ret: Ty::Bool,
                nslots: 0,
                pre: Vec::new(),
                post: Vec::new(),
                everywhere: Vec::new(),
                body: Body::Abstract,
                contains_par: false,
                calls: Vec::new(),
                span: Span::DUMMY,
            });
            m
        };
        let tokens = Tokens { held: id("held"), idle: id("idle"), running: id("running") };
        self.out.tokens = Some(tokens);
    }

    /// `held(e)`, `idle(e)` or `running(e)`: the token predicate applied to `e`.
    pub(super) fn token(&mut self, b: Builtin, arg: CE, span: Span) -> CE {
        let Some(t) = self.out.tokens else {
            return CE::Unsupported(format!("built-in `{}`", b.name()), span);
        };
        let pred = match b {
            Builtin::Held => t.held,
            Builtin::Idle => t.idle,
            _ => t.running,
        };
        CE::Pred { pred, recv: Some(Box::new(arg)), args: Vec::new(), span }
    }

    /// Record `md` (method `id`, body `e`) as its class's lock invariant if it is one.
    pub(super) fn note_lock_invariant(&mut self, id: u32, md: &Method, e: &Expr) {
        if md.name.name != "lock_invariant" || !md.is_predicate() || !md.params.is_empty() {
            return;
        }
        let cl = self.clauses(e);
        if let Some(c) = self.out.classes.get_mut(self.cur_class as usize) {
            c.lock_inv = Some((id, Rc::new(cl)));
        }
    }

    /// Note each class's thread method `void run()`.
    pub(super) fn sync_members(&mut self) {
        for c in &mut self.out.classes {
            c.run = c.methods.get("run").copied().filter(|&m| {
                let md = &self.out.methods[m as usize];
                !md.is_static
                    && !md.is_pure
                    && !md.is_predicate
                    && md.params.is_empty()
                    && md.ret == Ty::Void
            });
        }
    }

    /// The statements of a block, a `lock e; … unlock e;` pair in it as a lock region.
    pub(super) fn stmt_list(&mut self, stmts: &[Stmt], ghost: bool) {
        let mut i = 0;
        while i < stmts.len() {
            let s = &stmts[i];
            if let Some(lock) = opaque_kw(s, "lock") {
                let key = operand_key(lock);
                let end = stmts[i + 1..]
                    .iter()
                    .position(|x| opaque_kw(x, "unlock").is_some_and(|u| operand_key(u) == key))
                    .map(|k| i + 1 + k);
                if let Some(j) = end.filter(|&j| !stmts[i + 1..j].iter().any(breaks_region)) {
                    if let Some(obj) = self.operand(lock) {
                        self.lock_region(obj, &stmts[i + 1..j], lock.span, stmts[j].span, ghost);
                        i = j + 1;
                        continue;
                    }
                }
            }
            self.stmt(s, ghost);
            i += 1;
        }
    }

    fn lock_region(&mut self, obj: CE, body: &[Stmt], span: Span, end_span: Span, ghost: bool) {
        let begin = self.code.len();
        self.code.push(Instr::LockBegin { obj, end_pc: 0, span });
        self.jumps.enter(None);
        for s in body {
            self.stmt(s, ghost);
        }
        self.jumps.leave();
        let end = self.code.len();
        self.code.push(Instr::LockEnd { span: end_span });
        if let Instr::LockBegin { end_pc, .. } = &mut self.code[begin] {
            *end_pc = end;
        }
    }

    /// The operand of an opaque `kw e;` statement, compiled (its calls hoisted before it); an
    /// `Unsupported` instruction and `None` when it cannot be read.
    fn operand(&mut self, o: &Opaque) -> Option<CE> {
        let body = o.text.strip_prefix(o.keyword.as_str()).unwrap_or("");
        let body = body.trim_end();
        let body = body.strip_suffix(';').unwrap_or(body);
        let start = o.span.start() + o.keyword.len();
        // Padding keeps the parsed spans equal to the file's offsets.
        let text = format!("{}{body}", " ".repeat(start));
        let parsed = front::parser::parse_expr_text(&text, Dialect::V1)
            .or_else(|_| front::parser::parse_expr_text(&text, Dialect::V2));
        match parsed {
            Ok(e) => {
                let mut pre = Vec::new();
                let ce = self.expr(&e, &mut Some(&mut pre));
                self.code.extend(pre);
                Some(ce)
            }
            Err(_) => {
                let what = format!("the operand of `{}`", o.keyword);
                self.code.push(Instr::Unsupported(what, o.span));
                None
            }
        }
    }

    /// `lock e;`, `unlock e;`, `wait e;`, `notify e;`, `fork e;` or `join e;` on its own.
    pub(super) fn sync_stmt(&mut self, o: &Opaque) {
        let op = match o.keyword.as_str() {
            "lock" => SyncOp::Lock,
            "unlock" => SyncOp::Unlock,
            "wait" => SyncOp::Wait,
            "notify" => SyncOp::Notify,
            "fork" => SyncOp::Fork,
            _ => SyncOp::Join,
        };
        if op == SyncOp::Fork || op == SyncOp::Join {
            // The thread's `run` is a callee of this method (validation compares callers).
            let runs: Vec<u32> = self.out.classes.iter().filter_map(|c| c.run).collect();
            for r in runs {
                if !self.cur_calls.contains(&r) {
                    self.cur_calls.push(r);
                }
            }
        }
        if let Some(obj) = self.operand(o) {
            self.code.push(Instr::Sync { op, obj, span: o.span });
        }
    }

    /// `vec (int j = lo .. hi) { body }`. The body may only compute (assignments, branches,
    /// loops, assertions): the iterations share the permissions of the lane that runs the
    /// block, so nothing in it may move permissions; nor may it assign a variable declared
    /// outside it, which each iteration would have its own copy of.
    pub(super) fn vec_block(&mut self, iter: &Iter, body: &Block, span: Span) {
        let lo = self.expr(&iter.lo, &mut None);
        let hi = self.expr(&iter.hi, &mut None);
        self.scope.push();
        let outer = self.scope.next;
        let slot = self.scope.declare(&iter.name.name, Ty::Int);
        let at = self.code.len();
        self.code.push(Instr::EndThread); // placeholder, replaced below
        let body_pc = self.code.len();
        self.jumps.enter(None);
        self.block(body, false);
        self.jumps.leave();
        self.code.push(Instr::EndThread);
        self.scope.pop();
        let mut assigned = Vec::new();
        assigned_slots_of(&self.code[body_pc..], &mut assigned);
        let why = if let Some(i) = self.code[body_pc..].iter().find(|i| !vec_allowed(i)) {
            Some(format!("a `vec` block whose body {}", vec_refusal(i)))
        } else if assigned.iter().any(|&s| s < outer || s == slot) {
            Some("a `vec` block that assigns a variable declared outside it".to_string())
        } else {
            None
        };
        let next_pc = self.code.len();
        self.code[at] = match why {
            Some(w) => {
                // Drop the body: the instruction stops the run before it.
                self.code.truncate(body_pc);
                self.jumps.forget_from(body_pc);
                Instr::Unsupported(w, span)
            }
            None => Instr::Vec(Rc::new(VecC {
                slot,
                name: iter.name.name.clone(),
                lo,
                hi,
                body_pc,
                next_pc,
                span,
            })),
        };
    }

    /// A `par` whose arms have wait lists: the arms in stages, each stage one launch of the
    /// arms whose waits are all in earlier stages. Returns false (nothing emitted) when the
    /// wait lists name something that is not an arm of this `par`, or are cyclic.
    pub(super) fn staged_par(&mut self, p: &Par, span: Span) -> bool {
        let labels: Vec<Option<&str>> =
            p.arms.iter().map(|a| a.label.as_ref().map(|l| l.name.as_str())).collect();
        let mut deps: Vec<Vec<usize>> = Vec::new();
        for a in &p.arms {
            let mut d = Vec::new();
            if let Some(w) = &a.wait {
                for name in wait_names(&w.text) {
                    match labels.iter().position(|l| *l == Some(name.as_str())) {
                        Some(k) => d.push(k),
                        None => return false,
                    }
                }
            }
            deps.push(d);
        }
        let mut stage: Vec<Option<usize>> = vec![None; p.arms.len()];
        for _ in 0..p.arms.len() {
            for i in 0..p.arms.len() {
                if stage[i].is_none() && deps[i].iter().all(|&d| stage[d].is_some()) {
                    stage[i] =
                        Some(deps[i].iter().map(|&d| stage[d].unwrap_or(0) + 1).max().unwrap_or(0));
                }
            }
        }
        if stage.iter().any(Option::is_none) {
            return false;
        }
        let nstages = stage.iter().flatten().max().map_or(0, |m| m + 1);
        for k in 0..nstages {
            let arms: Vec<ParArm> = p
                .arms
                .iter()
                .zip(&stage)
                .filter(|(_, s)| **s == Some(k))
                .map(|(a, _)| ParArm { wait: None, ..a.clone() })
                .collect();
            // The region contract: its precondition before the first stage, its
            // postcondition after the last, `context_everywhere` around every stage.
            let (first, last) = (k == 0, k + 1 == nstages);
            let clauses = p
                .prefix
                .clauses
                .iter()
                .filter_map(|c| {
                    let kind = match c.kind {
                        ClauseKind::ContextEverywhere => c.kind,
                        ClauseKind::Context if first && last => c.kind,
                        ClauseKind::Context | ClauseKind::Requires if first => ClauseKind::Requires,
                        ClauseKind::Context | ClauseKind::Ensures if last => ClauseKind::Ensures,
                        _ => return None,
                    };
                    Some(Clause { kind, ..c.clone() })
                })
                .collect();
            let prefix = Prefix { clauses, ..p.prefix.clone() };
            self.par(&Par { prefix, arms, keyword: p.keyword, loop_form: p.loop_form }, span);
        }
        true
    }
}

/// The arm names in a wait list's text (`; a(j), b(*)`).
fn wait_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut word = String::new();
    for c in text.chars() {
        match c {
            '(' => {
                if depth == 0 && !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                depth += 1;
            }
            ')' => depth = depth.saturating_sub(1),
            c if depth == 0 && (c.is_alphanumeric() || c == '_') => word.push(c),
            _ => {
                if depth == 0 {
                    word.clear();
                }
            }
        }
    }
    out
}

/// Instructions a `vec` body may hold (see `vec_block`).
fn vec_allowed(i: &Instr) -> bool {
    matches!(
        i,
        Instr::Assign { .. }
            | Instr::If { .. }
            | Instr::Else { .. }
            | Instr::EndIf
            | Instr::LoopEnter { .. }
            | Instr::LoopHead { .. }
            | Instr::LoopBack { .. }
            | Instr::Assert(_)
            | Instr::Assume(_)
            | Instr::Goto { .. }
            | Instr::EndThread
            | Instr::Unsupported(..)
    )
}

fn vec_refusal(i: &Instr) -> &'static str {
    match i {
        Instr::Call { .. } | Instr::NewObj { .. } => "calls a method",
        Instr::Alloc { .. } => "allocates",
        Instr::Return { .. } => "returns",
        Instr::Par(_) | Instr::Vec(_) => "holds a parallel block",
        Instr::Barrier(_) => "holds a barrier",
        _ => "moves permissions",
    }
}

/// The local slots that `code` may assign (see `stmt::assigned_slots`).
fn assigned_slots_of(code: &[Instr], out: &mut Vec<u32>) {
    for i in code {
        if let Instr::Assign { target: Target::Local(s), .. } = i {
            if !out.contains(s) {
                out.push(*s);
            }
        }
    }
}

//! Barriers: the contract checks and the barrier-consistency method of each barrier.

use super::par::Conj;
use super::vars::captured;

use crate::ast::*;
use crate::encode::{Encoder, R};
use front::ast;
use front::span::Span;

/// `e` with every `\\old(x)` replaced by `x`.
fn drop_old(e: Exp) -> Exp {
    e.map(&mut |n| match n.kind {
        ExpKind::Old(None, x) => *x,
        k => Exp { kind: k, span: n.span },
    })
}

impl Encoder<'_> {
    // ------------------------------------------------------------------------------------------
    // Barriers
    // ------------------------------------------------------------------------------------------

    pub(super) fn barrier(&mut self, b: &ast::Barrier, span: Span, out: &mut Vec<Stmt>) -> R<()> {
        self.check_clauses(&b.contract, "a barrier")?;
        let Some(pi) = self.pars.iter().rposition(|p| p.label == b.label.name) else {
            self.bad(format!("no enclosing par block labelled `{}`", b.label.name), b.label.span);
            return Err(());
        };
        if pi + 1 != self.pars.len() {
            self.unsupported("a barrier of an outer par block inside a nested one", span);
            return Err(());
        }
        let body = b.body.as_ref().filter(|body| !body.stmts.is_empty());
        let frame = self.pars[pi].clone();
        let contract = self.barrier_contract(b, &frame.uniform, &frame.pvl_iters)?;
        let pre = self.contract_conjs(&contract, true)?;
        let post = self.contract_conjs(&contract, false)?;
        if let Some(p) = self.pars.get_mut(pi) {
            p.barriers += 1;
        }
        let k = frame.barriers + 1;
        let lbl = b.label.name.clone();
        let mk = |role: Role, c: &Conj| {
            Origin::new(role, Some(c.span)).with_clause(c.clause).with_label(&lbl)
        };

        // `\old(e)` in a barrier contract is e's value when the thread reaches the barrier:
        // the current state in its preconditions, the state at a label placed before the
        // barrier's exhale in its postconditions (and Viper's `old` in the consistency method,
        // whose entry is that state).
        let pre: Vec<Conj> = pre
            .into_iter()
            .map(|mut c| {
                c.exp = drop_old(c.exp);
                c
            })
            .collect();
        let at = self.fresh_name(&format!("{lbl}_barrier{k}"));

        let iters = frame.iters.clone();
        let range = frame.range.clone();
        let mut nonempty = Vec::new();
        let mut extents = Vec::new();
        for pair in range.chunks(2) {
            if let [lo_le, lt_hi] = pair {
                if let (ExpKind::Binary(_, lo, _), ExpKind::Binary(_, _, hi)) =
                    (&lo_le.kind, &lt_hi.kind)
                {
                    nonempty.push(Exp::bin("<", (**lo).clone(), (**hi).clone()));
                    extents.push(Exp::bin("-", (**hi).clone(), (**lo).clone()));
                }
            }
        }
        // A clause that names no thread variable is stated by every thread of the group: all
        // threads together give (or take) it once per thread. Counting it once let a barrier
        // hand every thread a whole array that the threads had given one cell each.
        let n_threads =
            extents.into_iter().reduce(|a, b| Exp::bin("*", a, b)).unwrap_or_else(|| Exp::int(1));
        // Enactment in this thread.
        out.push(Stmt::new(StmtKind::Comment(format!("barrier({lbl}) #{k}")), Origin::synthetic()));
        out.push(Stmt::new(StmtKind::Label(at.clone()), Origin::synthetic()));
        for c in pre.iter().filter(|c| !c.exp.has_acc()) {
            out.push(Stmt::new(StmtKind::Assert(c.exp.clone()), mk(Role::BarrierPre, c)));
        }
        for c in pre.iter().filter(|c| c.exp.has_acc()) {
            out.push(Stmt::new(StmtKind::Exhale(c.exp.clone()), mk(Role::BarrierPre, c)));
        }
        let after = |c: &Conj| super::par::replace_old(c.exp.clone(), &at);
        for c in post.iter().filter(|c| c.exp.has_acc()) {
            out.push(Stmt::new(StmtKind::Inhale(after(c)), mk(Role::BarrierPost, c)));
        }
        for c in post.iter().filter(|c| !c.exp.has_acc()) {
            out.push(Stmt::new(StmtKind::Inhale(after(c)), mk(Role::BarrierPost, c)));
        }

        // Consistency obligation: all threads' postconditions follow from, and take no more
        // permission than, all threads' preconditions.
        let mut pres = vec![Contract {
            exp: Exp::and_all(nonempty),
            origin: Origin::new(Role::BarrierConsPre, Some(b.keyword)),
        }];
        // The thread's own range is quantified below, not a fact about one value of `tid`.
        for c in self
            .everywhere
            .iter()
            .filter(|c| !c.exp.has_counted_acc() && !iters.iter().any(|v| c.exp.mentions_var(v)))
        {
            pres.push(Contract {
                exp: c.exp.clone(),
                origin: Origin { role: Role::BarrierConsPre, ..c.origin.clone() },
            });
        }
        // All threads' clauses: facts that read no heap location first (a resource's guard or
        // index may need them to be well-defined: `t % (2 * s)` needs `0 < s`), then the
        // resources, then the facts that read what the resources grant.
        let mut all_threads = |cs: &[Conj], role: Role| -> Vec<Contract> {
            let mut v: Vec<Contract> = cs
                .iter()
                .map(|c| Contract {
                    exp: self.all_threads(&iters, &range, &n_threads, c.exp.clone()),
                    origin: mk(role, c),
                })
                .collect();
            // Stable: within each kind, the order written.
            v.sort_by_key(|ct| match (ct.exp.has_acc(), plain(&ct.exp)) {
                (false, true) => 0,
                (true, _) => 1,
                (false, false) => 2,
            });
            v
        };
        // Bounds of products over the enclosing threads' ranges (valid facts, see `bounds`):
        // a block `ar[g*N + t]` of the barrier's threads is in bounds only by them. A fact
        // about this group's own thread variables would name a variable quantified below.
        let exps: Vec<&Exp> = pre.iter().chain(&post).map(|c| &c.exp).collect();
        let facts = super::bounds::facts_from(pres.iter().map(|c| &c.exp), &exps);
        pres.extend(facts.into_iter().filter(|f| !iters.iter().any(|v| f.mentions_var(v))).map(
            |exp| Contract { exp, origin: Origin::new(Role::BarrierConsPre, Some(b.keyword)) },
        ));
        pres.extend(all_threads(&pre, Role::BarrierConsPre));
        // Every thread of the block arrives: the conditions on the way that may differ
        // between threads hold in all of them (checked first: without it, what the barrier
        // hands out is moot).
        let all_posts = all_threads(&post, Role::BarrierConsPost);
        let mut posts = Vec::new();
        if let Some(conds) = frame.uniform.barrier_conds.get(&b.keyword.start()) {
            let group = (&iters[..], &frame.pvl_iters[..], &range[..], &n_threads);
            self.barrier_reach(conds, &frame.uniform, group, b.keyword, &mut posts)?;
        }
        posts.extend(all_posts);
        let mut stmts = Vec::new();
        if let Some(body) = body {
            stmts = self.barrier_body(b, body, &iters, &mut pres, &mut posts)?;
        }
        // After the body: the invariants it adds to the contract may name more variables.
        let contracts: Vec<&Contract> = pres.iter().chain(&posts).collect();
        let used = captured(&contracts, &stmts);
        let params: Vec<(String, Ty)> =
            used.into_iter().filter_map(|n| self.vtypes.get(&n).map(|t| (n, t.clone()))).collect();
        self.out.methods.push(Method {
            name: format!("{}_barrier{k}", frame.method),
            params,
            returns: vec![],
            pres,
            posts,
            body: Some(stmts),
            kind: MethodKind::BarrierConsistency,
            span: Some(b.keyword),
        });
        Ok(())
    }
}

impl Encoder<'_> {
    /// The body of a barrier runs once, when every thread has arrived: from all threads'
    /// preconditions and the resources of the invariants the barrier names (as an `atomic`
    /// block over them would), to all threads' postconditions and those invariants again. It is
    /// verified as the body of the consistency method, whose contract says exactly that.
    /// Refused: a body that reads a thread variable (which thread's?) or assigns a variable
    /// declared outside it (threads share no locals, and Viper's parameters are read-only).
    fn barrier_body(
        &mut self,
        b: &ast::Barrier,
        body: &ast::Block,
        iters: &[String],
        pres: &mut Vec<Contract>,
        posts: &mut Vec<Contract>,
    ) -> R<Vec<Stmt>> {
        for t in &b.tags {
            let Some(r) = self.invariants.get(&t.name).cloned() else {
                self.bad(format!("no enclosing `invariant {}`", t.name), t.span);
                return Err(());
            };
            let x = self.spec(&r)?;
            let o = |role| Origin::new(role, Some(r.span)).with_label(&t.name);
            pres.push(Contract { exp: x.clone(), origin: o(Role::BarrierConsPre) });
            posts.push(Contract { exp: x, origin: o(Role::BarrierConsPost) });
        }
        self.scopes.push(std::collections::HashMap::new());
        self.frames.push(crate::encode::Frame::default());
        self.fence += 1;
        let outer = std::mem::replace(&mut self.in_barrier_body, true);
        let stmts = self.block(body, false);
        self.in_barrier_body = outer;
        self.fence -= 1;
        let frame = self.frames.pop().unwrap_or_default();
        self.scopes.pop();
        let stmts = stmts?;
        let mut used = Vec::new();
        for s in &stmts {
            super::vars::stmt_vars(s, &mut used);
        }
        if let Some(v) = used.iter().find(|v| iters.contains(v)) {
            let name = self.pvl_name(v);
            self.unsupported(
                &format!("a barrier body that reads the thread variable `{name}`"),
                body.span,
            );
            return Err(());
        }
        let mut assigned = Vec::new();
        stmts.iter().for_each(|s| assigned_vars(s, &mut assigned));
        if let Some(v) = assigned.iter().find(|v| !frame.names.contains(v)) {
            let name = self.pvl_name(v);
            self.unsupported(
                &format!("a barrier body that assigns `{name}`, a variable declared outside it"),
                body.span,
            );
            return Err(());
        }
        let mut all = frame.decls;
        all.extend(stmts);
        Ok(all)
    }
}

/// The local variables a statement assigns (fields are heap locations, not variables).
fn assigned_vars(s: &Stmt, out: &mut Vec<String>) {
    match &s.kind {
        StmtKind::Assign(l, _) => {
            if let ExpKind::Var(n) = &l.kind {
                out.push(n.clone());
            }
        }
        StmtKind::Call(ts, _, _) => out.extend(ts.iter().cloned()),
        StmtKind::New(x, _) => out.push(x.clone()),
        StmtKind::If(_, t, e) => t.iter().chain(e).for_each(|s| assigned_vars(s, out)),
        StmtKind::While(_, _, b) | StmtKind::Package(_, b) => {
            b.iter().for_each(|s| assigned_vars(s, out))
        }
        _ => {}
    }
}

/// A fact about values only: no heap read and no function application (a function may need
/// permissions that only the resources grant) other than the array domain's `anull` and
/// `alen`, which need nothing. `\array(a, n)` is such a fact, and a resource's `aloc(a, i)`
/// needs it first.
fn plain(e: &Exp) -> bool {
    let mut ok = !e.reads_heap();
    e.visit(&mut |x| ok &= !matches!(&x.kind, ExpKind::App(f, _) if f != "anull" && f != "alen"));
    ok
}

//! `par` blocks: per-thread contracts as conjuncts, quantified over all threads, and the
//! thread methods that check each arm.

use super::vars::captured;

use crate::ast::*;
use crate::encode::{quant, Encoder, Frame, ParFrame, R};
use front::ast::{self, ClauseKind, TypeKind};
use front::span::Span;
use std::collections::{HashMap, HashSet};

pub(super) fn replace_old(e: Exp, label: &str) -> Exp {
    e.map(&mut |n| match n.kind {
        ExpKind::Old(None, x) => {
            Exp { kind: ExpKind::Old(Some(label.to_string()), x), span: n.span }
        }
        k => Exp { kind: k, span: n.span },
    })
}

impl Encoder<'_> {
    /// The arrays a thread's contract indexes by name (`Perm(x[i], 1)`), as the threads need
    /// them: not null (which the contract's own well-definedness needs, so the call site that
    /// asserts it loses nothing) and, for a sized type `T[N] x`, `N` long. A local array made
    /// before the block (`int[10] x = new int[10];`) was unknown to the threads otherwise.
    fn indexed_array_shapes(&mut self, contract: &[ast::Clause]) -> R<Vec<Contract>> {
        let mut named: Vec<(String, Span)> = Vec::new();
        for c in contract {
            let Some(e) = c.expr() else { continue };
            front::visit::walk_expr(e, &mut |x| {
                if let ast::ExprKind::Index(a, _) = &x.kind {
                    if let Some(n) = a.as_name() {
                        if !named.iter().any(|(m, _)| m == n) {
                            named.push((n.to_string(), a.span));
                        }
                    }
                }
            });
        }
        let mut out = Vec::new();
        for (n, span) in named {
            let Some(local) = self.lookup(&n).cloned() else { continue };
            let TypeKind::Array(_, size) = &local.ty.kind else { continue };
            let var = Exp::var(&local.viper);
            let mut fact = Exp::bin("!=", var.clone(), Exp::app("anull", vec![]));
            if let Some(size) = size {
                let len = Exp::bin("==", Exp::app("alen", vec![var]), self.spec(size)?);
                fact = Exp::and(fact, len);
            }
            out.push(Contract { exp: fact, origin: Origin::new(Role::Invariant, Some(span)) });
        }
        Ok(out)
    }
}

/// `e` with `old(x)` (unlabelled) read as `x`: in the state the old expressions refer to.
fn strip_old(e: Exp) -> Exp {
    e.map(&mut |n| match n.kind {
        ExpKind::Old(None, x) => Exp { kind: x.kind, span: n.span },
        k => Exp { kind: k, span: n.span },
    })
}

/// Multiply every accessibility predicate's amount by `n` (all threads together).
fn scale(e: Exp, n: &Exp) -> Exp {
    e.map(&mut |x| match x.kind {
        ExpKind::Acc(l, p) if !matches!(p.kind, ExpKind::Wildcard) => {
            Exp { kind: ExpKind::Acc(l, Box::new(Exp::bin("*", n.clone(), *p))), span: x.span }
        }
        k => Exp { kind: k, span: x.span },
    })
}

/// An encoded `par` arm: its thread method is emitted; what its call site needs is here.
pub(super) struct ArmSite {
    /// The label placed before the block (`\old` in its postconditions).
    pub(super) label: String,
    /// Some thread exists.
    pub(super) guard: Exp,
    /// The call site: exhale of all threads' preconditions, inhale of their postconditions.
    pub(super) pre: Vec<Stmt>,
    pub(super) post: Vec<Stmt>,
    /// The thread variables (Viper names) and their bounds.
    pub(super) iters: Vec<String>,
    pub(super) bounds: Vec<(Exp, Exp)>,
    /// One thread's pre- and postconditions, over `iters`.
    pub(super) conj_pre: Vec<Conj>,
    pub(super) conj_post: Vec<Conj>,
}

/// One conjunct of a per-thread (or barrier) contract.
#[derive(Clone)]
pub(super) struct Conj {
    pub(super) exp: Exp,
    pub(super) span: Span,
    pub(super) clause: Span,
}

impl Encoder<'_> {
    // ------------------------------------------------------------------------------------------
    // par blocks
    // ------------------------------------------------------------------------------------------

    pub(super) fn contract_conjs(&mut self, clauses: &[ast::Clause], pre: bool) -> R<Vec<Conj>> {
        let mut out = Vec::new();
        let mut ok = true;
        for c in clauses {
            let wanted = if pre { c.kind.is_pre() } else { c.kind.is_post() };
            if !wanted {
                continue;
            }
            let Some(e) = c.expr() else { continue };
            match self.conjuncts(e, c.span) {
                Ok(cs) => {
                    out.extend(cs.into_iter().map(|(exp, span)| Conj { exp, span, clause: c.span }))
                }
                Err(()) => ok = false,
            }
        }
        if ok {
            Ok(out)
        } else {
            Err(())
        }
    }

    pub(super) fn check_clauses(&mut self, clauses: &[ast::Clause], what: &str) -> R<()> {
        for c in clauses {
            if !matches!(
                c.kind,
                ClauseKind::Requires
                    | ClauseKind::Ensures
                    | ClauseKind::Context
                    | ClauseKind::ContextEverywhere
            ) {
                self.unsupported(&format!("`{}` on {what}", c.kind.keyword()), c.span);
                return Err(());
            }
        }
        Ok(())
    }

    /// Quantify a per-thread conjunct over all threads (§5.9(b)).
    pub(super) fn all_threads(
        &mut self,
        iters: &[String],
        range: &[Exp],
        n_threads: &Exp,
        e: Exp,
    ) -> Exp {
        let unused: Vec<usize> = (0..iters.len()).filter(|k| !e.mentions_var(&iters[*k])).collect();
        let split = if unused.is_empty() { None } else { split_unused(iters, range, &unused) };
        if let Some((vars, guards, bounds)) = split {
            if !e.has_acc() {
                // A fact that some thread variables do not appear in holds for all threads
                // when it holds for every value of the others and those ranges are not empty:
                // a variable quantified but never mentioned leaves the prover no term to
                // instantiate it by.
                let nonempty = bounds.into_iter().map(|(l, h)| Exp::bin("<", l, h));
                let body = if vars.is_empty() { e } else { quant::quantify(self, vars, guards, e) };
                return Exp::implies(Exp::and_all(nonempty), body);
            }
            if !vars.is_empty() {
                // A resource that depends on some thread variables only (a row `Perm(g[r],
                // read)` in a 2-D block over (r, c)) is held once per value of the others:
                // quantify over the variables it mentions and scale by the extents of the
                // rest. Quantifying over all of them would give a receiver that is not
                // injective.
                let factor = bounds
                    .into_iter()
                    .map(|(l, h)| Exp::bin("-", h, l))
                    .reduce(|f, x| Exp::bin("*", f, x));
                let scaled = match factor {
                    Some(f) => scale(e, &f),
                    None => e,
                };
                return quant::quantify(self, vars, guards, scaled);
            }
        }
        if iters.iter().any(|v| e.mentions_var(v)) {
            quant::quantify(self, iters.to_vec(), range.to_vec(), e)
        } else if e.has_acc() {
            scale(e, n_threads)
        } else {
            e
        }
    }

    pub(super) fn par(&mut self, p: &ast::Par, out: &mut Vec<Stmt>) -> R<()> {
        // A v1 region contract of `context_everywhere` facts (the way VerCors 1 states facts
        // the thread ranges need, such as `xs != null` for `0 .. xs.length`) holds in every
        // thread and around the block: it joins each arm's contract, whose thread-independent
        // clauses come before the ranges. Other region clauses are a contract of the whole
        // region, which the per-thread encoding does not have.
        // Any other region clause (`context`, `requires`, `ensures`), or a v1 wait list
        // (`and b(int j = …; a(j))`: iteration j of b starts when iteration j of a has ended),
        // makes the block a region with a contract of its own (`region.rs`).
        let region = p.prefix.clauses.iter().any(|c| c.kind != ClauseKind::ContextEverywhere)
            || p.arms.iter().any(|a| a.wait.is_some());
        let everywhere: Vec<ast::Clause> = p
            .prefix
            .clauses
            .iter()
            .filter(|c| c.kind == ClauseKind::ContextEverywhere)
            .cloned()
            .collect();
        let mut sites = Vec::new();
        for arm in &p.arms {
            if everywhere.is_empty() {
                sites.push(self.par_arm(arm)?);
            } else {
                let mut arm = arm.clone();
                arm.contract.splice(0..0, everywhere.iter().cloned());
                sites.push(self.par_arm(&arm)?);
            }
        }
        if region {
            return self.par_region(p, &sites, out);
        }
        for s in &sites {
            out.push(Stmt::new(StmtKind::Label(s.label.clone()), Origin::synthetic()));
        }
        for s in &mut sites {
            out.push(Stmt::new(
                StmtKind::If(s.guard.clone(), std::mem::take(&mut s.pre), vec![]),
                Origin::new(Role::Synthetic, Some(p.keyword)),
            ));
        }
        for s in sites {
            out.push(Stmt::new(
                StmtKind::If(s.guard, s.post, vec![]),
                Origin::new(Role::Synthetic, Some(p.keyword)),
            ));
        }
        Ok(())
    }

    /// Encode one arm: its thread method, and its call-site (label, guard, exhales, inhales).
    fn par_arm(&mut self, arm: &ast::ParArm) -> R<ArmSite> {
        self.check_clauses(&arm.contract, "a par block")?;
        self.par_counter += 1;
        let label = match &arm.label {
            Some(l) => l.name.clone(),
            None => format!("par{}", self.par_counter),
        };
        let host = self.host_method_name();
        let mname = self.global_name(format!("{host}_{label}"));
        let pre_label = self.fresh_name(&format!("{label}_pre"));
        // Everything visible here: the enclosing method's names, and for a nested par block,
        // also the names the enclosing thread method captures in turn.
        let outer_names: Vec<String> =
            self.frames.iter().flat_map(|f| f.names.iter().cloned()).collect();

        // Bounds are evaluated in the enclosing method.
        let mut bounds = Vec::new();
        for it in &arm.iters {
            if !matches!(it.ty.kind, TypeKind::Int) {
                self.unsupported("a non-`int` iterator", it.span);
                return Err(());
            }
            let lo = self.spec(&it.lo)?;
            let hi = self.spec(&it.hi)?;
            bounds.push((lo, hi));
        }

        self.scopes.push(HashMap::new());
        self.frames.push(Frame::default());
        let saved_every = self.everywhere.len();
        let r = (|| {
            let mut iters = Vec::new();
            let mut range = Vec::new();
            let mut params = Vec::new();
            let mut pres = Vec::new();
            for (it, (lo, hi)) in arm.iters.iter().zip(&bounds) {
                let (v, t) = self.bind_param(&it.name.name, &it.ty)?;
                range.push(Exp::bin("<=", lo.clone(), Exp::var(&v)));
                range.push(Exp::bin("<", Exp::var(&v), hi.clone()));
                pres.push(Contract {
                    exp: Exp::and(
                        Exp::bin("<=", lo.clone(), Exp::var(&v)),
                        Exp::bin("<", Exp::var(&v), hi.clone()),
                    ),
                    origin: Origin::new(Role::ThreadPre, Some(it.span)),
                });
                params.push((v.clone(), t));
                iters.push(v);
            }
            let n_threads = bounds
                .iter()
                .map(|(lo, hi)| Exp::bin("-", hi.clone(), lo.clone()))
                .reduce(|a, b| Exp::bin("*", a, b))
                .unwrap_or_else(|| Exp::int(1));
            let nonempty =
                Exp::and_all(bounds.iter().map(|(lo, hi)| Exp::bin("<", lo.clone(), hi.clone())));

            // context_everywhere of the method holds in every thread: its pure parts, and read
            // access by wildcard (`\matrix` rows), which any number of threads can share and
            // which the call site asserts without giving it away.
            // So do the method's fixed facts (`Encoder::fixed_facts`): true at the block, and
            // nothing the threads do can change them.
            let mut every: Vec<Contract> = self
                .everywhere
                .iter()
                .filter(|c| !c.exp.has_counted_acc())
                .chain(&self.fixed_facts)
                .cloned()
                .collect();
            // Only where some thread exists: a block of no threads needs nothing of them.
            every.extend(
                self.indexed_array_shapes(&arm.contract)?
                    .into_iter()
                    .map(|c| Contract { exp: Exp::implies(nonempty.clone(), c.exp), ..c }),
            );
            // `\old` in a thread's contract is the state where the block starts (its
            // postconditions say so with the block's label): in a precondition, evaluated
            // there, it is the current state.
            let arm_pre: Vec<Conj> = self
                .contract_conjs(&arm.contract, true)?
                .into_iter()
                .map(|c| Conj { exp: strip_old(c.exp), ..c })
                .collect();
            let arm_post = self.contract_conjs(&arm.contract, false)?;
            for c in &arm.contract {
                if c.kind == ClauseKind::ContextEverywhere {
                    if let Some(e) = c.expr() {
                        for (x, s) in self.conjuncts(e, c.span)? {
                            self.everywhere.push(Contract {
                                exp: x,
                                origin: Origin::new(Role::Invariant, Some(s)).with_clause(c.span),
                            });
                        }
                    }
                }
            }
            // Order: the method's facts and the thread-independent preconditions first, then
            // the thread ranges, then the rest. A range bound may need those facts to be
            // well-defined (`tid < vct_tile_ceiling(n, s)` needs `s > 0`), and the
            // thread-dependent preconditions need the ranges.
            let ranges = std::mem::take(&mut pres);
            for c in &every {
                pres.push(Contract {
                    exp: c.exp.clone(),
                    origin: Origin { role: Role::ThreadPre, ..c.origin.clone() },
                });
            }
            let arm_pre_contract = |c: &Conj| Contract {
                exp: c.exp.clone(),
                origin: Origin::new(Role::ThreadPre, Some(c.span))
                    .with_clause(c.clause)
                    .with_label(&label),
            };
            let free = |c: &&Conj| !iters.iter().any(|v| c.exp.mentions_var(v));
            pres.extend(arm_pre.iter().filter(free).map(arm_pre_contract));
            // Bounds of products over ranged variables (valid facts, see `bounds`): after the
            // ranges, before the thread-dependent preconditions that index with them.
            let exps: Vec<&Exp> = ranges
                .iter()
                .map(|c| &c.exp)
                .chain(arm_pre.iter().map(|c| &c.exp))
                .chain(arm_post.iter().map(|c| &c.exp))
                .collect();
            let facts =
                super::bounds::facts_from(ranges.iter().chain(&pres).map(|c| &c.exp), &exps);
            pres.extend(ranges);
            pres.extend(
                facts.into_iter().map(|exp| Contract {
                    exp,
                    origin: Origin::new(Role::ThreadPre, Some(arm.span)),
                }),
            );
            pres.extend(arm_pre.iter().filter(|c| !free(c)).map(arm_pre_contract));
            let mut posts: Vec<Contract> = every
                .iter()
                .map(|c| Contract {
                    exp: c.exp.clone(),
                    origin: Origin { role: Role::ThreadPost, ..c.origin.clone() },
                })
                .collect();
            posts.extend(arm_post.iter().map(|c| {
                Contract {
                    exp: c.exp.clone(),
                    origin: Origin::new(Role::ThreadPost, Some(c.span))
                        .with_clause(c.clause)
                        .with_label(&label),
                }
            }));

            // The thread's own range holds everywhere in its body (loops, nested par blocks).
            for (it, r) in arm.iters.iter().zip(range.chunks(2)) {
                self.everywhere.push(Contract {
                    exp: Exp::and_all(r.iter().cloned()),
                    origin: Origin::new(Role::Invariant, Some(it.span)),
                });
            }
            // `send`/`recv` between iterations, checked once for the block.
            if let ([it], [v], [(lo, hi)]) =
                (arm.iters.as_slice(), iters.as_slice(), bounds.as_slice())
            {
                self.transfers(arm, &it.name.name, v, lo, hi, &every, &outer_names, &mname)?;
            }
            let pvl_iters: Vec<String> = arm.iters.iter().map(|i| i.name.name.clone()).collect();
            let uniform = std::rc::Rc::new(analyze::uniform::analyze(&arm.body, &pvl_iters));
            self.pars.push(ParFrame {
                label: label.clone(),
                iters: iters.clone(),
                range: range.clone(),
                method: mname.clone(),
                barriers: 0,
                pvl_iters,
                uniform,
            });
            let body = self.sub(&arm.body, false);
            self.pars.pop();
            let body = body?;
            let frame = self.frames.last().cloned().unwrap_or_default();
            let mut stmts = frame.decls.clone();
            stmts.extend(body);

            // Captured values: what the thread mentions from the enclosing method.
            let contracts: Vec<&Contract> = pres.iter().chain(&posts).collect();
            let used: HashSet<String> = captured(&contracts, &stmts).into_iter().collect();
            for n in &outer_names {
                if used.contains(n) {
                    if let Some(t) = self.vtypes.get(n) {
                        params.push((n.clone(), t.clone()));
                    }
                }
            }
            self.out.methods.push(Method {
                name: mname.clone(),
                params,
                returns: vec![],
                pres,
                posts,
                body: Some(stmts),
                kind: MethodKind::Thread,
                span: Some(arm.span),
            });

            // Call site.
            let mut pre_stmts = Vec::new();
            let mut pure = Vec::new();
            let mut perms = Vec::new();
            for c in &every {
                pure.push((c.exp.clone(), c.origin.span.unwrap_or(arm.span), c.origin.clause));
            }
            for c in &arm_pre {
                let q = self.all_threads(&iters, &range, &n_threads, c.exp.clone());
                if c.exp.has_acc() {
                    perms.push((q, c.span, Some(c.clause)));
                } else {
                    pure.push((q, c.span, Some(c.clause)));
                }
            }
            for (q, s, cl) in pure {
                let mut o = Origin::new(Role::ParPre, Some(s)).with_label(&label);
                o.clause = cl;
                pre_stmts.push(Stmt::new(StmtKind::Assert(q), o));
            }
            for (q, s, cl) in perms {
                let mut o = Origin::new(Role::ParPre, Some(s)).with_label(&label);
                o.clause = cl;
                pre_stmts.push(Stmt::new(StmtKind::Exhale(q), o));
            }
            let mut post_stmts = Vec::new();
            let mut later = Vec::new();
            for c in &arm_post {
                let q = self.all_threads(&iters, &range, &n_threads, c.exp.clone());
                let q = replace_old(q, &pre_label);
                let o = Origin::new(Role::ParPost, Some(c.span))
                    .with_clause(c.clause)
                    .with_label(&label);
                if c.exp.has_acc() {
                    post_stmts.push(Stmt::new(StmtKind::Inhale(q), o));
                } else {
                    later.push(Stmt::new(StmtKind::Inhale(q), o));
                }
            }
            post_stmts.extend(later);
            Ok(ArmSite {
                label: pre_label.clone(),
                guard: nonempty,
                pre: pre_stmts,
                post: post_stmts,
                iters: iters.clone(),
                bounds: bounds.clone(),
                conj_pre: arm_pre.clone(),
                conj_post: arm_post.clone(),
            })
        })();
        self.everywhere.truncate(saved_every);
        self.frames.pop();
        self.scopes.pop();
        r
    }

    /// The Viper name of the method currently being built: the innermost thread method, or
    /// the member itself (methods generated for a block inside it are named after it).
    pub(super) fn host_method_name(&self) -> String {
        match self.pars.last() {
            Some(p) => p.method.clone(),
            None => self.member_name(self.class.as_deref(), &self.method_name),
        }
    }
}

/// Thread variables split by a clause: those it names, their range conjuncts, and the bounds
/// `(lo, hi)` of the others.
type Split = (Vec<String>, Vec<Exp>, Vec<(Exp, Exp)>);

/// The thread variables other than `unused` with their range conjuncts, and the bounds
/// `(lo, hi)` of the `unused` ones; `None` when a range is not `lo <= v` and `v < hi`.
fn split_unused(iters: &[String], range: &[Exp], unused: &[usize]) -> Option<Split> {
    if range.len() != 2 * iters.len() {
        return None;
    }
    let (mut vars, mut guards, mut bounds) = (Vec::new(), Vec::new(), Vec::new());
    for (k, v) in iters.iter().enumerate() {
        let (lo, hi) = (&range[2 * k], &range[2 * k + 1]);
        if unused.contains(&k) {
            let (ExpKind::Binary("<=", l, _), ExpKind::Binary("<", _, h)) = (&lo.kind, &hi.kind)
            else {
                return None;
            };
            bounds.push(((**l).clone(), (**h).clone()));
        } else {
            vars.push(v.clone());
            guards.push(lo.clone());
            guards.push(hi.clone());
        }
    }
    Some((vars, guards, bounds))
}

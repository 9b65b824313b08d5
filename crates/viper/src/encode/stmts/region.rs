//! VerCors 1 parallel regions: a `par` block with a contract of its own (`context`, `requires`,
//! `ensures` before `par`) whose arms may wait for each other (`and b(int j = lo .. hi; a(j))`:
//! iteration j of `b` starts once iteration j of `a` has ended, and may use what it gave back).
//!
//! Iteration j of every arm forms a pipeline that runs in order of the waits, while different
//! iterations run at the same time. So the region is split by iteration: its resources must be
//! `\forall*` over one variable (each instance is what iteration j starts with; instances of
//! one quantified permission are disjoint), and a *region method* checks, for one iteration j,
//! that the arms' preconditions can be taken in pipeline order (an arm that waits takes over
//! the postcondition of the arm it waits for) and that the region's postcondition for j is left.
//! The arms' bodies are verified by their thread methods as for any `par` block; at the block,
//! the region's precondition is exhaled and its postcondition inhaled.
//!
//! Refused (V-UNSUPPORTED): arms with several thread variables or different bounds, a wait other
//! than `a(j)` for an earlier arm, a region resource that is not split over the iterations, a
//! region postcondition quantified over another range, and a fact in the region's postcondition
//! that reads the heap outside a quantifier over the iterations.

use super::par::{replace_old, ArmSite, Conj};
use super::vars::captured;

use crate::ast::*;
use crate::encode::{Encoder, Frame, R};
use front::ast::{self, Expr, ExprKind, QuantKind};
use std::collections::HashMap;

/// A region clause conjunct split by iteration: its instance for iteration `j` (a Viper
/// expression over the region method's `j`), or a fact about values only.
enum Part {
    Instance(Exp),
    Fact(Exp),
}

impl Encoder<'_> {
    pub(super) fn par_region(
        &mut self,
        p: &ast::Par,
        sites: &[ArmSite],
        out: &mut Vec<Stmt>,
    ) -> R<()> {
        let Some(first) = sites.first() else { return Ok(()) };
        for (arm, s) in p.arms.iter().zip(sites) {
            if s.iters.len() != 1 {
                self.unsupported(
                    "a parallel region whose arm has other than one thread variable",
                    arm.span,
                );
                return Err(());
            }
            let same = |a: &Exp, b: &Exp| crate::print::exp_text(a) == crate::print::exp_text(b);
            if !(same(&s.bounds[0].0, &first.bounds[0].0)
                && same(&s.bounds[0].1, &first.bounds[0].1))
            {
                self.unsupported(
                    "a parallel region whose arms range over different bounds",
                    arm.span,
                );
                return Err(());
            }
        }
        let waits = self.region_waits(p)?;
        // Without a region contract, the arms that wait have nothing to be split from.
        if !p.prefix.clauses.iter().any(|c| c.kind != ast::ClauseKind::ContextEverywhere) {
            if let Some(w) = p.arms.iter().find_map(|a| a.wait.as_ref()) {
                self.unsupported(
                    "a `par` arm's wait list without a region contract (`context` before `par`)",
                    w.span,
                );
                return Err(());
            }
        }
        // `context_everywhere` before `par` also joined every arm's contract (`par`).
        let clauses: Vec<ast::Clause> = p.prefix.clauses.clone();
        self.check_clauses(&clauses, "a parallel region")?;
        let (lo, hi) = first.bounds[0].clone();
        let label = first.label.clone();

        // The region method, for one iteration `j`.
        self.scopes.push(HashMap::new());
        self.frames.push(Frame::default());
        let j = self.fresh_name("region_j");
        self.vtypes.insert(j.clone(), Ty::Int);
        let r = self.region_parts(&clauses, &j, &lo, &hi);
        self.frames.pop();
        self.scopes.pop();
        let (pre_parts, post_parts) = r?;
        let jv = Exp::var(&j);
        let mut pres = vec![Contract {
            exp: Exp::and(
                Exp::bin("<=", lo.clone(), jv.clone()),
                Exp::bin("<", jv.clone(), hi.clone()),
            ),
            origin: Origin::new(Role::ThreadPre, Some(p.keyword)),
        }];
        // What every iteration knows: the `context_everywhere` facts and the method's facts
        // about parameters it never assigns (as the arms' threads do, `par`).
        for c in
            self.everywhere.iter().chain(&self.fixed_facts).filter(|c| !c.exp.has_counted_acc())
        {
            pres.push(Contract {
                exp: c.exp.clone(),
                origin: Origin { role: Role::ThreadPre, ..c.origin.clone() },
            });
        }
        // A fact that reads the heap outside the instances is asserted at the block only: the
        // instance of iteration j need not frame it.
        let part_contracts = |parts: &[Part], role: Role| -> Vec<Contract> {
            let mut v: Vec<Contract> = parts
                .iter()
                .filter_map(|x| match x {
                    Part::Fact(e) if e.reads_heap() => None,
                    Part::Instance(e) | Part::Fact(e) => Some(Contract {
                        exp: e.clone(),
                        origin: Origin::new(role, Some(p.keyword)).with_label("region"),
                    }),
                })
                .collect();
            // Facts first, then resources, then what reads what they grant.
            v.sort_by_key(|c| match (c.exp.has_acc(), c.exp.reads_heap()) {
                (false, false) => 0,
                (true, _) => 1,
                (false, true) => 2,
            });
            v
        };
        pres.extend(part_contracts(&pre_parts, Role::ThreadPre));
        let posts = part_contracts(&post_parts, Role::ThreadPost);

        // The pipelines of iteration j: every arm that waits for nothing starts at once; an arm
        // that waits takes over the postcondition of the arm it waits for when that ends.
        let at = |s: &ArmSite, e: &Exp| e.clone().subst(&s.iters[0], &jv);
        let mut body = Vec::new();
        let mut starts: Vec<String> = Vec::new();
        let mut ended = vec![false; sites.len()];
        let start = |me: &mut Self, k: usize, body: &mut Vec<Stmt>| {
            let l = me.fresh_name("region_arm");
            body.push(Stmt::new(StmtKind::Label(l.clone()), Origin::synthetic()));
            let s = &sites[k];
            let name = p.arms[k].label.as_ref().map_or(String::new(), |l| l.name.clone());
            // The facts first, while the permissions that frame them are still held.
            let (res, facts): (Vec<&Conj>, Vec<&Conj>) =
                s.conj_pre.iter().partition(|c| c.exp.has_acc());
            for c in facts.into_iter().chain(res) {
                let o =
                    Origin::new(Role::ParPre, Some(c.span)).with_clause(c.clause).with_label(&name);
                let kind = if c.exp.has_acc() {
                    StmtKind::Exhale(at(s, &c.exp))
                } else {
                    StmtKind::Assert(at(s, &c.exp))
                };
                body.push(Stmt::new(kind, o));
            }
            l
        };
        let end = |k: usize, label: &str, body: &mut Vec<Stmt>| {
            let s = &sites[k];
            let (res, facts): (Vec<&Conj>, Vec<&Conj>) =
                s.conj_post.iter().partition(|c| c.exp.has_acc());
            for c in res.into_iter().chain(facts) {
                let o = Origin::new(Role::ParPost, Some(c.span)).with_clause(c.clause);
                body.push(Stmt::new(StmtKind::Inhale(replace_old(at(s, &c.exp), label)), o));
            }
        };
        for (k, w) in waits.iter().enumerate() {
            starts.push(if w.is_none() { start(self, k, &mut body) } else { String::new() });
        }
        for (k, w) in waits.iter().enumerate() {
            if let Some(d) = *w {
                if !ended[d] {
                    end(d, &starts[d], &mut body);
                    ended[d] = true;
                }
                starts[k] = start(self, k, &mut body);
            }
        }
        for (k, done) in ended.iter().enumerate() {
            if !done {
                end(k, &starts[k], &mut body);
            }
        }

        let contracts: Vec<&Contract> = pres.iter().chain(&posts).collect();
        let mut params = vec![(j.clone(), Ty::Int)];
        params.extend(
            captured(&contracts, &body)
                .into_iter()
                .filter(|n| *n != j)
                .filter_map(|n| self.vtypes.get(&n).map(|t| (n, t.clone()))),
        );
        let host = self.host_method_name();
        let name = self.global_name(format!("{host}_region"));
        self.out.methods.push(Method {
            name,
            params,
            returns: vec![],
            pres,
            posts,
            body: Some(body),
            kind: MethodKind::Thread,
            span: Some(p.keyword),
        });

        // The block: the region's precondition is given, its postcondition comes back.
        out.push(Stmt::new(StmtKind::Label(label.clone()), Origin::synthetic()));
        let pre = self.contract_conjs(&clauses, true)?;
        let post = self.contract_conjs(&clauses, false)?;
        let o = |role: Role, c: &Conj| {
            Origin::new(role, Some(c.span)).with_clause(c.clause).with_label("region")
        };
        for c in pre.iter().filter(|c| !c.exp.has_acc()) {
            out.push(Stmt::new(StmtKind::Assert(c.exp.clone()), o(Role::ParPre, c)));
        }
        for c in pre.iter().filter(|c| c.exp.has_acc()) {
            out.push(Stmt::new(StmtKind::Exhale(c.exp.clone()), o(Role::ParPre, c)));
        }
        // A fact of the postcondition that is no instance reads no heap (`region_part`): the
        // region cannot change it, so it must hold now.
        for part in &post_parts {
            if let Part::Fact(e) = part {
                let origin = Origin::new(Role::ParPost, Some(p.keyword)).with_label("region");
                out.push(Stmt::new(StmtKind::Assert(e.clone()), origin));
            }
        }
        let (res, facts): (Vec<&Conj>, Vec<&Conj>) = post.iter().partition(|c| c.exp.has_acc());
        for c in res.into_iter().chain(facts) {
            out.push(Stmt::new(
                StmtKind::Inhale(replace_old(c.exp.clone(), &label)),
                o(Role::ParPost, c),
            ));
        }
        Ok(())
    }

    /// For each arm, the arm it waits for: `a(j)` names an earlier arm and this arm's own
    /// thread variable.
    fn region_waits(&mut self, p: &ast::Par) -> R<Vec<Option<usize>>> {
        let mut waits = Vec::new();
        for (k, arm) in p.arms.iter().enumerate() {
            let Some(w) = &arm.wait else {
                waits.push(None);
                continue;
            };
            // The text starts at the `;` of the header.
            let text: String = w.text.chars().filter(|c| !c.is_whitespace() && *c != ';').collect();
            let var = arm.iters.first().map(|i| i.name.name.as_str()).unwrap_or_default();
            let dep = text.strip_suffix(&format!("({var})")).and_then(|name| {
                p.arms[..k].iter().position(|a| a.label.as_ref().is_some_and(|l| l.name == name))
            });
            match dep {
                Some(d) => waits.push(Some(d)),
                None => {
                    self.unsupported(
                        "a wait list other than `a(j)`, for an earlier arm `a` and this arm's thread variable `j`",
                        w.span,
                    );
                    return Err(());
                }
            }
        }
        Ok(waits)
    }

    /// The region's pre- and postcondition conjuncts split by iteration `j` (a Viper variable
    /// bound in the current scope frame), in the order of `contract_conjs`.
    fn region_parts(
        &mut self,
        clauses: &[ast::Clause],
        j: &str,
        lo: &Exp,
        hi: &Exp,
    ) -> R<(Vec<Part>, Vec<Part>)> {
        let mut pres = Vec::new();
        let mut posts = Vec::new();
        for c in clauses {
            let Some(e) = c.expr() else { continue };
            for x in e.conjuncts() {
                if c.kind.is_pre() {
                    pres.push(self.region_part(x, j, lo, hi, false)?);
                }
                if c.kind.is_post() {
                    posts.push(self.region_part(x, j, lo, hi, true)?);
                }
            }
        }
        Ok((pres, posts))
    }

    fn region_part(&mut self, x: &Expr, j: &str, lo: &Exp, hi: &Exp, post: bool) -> R<Part> {
        if let ExprKind::Quant {
            kind: QuantKind::ForallStar | QuantKind::Forall,
            bindings,
            cond,
            body,
        } = &x.kind
        {
            if let ([b], Some(cond)) = (bindings.as_slice(), cond) {
                if matches!(b.ty.kind, ast::TypeKind::Int) && b.range.is_none() {
                    self.bind_name(&b.name.name, j, &b.ty);
                    let guard = self.spec(cond)?;
                    let inst = self.spec(body)?;
                    let jv = Exp::var(j);
                    let exact = Exp::and(
                        Exp::bin("<=", lo.clone(), jv.clone()),
                        Exp::bin("<", jv, hi.clone()),
                    );
                    // A postcondition over another range would claim iterations no arm runs.
                    if post && crate::print::exp_text(&guard) != crate::print::exp_text(&exact) {
                        self.unsupported(
                            "a region postcondition quantified over other values than the arms' iterations",
                            x.span,
                        );
                        return Err(());
                    }
                    return Ok(Part::Instance(Exp::implies(guard, inst)));
                }
            }
        }
        let e = self.spec(x)?;
        if e.has_acc() {
            self.unsupported(
                "a region resource that is not split over the iterations (`\\forall*` over one variable)",
                x.span,
            );
            return Err(());
        }
        if post && e.reads_heap() {
            self.unsupported(
                "a fact of a region postcondition that reads the heap outside a quantifier over the iterations",
                x.span,
            );
            return Err(());
        }
        Ok(Part::Fact(e))
    }
}

//! Barriers: the contract checks and the barrier-consistency method of each barrier.

use super::par::Conj;
use super::vars::exp_vars;

use crate::front::ast;
use crate::front::span::Span;
use crate::viper::ast::*;
use crate::viper::encode::{quant, Encoder, R};

/// An abstract stand-in for one `\\old(e)` in a barrier-consistency method: (text of e,
/// function name, parameters, result type).
type OldFn = (String, String, Vec<(String, Ty)>, Ty);

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
        if let Some(body) = &b.body {
            if !body.stmts.is_empty() {
                self.unsupported("a barrier with a non-empty body", body.span);
                return Err(());
            }
        }
        let pre = self.contract_conjs(&b.contract, true)?;
        let post = self.contract_conjs(&b.contract, false)?;
        let frame = self.pars[pi].clone();
        if let Some(p) = self.pars.get_mut(pi) {
            p.barriers += 1;
        }
        let k = frame.barriers + 1;
        let lbl = b.label.name.clone();
        let mk = |role: Role, c: &Conj| {
            Origin::new(role, Some(c.span)).with_clause(c.clause).with_label(&lbl)
        };

        // Enactment in this thread.
        out.push(Stmt::new(StmtKind::Comment(format!("barrier({lbl}) #{k}")), Origin::synthetic()));
        for c in pre.iter().filter(|c| !c.exp.has_acc()) {
            out.push(Stmt::new(StmtKind::Assert(c.exp.clone()), mk(Role::BarrierPre, c)));
        }
        for c in pre.iter().filter(|c| c.exp.has_acc()) {
            out.push(Stmt::new(StmtKind::Exhale(c.exp.clone()), mk(Role::BarrierPre, c)));
        }
        for c in post.iter().filter(|c| c.exp.has_acc()) {
            out.push(Stmt::new(StmtKind::Inhale(c.exp.clone()), mk(Role::BarrierPost, c)));
        }
        for c in post.iter().filter(|c| !c.exp.has_acc()) {
            out.push(Stmt::new(StmtKind::Inhale(c.exp.clone()), mk(Role::BarrierPost, c)));
        }

        // Consistency obligation: all threads' postconditions follow from, and take no more
        // permission than, all threads' preconditions.
        let iters = frame.iters.clone();
        let range = frame.range.clone();
        let mut nonempty = Vec::new();
        for pair in range.chunks(2) {
            if let [lo_le, lt_hi] = pair {
                if let (ExpKind::Binary(_, lo, _), ExpKind::Binary(_, _, hi)) =
                    (&lo_le.kind, &lt_hi.kind)
                {
                    nonempty.push(Exp::bin("<", (**lo).clone(), (**hi).clone()));
                }
            }
        }
        let one = Exp::int(1);
        let mut pres = vec![Contract {
            exp: Exp::and_all(nonempty),
            origin: Origin::new(Role::BarrierConsPre, Some(b.keyword)),
        }];
        // The thread's own range is quantified below, not a fact about one value of `tid`.
        for c in self
            .everywhere
            .iter()
            .filter(|c| !c.exp.has_acc() && !iters.iter().any(|v| c.exp.mentions_var(v)))
        {
            pres.push(Contract {
                exp: c.exp.clone(),
                origin: Origin { role: Role::BarrierConsPre, ..c.origin.clone() },
            });
        }
        // `\old` is not allowed in Viper preconditions. The consistency method must hold for
        // every pre-state, so each `\old(e)` becomes an abstract function of e's variables:
        // requires and ensures then talk about the same (arbitrary) old values.
        let mut olds: Vec<OldFn> = Vec::new();
        let method_name = frame.method.clone();
        let vtypes = self.vtypes.clone();
        let mut abstract_old = |e: Exp| -> Exp {
            e.map(&mut |n| match n.kind {
                ExpKind::Old(None, inner) => {
                    let key = quant::text(&inner);
                    let mut bound = Vec::new();
                    let mut vars = Vec::new();
                    exp_vars(&inner, &mut bound, &mut vars);
                    vars.sort();
                    let params: Vec<(String, Ty)> = vars
                        .iter()
                        .map(|v| (v.clone(), vtypes.get(v).cloned().unwrap_or(Ty::Int)))
                        .collect();
                    let ret = if key.contains("bool_val") { Ty::Bool } else { Ty::Int };
                    let fname = match olds.iter().find(|(t, ..)| *t == key) {
                        Some((_, f, ..)) => f.clone(),
                        None => {
                            let f = format!("{method_name}_barrier{k}_old{}", olds.len());
                            olds.push((key, f.clone(), params, ret));
                            f
                        }
                    };
                    let args = vars.into_iter().map(Exp::var).collect();
                    Exp { kind: Exp::app(fname, args).kind, span: n.span }
                }
                kind => Exp { kind, span: n.span },
            })
        };
        let pre: Vec<Conj> = pre
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.exp = abstract_old(c.exp);
                c
            })
            .collect();
        let post: Vec<Conj> = post
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.exp = abstract_old(c.exp);
                c
            })
            .collect();
        for (_, name, params, ret) in olds {
            self.out.functions.push(crate::viper::ast::Function {
                name,
                params,
                ret,
                pres: vec![],
                posts: vec![],
                body: None,
                span: None,
            });
        }
        let mut later = Vec::new();
        for c in &pre {
            let q = self.all_threads(&iters, &range, &one, c.exp.clone());
            let ct = Contract { exp: q, origin: mk(Role::BarrierConsPre, c) };
            if c.exp.has_acc() {
                pres.push(ct);
            } else {
                later.push(ct);
            }
        }
        pres.extend(later);
        let mut posts = Vec::new();
        let mut later = Vec::new();
        for c in &post {
            let q = self.all_threads(&iters, &range, &one, c.exp.clone());
            let ct = Contract { exp: q, origin: mk(Role::BarrierConsPost, c) };
            if c.exp.has_acc() {
                posts.push(ct);
            } else {
                later.push(ct);
            }
        }
        posts.extend(later);
        let mut used = Vec::new();
        let mut bound = Vec::new();
        for c in pres.iter().chain(&posts) {
            exp_vars(&c.exp, &mut bound, &mut used);
        }
        let params: Vec<(String, Ty)> =
            used.into_iter().filter_map(|n| self.vtypes.get(&n).map(|t| (n, t.clone()))).collect();
        self.out.methods.push(Method {
            name: format!("{}_barrier{k}", frame.method),
            params,
            returns: vec![],
            pres,
            posts,
            body: Some(vec![]),
            kind: MethodKind::BarrierConsistency,
            span: Some(b.keyword),
        });
        Ok(())
    }
}

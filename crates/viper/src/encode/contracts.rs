//! A member's contract as Viper pre- and postconditions: the clauses in order, the facts a
//! parameter's declared type states, and the facts about `yields` results.

use super::{frac_range, matrix, names, order, Encoder, R};
use crate::ast::*;
use front::ast::{self, ClauseKind, Type, TypeKind};

impl Encoder<'_> {
    /// Encoded conjuncts of a member's contract, one per line (`requires`, `ensures`).
    pub(super) fn method_contract(
        &mut self,
        m: &ast::Method,
        pre_role: Role,
        post_role: Role,
    ) -> R<(Vec<Contract>, Vec<Contract>)> {
        let mut pres = Vec::new();
        let mut posts = Vec::new();
        let mut ok = true;
        for c in &m.prefix.clauses {
            match c.kind {
                ClauseKind::Requires
                | ClauseKind::Ensures
                | ClauseKind::Context
                | ClauseKind::ContextEverywhere => {}
                ClauseKind::Given | ClauseKind::Yields => continue,
                ClauseKind::Decreases => {
                    match self.measure(c) {
                        Ok(ms) => pres.extend(ms),
                        Err(()) => ok = false,
                    }
                    continue;
                }
                // Every other clause (`modifies`, `accessible`, `signals`, …) is refused, never
                // dropped: dropping a clause would verify programs that break it.
                _ => {
                    self.unsupported(&format!("`{}`", c.kind.keyword()), c.span);
                    ok = false;
                    continue;
                }
            }
            let Some(e) = c.expr() else {
                self.unsupported(&format!("`{}` without an expression", c.kind.keyword()), c.span);
                ok = false;
                continue;
            };
            // A `yields` result is a Viper return variable, which a precondition cannot read
            // (Silicon rejected the whole file; found by the fuzzer, `fixtures/fuzz/`).
            if let Some(y) = names::yields_read(m, e).filter(|_| c.kind.is_pre()) {
                let what = format!("the `yields` result `{}` is read in a precondition", y.name);
                self.bad(format!("{what}, before the member sets it"), y.span);
                ok = false;
                continue;
            }
            if c.kind.is_pre() {
                if let Some(why) = self.before_the_member(m, e) {
                    self.bad(why.0, why.1);
                    ok = false;
                    continue;
                }
            }
            let Ok(cs) = self.conjuncts(e, c.span) else {
                ok = false;
                continue;
            };
            // The clause's conjuncts, each with `role` and its own span.
            let as_role = |role: Role| {
                cs.iter().map(move |(x, s)| Contract {
                    exp: x.clone(),
                    origin: Origin::new(role, Some(*s)).with_clause(c.span),
                })
            };
            if c.kind.is_pre() {
                // A precondition is evaluated in the pre-state, where `\old(e)` is `e`; Viper
                // forbids `old` there.
                pres.extend(as_role(pre_role).map(|mut c| {
                    c.exp = c.exp.map(&mut |e| match e.kind {
                        ExpKind::Old(None, inner) => *inner,
                        _ => e,
                    });
                    c
                }));
            }
            if c.kind.is_post() {
                posts.extend(as_role(post_role));
            }
            if c.kind == ClauseKind::ContextEverywhere {
                self.everywhere.extend(as_role(Role::Invariant));
            }
        }
        if ok {
            let (mut facts, kept, held) = self.type_facts(m)?;
            facts.extend(pres);
            let mut results = self.yields_facts(m);
            results.extend(kept);
            results.extend(posts);
            if !held.is_empty() {
                facts = self.after_row_grants(facts, &held);
                results = self.after_row_grants(results, &held);
                let everywhere = std::mem::take(&mut self.everywhere);
                self.everywhere = self.after_row_grants(everywhere, &held);
            }
            let everywhere = std::mem::take(&mut self.everywhere);
            self.everywhere = order::pure_first(everywhere);
            let facts = order::pure_first(facts);
            (self.fixed_params, self.fixed_facts) = self.fixed(m, &facts);
            Ok((facts, order::pure_first(results)))
        } else {
            Err(())
        }
    }

    /// What a precondition cannot read, because it does not exist before the member runs:
    /// `\result`, and in a constructor the object being built (`this`, its fields). Silicon
    /// rejected the whole program over it (found by writing user programs); this says why.
    fn before_the_member(&self, m: &ast::Method, e: &ast::Expr) -> Option<(String, front::Span)> {
        let params: Vec<&str> = m.params.iter().map(|p| p.name.name.as_str()).collect();
        let class = self.class.clone().unwrap_or_default();
        let mut found = None;
        front::visit::walk_expr(e, &mut |x| {
            if found.is_some() {
                return;
            }
            found = match &x.kind {
                ast::ExprKind::Result => Some((
                    "`\\result` is read in a precondition, before the member returns".to_string(),
                    x.span,
                )),
                ast::ExprKind::This if m.kind.is_ctor() => Some((
                    "a constructor's precondition reads `this`, the object it has not built yet"
                        .to_string(),
                    x.span,
                )),
                ast::ExprKind::Name(id)
                    if m.kind.is_ctor()
                        && !params.contains(&id.name.as_str())
                        && self.field_names.contains_key(&(class.clone(), id.name.clone())) =>
                {
                    Some((
                        format!(
                            "a constructor's precondition reads the field `{}` of the object it \
                             has not built yet",
                            id.name
                        ),
                        x.span,
                    ))
                }
                _ => None,
            };
        });
        found
    }

    /// What a parameter's type says beyond its Viper sort, assumed by the member (and
    /// established by every caller), in the order of the Viper names: the range VerCors gives
    /// `frac` (`0 < p <= 1`) and `zfrac` (`0 <= p <= 1`), `given` parameters included, and the
    /// length of a sized array `T[n] a` (`a.length == n` when `a` is not null, also kept as a
    /// `context_everywhere` fact). A sized array of arrays `T[M][N] m` is an M-by-N matrix, as
    /// `\matrix(m, M, N)` states, read access to the rows included (VerCors verifies programs
    /// that index such a parameter's rows without any row permission); a member that states row
    /// permissions itself gets only the length, since both together could exceed 1.
    /// Returns the preconditions and the postconditions (the array facts, which the member
    /// keeps: a postcondition must frame its own reads of rows).
    pub(super) fn type_facts(
        &mut self,
        m: &ast::Method,
    ) -> R<(Vec<Contract>, Vec<Contract>, Vec<matrix::HeldRows>)> {
        let at = m.name.span;
        // Parameters and `given` ones; not `yields` (results, which the body sets).
        let given = m.prefix.clauses.iter().filter_map(|c| match (&c.kind, &c.body) {
            (ClauseKind::Given, ast::ClauseBody::Decl(_, n)) => Some(n.name.as_str()),
            _ => None,
        });
        let inputs: Vec<&str> =
            m.params.iter().map(|p| p.name.name.as_str()).chain(given).collect();
        let mut typed: Vec<(String, &str, Type)> = inputs
            .into_iter()
            .filter_map(|n| self.lookup(n).map(|l| (l.viper.clone(), n, l.ty.clone())))
            .collect();
        typed.sort_by(|a, b| a.0.cmp(&b.0));
        let (mut out, mut kept, mut held) = (Vec::new(), Vec::new(), Vec::new());
        for (v, src, ty) in typed {
            let exp = match &ty.kind {
                TypeKind::Frac | TypeKind::ZFrac => frac_range(&v, ty.kind == TypeKind::Frac),
                TypeKind::Array(elem, size) => {
                    let var = Exp::var(&v);
                    let some = Exp::bin("!=", var.clone(), Exp::app("anull", vec![]));
                    let n = match size {
                        Some(n) => Some(self.spec(n)?),
                        None => None,
                    };
                    let length =
                        n.clone().map(|n| Exp::bin("==", Exp::app("alen", vec![var.clone()]), n));
                    // `T[M][N] m` (or `T[][] m`): a matrix whose rows the member may read, as
                    // `\matrix(m, M, N)` states (unless the member states row permissions).
                    let shape = match analyze::shapes::row_extent(elem) {
                        Some(y) if !analyze::shapes::states_row_permission(m, src) => {
                            let y = y.map(|y| self.spec(y)).transpose()?;
                            let x = n.unwrap_or_else(|| Exp::app("alen", vec![var.clone()]));
                            Some(self.matrix_shape(&var, &x, y.as_ref()))
                        }
                        // The member's own row permissions: the shape of the rows it holds,
                        // after each clause that grants them (`matrix::after_row_grants`).
                        Some(y) => {
                            let y = y.map(|y| self.spec(y)).transpose()?;
                            let x =
                                n.clone().unwrap_or_else(|| Exp::app("alen", vec![var.clone()]));
                            held.push(matrix::HeldRows { var: v.clone(), rows: x, len: y });
                            length
                        }
                        _ => length,
                    };
                    let Some(shape) = shape else { continue };
                    let fact = Exp::bin("==>", some, shape);
                    // Part of the type, so it holds everywhere in the member, as
                    // `context_everywhere` does (par blocks, loops).
                    let origin = Origin::new(Role::Invariant, Some(at));
                    self.everywhere.push(Contract { exp: fact.clone(), origin });
                    let origin = Origin::new(Role::Post, Some(at));
                    kept.push(Contract { exp: fact.clone(), origin });
                    fact
                }
                _ => continue,
            };
            out.push(Contract { exp, origin: Origin::new(Role::Pre, Some(at)) });
        }
        Ok((out, kept, held))
    }

    /// The range of a `frac`/`zfrac` `yields` result, which the member establishes (a
    /// postcondition) and its callers may rely on.
    pub(super) fn yields_facts(&self, m: &ast::Method) -> Vec<Contract> {
        m.prefix
            .clauses
            .iter()
            .filter_map(|c| match (&c.kind, &c.body) {
                (ClauseKind::Yields, ast::ClauseBody::Decl(t, n)) => Some((t, n, c.span)),
                _ => None,
            })
            .filter_map(|(t, n, span)| {
                let strict = match t.kind {
                    TypeKind::Frac => true,
                    TypeKind::ZFrac => false,
                    _ => return None,
                };
                let v = self.lookup(&n.name)?.viper.clone();
                Some(Contract {
                    exp: frac_range(&v, strict),
                    origin: Origin::new(Role::Post, Some(span)),
                })
            })
            .collect()
    }
}

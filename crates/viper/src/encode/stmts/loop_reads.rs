//! `read` permissions in loop invariants.
//!
//! A `read` in a loop invariant used to be a Viper `wildcard`. The loop's exhale of the invariant
//! before the first iteration then takes some unknown amount, and its inhale after the last one
//! gives back another unknown amount: a method that took a location with its `read` parameter
//! (`rd`, see `Callable::read_locs`) could not give that amount back in its postcondition
//! (VerCors' veymont-global-programs/leaderelectring-with-permissions.pvl failed so).
//!
//! Instead, as for calls (`read_arg`), the loop gets an amount fixed at its entry: half the least
//! amount the method holds of the invariant's read locations. The loop takes exactly that amount
//! and gives it back. This applies only when every `read` of the invariants outside quantifiers
//! is a top-level `Perm(loc, read)` conjunct whose location mentions no variable the loop
//! assigns: a conditional read, or a cell that moves with the loop, is not held at entry in
//! the amount it needs later, and keeps the wildcard. A quantified `read` stays a wildcard too.
//! Taking a fixed amount is never more than the wildcard would allow, so nothing verifies that
//! did not before for want of permission; the amount is 0 when a location is not held at entry,
//! and the reads inside the loop then fail as they should.

use super::{Encoder, R};
use crate::ast::*;
use analyze::scope::assigned_vars;
use front::ast::{self, Builtin, ClauseKind, Expr, ExprKind, Stmt};
use front::visit::{for_each_child, walk_expr};
use std::collections::BTreeSet;

impl Encoder<'_> {
    /// Encode a loop's invariants (with `invariants`) where `read` stands for an amount fixed
    /// at the loop's entry, when the loop with this prefix and these statements (body and
    /// updates, which also change the variables `moving`) allows it; the assignment of that
    /// amount is pushed on `out`. Otherwise `read` stays a wildcard.
    pub(super) fn with_loop_reads<T>(
        &mut self,
        prefix: &ast::Prefix,
        stmts: &[&Stmt],
        moving: &[&str],
        out: &mut Vec<crate::ast::Stmt>,
        invariants: impl FnOnce(&mut Self) -> R<T>,
    ) -> R<T> {
        let Some(locs) = stable_read_locs(prefix, stmts, moving) else {
            return invariants(self);
        };
        let rd = self.temp("rd", Ty::Perm);
        let saved = self.read_var.replace(rd.clone());
        let r = invariants(self);
        self.read_var = saved;
        let r = r?;
        // The locations encoded in the invariants, so they encode here without new errors.
        let mut held = Vec::new();
        for l in &locs {
            held.push(self.location(l)?);
        }
        if let Some(least) = super::super::exprs::half_least_held(held) {
            out.push(crate::ast::Stmt::new(
                StmtKind::Assign(Exp::var(&rd), least),
                Origin::synthetic(),
            ));
        }
        Ok(r)
    }
}

/// The locations of the top-level `Perm(loc, read)` conjuncts of the loop invariants, if every
/// `read` outside quantifiers is one of them and no location mentions an assigned variable.
fn stable_read_locs(prefix: &ast::Prefix, stmts: &[&Stmt], moving: &[&str]) -> Option<Vec<Expr>> {
    let mut locs = Vec::new();
    for c in prefix.clauses.iter().filter(|c| c.kind == ClauseKind::LoopInvariant) {
        let Some(e) = c.expr() else { continue };
        for x in e.conjuncts() {
            match &x.kind {
                ExprKind::Builtin(Builtin::Perm, args)
                    if matches!(args.as_slice(), [_, Expr { kind: ExprKind::Read, .. }]) =>
                {
                    // `Perm(a[*], read)` stands for a quantifier over the elements: a wildcard,
                    // as `read` inside quantifiers is.
                    let all = matches!(&args[0].kind, ExprKind::Index(_, i) if matches!(i.kind, ExprKind::Wildcard));
                    if all || reads_outside_quantifiers(&args[0]) {
                        return None;
                    }
                    locs.push(args[0].clone());
                }
                _ if reads_outside_quantifiers(x) => return None,
                _ => {}
            }
        }
    }
    if locs.is_empty() {
        return None;
    }
    let mut assigned: BTreeSet<String> = moving.iter().map(|m| m.to_string()).collect();
    for s in stmts {
        assigned.extend(assigned_vars(s));
    }
    let moves = |l: &Expr| {
        let mut hit = false;
        walk_expr(l, &mut |x| {
            if let ExprKind::Name(id) = &x.kind {
                hit |= assigned.contains(&id.name);
            }
        });
        hit
    };
    if locs.iter().any(moves) {
        return None;
    }
    Some(locs)
}

/// Does `e` contain a `read` amount outside every quantifier?
fn reads_outside_quantifiers(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Read => true,
        ExprKind::Quant { .. } => false,
        _ => {
            let mut hit = false;
            for_each_child(e, &mut |c, _| hit |= reads_outside_quantifiers(c));
            hit
        }
    }
}

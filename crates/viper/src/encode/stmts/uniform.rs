//! What a barrier may assume of its threads (verification.md §5.10 (d)): its consistency check
//! reads each local of its contract as one value shared by all threads, and lets every thread
//! of the block arrive. `analyze::uniform` says which locals may differ between threads and
//! which conditions on the way to a barrier may; here a thread-dependent local of a barrier
//! contract is written as its definition over the thread variables (`int k = tid;` makes
//! `a[k]` read `a[tid]`), or refused, and every thread is proved to reach the barrier.

use crate::ast::*;
use crate::encode::{Encoder, R};
use analyze::uniform::{inline_thread_locals, Uniformity};
use front::ast;
use front::span::Span;
use front::visit::map_clause;

impl Encoder<'_> {
    /// The barrier's contract with its thread-dependent locals written over the thread
    /// variables; a local that cannot be is refused (the check would treat it as one value).
    pub(super) fn barrier_contract(
        &mut self,
        b: &ast::Barrier,
        u: &Uniformity,
        iters: &[String],
    ) -> R<Vec<ast::Clause>> {
        let mut out = b.contract.clone();
        for c in &mut out {
            let mut bad = None;
            map_clause(c, &mut |e| {
                match inline_thread_locals(e, u, iters) {
                    Ok(x) => *e = x,
                    Err(n) => bad = Some(n),
                }
                true
            });
            if let Some(n) = bad {
                let what = if n.is_empty() {
                    "a barrier contract whose thread-dependent locals define each other".to_string()
                } else {
                    format!(
                        "a barrier contract that names `{n}`, a local that may differ between \
                         threads and is not defined once over the thread variables (the \
                         barrier's check would read it as one value for all threads)"
                    )
                };
                self.unsupported(&what, c.span);
                return Err(());
            }
        }
        Ok(out)
    }

    /// Postconditions of the barrier's consistency method (where the thread variables are
    /// bound, not the thread's own) saying that every thread of the block reaches the barrier:
    /// each condition on the way that may differ between threads holds in all of them
    /// (`false` where that cannot be stated: a loop guard or a jump that may differ, or a
    /// condition that reads the heap).
    pub(super) fn barrier_reach(
        &mut self,
        conds: &[Option<(ast::Expr, bool)>],
        u: &Uniformity,
        (iters, pvl_iters, range, n_threads): (&[String], &[String], &[Exp], &Exp),
        at: Span,
        out: &mut Vec<Contract>,
    ) -> R<()> {
        for c in conds {
            let exp = match c {
                Some((cond, taken)) => match inline_thread_locals(cond, u, pvl_iters) {
                    Ok(cond) => {
                        let e = self.spec(&cond)?;
                        if e.reads_heap() {
                            Exp::bool(false)
                        } else {
                            let e = if *taken { e } else { Exp::negate(e) };
                            self.all_threads(iters, range, n_threads, e)
                        }
                    }
                    Err(_) => Exp::bool(false),
                },
                None => Exp::bool(false),
            };
            out.push(Contract { exp, origin: Origin::new(Role::BarrierReach, Some(at)) });
        }
        Ok(())
    }
}

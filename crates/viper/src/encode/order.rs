//! The order in which a contract's conjuncts are checked.
//!
//! Viper checks each conjunct's well-definedness (array bounds, non-null receivers) with only
//! the conjuncts before it known. VerCors accepts contracts that state a pure fact after a
//! permission whose subscript needs it (VerCors' own `carp/zero-sub-matrix.c`:
//! `Perm(matrix[i][j], write)` for `j < N`, then `step >= N`, the rows being `step` long). A
//! fact that reads no heap means the same wherever it stands in a separating conjunction, so
//! such facts go first, in their own order; everything else keeps its order after them. Only
//! facts that are defined everywhere move: one that indexes a sequence or divides may need
//! the conjuncts before it (`\result < n() ==> graph[\result][0] == pos` after
//! `0 <= \result`), and keeps its place.

use crate::ast::{Contract, Exp, ExpKind, Role};

/// `list` with its heap-free facts (precondition, postcondition and invariant conjuncts) first.
pub(super) fn pure_first(list: Vec<Contract>) -> Vec<Contract> {
    let (mut pure, rest): (Vec<Contract>, Vec<Contract>) = list.into_iter().partition(|c| {
        matches!(c.origin.role, Role::Pre | Role::Post | Role::Invariant)
            && heap_free(&c.exp)
            && total(&c.exp)
    });
    pure.extend(rest);
    pure
}

/// Whether `e` is defined in every state: no sequence index and no division, whose
/// well-definedness may rest on the conjuncts before it.
fn total(e: &Exp) -> bool {
    let mut total = true;
    e.visit(&mut |n| {
        total &= !matches!(&n.kind, ExpKind::SeqIndex(..) | ExpKind::Binary("\\" | "%" | "/", _, _))
    });
    total
}

/// Whether `e` reads nothing of the heap and holds no permission: no field, no `acc`, no
/// `perm`, no `old`, and no function but the array domain's `alen` and `anull` (a function may
/// read the heap, and its precondition may need what comes before it).
pub(super) fn heap_free(e: &Exp) -> bool {
    let mut free = true;
    e.visit(&mut |n| {
        free &= match &n.kind {
            ExpKind::Field(..)
            | ExpKind::Acc(..)
            | ExpKind::PermOf(..)
            | ExpKind::Old(..)
            | ExpKind::Wildcard
            | ExpKind::Unfolding(..) => false,
            ExpKind::App(f, _) => f == "alen" || f == "anull" || f == super::locks::COMMITTED,
            _ => true,
        }
    });
    free
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::Origin;

    fn c(e: Exp, role: Role) -> Contract {
        Contract { exp: e, origin: Origin::new(role, None) }
    }

    #[test]
    fn heap_free_facts_go_first_in_their_order() {
        let cell = Exp::field(Exp::app("aloc", vec![Exp::var("a"), Exp::var("i")]), "int_val");
        let perm = c(Exp::acc(cell.clone(), Exp::synth(ExpKind::Write)), Role::Pre);
        let read = c(Exp::bin("==", cell, Exp::int(0)), Role::Pre);
        let n = c(Exp::bin("<", Exp::var("i"), Exp::app("alen", vec![Exp::var("a")])), Role::Pre);
        let m = c(Exp::bin(">", Exp::var("m"), Exp::int(0)), Role::Pre);
        let measure = c(Exp::var("m"), Role::Decreases);
        let out =
            pure_first(vec![perm.clone(), read.clone(), measure.clone(), n.clone(), m.clone()]);
        assert_eq!(out, vec![n, m, perm, read, measure]);
    }
}

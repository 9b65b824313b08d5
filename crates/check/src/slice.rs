//! The facts a goal can depend on: those that share an uninterpreted symbol with it, directly or
//! through other such facts (the cone of influence).
//!
//! Γ often holds non-linear facts about variables a query never mentions (`row == blockIdx.y *
//! T + ty` beside a loop `k < 16`), and Z3 may spend its whole time limit on them. A model of
//! the slice proposes values of the terms it was cut for as well as a model of Γ does, when Γ
//! has one; the values must still be proved from Γ (a model of the slice need not extend to Γ:
//! the other facts may have none, so the slice never answers a satisfiability question).

use std::collections::HashSet;
use std::sync::OnceLock;
use z3::ast::{Ast, Dynamic};
use z3::DeclKind;

use crate::translate::Z3Bool;

/// The uninterpreted symbols (constants and functions) of `root`; `None` when it holds a
/// quantifier, whose body this walk cannot see.
pub(crate) fn symbols(root: &Dynamic<'static>) -> Option<HashSet<String>> {
    // Z3 numbers its declaration kinds by their place in an enum; the kind of a fresh constant
    // is the uninterpreted one, whatever the version.
    static UNINTERPRETED: OnceLock<DeclKind> = OnceLock::new();
    let uninterpreted = *UNINTERPRETED
        .get_or_init(|| z3::ast::Int::new_const(crate::ctx(), "vct_slice_probe").decl().kind());
    let mut out = HashSet::new();
    let mut seen = HashSet::new();
    let mut todo = vec![root.clone()];
    while let Some(d) = todo.pop() {
        match d.kind() {
            z3::AstKind::Quantifier => return None,
            z3::AstKind::App if seen.insert(d.clone()) => {
                if let Ok(decl) = d.safe_decl() {
                    if decl.kind() == uninterpreted {
                        out.insert(decl.name());
                    }
                }
                todo.extend((0..d.num_children()).filter_map(|i| d.nth_child(i)));
            }
            _ => {}
        }
    }
    Some(out)
}

/// The facts of `facts` that `roots` can depend on (quantified facts, whose symbols the walk
/// cannot see, left out). `None` when the slice is all of `facts` (nothing to gain) or a root
/// holds a quantifier.
pub fn slice(facts: &[Z3Bool], roots: &[Dynamic<'static>]) -> Option<Vec<Z3Bool>> {
    let mut wanted: HashSet<String> = HashSet::new();
    for r in roots {
        wanted.extend(symbols(r)?);
    }
    let mut left: Vec<(usize, std::rc::Rc<HashSet<String>>)> = Vec::new();
    for (i, f) in facts.iter().enumerate() {
        if let Some(s) = crate::fact_symbols(f) {
            left.push((i, s));
        }
    }
    let mut taken: Vec<usize> = Vec::new();
    loop {
        let before = taken.len();
        left.retain(|(i, s)| {
            if s.is_empty() || s.iter().any(|x| wanted.contains(x)) {
                // A fact without symbols (`1 <= 2`) is a constant: keeping it costs nothing.
                wanted.extend(s.iter().cloned());
                taken.push(*i);
                false
            } else {
                true
            }
        });
        if taken.len() == before {
            break;
        }
    }
    if taken.len() == facts.len() {
        return None;
    }
    taken.sort_unstable();
    Some(taken.into_iter().map(|i| facts[i].clone()).collect())
}

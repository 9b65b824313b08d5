//! Finite domains a quantifier's formula implies for a binder without integer bounds.
//!
//! `(\forall int i; i < 1 || i > 3; !(i in keysMap(m)))` holds for every `i` outside
//! `keysMap(m)`, so it holds exactly when it holds for the keys: the binder can range over the
//! members of that collection (as `i in S` in the condition already lets it). Likewise
//! `\exists` needs its witness inside `S` when the condition or the body requires `i in S`.
//! Only the shape of the formula is used, so the enumeration is exact, never a sample.

use super::*;
use front::ast::QuantKind;

/// The collection `binder` can range over in a quantifier of `kind` with condition `cond` and
/// body `body`, when the formula is decided by the binder's values inside it.
pub(super) fn implied_domain(
    kind: QuantKind,
    cond: Option<&CE>,
    body: &CE,
    slot: u32,
    binders: &[u32],
) -> Option<CE> {
    let from_cond = cond.and_then(|c| required(c, slot));
    let d = match kind {
        // ∀x. c ⟹ b: true for x ∉ S when c requires x ∈ S or b holds there anyway.
        QuantKind::Forall | QuantKind::ForallStar => {
            from_cond.or_else(|| holds_outside(body, slot))
        }
        // ∃x. c ∧ b: a witness is in S when c or b requires it.
        QuantKind::Exists => from_cond.or_else(|| required(body, slot)),
    }?;
    // The collection is evaluated before any binder has a value.
    binders.iter().all(|b| !expr::mentions(&d, *b)).then_some(d)
}

/// `S` when `e` is true for every value of the binder outside `S`.
fn holds_outside(e: &CE, slot: u32) -> Option<CE> {
    match e {
        CE::Not(a) => required(a, slot),
        CE::Bin(BinOp::Or, a, b, _) => holds_outside(a, slot).or_else(|| holds_outside(b, slot)),
        CE::Bin(BinOp::Implies, a, b, _) => required(a, slot).or_else(|| holds_outside(b, slot)),
        _ => None,
    }
}

/// `S` when `e` is false for every value of the binder outside `S` (it implies `x in S`).
fn required(e: &CE, slot: u32) -> Option<CE> {
    match e {
        CE::Bin(BinOp::In, x, s, _)
            if matches!(**x, CE::Local(v) if v == slot) && !expr::mentions(s, slot) =>
        {
            Some((**s).clone())
        }
        CE::Bin(BinOp::And, a, b, _) => required(a, slot).or_else(|| required(b, slot)),
        CE::Not(a) => holds_outside(a, slot),
        _ => None,
    }
}

//! The user's patterns `{: e :}` as Viper triggers.
//!
//! A pattern is encoded like any expression (it also stands for its value) and recorded for
//! the quantifier it belongs to: the innermost one, or the one `parent` levels out
//! (`{:<: e :}`). Unnumbered patterns are trigger sets of their own; patterns with the same
//! number form one multi-pattern. The sets replace the encoder's own triggers where Viper
//! accepts them for the quantifier as encoded; anywhere else (a pattern with arithmetic, a
//! quantifier that the encoder re-indexed over fresh variables, a set that misses a variable)
//! the encoder's triggers stay. Triggers only steer instantiation, so falling back never
//! makes a wrong program verify.

use super::Encoder;
use crate::ast::{Exp, ExpKind};
use front::ast::TriggerTag;
use std::collections::{BTreeMap, HashSet};

/// The patterns of one quantifier, in source order.
pub type Patterns = Vec<(TriggerTag, Exp)>;

impl Encoder<'_> {
    /// Record the encoding of a pattern for the quantifier it names (none: it is ignored, as a
    /// pattern outside any quantifier means nothing).
    pub fn record_pattern(&mut self, tag: TriggerTag, e: &Exp) {
        let n = self.patterns.len();
        if let Some(frame) =
            n.checked_sub(1 + tag.parent as usize).and_then(|i| self.patterns.get_mut(i))
        {
            frame.push((tag, e.clone()));
        }
    }

    /// Put the user's trigger sets `pats`, collected for a quantifier over the Viper variables
    /// `vars`, on its encoding `e`.
    pub fn user_triggers(&self, e: Exp, vars: &[String], pats: Patterns) -> Exp {
        if pats.is_empty() {
            return e;
        }
        let predicates: HashSet<&str> =
            self.out.predicates.iter().map(|p| p.name.as_str()).collect();
        place(e, vars, &sets(pats), &predicates)
    }
}

/// Unnumbered patterns one set each; numbered ones grouped by number (first use first).
fn sets(pats: Patterns) -> Vec<Vec<Exp>> {
    let mut out: Vec<Vec<Exp>> = Vec::new();
    let mut groups: BTreeMap<u32, usize> = BTreeMap::new();
    for (tag, e) in pats {
        match tag.group {
            None => out.push(vec![e]),
            Some(g) => match groups.get(&g) {
                Some(&i) => out[i].push(e),
                None => {
                    groups.insert(g, out.len());
                    out.push(vec![e]);
                }
            },
        }
    }
    out
}

/// Replace the triggers of the quantifiers at the top of `e` (through conjunctions, which
/// the encoder makes when it splits a quantifier) by the valid sets.
fn place(e: Exp, vars: &[String], sets: &[Vec<Exp>], preds: &HashSet<&str>) -> Exp {
    let span = e.span;
    let kind = match e.kind {
        ExpKind::Binary("&&", a, b) => ExpKind::Binary(
            "&&",
            Box::new(place(*a, vars, sets, preds)),
            Box::new(place(*b, vars, sets, preds)),
        ),
        ExpKind::Forall(vs, trs, b) => {
            let ok = valid_sets(&vs, &b, vars, sets, preds);
            ExpKind::Forall(vs, if ok.is_empty() { trs } else { ok }, b)
        }
        ExpKind::Exists(vs, trs, b) => {
            let ok = valid_sets(&vs, &b, vars, sets, preds);
            ExpKind::Exists(vs, if ok.is_empty() { trs } else { ok }, b)
        }
        k => k,
    };
    Exp::new(kind, span)
}

/// The sets Viper accepts as triggers of `forall vs :: body`: terms of the trigger kinds with
/// no arithmetic inside, together mentioning every variable of `vs`, and no variable that is
/// out of scope there (one of the PVL quantifier's `all` the encoder substituted away, or one
/// bound inside the body).
fn valid_sets(
    vs: &[(String, crate::ast::Ty)],
    body: &Exp,
    all: &[String],
    sets: &[Vec<Exp>],
    preds: &HashSet<&str>,
) -> Vec<Vec<Exp>> {
    let mut inner = HashSet::new();
    body.visit(&mut |n| match &n.kind {
        ExpKind::Forall(bs, ..) | ExpKind::Exists(bs, ..) => {
            inner.extend(bs.iter().map(|(v, _)| v.clone()));
        }
        ExpKind::Let(v, ..) => {
            inner.insert(v.clone());
        }
        _ => {}
    });
    let bound: HashSet<&str> = vs.iter().map(|(v, _)| v.as_str()).collect();
    sets.iter()
        .filter(|set| {
            let mut seen = HashSet::new();
            let terms_ok = set.iter().all(|t| {
                let mut ok = top_ok(t, preds);
                let mut mine = false;
                t.visit(&mut |n| {
                    if let ExpKind::Var(v) = &n.kind {
                        if bound.contains(v.as_str()) {
                            mine = true;
                            seen.insert(v.clone());
                        } else if all.contains(v) || inner.contains(v) {
                            ok = false;
                        }
                    }
                });
                ok && mine
            });
            terms_ok && seen.len() == bound.len()
        })
        .cloned()
        .collect()
}

/// A trigger term: an application (not of a predicate), a field read, a sequence index or a
/// membership, over variables, literals and such terms only.
fn top_ok(t: &Exp, preds: &HashSet<&str>) -> bool {
    let head = match &t.kind {
        ExpKind::App(f, _) => !preds.contains(f.as_str()),
        ExpKind::Field(..) | ExpKind::SeqIndex(..) => true,
        ExpKind::Binary("in", ..) => true,
        _ => false,
    };
    let mut inside = true;
    t.for_each_child(false, &mut |c| {
        c.visit(&mut |n| {
            let fine = match &n.kind {
                ExpKind::Int(v) => v.sign() != num_bigint::Sign::Minus,
                ExpKind::Var(_)
                | ExpKind::Bool(_)
                | ExpKind::Null
                | ExpKind::Field(..)
                | ExpKind::SeqIndex(..)
                | ExpKind::Len(_) => true,
                ExpKind::App(f, _) => !preds.contains(f.as_str()),
                _ => false,
            };
            inside &= fine;
        })
    });
    head && inside
}

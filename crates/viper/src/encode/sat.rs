//! Contract satisfiability (VerCors' check, `verification.md` §5): a method whose precondition
//! can never hold verifies whatever its body does, which is almost always a mistake in the
//! contract. For every PVL method with a precondition, the encoding adds a method that assumes
//! the precondition and asserts `false`; Silicon failing that assertion is the expected outcome
//! (a state satisfying the precondition exists), and its success means the precondition is
//! unsatisfiable. Like VerCors, a precondition containing the literal `false` is taken as
//! intended and not checked. `verify --disable-sat` switches the check off.

use crate::ast::*;
use crate::errors::{error_kind, Mapped, SiliconError};
use crate::print::PosMap;
use diag::Diagnostic;

/// Prefix of the generated check methods (a `$` keeps them apart from every PVL name).
pub const SAT_PREFIX: &str = "sat$";

/// The satisfiability checks of `methods` (the PVL methods encoded so far).
pub(super) fn checks(methods: &[Method]) -> Vec<Method> {
    methods
        .iter()
        .filter(|m| m.kind == MethodKind::Pvl)
        .filter_map(|m| {
            // Termination measures are checked at calls, not assumed: they say nothing about
            // which states the method starts in.
            let pres: Vec<Contract> =
                m.pres.iter().filter(|c| c.origin.role != Role::Decreases).cloned().collect();
            let literally_false = pres.iter().any(|c| matches!(c.exp.kind, ExpKind::Bool(false)));
            if pres.is_empty() || literally_false {
                return None;
            }
            // The body of an instance method assumes `this != null` (a call on null never
            // reaches it), so a precondition that needs `this == null` is one no call meets.
            let mut pres = pres;
            if m.params.iter().any(|(p, t)| p == "this" && *t == Ty::Ref) {
                let not_null = Exp::bin("!=", Exp::var("this"), Exp::synth(ExpKind::Null));
                pres.insert(0, Contract { exp: not_null, origin: Origin::synthetic() });
            }
            let assert = Stmt::new(
                StmtKind::Assert(Exp::synth(ExpKind::Bool(false))),
                Origin::new(Role::Synthetic, m.span),
            );
            Some(Method {
                name: format!("{SAT_PREFIX}{}", m.name),
                params: m.params.clone(),
                returns: Vec::new(),
                pres,
                posts: Vec::new(),
                body: Some(vec![assert]),
                kind: MethodKind::SatCheck,
                span: m.span,
            })
        })
        .collect()
}

/// Read Silicon's errors for the satisfiability checks: the errors on check methods are taken
/// out, and each check method without an error becomes a `V-UNSAT-PRE` diagnostic (in its
/// unit). A check that failed for another reason than its `assert false` (an ill-formed
/// precondition, which the method itself reports) says nothing, and so does a run in which
/// Silicon rejected the program: its checks never ran.
pub fn settle(map: &PosMap, errors: Vec<SiliconError>) -> (Vec<SiliconError>, Vec<Mapped>) {
    let rejected =
        errors.iter().any(|e| error_kind(e) == "internal" || map.member_at(e.start.0).is_none());
    let is_check =
        |e: &SiliconError| map.member_at(e.start.0).is_some_and(|m| m.kind == MethodKind::SatCheck);
    let mut unsat = Vec::new();
    if !rejected {
        for (i, m) in map.members.iter().enumerate() {
            if m.kind != MethodKind::SatCheck
                || errors.iter().any(|e| m.first_line <= e.start.0 && e.start.0 <= m.last_line)
            {
                continue;
            }
            let mut d = Diagnostic::error(
                "V-UNSAT-PRE",
                "this method's precondition can never hold, so the method verifies vacuously",
            );
            if let Some(sp) = m.span {
                d = d.with_primary(sp, "no state satisfies this method's precondition");
            }
            let mut clauses: Vec<_> = map
                .entries
                .iter()
                .filter(|x| x.member == i && x.is_stmt)
                .filter_map(|x| x.clause)
                .collect();
            clauses.sort_by_key(|c| c.lo);
            clauses.dedup();
            for c in clauses {
                d = d.with_secondary(c, "part of the precondition");
            }
            unsat.push(Mapped { unit: m.unit, diagnostic: d });
        }
    }
    // A check's own failure (its `assert false`) is the expected answer; anything else in it (a
    // type error Silicon reports there) rejected the whole program, which verified nothing.
    let rest = errors.into_iter().filter(|e| !is_check(e) || error_kind(e) == "internal").collect();
    (rest, unsat)
}

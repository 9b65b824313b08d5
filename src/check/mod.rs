//! The Z3 applicability layer, shared by every optimization.
//!
//! One Z3 context and one solver per thread (queries use push/pop), a fixed seed and a per-query
//! timeout. `prove(facts, goal)` answers [`Answer::Proved`], [`Answer::Refuted`] with a
//! counterexample restricted to user-visible symbols, or [`Answer::Unknown`].

pub mod translate;
pub mod values;
mod watchdog;

use std::cell::RefCell;
use std::fmt;
use std::time::Duration;
use translate::{Term, Translator, Z3Bool};
use z3::ast::Ast;
use z3::{Config, Context, Params, SatResult, Solver};

/// A thread's Z3 state. Terms borrow the context; a `'static` borrow lets them live in ordinary
/// structs, so the context is allocated on the heap and only freed when the thread ends (after
/// the solver, which refers to it). Z3 terms are neither `Send` nor `Sync`, so none can outlive
/// the thread that made them, and no other thread-local holds one.
struct ThreadZ3 {
    ctx: &'static Context,
    solver: RefCell<Option<Solver<'static>>>,
}

impl ThreadZ3 {
    fn new() -> ThreadZ3 {
        let mut cfg = Config::new();
        cfg.set_model_generation(true);
        ThreadZ3 { ctx: Box::leak(Box::new(Context::new(&cfg))), solver: RefCell::new(None) }
    }
}

impl Drop for ThreadZ3 {
    fn drop(&mut self) {
        // The solver first: it holds a reference into the context.
        self.solver.get_mut().take();
        // SAFETY: `ctx` came from `Box::leak` in `new` and is freed only here, when the thread
        // exits. Every term made from it was made on this thread and has been dropped: stack
        // values are gone by the time thread-local destructors run, terms are not `Send`, and
        // this struct is the only thread-local that stores any.
        unsafe { drop(Box::from_raw(self.ctx as *const Context as *mut Context)) };
    }
}

thread_local! {
    // One per thread, freed with it: batch runs many files on short-lived threads.
    static Z3: ThreadZ3 = ThreadZ3::new();
}

/// This thread's Z3 context.
pub fn ctx() -> &'static Context {
    Z3.with(|z| z.ctx)
}

/// Default per-query timeout in milliseconds (`--z3-timeout`).
pub const DEFAULT_TIMEOUT_MS: u32 = 2000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    /// `(symbol, value)` pairs in a deterministic order (creation order of the symbols).
    pub values: Vec<(String, String)>,
}

impl fmt::Display for Counterexample {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.values.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        write!(f, "{}", parts.join(", "))
    }
}

impl Counterexample {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Proved,
    Refuted(Counterexample),
    Unknown(String),
}

impl Answer {
    pub fn is_proved(&self) -> bool {
        matches!(self, Answer::Proved)
    }
}

/// Check that `facts ⟹ goal` holds: `facts ∧ ¬goal` is unsatisfiable.
pub fn prove(tr: &Translator, facts: &[Z3Bool], goal: &Z3Bool, timeout_ms: u32) -> Answer {
    let facts: &[Z3Bool] = &with_axioms(tr, facts);
    if quick_proof(facts, goal, timeout_ms) {
        return Answer::Proved;
    }
    with_solver(timeout_ms, |s| match check_negated(s, facts, goal) {
        SatResult::Unsat => Answer::Proved,
        SatResult::Unknown => Answer::Unknown(reason_unknown(s)),
        SatResult::Sat => Answer::Refuted(model_of(tr, s)),
    })
}

/// `facts` and the translator's axioms about the values it made (valid facts: see
/// [`values`]), without copying when there are none.
fn with_axioms<'a>(tr: &Translator, facts: &'a [Z3Bool]) -> std::borrow::Cow<'a, [Z3Bool]> {
    if tr.axioms.is_empty() {
        return std::borrow::Cow::Borrowed(facts);
    }
    std::borrow::Cow::Owned(facts.iter().chain(&tr.axioms).cloned().collect())
}

/// Whether `facts ⟹ goal` is proved: [`prove`] without building a counterexample, for callers
/// that only branch on the answer (a model costs as much as the query).
pub fn holds(facts: &[Z3Bool], goal: &Z3Bool, timeout_ms: u32) -> bool {
    quick_proof(facts, goal, timeout_ms)
        || with_solver(timeout_ms, |s| check_negated(s, facts, goal) == SatResult::Unsat)
}

/// Assert `facts` and `¬goal` on `s` and check.
fn check_negated<'a>(
    s: &Solver<'static>,
    facts: impl IntoIterator<Item = &'a Z3Bool>,
    goal: &Z3Bool,
) -> SatResult {
    for f in facts {
        s.assert(f);
    }
    s.assert(&goal.not());
    s.check()
}

/// Proofs that need no full query. Goals that hold by simplification alone (`1 >= 1`, a literal
/// entry value) need no solver. With quantified facts, the goal is first asked from the
/// quantifier-free facts only: quantified facts (array contents, permission ranges) make Z3
/// search for instances, which costs several times a quantifier-free query, and most goals (trip
/// counts, bounds) follow from the quantifier-free facts alone. A proof from some of the facts is
/// a proof from all of them. `false` means "ask the full query", whose verdict is then the same
/// as without this shortcut (its counterexample may differ: the solver's state has moved).
fn quick_proof(facts: &[Z3Bool], goal: &Z3Bool, timeout_ms: u32) -> bool {
    if goal.simplify().as_bool() == Some(true) {
        return true;
    }
    if !facts.iter().any(has_quantifier) {
        return false;
    }
    with_solver(timeout_ms, |s| {
        let plain = facts.iter().filter(|f| !has_quantifier(f));
        check_negated(s, plain, goal) == SatResult::Unsat
    })
}

/// The facts without a quantifier: a weaker Γ whose queries cost several times less.
pub fn quantifier_free(facts: &[Z3Bool]) -> Vec<Z3Bool> {
    facts.iter().filter(|f| !has_quantifier(f)).cloned().collect()
}

/// Does the term contain a quantifier? (Walks the term; facts are small.)
fn has_quantifier(t: &Z3Bool) -> bool {
    fn walk(d: &z3::ast::Dynamic<'static>) -> bool {
        match d.kind() {
            z3::AstKind::Quantifier => true,
            z3::AstKind::App => d.children().iter().any(walk),
            _ => false,
        }
    }
    walk(&z3::ast::Dynamic::from_ast(t))
}

/// Is `facts` satisfiable? (`Some(model)` if so; `None` when unsat or unknown.)
pub fn satisfiable(tr: &Translator, facts: &[Z3Bool], timeout_ms: u32) -> Option<Counterexample> {
    let facts: &[Z3Bool] = &with_axioms(tr, facts);
    with_solver(timeout_ms, |s| {
        for f in facts {
            s.assert(f);
        }
        match s.check() {
            SatResult::Sat => Some(model_of(tr, s)),
            _ => None,
        }
    })
}

/// Run `f` with a model of `facts` when they are satisfiable (`None`: unsatisfiable or unknown).
/// The model is valid only inside `f`.
pub fn with_model<R>(
    facts: &[Z3Bool],
    timeout_ms: u32,
    f: impl FnOnce(Option<&z3::Model<'static>>) -> R,
) -> R {
    with_solver(timeout_ms, |s| {
        for x in facts {
            s.assert(x);
        }
        let model = match s.check() {
            SatResult::Sat => s.get_model(),
            _ => None,
        };
        f(model.as_ref())
    })
}

/// Start this thread's next query on a fresh solver. A solver reused with push/pop keeps what it
/// learned, so a counterexample can depend on the queries asked before; each program starts on a
/// fresh one. The context's term table still carries over (a fresh context costs about 20 ms),
/// so a counterexample is a function of the program and of the programs this thread checked
/// before it: the CLI checks one program per process or per batch thread, which makes its
/// output deterministic; a test that checks many files on one thread may see other models.
pub fn reset_solver() {
    Z3.with(|z| z.solver.borrow_mut().take());
}

fn with_solver<R>(timeout_ms: u32, f: impl FnOnce(&Solver<'static>) -> R) -> R {
    Z3.with(|z| {
        let mut slot = z.solver.borrow_mut();
        let solver = slot.get_or_insert_with(|| {
            let s = Solver::new(ctx());
            let mut p = Params::new(ctx());
            p.set_u32("random_seed", 0);
            s.set_params(&p);
            s
        });
        // The time limit comes from the watchdog, not from Z3's `timeout` parameter (see
        // `watchdog`): the checks inside `f` are interrupted once it has passed.
        let _limit = watchdog::watch(z.ctx, Duration::from_millis(u64::from(timeout_ms.max(1))));
        solver.push();
        let r = f(solver);
        solver.pop(1);
        r
    })
}

/// Why a check returned unknown; an interruption by the watchdog is the query's time limit.
fn reason_unknown(s: &Solver<'static>) -> String {
    match s.get_reason_unknown() {
        Some(r) if r == "canceled" || r == "interrupted from keyboard" => "timeout".to_string(),
        Some(r) => r,
        None => "the solver gave up".to_string(),
    }
}

/// The solver's model restricted to the translator's user-visible symbols, in creation order.
pub fn model_of(tr: &Translator, s: &Solver<'static>) -> Counterexample {
    let mut values = Vec::new();
    if let Some(m) = s.get_model() {
        for (name, t) in &tr.visible {
            let v = match t {
                Term::Int(i) => m.eval(i, true).map(|v| v.to_string()),
                Term::Bool(b) => m.eval(b, true).map(|v| v.to_string()),
                Term::Real(r) => m.eval(r, true).map(|v| v.to_string()),
                Term::Val(..) => None,
            };
            if let Some(v) = v {
                values.push((name.clone(), v));
            }
        }
    }
    Counterexample { values }
}

/// Evaluate an integer term in a model-free way: is it a literal?
pub fn as_literal(t: &z3::ast::Int<'static>) -> Option<i64> {
    t.simplify().as_i64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::parser::parse_expr_text;
    use crate::front::Dialect;

    fn e(s: &str) -> crate::front::ast::Expr {
        parse_expr_text(s, Dialect::V1).expect("parses")
    }

    #[test]
    fn proves_and_refutes() {
        let mut tr = Translator::new();
        let facts = vec![tr.fact(&e("n >= 3 && a.length == n")).unwrap()];
        let g = tr.bool(&e("0 + 2 < n")).unwrap();
        assert!(prove(&tr, &facts, &g, 1000).is_proved());
        let g = tr.bool(&e("3 < n")).unwrap();
        match prove(&tr, &facts, &g, 1000) {
            Answer::Refuted(cx) => assert_eq!(cx.get("n"), Some("3")),
            other => panic!("expected a counterexample, got {other:?}"),
        }
    }

    /// A query that runs into its time limit answers unknown, and the next query on the same
    /// solver is not affected by the interruption.
    #[test]
    fn time_limit_interrupts_one_query_only() {
        let mut tr = Translator::new();
        let facts = vec![tr
            .fact(&e("x > 0 && y > 0 && z > 0 && x * x * x + y * y * y == z * z * z"))
            .unwrap()];
        let g = tr.bool(&e("false")).unwrap();
        match prove(&tr, &facts, &g, 200) {
            Answer::Unknown(_) => {}
            other => panic!("expected unknown, got {other:?}"),
        }
        let g = tr.bool(&e("x > 0")).unwrap();
        assert!(prove(&tr, &facts, &g, 200).is_proved());
        let g = tr.bool(&e("x > 1")).unwrap();
        assert!(matches!(prove(&tr, &[], &g, 200), Answer::Refuted(_)));
    }

    #[test]
    fn euclidean_division() {
        let mut tr = Translator::new();
        let g = tr.bool(&e("(0 - 7) / 2 == 0 - 4 && (0 - 7) % 2 == 1")).unwrap();
        assert!(prove(&tr, &[], &g, 1000).is_proved());
    }

    #[test]
    fn permission_facts_give_bounds() {
        let mut tr = Translator::new();
        let f = tr
            .fact(&e(
                "(\\forall* int k; 0 <= k && k < n; Perm(a[k], 1\\2)) ** Perm(b[t + 1], write)",
            ))
            .unwrap();
        let g = tr.bool(&e("t + 1 < b.length")).unwrap();
        assert!(prove(&tr, &[f], &g, 1000).is_proved());
    }
}

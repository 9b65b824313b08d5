//! The Z3 applicability layer, shared by every optimization.
//!
//! One Z3 context and one solver per thread (queries use push/pop), a fixed seed and a per-query
//! timeout. `prove(facts, goal)` answers [`Answer::Proved`], [`Answer::Refuted`] with a
//! counterexample restricted to user-visible symbols, or [`Answer::Unknown`].

// Refusals carry whole diagnostics in `Err` (the cold path); AST enums keep large variants
// inline. Boxing them would only add noise (the same allowance as every crate of the workspace).
#![allow(clippy::result_large_err, clippy::large_enum_variant)]

pub mod translate;
pub mod values;
mod watchdog;

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
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
    solvers: RefCell<Solvers>,
    /// [`has_quantifier`]'s answers: every query asks it of each fact again.
    quantified: RefCell<HashMap<Z3Bool, bool>>,
    /// The fast solver's definite answers, by query (its assertions in order). Its answer is a
    /// function of the query, so a repeated query (fusion asks some of its coverage questions
    /// several times) can be answered from here without changing any result.
    answers: RefCell<HashMap<Vec<Z3Bool>, Rc<Found>>>,
}

/// What a check found: the answer, the model when satisfiable, why when unknown.
struct Found {
    result: SatResult,
    model: Option<z3::Model<'static>>,
    reason: String,
}

impl Found {
    /// Checks `assertions` on `s` in a scope of their own, and reads the answer there.
    fn ask(s: &Solver<'static>, assertions: &[Z3Bool]) -> Found {
        s.push();
        for a in assertions {
            s.assert(a);
        }
        if std::env::var_os("ALPINE_RS_DUMP_SMT").is_some() {
            eprintln!(";;QUERY\n{s}");
        }
        let found = Found::read(s, s.check());
        s.pop(1);
        found
    }

    fn read(s: &Solver<'static>, result: SatResult) -> Found {
        let model = if result == SatResult::Sat { s.get_model() } else { None };
        let reason = if result == SatResult::Unknown { reason_unknown(s) } else { String::new() };
        Found { result, model, reason }
    }
}

/// The tactic of the fast solver: `smt` after variables defined by equations are solved away.
/// Alone, `smt` can run for tens of seconds past its time limit on a handful of non-linear
/// equalities (`n == gridDim.x * 16`, `len_A == n * n`: a tiled matrix product's facts) that it
/// answers in milliseconds once `n` and the lengths are substituted; building the two steps
/// costs next to nothing.
fn fast_tactic(ctx: &'static Context) -> z3::Tactic<'static> {
    z3::Tactic::new(ctx, "simplify")
        .and_then(&z3::Tactic::new(ctx, "solve-eqs"))
        .and_then(&z3::Tactic::new(ctx, "smt"))
}

/// The two solvers of a thread, made on first use.
///
/// `fast` runs the `smt` tactic on each query from scratch: building it costs almost nothing,
/// and its answer depends on the query alone, not on the queries before it. `full` is Z3's
/// default (combined) solver, whose first push builds the default tactic, about 30 million
/// instructions (10 ms, most of a typical `apply`); it is asked only when `fast` gives up for a
/// reason other than the time limit (non-linear facts, where its incremental kernel finds
/// counterexamples the tactic does not).
#[derive(Default)]
struct Solvers {
    fast: Option<Solver<'static>>,
    full: Option<Solver<'static>>,
}

impl ThreadZ3 {
    fn new() -> ThreadZ3 {
        let mut cfg = Config::new();
        cfg.set_model_generation(true);
        ThreadZ3 {
            ctx: Box::leak(Box::new(Context::new(&cfg))),
            solvers: RefCell::new(Solvers::default()),
            quantified: RefCell::default(),
            answers: RefCell::default(),
        }
    }
}

impl Drop for ThreadZ3 {
    fn drop(&mut self) {
        // The solvers first: they hold a reference into the context.
        *self.solvers.get_mut() = Solvers::default();
        self.quantified.get_mut().clear();
        self.answers.get_mut().clear();
        // SAFETY: `ctx` came from `Box::leak` in `new` and is freed only here, when the thread
        // exits. Every term made from it was made on this thread and has been dropped: stack
        // values are gone by the time thread-local destructors run, terms are not `Send`, and
        // this struct is the only thread-local that stores any.
        unsafe { drop(Box::from_raw(self.ctx as *const Context as *mut Context)) };
    }
}

thread_local! {
    // One per thread, freed with it: batch runs many files on short-lived threads.
    static Z3: ThreadZ3 = {
        Z3_MADE.with(|m| m.set(true));
        ThreadZ3::new()
    };
    // Whether this thread has made its context: creating one costs about 5 ms and 20 MB, which
    // a program that asks nothing (or a `list`) should not pay.
    static Z3_MADE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether Z3 can be used, opening the library if no query has yet. The library is opened on
/// the first query (crates/z3-sys); a caller that must not end the process when it is missing
/// (the language server) asks here first.
pub fn solver_ready() -> Result<(), String> {
    z3_sys::library().map(|_| ()).map_err(|e| e.to_string())
}

/// Makes a query that finds no Z3 library end the process with E-Z3 on stderr and exit 3
/// ("could not decide"): nothing has been written then, since outputs are written last.
pub fn report_missing_solver() {
    z3_sys::set_missing_handler(missing_solver);
}

/// Makes a query that finds no Z3 library panic with E-Z3's message instead: for a server,
/// whose handlers each run under `catch_unwind`, so that one request fails and the session
/// goes on (`solver_ready` tells beforehand).
pub fn panic_on_missing_solver() {
    z3_sys::set_missing_handler(panic_missing_solver);
}

fn panic_missing_solver(e: &z3_sys::LoadError) -> ! {
    std::panic::panic_any(format!("E-Z3: {e}"))
}

fn missing_solver(e: &z3_sys::LoadError) -> ! {
    let mut d = diag::Diagnostic::error("E-Z3", "the Z3 library (libz3) could not be loaded")
        .with_help(
            "install the system's libz3 (`apt-get install libz3-4`), run `alpine-rs backend \
             install --libz3` (it downloads one into the cache), or set ALPINE_RS_LIBZ3 to a \
             libz3.so",
        );
    for (place, why) in &e.tried {
        d.notes.push(format!("tried {place}: {why}"));
    }
    let choice = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        codespan_reporting::term::termcolor::ColorChoice::Auto
    } else {
        codespan_reporting::term::termcolor::ColorChoice::Never
    };
    diag::render(
        &mut codespan_reporting::term::termcolor::StandardStream::stderr(choice),
        &[],
        &[d],
    );
    std::process::exit(3)
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
    let negated = goal.not();
    check(timeout_ms, facts.iter().chain([&negated]), |f| match f.result {
        SatResult::Unsat => Answer::Proved,
        SatResult::Unknown => Answer::Unknown(f.reason.clone()),
        SatResult::Sat => Answer::Refuted(model_values(tr, f.model.as_ref())),
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
    quick_proof(facts, goal, timeout_ms) || {
        let negated = goal.not();
        check(timeout_ms, facts.iter().chain([&negated]), |f| f.result == SatResult::Unsat)
    }
}

/// Proofs that need no full query. Goals that hold by simplification alone (`1 >= 1`, a literal
/// entry value) need no solver. With quantified facts, the goal is first asked from the
/// quantifier-free facts only: quantified facts (array contents, permission ranges) make Z3
/// search for instances, which costs several times a quantifier-free query, and most goals (trip
/// counts, bounds) follow from the quantifier-free facts alone. A proof from some of the facts is
/// a proof from all of them. `false` means "ask the full query", whose verdict is then the same
/// as without this shortcut.
fn quick_proof(facts: &[Z3Bool], goal: &Z3Bool, timeout_ms: u32) -> bool {
    if goal.simplify().as_bool() == Some(true) {
        return true;
    }
    if !facts.iter().any(has_quantifier) {
        return false;
    }
    let negated = goal.not();
    let plain = facts.iter().filter(|f| !has_quantifier(f));
    check(timeout_ms, plain.chain([&negated]), |f| f.result == SatResult::Unsat)
}

/// The facts without a quantifier: a weaker Γ whose queries cost several times less.
pub fn quantifier_free(facts: &[Z3Bool]) -> Vec<Z3Bool> {
    facts.iter().filter(|f| !has_quantifier(f)).cloned().collect()
}

/// Does the term contain a quantifier? Walks the term once per thread and term: queries ask it
/// of every fact, again for each query.
pub fn has_quantifier(t: &Z3Bool) -> bool {
    /// Each shared subterm once: terms are DAGs (fusion's coverage sums share their cell
    /// conditions), and a walk of the tree can take exponentially long.
    fn walk(root: z3::ast::Dynamic<'static>) -> bool {
        let mut seen = std::collections::HashSet::new();
        let mut todo = vec![root];
        while let Some(d) = todo.pop() {
            match d.kind() {
                z3::AstKind::Quantifier => return true,
                z3::AstKind::App if d.num_children() > 0 && seen.insert(d.clone()) => {
                    todo.extend((0..d.num_children()).filter_map(|i| d.nth_child(i)));
                }
                _ => {}
            }
        }
        false
    }
    if let Some(known) = Z3.with(|z| z.quantified.borrow().get(t).copied()) {
        return known;
    }
    let answer = walk(z3::ast::Dynamic::from_ast(t));
    Z3.with(|z| z.quantified.borrow_mut().insert(t.clone(), answer));
    answer
}

/// Is `facts` satisfiable? (`Some(model)` if so; `None` when unsat or unknown.)
pub fn satisfiable(tr: &Translator, facts: &[Z3Bool], timeout_ms: u32) -> Option<Counterexample> {
    let facts: &[Z3Bool] = &with_axioms(tr, facts);
    check(timeout_ms, facts, |f| match f.result {
        SatResult::Sat => Some(model_values(tr, f.model.as_ref())),
        _ => None,
    })
}

/// Run `f` with a model of `facts` when they are satisfiable (`None`: unsatisfiable or unknown).
/// The model is valid only inside `f`.
pub fn with_model<R>(
    facts: &[Z3Bool],
    timeout_ms: u32,
    f: impl FnOnce(Option<&z3::Model<'static>>) -> R,
) -> R {
    check(timeout_ms, facts, |found| f(found.model.as_ref()))
}

/// Start this thread's next program on fresh solvers. The fast solver keeps nothing between
/// queries, but the full one learns, so a counterexample it finds could depend on the queries
/// asked before; each program starts on a fresh one. The context's term table still carries
/// over (a fresh context costs about 20 ms), so a counterexample is a function of the program
/// and of the programs this thread checked before it: the CLI checks one program per process or
/// per batch thread, which makes its output deterministic; a test that checks many files on one
/// thread may see other models.
pub fn reset_solver() {
    if !Z3_MADE.with(|m| m.get()) {
        return;
    }
    Z3.with(|z| {
        z.solvers.borrow_mut().full = None;
        z.answers.borrow_mut().clear();
    });
}

/// Assert `assertions` on a solver of this thread, check them, and pass what the check found to
/// `then`. The fast solver is asked first (or its answer to the same query, remembered); an
/// unknown that is not the time limit is asked again of the full solver.
fn check<'a, R>(
    timeout_ms: u32,
    assertions: impl IntoIterator<Item = &'a Z3Bool>,
    then: impl FnOnce(&Found) -> R,
) -> R {
    Z3.with(|z| {
        let key: Vec<Z3Bool> = assertions.into_iter().cloned().collect();
        let known = z.answers.borrow().get(&key).cloned();
        if let Some(found) = known {
            return then(&found);
        }
        let mut guard = z.solvers.borrow_mut();
        let slots = &mut *guard;
        // The time limit comes from the watchdog, not from Z3's `timeout` parameter (see
        // `watchdog`): the checks are interrupted once it has passed, whichever solver runs.
        let limit = watchdog::watch(z.ctx, Duration::from_millis(u64::from(timeout_ms.max(1))));
        let fast = slots.fast.get_or_insert_with(|| seeded(fast_tactic(z.ctx).solver()));
        let found = Found::ask(fast, &key);
        let found = if found.result != SatResult::Unknown {
            let found = Rc::new(found);
            z.answers.borrow_mut().insert(key, Rc::clone(&found));
            found
        } else if found.reason == "timeout" || limit.fired() {
            // Remembered too: a query asked again (prefetch and fusion repeat some) would only
            // run into the same limit again, which made one `apply` ask the same timed-out
            // query five times (fuzz_apply, 11 s).
            let found = Rc::new(found);
            z.answers.borrow_mut().insert(key, Rc::clone(&found));
            found
        } else {
            let full = slots.full.get_or_insert_with(|| seeded(Solver::new(z.ctx)));
            Rc::new(Found::ask(full, &key))
        };
        if limit.finish() {
            clear_interrupt(fast);
        }
        then(&found)
    })
}

/// An interrupt that landed after the check left the context cancelled (see `watchdog`): a check
/// clears it, so that the next query's `simplify` does not fail.
fn clear_interrupt(s: &Solver<'static>) {
    s.push();
    s.check();
    s.pop(1);
}

/// A solver with the fixed seed every query uses.
fn seeded(s: Solver<'static>) -> Solver<'static> {
    let mut p = Params::new(ctx());
    p.set_u32("random_seed", 0);
    s.set_params(&p);
    s
}

/// Why a check returned unknown; an interruption by the watchdog is the query's time limit.
fn reason_unknown(s: &Solver<'static>) -> String {
    match s.get_reason_unknown() {
        // The incremental solver says "canceled", the tactic one "interrupted".
        Some(r) if r == "canceled" || r.starts_with("interrupted") => "timeout".to_string(),
        Some(r) => r,
        None => "the solver gave up".to_string(),
    }
}

/// The solver's model restricted to the translator's user-visible symbols, in creation order.
pub fn model_of(tr: &Translator, s: &Solver<'static>) -> Counterexample {
    model_values(tr, s.get_model().as_ref())
}

/// A model restricted to the translator's user-visible symbols, in creation order.
fn model_values(tr: &Translator, model: Option<&z3::Model<'static>>) -> Counterexample {
    let mut values = Vec::new();
    if let Some(m) = model {
        for (name, t) in &tr.visible {
            let v = match t {
                Term::Int(i) => m.eval(i, true).map(|v| int_value_text(&v)),
                Term::Bool(b) => m.eval(b, true).map(|v| match v.as_bool() {
                    Some(b) => b.to_string(),
                    None => v.to_string(),
                }),
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

/// A model's integer value as Z3 prints it (`7`, `(- 7)`), without Z3's printer when it fits in
/// an `i64`: `Z3_ast_to_string` sets up a pretty-printer per call, and canonical counterexamples
/// (fusion) read thousands of values, which made printing most of `apply`'s time.
fn int_value_text(v: &z3::ast::Int<'static>) -> String {
    match v.as_i64() {
        Some(i) if i < 0 => format!("(- {})", i.unsigned_abs()),
        Some(i) => i.to_string(),
        None => v.to_string(),
    }
}

/// Evaluate an integer term in a model-free way: is it a literal?
pub fn as_literal(t: &z3::ast::Int<'static>) -> Option<i64> {
    t.simplify().as_i64()
}

#[cfg(test)]
mod tests {
    use super::*;
    use front::parser::parse_expr_text;
    use front::Dialect;

    fn e(s: &str) -> front::ast::Expr {
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

    /// The watchdog's interrupt can land after a query's check (while its model is read); the
    /// context stays cancelled, and before `clear_interrupt` a later `simplify` failed and the
    /// `z3` crate panicked (seen with `--z3-timeout 1`).
    #[test]
    fn a_late_interrupt_is_cleared() {
        let mut tr = Translator::new();
        let g = tr.bool(&e("n >= 0 || n < 0")).unwrap();
        let literal = tr.bool(&e("1 <= 2")).unwrap();
        let solver = seeded(z3::Tactic::new(ctx(), "smt").solver());
        let guard = watchdog::watch(ctx(), Duration::from_millis(1));
        std::thread::sleep(Duration::from_millis(200));
        assert!(guard.finish(), "the watchdog interrupts a query past its deadline");
        clear_interrupt(&solver);
        assert_eq!(literal.simplify().as_bool(), Some(true));
        assert!(prove(&tr, &[], &g, 1000).is_proved());
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

    /// The commonest permission, a range of cells, becomes a quantifier-free fact with the same
    /// consequences (whatever way the range is written); other shapes keep their quantifier.
    #[test]
    fn a_range_permission_is_a_quantifier_free_fact() {
        for range in [
            "(\\forall* int k; 0 <= k && k < n; Perm(a[k], 1\\2))",
            "(\\forall* int k; k < n && k >= 0; Perm(a[k], write))",
            "(\\forall* int k; -1 < k && n > k; Perm(a[k], write))",
            "(\\forall* int k; 0 <= k && k <= n - 1; Perm(a[k], write))",
            "(\\forall* int k = 0 .. n; Perm(a[k], write))",
        ] {
            let mut tr = Translator::new();
            let f = tr.fact(&e(range)).unwrap();
            assert!(!has_quantifier(&f), "{range}: {f}");
            let holds = |tr: &mut Translator, hyp: &str, goal: &str| {
                let h = tr.bool(&e(hyp)).unwrap();
                let g = tr.bool(&e(goal)).unwrap();
                prove(tr, &[f.clone(), h], &g, 1000).is_proved()
            };
            assert!(holds(&mut tr, "n > 0", "n <= a.length"), "{range}");
            assert!(!holds(&mut tr, "n > 0", "n < a.length"), "{range}");
            // An empty range says nothing about the array.
            assert!(!holds(&mut tr, "n <= 0", "a.length > 0"), "{range}");
        }
        for other in [
            "(\\forall* int k; 0 <= k && k < n && k % 2 == 0; Perm(a[k], write))",
            "(\\forall* int k; 0 <= k && k < n; Perm(a[k + 1], write))",
        ] {
            let mut tr = Translator::new();
            let f = tr.fact(&e(other)).unwrap();
            assert!(has_quantifier(&f), "{other}: {f}");
        }
    }
}

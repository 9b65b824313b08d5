//! The second half of `sem_stmts`: `goto`, `vec` blocks, arms with wait lists, scaled
//! resources, runs that do not end, barrier bodies, magic wands, unbounded quantifiers and
//! notified threads (split out to keep each file readable; the helpers are the parent's).

use super::*;

// ---- goto

const GOTO: &str = r#"
class G {
  int skip(int n) {
    int r = 1;
    goto done;
    r = n;
    label done;
    return r;
  }

  requires n >= 0 && n < 50;
  ensures \result == n;
  int count(int n) {
    int i = 0;
    label top;
    if (i < n) {
      i = i + 1;
      goto top;
    }
    return i;
  }

  requires n >= 0 && n < 50;
  int outOfLoop(int n) {
    int i = 0;
    loop_invariant 0 <= i && i <= n;
    while (true) {
      if (i == n) { goto out; }
      i = i + 1;
    }
    label out;
    return i * 2;
  }

  int intoLoop(int n) {
    int i = 0;
    goto inside;
    while (i < n) {
      label inside;
      i = i + 1;
    }
    return i;
  }

  context_everywhere a != null;
  context (\forall* int i; 0 <= i && i < a.length; Perm(a[i], write));
  void diverge(int[] a) {
    par (int tid = 0 .. a.length)
      context Perm(a[tid], write);
    {
      if (tid % 2 == 0) { goto skip; }
      a[tid] = 1;
      label skip;
    }
  }
}
"#;

#[test]
fn a_goto_that_skips_an_assignment_changes_the_result() {
    let r = run_with(GOTO, "G.skip", &[("n", InVal::Int(9))]);
    assert_eq!((r.status, int(&r)), (Status::Ok, 1));
    let noskip = GOTO.replacen("    goto done;\n", "", 1);
    let r = run_with(&noskip, "G.skip", &[("n", InVal::Int(9))]);
    assert_eq!((r.status, int(&r)), (Status::Ok, 9));
    let out = validate(GOTO, &noskip, "G.skip");
    assert_eq!(out.verdict, Verdict::Different, "{}", out.summary);
}

#[test]
fn gotos_make_loops_and_leave_them() {
    let r = run_with(GOTO, "G.count", &[("n", InVal::Int(17))]);
    assert_eq!((r.status, int(&r)), (Status::Ok, 17));
    let r = run_with(GOTO, "G.outOfLoop", &[("n", InVal::Int(4))]);
    assert_eq!((r.status, int(&r)), (Status::Ok, 8));
    let out = validate(GOTO, GOTO, "G.outOfLoop");
    assert_eq!(out.verdict, Verdict::Same, "{}", out.summary);
}

#[test]
fn a_goto_into_a_loop_or_taken_by_some_lanes_only_is_not_run() {
    let r = run_with(GOTO, "G.intoLoop", &[("n", InVal::Int(3))]);
    assert_eq!(r.status, Status::Inconclusive);
    assert!(r.errors.iter().any(|d| d.message.contains("into a block")), "{:?}", r.errors);
    let r = run_with(GOTO, "G.diverge", &[("a", ints(&[0, 0, 0, 0]))]);
    assert_eq!(r.status, Status::Inconclusive);
    assert!(r.errors.iter().any(|d| d.message.contains("diverged")), "{:?}", r.errors);
}

// ---- vec blocks

const VEC: &str = r#"
class V {
  context_everywhere a != null && b != null && a.length == b.length;
  context (\forall* int i; 0 <= i && i < a.length; Perm(a[i], write));
  context (\forall* int i; 0 <= i && i < b.length; Perm(b[i], 1\2));
  ensures (\forall int i; 0 <= i && i < a.length; a[i] == b[i] * 2);
  void double(int[] a, int[] b) {
    vec (int j = 0 .. a.length) {
      a[j] = b[j] * 2;
    }
  }

  context_everywhere a != null && a.length > 1;
  context (\forall* int i; 0 <= i && i < a.length; Perm(a[i], write));
  void shift(int[] a) {
    vec (int j = 0 .. a.length - 1) {
      a[j] = a[j + 1];
    }
  }

  void f() { }

  requires n > 0;
  void calls(int n) {
    vec (int j = 0 .. n) {
      label l;
      f();
      goto l;
    }
    label after;
  }

  context_everywhere a != null && b != null && a.length == b.length;
  context (\forall* int i; 0 <= i && i < a.length; Perm(a[i], write));
  context (\forall* int i; 0 <= i && i < b.length; Perm(b[i], 1\2));
  void readOnly(int[] a, int[] b) {
    vec (int j = 0 .. a.length) {
      b[j] = a[j];
    }
  }
}
"#;

#[test]
fn a_vec_block_runs_every_iteration_with_the_lanes_permissions() {
    let r = run_with(VEC, "V.double", &[("a", ints(&[0, 0, 0])), ("b", ints(&[1, -4, 9]))]);
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    let a = r.observables.iter().find(|o| o.path == "a").expect("a");
    assert_eq!(a.value, ints(&[2, -8, 18]));
    let r = run_with(VEC, "V.readOnly", &[("a", ints(&[1, 2])), ("b", ints(&[0, 0]))]);
    assert_eq!(r.status, Status::Error);
    assert!(codes(&r).contains(&"R-PERM-WRITE"), "{:?}", codes(&r));
}

#[test]
fn a_vec_block_that_moves_permissions_is_not_run() {
    let r = run_with(VEC, "V.calls", &[("n", InVal::Int(3))]);
    assert_eq!(r.status, Status::Inconclusive);
    assert!(r.errors.iter().any(|d| d.message.contains("calls a method")), "{:?}", r.errors);
}

#[test]
fn iterations_of_a_vec_block_that_share_a_location_race() {
    let r = run_with(VEC, "V.shift", &[("a", ints(&[1, 2, 3, 4]))]);
    assert_eq!(r.status, Status::Error);
    assert!(r.race, "{:?}", codes(&r));
}

// ---- par arms with wait lists

const WAITS: &str = r#"
class P {
  context_everywhere x != null && y != null && x.length == 4 && y.length == 4;
  context (\forall* int i; 0 <= i && i < 4; Perm(x[i], write));
  context (\forall* int i; 0 <= i && i < 4; Perm(y[i], write));
  void main(int[] x, int[] y) {
    par fst(int i = 0 .. 4)
      context Perm(x[i], write);
    {
      x[i] = i + 1;
    } and snd(int j = 0 .. 4; fst(j))
      context Perm(x[j], 1\2) ** Perm(y[j], write);
    {
      y[j] = x[j] * 10;
    }
  }
}
"#;

#[test]
fn an_arm_runs_after_the_arms_it_waits_for() {
    let r = run_with(WAITS, "P.main", &[("x", ints(&[0, 0, 0, 0])), ("y", ints(&[0, 0, 0, 0]))]);
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    let y = r.observables.iter().find(|o| o.path == "y").expect("y");
    assert_eq!(y.value, ints(&[10, 20, 30, 40]));
    // Without the wait list the arms run together, and their permissions clash.
    let together = WAITS.replace("; fst(j))", ")");
    let r = run_with(&together, "P.main", &[("x", ints(&[0; 4])), ("y", ints(&[0; 4]))]);
    assert_eq!(r.status, Status::Error);
}

// ---- scaled resources and inline predicates

const SCALED: &str = r#"
class C {
  int x;
  inline resource r() = Perm(x, write);

  requires [1\2]r();
  void half() {
    unfold [1\2]r();
    assert Perm(x, 1\2);
  }

  requires [1\4]r();
  void quarter() {
    unfold [1\2]r();
  }

  requires [1\2]r();
  void writes() {
    x = 1;
  }
}
"#;

#[test]
fn scaled_inline_predicates_move_the_scaled_permissions() {
    let r = run1(SCALED, "C.half");
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    let r = run1(SCALED, "C.quarter");
    assert_eq!(r.status, Status::Error);
    assert!(codes(&r).contains(&"R-ASSERT"), "{:?}", codes(&r));
    let r = run1(SCALED, "C.writes");
    assert_eq!(r.status, Status::Error);
    assert!(codes(&r).contains(&"R-PERM-WRITE"), "{:?}", codes(&r));
}

// ---- runs that do not end

const ENDLESS: &str = r#"
class E {
  int spin(int n) {
    int i = 0;
    while (i != n) {
      i = i + 1;
    }
    return i;
  }

  void forever() {
    while (true) { }
  }
}
"#;

#[test]
fn a_loop_without_assignments_runs_out_of_fuel() {
    let opts = RunOptions {
        entry: Some("E.forever".into()),
        random: 1,
        config: sem::Config { fuel: 10_000, ..sem::Config::default() },
        ..RunOptions::default()
    };
    let r = sem::run_program(ENDLESS, &opts).expect("runs").remove(0);
    assert_eq!(r.status, Status::Inconclusive);
    let d = r.errors.iter().find(|d| d.code == "R-FUEL").expect("R-FUEL");
    assert!(d.message.contains("out of fuel after 10000 steps"), "{}", d.message);
}

#[test]
fn validation_of_a_method_that_does_not_end_stops_within_its_time() {
    let start = std::time::Instant::now();
    let opts = ValidateOptions {
        entry: Some("E.spin".into()),
        random: 10,
        method_time: Some(std::time::Duration::from_secs(1)),
        ..ValidateOptions::default()
    };
    let out = sem::validate(ENDLESS, ENDLESS, &opts);
    eprintln!("{}\n{:?}", out.summary, out.reason);
    assert!(start.elapsed() < std::time::Duration::from_secs(30), "{:?}", start.elapsed());
    // Negative `n` never ends: those runs are undecided, the others equivalent.
    assert!(out.inconclusive > 0, "{}", out.summary);
    assert!(out.reason.is_none() || out.reason.as_deref().unwrap_or("").contains("out of fuel"));
    assert_ne!(out.verdict, Verdict::Different);
}

/// A callee's `yields` variable that it never assigns starts at its type's default, as a
/// declared local does (it was `null`, and the callee's postcondition stopped with R-TYPE).
const YIELDS_UNSET: &str = r#"
class Y {
  yields int r;
  ensures r >= 0 ==> \result == 1;
  int f() { return 1; }

  void g() {
    int x = f();
    assert x == 1;
  }
}
"#;

#[test]
fn an_unassigned_yields_variable_has_its_default() {
    let r = run1(YIELDS_UNSET, "Y.g");
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    let wrong = YIELDS_UNSET.replace("r >= 0 ==> \\result == 1", "r > 0");
    let r = run1(&wrong, "Y.g");
    assert_eq!(r.status, Status::Error, "{:?}", codes(&r));
    assert!(codes(&r).contains(&"R-POST"), "{:?}", codes(&r));
}

// ---- allocation in a return statement

const RETURN_NEW: &str = r#"
class P {
  int v;
  ensures Perm(v, write) ** v == x;
  P(int x) { v = x; }

  ensures \result != null ** Perm(\result.v, write) ** \result.v == x;
  static P make(int x) { return new P(x); }

  static P bare(int x) { return new P(x); }

  int use(int n) {
    P p = make(n + 3);
    return p.v;
  }

  int useBare(int n) {
    P p = bare(n);
    return p.v;
  }
}
"#;

#[test]
fn a_returned_allocation_is_run() {
    let r = run_with(RETURN_NEW, "P.use", &[("n", InVal::Int(4))]);
    assert_eq!((r.status, int(&r)), (Status::Ok, 7));
    // Without a postcondition that gives the object's fields, the caller may not read them.
    let r = run_with(RETURN_NEW, "P.useBare", &[("n", InVal::Int(4))]);
    assert_eq!(r.status, Status::Error);
    assert!(codes(&r).contains(&"R-PERM-READ"), "{:?}", codes(&r));
}

/// An abstract method that may write whole arrays and promises them sorted: the heap is left
/// alone when the postcondition allows it, else the arrays are sorted (ascending, then
/// descending) and the first state that satisfies the postcondition is kept.
const SORT: &str = r#"
class S {
  context a != null ** Perm(a[*], write);
  ensures (\forall int j; 0 <= j && j < a.length - 1; a[j] <= a[j + 1]);
  void sort(int[] a);

  context a != null ** Perm(a[*], write);
  ensures (\forall int j; 0 <= j && j < a.length - 1; a[j] >= a[j + 1]);
  void rsort(int[] a);

  context a != null ** Perm(a[*], write);
  int first(int[] a) {
    sort(a);
    int lo = a.length > 0 ? a[0] : 0;
    rsort(a);
    return a.length > 0 ? a[0] - lo : 0;
  }
}
"#;

#[test]
fn an_abstract_sort_sorts() {
    let r = run_with(SORT, "first", &[("a", ints(&[3, -1, 7, 2]))]);
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    assert_eq!(int(&r), 8);
}

/// Calls are resolved by the receiver's class when the receiver is a field, and overloads by
/// their number of arguments (VerCors resolves both).
const RESOLVE: &str = r#"
class A {
  int v;
  context Perm(v, write);
  ensures v == \old(v) + 1;
  void bump() { v = v + 1; }
  pure int pick(int x, int y) = x;
  pure int pick(int x, int y, int z) = z;
}

class B {
  int v;
  context Perm(v, write);
  ensures v == \old(v) + 2;
  void bump() { v = v + 2; }
}

class Main {
  A a;
  context Perm(a, read) ** a != null ** Perm(a.v, write);
  ensures a.v == \old(a.v) + 1;
  int go() {
    a.bump();
    return a.pick(1, 2) + a.pick(1, 2, 3);
  }
}
"#;

#[test]
fn calls_resolve_through_field_receivers_and_arity() {
    let r = run1(RESOLVE, "Main.go");
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    assert_eq!(int(&r), 4);
}

/// A barrier's body runs once, when all threads have arrived, with what they handed in and
/// the invariants the barrier names: `rounds` ends at 1 whatever the number of threads (run
/// per thread, it would fail on permissions or count them).
const BARRIER_BODY: &str = r"
class Round {
  int rounds;

  requires n > 0 ** Perm(rounds, write) ** rounds == 0;
  ensures Perm(rounds, write) ** rounds == 1;
  void go(int n) {
    invariant inv(Perm(rounds, 1\2)) {
      par t(int i = 0 .. n)
        requires i == 0 ==> Perm(rounds, 1\2) ** rounds == 0;
        ensures i == 0 ==> Perm(rounds, 1\2) ** rounds == 1;
      {
        barrier(t; inv)
          requires i == 0 ==> Perm(rounds, 1\2) ** rounds == 0;
          ensures i == 0 ==> Perm(rounds, 1\2) ** rounds == 1;
        {
          rounds = rounds + 1;
        }
      }
    }
  }
}
";

#[test]
fn a_barrier_body_runs_once_with_the_pooled_resources_and_the_invariant() {
    for n in [1, 3, 40] {
        let r = run_with(BARRIER_BODY, "go", &[("n", InVal::Int(n))]);
        assert!(r.errors.is_empty(), "n = {n}: {:?}", codes(&r));
    }
    let twice = BARRIER_BODY.replace("rounds = rounds + 1;", "rounds = rounds + 2;");
    let r = run_with(&twice, "go", &[("n", InVal::Int(3))]);
    assert!(codes(&r).contains(&"R-BAR-POST"), "{:?}", codes(&r));
    // Without the invariant the body holds half of `rounds` and may not write it.
    let no_inv = BARRIER_BODY.replace("barrier(t; inv)", "barrier(t)");
    let r = run_with(&no_inv, "go", &[("n", InVal::Int(3))]);
    assert!(codes(&r).contains(&"R-PERM-WRITE"), "{:?}", codes(&r));
}

/// Magic wands are ghost: `create` and `apply` run nothing and a wand in a contract holds no
/// permission of its own, so a program with wands runs as it computes; a write to what the wand
/// holds in the verifier's view is still a write the run checks against the loop's holdings.
#[test]
fn magic_wands_are_ghost_and_their_programs_run() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/verify_front_types/");
    let ok = std::fs::read_to_string(format!("{dir}wand_ok.pvl")).expect("fixture");
    let r = run1(&ok, "lend");
    assert!(r.errors.is_empty() && r.status == Status::Ok, "{:?} {:?}", r.status, codes(&r));
    let bad = std::fs::read_to_string(format!("{dir}wand_bad_loop.pvl")).expect("fixture");
    let r =
        runs(&bad, "lend", 5).into_iter().find(|r| r.status != Status::Ok).expect("a failing run");
    assert!(codes(&r).contains(&"R-PERM-WRITE"), "{:?}", codes(&r));
}

// ---- quantifiers without a bound

const UNBOUNDED: &str = r#"
class Q {
  void keys() {
    map<int,int> a = map<int,int>{};
    int i = 0;
    loop_invariant 0 <= i && i <= 5;
    loop_invariant (\forall int k; true; (0 <= k && k < i) == k in keysMap(a));
    while (i < 5) { a = a ++ (i, i * i); i = i + 1; }
    assert (\forall int k; k >= 5; !(k in keysMap(a)));
    assert (\exists int k; k > 3; k in keysMap(a));
  }

  void wrong() {
    map<int,int> a = map<int,int>{1 -> 1};
    assert (\forall int k; k != 1; !(k in keysMap(a)));
    assert (\forall int k; k < 5; !((k + 1) in keysMap(a)));
  }

  void nonlinear() {
    assert (\forall int k; true; k * k >= 0);
  }
}
"#;

/// A quantifier over all integers whose binder is only compared with values free of it, or
/// tested for membership, is decided at those values and their neighbours (exact: the formula
/// is constant between them); any other use stays inconclusive (R-QUANT-UNBOUNDED).
#[test]
fn unbounded_quantifiers_over_comparisons_and_members_are_decided() {
    let r = run1(UNBOUNDED, "Q.keys");
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    // `k + 1 in keys` for k = 0: the second assertion fails, the first holds.
    let r = run1(UNBOUNDED, "Q.wrong");
    assert_eq!(r.status, Status::Error, "{:?}", codes(&r));
    assert_eq!(codes(&r), ["R-ASSERT"]);
    let shown = sem::render("test.pvl", UNBOUNDED, &r.errors);
    assert!(shown.contains("(k + 1) in keysMap(a)") && !shown.contains("k != 1"), "{shown}");
    let r = run1(UNBOUNDED, "Q.nonlinear");
    assert_eq!(r.status, Status::Inconclusive, "{:?}", codes(&r));
    assert!(codes(&r).contains(&"R-QUANT-UNBOUNDED"), "{:?}", codes(&r));
}

// ---- threads that wait

const WAIT_NOTIFY: &str = r#"
class Box {
  int data;
  boolean full;

  resource lock_invariant() = Perm(data, 1) ** Perm(full, 1);

  Box() { data = 0; full = false; }

  void put(int x) {
    lock this;
    loop_invariant Perm(data, 1) ** Perm(full, 1) ** held(this);
    while (full) { wait this; }
    data = x;
    full = true;
    notify this;
    unlock this;
  }

  int take() {
    int r;
    lock this;
    loop_invariant Perm(data, 1) ** Perm(full, 1) ** held(this);
    while (!full) { wait this; }
    r = data;
    full = false;
    notify this;
    unlock this;
    return r;
  }
}

class Taker {
  Box b;
  int got;

  ensures Perm(b, 1\2) ** Perm(got, 1) ** b == box;
  Taker(Box box) { b = box; }

  context Perm(b, 1\2) ** Perm(got, 1) ** b != null;
  void run() {
    got = b.take();
    got = got + b.take();
  }
}

class Main {
  static int twoThreads() {
    Box box = new Box();
    Taker t = new Taker(box);
    fork t;
    box.put(3);
    box.put(4);
    join t;
    return t.got;
  }

  static int alone() {
    Box box = new Box();
    return box.take();
  }
}
"#;

/// A forked thread that waits stops there and runs again once notified, when the thread
/// running blocks: the taker waits for each value the main thread puts (before, `fork` ran
/// `run` to its end at once and its `wait` spun until out of fuel). (A `wait` with no other
/// thread to run still wakes up at once, spuriously: `Main.alone` spins until out of fuel, too
/// slow to run here.)
#[test]
fn forked_threads_wait_and_are_notified() {
    let r = run1(WAIT_NOTIFY, "Main.twoThreads");
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    assert_eq!(int(&r), 7);
}

//! The interpreter on the statements beyond kernels: abstract methods and functions, locks,
//! `fork`/`join`, `goto`, `vec` blocks, `par` arms with wait lists, scaled resources, barrier
//! bodies, and runs that do not end. Small programs of our own; each test checks a right result and
//! that the wrong variant is caught.

use alpine_rs::sem::{self, InVal, Input, RunOptions, RunResult, Status, ValidateOptions, Verdict};

fn runs(src: &str, entry: &str, random: usize) -> Vec<RunResult> {
    let opts = RunOptions { entry: Some(entry.into()), random, seed: 5, ..RunOptions::default() };
    let rs = sem::run_program(src, &opts).unwrap_or_else(|e| panic!("{entry}: {e}"));
    for r in &rs {
        eprintln!("{entry} #{}: {:?} [{}]", r.input_id, r.status, r.input.describe());
        eprintln!("{}", sem::render("test.pvl", src, &r.errors));
    }
    rs
}

fn run1(src: &str, entry: &str) -> RunResult {
    runs(src, entry, 1).remove(0)
}

/// One run on the given arguments.
fn run_with(src: &str, entry: &str, args: &[(&str, InVal)]) -> RunResult {
    let input = Input {
        args: args.iter().map(|(n, v)| (n.to_string(), v.clone())).collect(),
        ..Input::default()
    };
    let opts = RunOptions {
        entry: Some(entry.into()),
        random: 0,
        inputs: vec![input],
        ..RunOptions::default()
    };
    let mut rs = sem::run_program(src, &opts).unwrap_or_else(|e| panic!("{entry}: {e}"));
    let r = rs.remove(0);
    eprintln!("{entry}: {:?}\n{}", r.status, sem::render("test.pvl", src, &r.errors));
    r
}

fn codes(r: &RunResult) -> Vec<&str> {
    r.errors.iter().map(|d| d.code.as_str()).collect()
}

fn int(r: &RunResult) -> i64 {
    match r.ret {
        Some(InVal::Int(i)) => i,
        ref other => panic!("expected an integer result, got {other:?}"),
    }
}

fn ints(v: &[i64]) -> InVal {
    InVal::Array(sem::compile::Ty::Int, v.iter().map(|&i| InVal::Int(i)).collect())
}

fn validate(orig: &str, opt: &str, entry: &str) -> sem::ValidateOutcome {
    let opts = ValidateOptions {
        entry: Some(entry.into()),
        random: 10,
        seed: 1,
        ..ValidateOptions::default()
    };
    let out = sem::validate(orig, opt, &opts);
    eprintln!("{}\n{:?}", out.summary, out.reason);
    out
}

// ---- abstract methods and functions

const ABSTRACT: &str = r#"
class A {
  requires x >= 0;
  ensures \result == 2 * x;
  static int twice(int x);

  ensures \result == x + 1;
  static pure int succ(int x);

  ensures \result > 100;
  static int big();

  ensures \result == x && \result < 0;
  static int impossible(int x);

  context a != null;
  context (\forall* int i; 0 <= i && i < a.length; Perm(a[i], 1\2));
  ensures |\result| == a.length;
  ensures (\forall int i; 0 <= i && i < a.length; \result[i] == a[i] + 1);
  static seq<int> plusOne(int[] a);

  context a != null ** Perm(a[*], write);
  ensures (\forall int j; 0 <= j && j < a.length - 1; a[j] <= a[j + 1]);
  static void sort(int[] a);

  requires a != null;
  ensures Perm(a[0], write);
  static void steal(int[] a);

  requires x >= 0;
  int useTwice(int x) { return twice(x) + succ(x); }

  int useBig() { return big(); }

  int useImpossible(int x) { return impossible(x); }

  context_everywhere a != null;
  context (\forall* int i; 0 <= i && i < a.length; Perm(a[i], write));
  int useSeq(int[] a) {
    seq<int> s = plusOne(a);
    int r = 0;
    for (int i = 0; i < |s|; i++) { r = r + s[i]; }
    return r;
  }

  context_everywhere a != null;
  context Perm(a[*], write);
  void useSort(int[] a) { sort(a); }

  requires a != null;
  int useSteal(int[] a) { steal(a); return 0; }

  requires x < 0;
  int badPre(int x) { return twice(x); }
}
"#;

#[test]
fn an_abstract_method_returns_what_its_postcondition_names() {
    let r = run_with(ABSTRACT, "A.useTwice", &[("x", InVal::Int(7))]);
    assert_eq!(r.status, Status::Ok);
    assert_eq!(int(&r), 14 + 8);
    // A bound gives the value next to it.
    let r = run1(ABSTRACT, "A.useBig");
    assert_eq!((r.status, int(&r)), (Status::Ok, 101));
}

#[test]
fn an_abstract_sequence_result_comes_from_its_length_and_elements() {
    let r = run_with(ABSTRACT, "A.useSeq", &[("a", ints(&[3, -1, 10]))]);
    assert_eq!(r.status, Status::Ok);
    // 3 + 1, -1 + 1 and 10 + 1.
    assert_eq!(int(&r), 15);
}

const ABSTRACT_FIELDS: &str = r#"
class Node {
  int rank, best, left, n;

  ensures Perm(rank, write) ** Perm(best, write) ** Perm(left, write) ** Perm(n, write);
  ensures rank == v && best == v && left < v && n == 0;
  Node(int v);

  context Perm(rank, 1\2) ** Perm(best, write) ** Perm(left, 1\2) ** Perm(n, write);
  ensures left > \old(best) ? best == left : best == \old(best);
  ensures n == \old(n) + 1;
  void update();

  context Perm(best, 1\2) ** Perm(n, 1\2);
  ensures n == \old(n) + 1;
  void cannotWrite();

  static int use(int v, int l) {
    Node x = new Node(v);
    int below = x.left;
    x.left = l;
    x.update();
    x.update();
    return x.best * 1000 + x.n * 100 + (v - below);
  }

  static int useCannot() {
    Node x = new Node(3);
    x.cannotWrite();
    return x.n;
  }
}
"#;

/// An abstract method's postcondition that bounds fields sets them: `f == e` (also in the branch
/// a conditional selects, with `\old` the state before the call), and a bound `f < e` that the
/// field breaks moves it next to the bound. A field the callee may not write is left alone.
#[test]
fn an_abstract_method_sets_the_fields_its_postcondition_bounds() {
    // The constructor: rank = best = 5, left = 0 (its default meets `left < 5`), n = 0.
    // update: left 9 > best 5, so best = 9; n = 1; again: best stays 9, n = 2.
    let r = run_with(ABSTRACT_FIELDS, "Node.use", &[("v", InVal::Int(5)), ("l", InVal::Int(9))]);
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    assert_eq!(int(&r), 9 * 1000 + 2 * 100 + 5);
    // left 2 < best 5: best stays.
    let r = run_with(ABSTRACT_FIELDS, "Node.use", &[("v", InVal::Int(5)), ("l", InVal::Int(2))]);
    assert_eq!(int(&r), 5 * 1000 + 2 * 100 + 5);
    // With v = 0 the default breaks `left < 0`: left = -1, next to the bound.
    let r = run_with(ABSTRACT_FIELDS, "Node.use", &[("v", InVal::Int(0)), ("l", InVal::Int(2))]);
    assert_eq!(int(&r), 2 * 1000 + 2 * 100 + 1);
    // Half a permission to `n`: the call cannot have incremented it, nothing is known.
    let r = run1(ABSTRACT_FIELDS, "Node.useCannot");
    assert_eq!(r.status, Status::Inconclusive, "{:?}", codes(&r));
    assert!(codes(&r).contains(&"R-ABSTRACT"), "{:?}", codes(&r));
}

#[test]
fn an_abstract_method_whose_postcondition_cannot_be_met_is_inconclusive() {
    let r = run_with(ABSTRACT, "A.useImpossible", &[("x", InVal::Int(4))]);
    assert_eq!(r.status, Status::Inconclusive);
    let d = r.errors.iter().find(|d| d.code == "R-ABSTRACT").expect("R-ABSTRACT");
    assert!(d.message.contains("abstract method `impossible`"), "{}", d.message);
    assert!(d.message.contains("(line 13)"), "{}", d.message);
    // A sorting method's postcondition holds of the sorted array (see `an_abstract_sort_sorts`).
    let r = run_with(ABSTRACT, "A.useSort", &[("a", ints(&[3, 1, 2]))]);
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    let a = r.observables.iter().find(|o| o.path == "a").map(|o| o.value.clone());
    assert_eq!(a, Some(ints(&[1, 2, 3])));
    // Permissions out of nothing are not given.
    let r = run_with(ABSTRACT, "A.useSteal", &[("a", ints(&[1]))]);
    assert_eq!(r.status, Status::Inconclusive);
    assert!(r.errors.iter().any(|d| d.message.contains("did not take")), "{:?}", r.errors);
}

const ABSTRACT_CTOR: &str = r#"
class P {
  int v;
  ensures Perm(v, write) ** v == x + 1;
  P(int x);
}

class Q {
  int v;
  ensures Perm(v, write) ** v == x ** v > 0;
  Q(int x);
}

class M {
  int make(int x) {
    P p = new P(x);
    return p.v;
  }

  int positive() {
    Q q = new Q(-2);
    return q.v;
  }
}
"#;

#[test]
fn an_abstract_constructor_sets_the_fields_its_postcondition_names() {
    let r = run_with(ABSTRACT_CTOR, "M.make", &[("x", InVal::Int(41))]);
    assert_eq!((r.status, int(&r)), (Status::Ok, 42));
    let r = run1(ABSTRACT_CTOR, "M.positive");
    assert_eq!(r.status, Status::Inconclusive);
    assert!(codes(&r).contains(&"R-ABSTRACT"), "{:?}", codes(&r));
}

#[test]
fn an_abstract_method_checks_its_precondition() {
    let r = run_with(ABSTRACT, "A.badPre", &[("x", InVal::Int(-3))]);
    assert_eq!(r.status, Status::Error);
    assert!(codes(&r).contains(&"R-PRE"), "{:?}", codes(&r));
}

#[test]
fn validation_through_an_abstract_method_compares_and_never_passes_an_impossible_one() {
    let out = validate(ABSTRACT, ABSTRACT, "A.useTwice");
    assert_eq!(out.verdict, Verdict::Same, "{}", out.summary);
    let changed = ABSTRACT.replace("return twice(x) + succ(x);", "return twice(x) + x;");
    let out = validate(ABSTRACT, &changed, "A.useTwice");
    assert_eq!(out.verdict, Verdict::Different, "{}", out.summary);
    let out = validate(ABSTRACT, ABSTRACT, "A.useImpossible");
    assert_eq!(out.verdict, Verdict::Inconclusive, "{}", out.summary);
    assert!(out.reason.as_deref().unwrap_or("").contains("R-ABSTRACT"), "{:?}", out.reason);
}

// ---- locks

const LOCKS: &str = r#"
class Counter {
  int n;
  resource lock_invariant() = Perm(n, write) ** n >= 0;

  Counter() { n = 0; }

  void inc() {
    lock this;
    n = n + 1;
    unlock this;
  }

  void breaks() {
    lock this;
    n = -5;
    unlock this;
  }

  void twice() {
    lock this;
    lock this;
    unlock this;
  }

  void unheld() {
    unlock this;
  }

  void waits() {
    lock this;
    loop_invariant Perm(n, write) ** held(this);
    while (n < 0) {
      wait this;
    }
    wait this;
    n = n + 10;
    notify this;
    unlock this;
  }

  void waitsBroken() {
    lock this;
    n = -1;
    wait this;
    n = 1;
    unlock this;
  }
}

class KeepsField {
  int n;
  resource lock_invariant() = Perm(n, write);
  ensures Perm(n, write);
  KeepsField() { n = 0; }
}

class NoHeld {
  boolean ready;
  resource lock_invariant() = Perm(ready, write);
  NoHeld() { ready = false; }

  void await() {
    lock this;
    loop_invariant Perm(ready, write);
    while (!ready) { wait this; ready = true; }
    unlock this;
  }

  void awaitHeld() {
    lock this;
    loop_invariant Perm(ready, write) ** held(this);
    while (!ready) { wait this; ready = true; }
    unlock this;
  }
}

class BadCtor {
  int n;
  resource lock_invariant() = Perm(n, write) ** n > 0;
  BadCtor() { n = 0; }
}

class Main {
  int count() {
    Counter c = new Counter();
    c.inc();
    c.inc();
    c.waits();
    lock c;
    int r = c.n;
    unlock c;
    return r;
  }

  void badCtor() {
    BadCtor b = new BadCtor();
  }

  void keeps() {
    KeepsField k = new KeepsField();
  }

  void noHeld() {
    NoHeld h = new NoHeld();
    h.await();
  }

  void held() {
    NoHeld h = new NoHeld();
    h.awaitHeld();
  }

  int noLock() {
    Counter c = new Counter();
    return c.n;
  }
}

class Sum {
  int total;
  resource lock_invariant() = Perm(total, write);

  Sum() { }

  context_everywhere a != null;
  context (\forall* int i; 0 <= i && i < a.length; Perm(a[i], 1\2));
  void locked(int[] a) {
    par (int tid = 0 .. a.length)
      context Perm(a[tid], 1\2);
    {
      lock this;
      total = total + a[tid];
      unlock this;
    }
  }

  context_everywhere a != null;
  context (\forall* int i; 0 <= i && i < a.length; Perm(a[i], 1\2));
  int total(int[] a) {
    locked(a);
    lock this;
    int t = total;
    unlock this;
    return t;
  }
}
"#;

#[test]
fn locks_protect_their_invariant() {
    let r = run1(LOCKS, "Main.count");
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    assert_eq!(int(&r), 12);
    // Without the lock, the fields are the lock's.
    let r = run1(LOCKS, "Main.noLock");
    assert_eq!(r.status, Status::Error);
    assert!(codes(&r).contains(&"R-PERM-READ"), "{:?}", codes(&r));
}

#[test]
fn an_unlock_whose_invariant_does_not_hold_is_reported() {
    let r = run1(LOCKS, "Counter.breaks");
    assert_eq!(r.status, Status::Error);
    let d = r.errors.iter().find(|d| d.code == "R-LOCK-INV").expect("R-LOCK-INV");
    assert!(d.message.contains("at `unlock`"), "{}", d.message);
    // The constructor must establish it too.
    let r = run1(LOCKS, "Counter.waitsBroken");
    assert_eq!(r.status, Status::Error);
    let d = r.errors.iter().find(|d| d.code == "R-LOCK-INV").expect("R-LOCK-INV");
    assert!(d.message.contains("at `wait`"), "{}", d.message);
    let r = run1(LOCKS, "Main.badCtor");
    assert_eq!(r.status, Status::Error);
    let d = r.errors.iter().find(|d| d.code == "R-LOCK-INV").expect("R-LOCK-INV");
    assert!(d.message.contains("end of its constructor"), "{}", d.message);
}

#[test]
fn a_constructor_cannot_keep_what_it_gives_to_the_lock() {
    let r = run1(LOCKS, "Main.keeps");
    assert_eq!(r.status, Status::Error);
    assert!(codes(&r).contains(&"R-PERM-TRANSFER"), "{:?}", codes(&r));
}

#[test]
fn wait_needs_the_held_token() {
    // The loop invariant does not carry `held(this)`: the loop holder lacks it at `wait`.
    let r = run1(LOCKS, "Main.noHeld");
    assert_eq!(r.status, Status::Error);
    let d = r.errors.iter().find(|d| d.code == "R-LOCK").expect("R-LOCK");
    assert!(d.message.contains("without the token `held`"), "{}", d.message);
    let r = run1(LOCKS, "Main.held");
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
}

#[test]
fn taking_a_held_lock_or_releasing_a_free_one_is_reported() {
    for m in ["Counter.twice", "Counter.unheld"] {
        let r = run1(LOCKS, m);
        assert_eq!(r.status, Status::Error, "{m}");
        assert!(codes(&r).contains(&"R-LOCK"), "{m}: {:?}", codes(&r));
    }
    let r = run1(LOCKS, "Counter.inc");
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
}

#[test]
fn an_input_whose_lock_invariant_fails_is_rejected() {
    // `n >= 0`: generated objects with a negative `n` are redrawn, never run.
    for r in runs(LOCKS, "Counter.inc", 6) {
        assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
        let n = r.input.this_fields.iter().find(|f| f.0 == "n").map(|f| f.1.clone());
        assert!(!matches!(n, Some(InVal::Int(k)) if k < 0), "{:?}", r.input);
    }
}

#[test]
fn threads_of_a_par_block_take_a_lock_one_after_another() {
    let r = run_with(LOCKS, "Sum.total", &[("a", ints(&[5, 7, -2, 40, 1]))]);
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    assert!(!r.race);
    // The lock's `total` starts at whatever the input object holds.
    let start = match r.input.this_fields.iter().find(|f| f.0 == "total") {
        Some((_, InVal::Int(k))) => *k,
        _ => 0,
    };
    assert_eq!(int(&r), start + 51);
    // Without the lock, the threads race on `total`.
    let unlocked = LOCKS
        .replace("      lock this;\n      total", "      total")
        .replace("a[tid];\n      unlock this;", "a[tid];")
        .replace("resource lock_invariant() = Perm(total, write);", "")
        .replace(
            "  context (\\forall* int i; 0 <= i && i < a.length; Perm(a[i], 1\\2));\n  void locked",
            "  context (\\forall* int i; 0 <= i && i < a.length; Perm(a[i], 1\\2));\n  context Perm(total, write);\n  void locked",
        );
    assert_ne!(unlocked, LOCKS);
    let r = run_with(&unlocked, "Sum.locked", &[("a", ints(&[5, 7, -2, 40, 1]))]);
    assert_eq!(r.status, Status::Error);
    assert!(r.race || codes(&r).contains(&"R-PERM-WRITE"), "{:?}", codes(&r));
}

// ---- fork and join

const THREADS: &str = r#"
class W {
  int v;
  int out;

  ensures Perm(v, write) ** Perm(out, write) ** v == x;
  W(int x) { v = x; }

  context Perm(v, 1\2);
  requires Perm(out, write);
  ensures Perm(out, write) ** out == v * v;
  void run() { out = v * v; }
}

class Main {
  int good(int x) {
    W w = new W(x);
    assert idle(w);
    fork w;
    assert running(w);
    join w;
    assert idle(w);
    return w.out;
  }

  int early(int x) {
    W w = new W(x);
    fork w;
    int r = w.out;
    join w;
    return r;
  }

  void twice(int x) {
    W w = new W(x);
    fork w;
    fork w;
  }

  void unforked(int x) {
    W w = new W(x);
    join w;
  }
}
"#;

#[test]
fn a_joined_thread_hands_over_its_postcondition() {
    let r = run_with(THREADS, "Main.good", &[("x", InVal::Int(-6))]);
    assert_eq!(r.status, Status::Ok, "{:?}", codes(&r));
    assert_eq!(int(&r), 36);
    // Before `join`, the thread's fields are not the forker's.
    let r = run_with(THREADS, "Main.early", &[("x", InVal::Int(3))]);
    assert_eq!(r.status, Status::Error);
    assert!(codes(&r).contains(&"R-PERM-READ"), "{:?}", codes(&r));
}

#[test]
fn forking_twice_or_joining_an_unforked_thread_is_reported() {
    for m in ["Main.twice", "Main.unforked"] {
        let r = run_with(THREADS, m, &[("x", InVal::Int(1))]);
        assert_eq!(r.status, Status::Error, "{m}");
        assert!(codes(&r).contains(&"R-THREAD"), "{m}: {:?}", codes(&r));
    }
}

mod flow;

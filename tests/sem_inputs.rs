//! Inputs for real contracts, and what the types and contracts of a method grant a run: array
//! lengths a sized type or a permission implies, sequence lengths, `\matrix` rows, and `read`
//! stated twice. Each case has a wrong twin that must still be caught.

use alpine_rs::sem::{self, Config, RunOptions, RunResult, Status};

fn runs(src: &str, random: usize) -> Vec<RunResult> {
    let opts = RunOptions { random, seed: 3, config: Config::default(), ..RunOptions::default() };
    let runs = sem::run_program(src, &opts).unwrap_or_else(|e| panic!("{e}"));
    for r in &runs {
        eprintln!("{} #{}: {:?} [{}]", r.method, r.input_id, r.status, r.input.describe());
        eprintln!("{}", sem::render("t.pvl", src, &r.errors));
    }
    assert!(!runs.is_empty(), "no run");
    runs
}

fn all_ok(src: &str) {
    for r in runs(src, 20) {
        assert_eq!(r.status, Status::Ok, "input {}", r.input.describe());
    }
}

fn codes(runs: &[RunResult]) -> Vec<String> {
    runs.iter().flat_map(|r| r.errors.iter().map(|d| d.code.clone())).collect()
}

/// `int[M][N] m` is an M-by-N matrix whose rows the method may read (verification.md §5.2):
/// the generator makes it so, and the run reads rows without a stated row permission.
const SIZED: &str = r#"
class C {
  context_everywhere M > 0 && N > 0;
  context (\forall* int i; 0 <= i && i < M; (\forall* int j; 0 <= j && j < N; Perm(m[i][j], write)));
  ensures (\forall int i; 0 <= i && i < M; (\forall int j; 0 <= j && j < N; m[i][j] == i + j));
  void fill(int M, int N, int[M][N] m) {
    int i = 0;
    loop_invariant 0 <= i && i <= M;
    loop_invariant (\forall* int r; 0 <= r && r < M; (\forall* int c; 0 <= c && c < N; Perm(m[r][c], write)));
    loop_invariant (\forall int r; 0 <= r && r < i; (\forall int c; 0 <= c && c < N; m[r][c] == r + c));
    while (i < M) {
      int j = 0;
      loop_invariant 0 <= j && j <= N;
      loop_invariant (\forall* int r; 0 <= r && r < M; (\forall* int c; 0 <= c && c < N; Perm(m[r][c], write)));
      loop_invariant (\forall int r; 0 <= r && r < i; (\forall int c; 0 <= c && c < N; m[r][c] == r + c));
      loop_invariant (\forall int c; 0 <= c && c < j; m[i][c] == i + c);
      while (j < N) {
        m[i][j] = i + j;
        j = j + 1;
      }
      i = i + 1;
    }
  }
}
"#;

#[test]
fn a_sized_matrix_parameter_has_its_shape_and_readable_rows() {
    all_ok(SIZED);
}

#[test]
fn rows_without_a_shape_still_need_permission() {
    // A field holds no implied shape: reading one of its rows needs a stated permission.
    let src = r#"
class C {
  int[][] g;
  requires Perm(g, 1\2) ** g != null ** g.length > 0;
  void f() {
    int[] r = g[0];
  }
}
"#;
    let rs = runs(src, 5);
    assert!(codes(&rs).iter().any(|c| c == "R-PERM-READ"), "{:?}", codes(&rs));
    // And a member that states a row permission itself gets no implied rows: reading a row it
    // has no permission for fails.
    let src = r#"
class C {
  requires M > 0 && N > 0 && m != null && m.length == M;
  requires Perm(m[0], 1\2);
  void f(int M, int N, int[M][N] m) {
    int[] r = m[M - 1];
  }
}
"#;
    let rs = runs(src, 5);
    assert!(codes(&rs).iter().any(|c| c == "R-PERM-READ"), "{:?}", codes(&rs));
}

#[test]
fn sequence_lengths_are_solved_from_the_contract() {
    all_ok(
        r#"
class S {
  requires |xs| > 10 && |ys| == |xs| + 2;
  ensures \result == xs[10] + ys[11];
  int f(seq<int> xs, seq<int> ys) {
    return xs[10] + ys[11];
  }
}
"#,
    );
    // The twin reads past what the contract guarantees: some input shows it.
    let rs = runs(
        r#"
class S {
  requires |xs| > 10;
  int f(seq<int> xs) {
    return xs[11];
  }
}
"#,
        20,
    );
    assert!(codes(&rs).iter().any(|c| c == "R-OOB"), "{:?}", codes(&rs));
}

#[test]
fn permissions_imply_array_lengths() {
    // Nothing states `a.length`; the permission to `a[0..N)` implies `a.length >= N`.
    all_ok(
        r#"
class A {
  requires N > 40;
  requires (\forall* int i; 0 <= i && i < N; Perm(a[i], write));
  ensures (\forall* int i; 0 <= i && i < N; Perm(a[i], write));
  void f(int N, int[] a) {
    a[N - 1] = 7;
  }
}
"#,
    );
}

#[test]
fn read_stated_twice_is_read_once_but_fractions_add_up() {
    // `context_everywhere` restated by a loop invariant and a postcondition (VerCors' own
    // examples do this): wildcard twice is wildcard.
    all_ok(
        r#"
class L {
  context_everywhere a != null;
  context_everywhere (\forall* int k; 0 <= k && k < a.length; Value(a[k]));
  ensures (\forall* int k; 0 <= k && k < a.length; Value(a[k]));
  int f(int[] a) {
    int l = 0;
    loop_invariant 0 <= l && l <= a.length;
    loop_invariant (\forall* int k; 0 <= k && k < a.length; Value(a[k]));
    while (l < a.length && a[l] == 0) {
      l = l + 1;
    }
    return l;
  }
}
"#,
    );
    // Half stated twice is all of it: the method that receives one half cannot give back two.
    let rs = runs(
        r#"
class H {
  int x;
  context_everywhere Perm(x, 1\2);
  ensures Perm(x, 1\2);
  void g() {
  }
}
"#,
        2,
    );
    assert!(rs.iter().any(|r| r.status == Status::Error), "{:?}", codes(&rs));
}

fn bounded(src: &str, bounds: &[&str]) -> Vec<RunResult> {
    let bounds = bounds.iter().map(|b| b.parse().unwrap_or_else(|e| panic!("{e}"))).collect();
    let opts = RunOptions {
        random: 3,
        seed: 3,
        config: Config { bounds, ..Config::default() },
        ..RunOptions::default()
    };
    sem::run_program(src, &opts).unwrap_or_else(|e| panic!("{e}"))
}

const SIZES: &str = r#"
class B {
  requires n > 0 && a != null && a.length == n;
  requires (\forall* int i; 0 <= i && i < n; Perm(a[i], write));
  void f(int n, int[] a) {
    a[n - 1] = 1;
  }
}
"#;

#[test]
fn set_and_bound_fix_the_generated_sizes() {
    for r in bounded(SIZES, &["n=5000", "a.length=0..8000"]) {
        assert_eq!(r.status, Status::Ok, "{}", r.input.describe());
        assert!(r.input.args.iter().any(|(k, v)| k == "n" && *v == sem::InVal::Int(5000)));
    }
    // Beyond the default length cap with no --bound for the length: the size the user sets
    // lifts the cap (issue 55), so the array is as long as `n` says.
    for r in bounded(SIZES, &["n=5000"]) {
        assert_eq!(r.status, Status::Ok, "{}", r.input.describe());
        assert!(r.input.args.iter().any(|(k, v)| k == "n" && *v == sem::InVal::Int(5000)));
    }
    // Ranges that contradict the precondition: no input, and the reason names the flags.
    for r in bounded(SIZES, &["n=5000", "a.length=0..100"]) {
        assert_eq!(r.status, Status::Inconclusive);
        assert_eq!(r.errors[0].code, "R-NO-INPUT");
        let msg: Vec<String> = r.errors.iter().map(|d| d.message.clone()).collect();
        assert!(msg.iter().any(|m| m.contains("--bound")), "{msg:?}");
    }
    assert!("n=3..1".parse::<sem::InputBound>().is_err());
    assert!("n".parse::<sem::InputBound>().is_err());
}

/// A precondition that calls a pure function is solved through the function's body: `n` equals
/// the length the predicate states. Conjuncts the solver cannot express (the quantifier over
/// the rows) are left to the filter; nested sequences are drawn rectangular often enough.
const PREDICATE: &str = r#"
class G {
  pure boolean square(int n, seq<seq<int>> g) = |g| == n && (\forall seq<int> e; e in g; |e| == n);

  requires 0 < n && n < 5 && square(n, g);
  requires 0 <= x && x < n;
  ensures \result == g[x][x];
  int diag(int n, seq<seq<int>> g, int x) {
    return g[x][x];
  }
}
"#;

#[test]
fn pure_predicates_in_preconditions_are_solved_through_their_bodies() {
    let rs = runs(PREDICATE, 20);
    assert_eq!(rs.len(), 20);
    assert!(rs.iter().all(|r| r.status == Status::Ok), "{:?}", codes(&rs));
    // The twin reads one column past the rows' length, which the predicate fixes to `n`.
    let wrong = PREDICATE.replace("return g[x][x];", "return g[x][n];");
    let rs = runs(&wrong, 3);
    assert!(codes(&rs).iter().all(|c| c == "R-OOB") && !rs.is_empty(), "{:?}", codes(&rs));
}

/// A quantifier whose binder ranges over a collection (`x in xs`, `k in keysMap(m)`) is
/// enumerated over its members.
const MEMBERS: &str = r#"
class M {
  void m() {
    seq<int> xs = seq<int> { 3, 5, 7 };
    map<int, int> a = map<int, int> { 1 -> 1, 2 -> 4 };
    assert (\forall int x; x in xs; x % 2 == 1);
    assert (\exists int x; x in xs; x == 5);
    assert (\forall int k; k in keysMap(a); a[k] == k * k);
    assert !(\forall int x; x in xs; x < 7);
  }
}
"#;

#[test]
fn quantifiers_range_over_collection_members() {
    all_ok(MEMBERS);
    let wrong = MEMBERS.replace("x % 2 == 1", "x % 2 == 0");
    let rs = runs(&wrong, 1);
    assert_eq!(codes(&rs), ["R-ASSERT"]);
}

/// VerCors 1 binds a callee's `yields` variable in a `with` block too (`with { P = P; }`).
const YIELDS_WITH: &str = r#"
class Y {
  yields seq<int> P;
  ensures |P| == 1 && P[0] == x;
  void one(int x) {
    P = seq<int> { x };
  }

  yields seq<int> Q;
  ensures |Q| == 1 && Q[0] == x;
  void caller(int x) {
    one(x) with { P = Q; };
  }
}
"#;

#[test]
fn yields_bound_in_a_with_block() {
    all_ok(YIELDS_WITH);
}

/// A `given` input that the precondition defines (`orig == as_seq(…)`) is computed, not
/// drawn; constructors receive `given` arguments from `with` blocks; `\typeof(this) == C`
/// holds for the enclosing class only.
const GIVENS: &str = r#"
class Box {
  int v;
  given int g;
  requires g == x;
  ensures Perm(v, write) ** v == x;
  Box(int x) { v = g; }

  given seq<int> orig;
  requires |xs| < 4 && orig == xs ++ xs;
  ensures \result == |orig|;
  int twice(seq<int> xs) {
    Box b = new Box(|xs|) with { g = |xs|; };
    assert \typeof(this) == Box;
    return 2 * b.v;
  }
}

class Other { }
"#;

#[test]
fn givens_defined_by_the_precondition_are_computed() {
    let rs = runs(GIVENS, 20);
    assert_eq!(rs.len(), 20);
    assert!(rs.iter().all(|r| r.status == Status::Ok), "{:?}", codes(&rs));
    let wrong = GIVENS.replace("\\typeof(this) == Box", "\\typeof(this) == Other");
    assert!(codes(&runs(&wrong, 2)).iter().all(|c| c == "R-ASSERT"));
    let wrong = GIVENS.replace("with { g = |xs|; }", "with { g = 0; }");
    let rs = runs(&wrong, 20);
    assert!(codes(&rs).iter().any(|c| c == "R-PRE"), "{:?}", codes(&rs));
}

/// Cells a precondition fixes one by one (`b[i] == i`, `c[i] == b[i] + n`) are computed, so
/// every input reaches the code; `\old` in a barrier contract is the state at the barrier.
const CELLS: &str = r#"
class F {
  context_everywhere a != null && b != null && c != null;
  context_everywhere n > 0 && a.length == n && b.length == n && c.length == n;
  context (\forall* int i; 0 <= i && i < n; Perm(a[i], write) ** Perm(b[i], read) ** Perm(c[i], read));
  requires (\forall int i; 0 <= i && i < n; b[i] == i);
  requires (\forall int i; 0 <= i && i < n; c[i] == b[i] + n);
  ensures (\forall int i; 0 <= i && i < n; a[i] == 2 * i + n + 1);
  void f(int n, int[] a, int[] b, int[] c) {
    par k (int t = 0 .. n)
      context Perm(a[t], write) ** Perm(b[t], read) ** Perm(c[t], read);
      requires b[t] == t && c[t] == t + n;
      ensures a[t] == 2 * t + n + 1;
    {
      a[t] = b[t] + c[t];
      barrier(k) {
        context Perm(a[t], write) ** Perm(b[t], read) ** Perm(c[t], read);
        requires a[t] == 2 * t + n;
        ensures a[t] == \old(a[t]) && b[t] == t && c[t] == t + n;
      }
      a[t] = a[t] + 1;
    }
  }
}
"#;

#[test]
fn cells_fixed_by_the_precondition_are_computed() {
    let rs = runs(CELLS, 20);
    assert!(rs.iter().all(|r| r.status == Status::Ok), "{:?}", codes(&rs));
    // Inputs of several sizes were run (no input needed the precondition to reject it).
    let sizes: std::collections::BTreeSet<String> = rs
        .iter()
        .filter_map(|r| r.input.args.iter().find(|(n, _)| n == "n").map(|(_, v)| v.to_string()))
        .collect();
    assert!(sizes.len() > 3, "{sizes:?}");
    let wrong = CELLS.replace("a[t] == \\old(a[t]) &&", "a[t] == \\old(a[t]) + 1 &&");
    let rs = runs(&wrong, 2);
    assert!(rs.iter().all(|r| r.status == Status::Error), "{:?}", codes(&rs));
    assert!(codes(&rs).iter().any(|c| c == "R-BAR-POST"), "{:?}", codes(&rs));
}

/// A map a precondition gives keys and values over a range: the generator builds it (a
/// random map has those 40 keys with those values by no chance).
const MAP_ENTRIES: &str = r#"
class M {
  requires n >= 0 && n <= 40;
  requires (\forall int i; 0 <= i && i < n; i in keysMap(m) && m[i] == i * i + k);
  ensures \result == (n > 0 ? k : 0);
  int first(map<int, int> m, int n, int k) {
    if (n > 0) { return m[0]; }
    return 0;
  }
}
"#;

#[test]
fn map_entries_fixed_by_the_precondition_are_computed() {
    let rs = runs(MAP_ENTRIES, 20);
    assert!(rs.iter().all(|r| r.status == Status::Ok), "{:?}", codes(&rs));
    let wrong = MAP_ENTRIES.replace("return m[0];", "return m[0] + 1;");
    let rs = runs(&wrong, 20);
    assert!(codes(&rs).iter().any(|c| c == "R-POST"), "{:?}", codes(&rs));
}

/// An entry method's `yields` variables start unconstrained in VerCors, and a contract may
/// state them: they are generated like parameters (here `|res| == n`), not left null.
const ENTRY_YIELDS: &str = r#"
class E {
  yields seq<int> res;
  context_everywhere 0 <= n && n < 6 && |res| == n;
  ensures (\forall int i; 0 <= i && i < n; res[i] == 0);
  void zero(int n) {
    int i = 0;
    loop_invariant 0 <= i && i <= n;
    loop_invariant (\forall int j; 0 <= j && j < i; res[j] == 0);
    while (i < n) {
      res = res[i -> 0];
      i = i + 1;
    }
  }
}
"#;

#[test]
fn entry_yields_are_generated_inputs() {
    all_ok(ENTRY_YIELDS);
    let wrong = ENTRY_YIELDS.replace("res = res[i -> 0];", "res = res[i -> 1];");
    let rs = runs(&wrong, 20);
    assert!(codes(&rs).iter().any(|c| c == "R-INV" || c == "R-POST"), "{:?}", codes(&rs));
}

/// Sizes and cells stated inside an inline predicate are solved too; a precondition that
/// cannot be evaluated for a candidate (`xs[k]` past the end) rejects the candidate instead of
/// failing the run.
const INLINE_PRED: &str = r#"
class P {
  static inline resource Pts(int[] ar, frac p, seq<int> xs) =
    p != none ** ar != null ** ar.length == |xs|
    ** (\forall* int k; 0 <= k && k < ar.length; Perm(ar[k], p))
    ** (\forall int k; 0 <= k && k < ar.length; ar[k] == xs[k]);

  given frac p;
  given seq<int> xs;
  context Pts(t, p, xs);
  ensures \result == (|xs| > 0 ? xs[0] : 0);
  int first(int[] t) {
    return t.length > 0 ? t[0] : 0;
  }
}
"#;

#[test]
fn inline_predicates_are_solved_through_their_bodies() {
    let rs = runs(INLINE_PRED, 20);
    assert_eq!(rs.len(), 20);
    assert!(rs.iter().all(|r| r.status == Status::Ok), "{:?}", codes(&rs));
    // Most inputs are not empty arrays: the cells were copied, not drawn zero.
    let nonempty = rs.iter().filter(|r| !r.input.describe().contains("t = []")).count();
    assert!(nonempty >= 10, "{nonempty}");
}

/// A pure function called on an object input (`p.same(q)`) is inlined with `this` standing for
/// the receiver: the generator makes the fields of both objects agree, where drawing them at
/// random never would.
const RECEIVER_CALL: &str = r#"
class Cell {
  int a, b, c;

  requires Perm(a, read) ** Perm(b, read) ** Perm(c, read);
  requires Perm(o.a, read) ** Perm(o.b, read) ** Perm(o.c, read);
  pure boolean same(Cell o) = a == o.a && b == o.b && c == o.c;
}

class Pair {
  requires p != null ** q != null;
  requires Perm(p.a, 1\2) ** Perm(p.b, 1\2) ** Perm(p.c, 1\2);
  requires Perm(q.a, 1\2) ** Perm(q.b, 1\2) ** Perm(q.c, 1\2);
  requires p.a > 10 ** p.same(q);
  ensures \result == 2 * p.a;
  static int sum(Cell p, Cell q) {
    return p.a + q.a;
  }
}
"#;

#[test]
fn pure_calls_on_object_inputs_are_solved_through_their_bodies() {
    let rs = runs(RECEIVER_CALL, 20);
    assert_eq!(rs.len(), 20);
    assert!(rs.iter().all(|r| r.status == Status::Ok), "{:?}", codes(&rs));
    // The twin: a body that pairs other fields is followed just as well (the generator reads
    // the body, it does not guess field-by-field equality; this fails without the inlining).
    let wrong = RECEIVER_CALL.replace("b == o.b", "b == o.a");
    let rs = runs(&wrong, 20);
    assert!(rs.iter().all(|r| r.status == Status::Ok), "{:?}", codes(&rs));
}

/// Map entries over a range with values that must differ (`a[i] != b[i]`), of maps whose drawn
/// value is empty: the keys come from the map's declared value type, and each value is set
/// apart from the other map's. Random values never meet it for 50 keys.
const MAP_APART: &str = r#"
class M {
  requires (\forall int i; 0 <= i && i < 50; i in keysMap(a) && i in keysMap(b) && a[i] != b[i]);
  requires (\forall int i; 0 <= i && i < 50; i in keysMap(c) && i in keysMap(d) && c[i] != d[i]);
  ensures \result == 100;
  int count(map<int, boolean> a, map<int, boolean> b, map<int, int> c, map<int, int> d) {
    int n = 0;
    int i = 0;
    loop_invariant 0 <= i && i <= 50 && n == 2 * i;
    while (i < 50) {
      if (a[i] != b[i]) { n = n + 1; }
      if (c[i] != d[i]) { n = n + 1; }
      i = i + 1;
    }
    return n;
  }
}
"#;

#[test]
fn map_entries_set_apart_by_the_precondition_are_computed() {
    let rs = runs(MAP_APART, 20);
    assert_eq!(rs.len(), 20);
    assert!(rs.iter().all(|r| r.status == Status::Ok), "{:?}", codes(&rs));
}

//! Soundness of `verify` on clauses that must never be dropped: a termination measure is
//! checked by Silicon (a wrong one fails), and a clause the encoder cannot check is refused with
//! V-UNSUPPORTED (exit 2) instead of being ignored, so a program that breaks it never verifies;
//! a precondition that can never hold is reported (V-UNSAT-PRE) unless it is literally `false`.
//! Runs Silicon (the backend `.ci/run` installs).

mod common;

use common::{run_cli, tmpdir};

/// (file, text, verdict, code of the first diagnostic when it is not verified).
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "wrong_function_measure.pvl",
        "class C {\n  requires n >= 0;\n  decreases n;\n  pure int f(int n) = n == 0 ? 0 : f(n + 1);\n}\n",
        "Failed",
        "V-TERMINATION",
    ),
    (
        "function_measure.pvl",
        "class C {\n  requires n >= 0;\n  decreases n;\n  pure int f(int n) = n == 0 ? 0 : f(n - 1);\n}\n",
        "Verified",
        "",
    ),
    (
        "wrong_method_measure.pvl",
        "class C {\n  requires n >= 0;\n  decreases n;\n  void m(int n) {\n    if (n > 0) { m(n); }\n  }\n}\n",
        "Failed",
        "V-TERMINATION",
    ),
    (
        "wrong_loop_measure.pvl",
        "class C {\n  void m(int n) {\n    int i = 0;\n    loop_invariant 0 <= i;\n    decreases n - i;\n    while (i < n) {\n      i = i - 1;\n    }\n  }\n}\n",
        "Failed",
        "V-TERMINATION",
    ),
    (
        "loop_measure.pvl",
        "class C {\n  requires n >= 0;\n  void m(int n) {\n    int i = 0;\n    loop_invariant 0 <= i && i <= n;\n    decreases n - i;\n    while (i < n) {\n      i = i + 1;\n    }\n  }\n}\n",
        "Verified",
        "",
    ),
    // `decreases;` without a measure promises termination without recursion (VerCors 2):
    // a method that calls itself breaks it.
    (
        "no_measure.pvl",
        "class C {\n  decreases;\n  void m(int n) {\n    if (n > 0) { m(n - 1); }\n  }\n}\n",
        "Failed",
        "V-TERMINATION",
    ),
    (
        "modifies.pvl",
        "class C {\n  int x;\n  modifies x;\n  void m() { }\n}\n",
        "Unsupported",
        "V-UNSUPPORTED",
    ),
    (
        "accessible.pvl",
        "class C {\n  int x;\n  accessible x;\n  void m() { }\n}\n",
        "Unsupported",
        "V-UNSUPPORTED",
    ),
    (
        "unsatisfiable_pre.pvl",
        "class C {\n  requires 3 == 4;\n  void m() { assert 5 == 6; }\n}\n",
        "Failed",
        "V-UNSAT-PRE",
    ),
    (
        "unsatisfiable_permissions.pvl",
        "class C {\n  int x;\n  requires Perm(x, write) ** Perm(x, 1\\2);\n  void m() { x = 1; }\n}\n",
        "Failed",
        "V-UNSAT-PRE",
    ),
    (
        "intended_false_pre.pvl",
        "class C {\n  requires false;\n  void m() { assert 1 == 2; }\n}\n",
        "Verified",
        "",
    ),
    (
        "satisfiable_pre.pvl",
        "class C {\n  requires n > 0;\n  void m(int n) { assert n != 0; }\n}\n",
        "Verified",
        "",
    ),
    (
        "frac_parameter.pvl",
        "class C {\n  int x;\n  requires Perm(x, p);\n  ensures Perm(x, p);\n  int get(frac p) { return x; }\n}\n",
        "Verified",
        "",
    ),
    (
        "zfrac_argument_for_frac.pvl",
        "class C {\n  int x;\n  requires Perm(x, p);\n  ensures Perm(x, p);\n  void get(frac p) { }\n  requires Perm(x, 1\\2);\n  ensures Perm(x, 1\\2);\n  void m(zfrac z) { get(z); }\n}\n",
        "Failed",
        "V-PRE",
    ),
    (
        "sized_array_parameter.pvl",
        "class C {\n  context_everywhere x != null;\n  context (\\forall* int i; 0 <= i && i < n; Perm(x[i], write));\n  void m(int n, int[n] x) {\n    par (int t = 0 .. n)\n      context Perm(x[t], write);\n    { x[t] = 0; }\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "sized_array_argument.pvl",
        "class C {\n  requires a != null;\n  void m(int n, int[n] a) { }\n  void k() {\n    int[] b = new int[2];\n    m(3, b);\n  }\n}\n",
        "Failed",
        "V-PRE",
    ),
    (
        "barrier_old.pvl",
        "class C {\n  context_everywhere a != null && a.length == n && n > 0;\n  requires (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));\n  ensures (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));\n  void m(int n, int[] a) {\n    par k (int t = 0 .. n)\n      requires Perm(a[t], write);\n      ensures Perm(a[t], write);\n    {\n      a[t] = t;\n      barrier(k) {\n        context 0 <= t && t < n;\n        requires Perm(a[t], write);\n        ensures Perm(a[t], write);\n        ensures a[t] == \\old(a[t]);\n      }\n      assert a[t] == t;\n    }\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        // Each thread hands in its own cell; the barrier must not give every thread all cells
        // (a clause that names no thread variable counts once per thread).
        "barrier_whole_array_to_every_thread.pvl",
        "class S {\n  context_everywhere a != null && a.length == 64;\n  requires (\\forall* int k; 0 <= k && k < 64; Perm(a[k], write));\n  void m(int[] a) {\n    par g (int t = 0 .. 64)\n      requires Perm(a[t], write);\n    {\n      barrier(g) {\n        requires Perm(a[t], write);\n        ensures (\\forall* int k; 0 <= k && k < 64; Perm(a[k], write));\n      }\n      a[0] = t;\n    }\n  }\n}\n",
        "Failed",
        "V-BAR-INCONSISTENT",
    ),
    (
        // Four threads each hand in a quarter of every cell: together, each cell whole.
        "barrier_gather_quarters.pvl",
        "class S {\n  context_everywhere a != null && a.length == 4;\n  requires (\\forall* int k; 0 <= k && k < 4; Perm(a[k], write));\n  ensures (\\forall* int k; 0 <= k && k < 4; Perm(a[k], write));\n  void m(int[] a) {\n    par g (int t = 0 .. 4)\n      requires (\\forall* int k; 0 <= k && k < 4; Perm(a[k], 1\\4));\n      ensures Perm(a[t], write);\n    {\n      barrier(g) {\n        requires (\\forall* int k; 0 <= k && k < 4; Perm(a[k], 1\\4));\n        ensures Perm(a[t], write);\n      }\n      a[t] = t;\n    }\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        // The barrier's fact `0 < s` makes the guard `t % (2 * s)` defined, in whatever order
        // the clauses are written.
        "barrier_guard_needs_a_fact.pvl",
        "class R {\n  context_everywhere a != null && a.length == 8;\n  requires 0 < s;\n  requires (\\forall* int k; 0 <= k && k < 8; Perm(a[k], write));\n  ensures (\\forall* int k; 0 <= k && k < 8; Perm(a[k], write));\n  void m(int[] a, int s) {\n    par g (int t = 0 .. 8)\n      requires 0 < s;\n      requires Perm(a[t], write);\n      ensures Perm(a[t], write);\n    {\n      barrier(g) {\n        context 0 < s;\n        requires t % (2 * s) == 0 ==> Perm(a[t], write);\n        requires t % (2 * s) != 0 ==> Perm(a[t], write);\n        ensures Perm(a[t], write);\n      }\n      a[t] = t;\n    }\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "barrier_wrong_old.pvl",
        "class C {\n  context_everywhere a != null && a.length == n && n > 0;\n  requires (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));\n  ensures (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));\n  void m(int n, int[] a) {\n    par k (int t = 0 .. n)\n      requires Perm(a[t], write);\n      ensures Perm(a[t], write);\n    {\n      a[t] = t;\n      barrier(k) {\n        context 0 <= t && t < n;\n        requires Perm(a[t], write);\n        ensures Perm(a[t], write);\n        ensures a[t] == \\old(a[t]) + 1;\n      }\n      assert a[t] == t;\n    }\n  }\n}\n",
        "Failed",
        "V-BAR-INCONSISTENT",
    ),
    (
        "region_everywhere.pvl",
        "class C {\n  requires a != null;\n  requires (\\forall* int i; 0 <= i && i < a.length; Perm(a[i], write));\n  void m(int[] a) {\n    context_everywhere a != null;\n    par (int t = 0 .. a.length)\n      requires Perm(a[t], write);\n    { a[t] = 0; }\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "region_everywhere_wrong.pvl",
        "class C {\n  requires a != null;\n  requires (\\forall* int i; 0 <= i && i < a.length; Perm(a[i], write));\n  void m(int[] a) {\n    context_everywhere a != null && a.length > 5;\n    par (int t = 0 .. a.length)\n      requires Perm(a[t], write);\n    { a[t] = 0; }\n  }\n}\n",
        "Failed",
        "V-PAR-PRE",
    ),
    (
        "this_compared_with_null.pvl",
        "class C {\n  int x;\n  ensures this != null ** Perm(x, write);\n  C() { }\n  requires this == null;\n  void m() { }\n}\n",
        "Failed",
        "V-UNSAT-PRE",
    ),
    (
        "frac_yields.pvl",
        "class C {\n  int x;\n  given frac p;\n  requires Perm(x, p);\n  yields frac q;\n  ensures Perm(x, q) ** q <= p;\n  void drop() { q = p \\ 2; }\n  requires Perm(x, write);\n  void m() {\n    frac r;\n    drop() with { p = 1; } then { r = q; } ;\n    drop() with { p = r; } ;\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "frac_yields_out_of_range.pvl",
        "class C {\n  int x;\n  given frac p;\n  requires Perm(x, p);\n  yields frac q;\n  ensures Perm(x, q) ** q <= p;\n  void drop() { q = p - p; }\n  requires Perm(x, write);\n  void m() {\n    frac r;\n    drop() with { p = 1; } then { r = q; } ;\n    drop() with { p = r; } ;\n  }\n}\n",
        "Failed",
        "V-POST",
    ),
    (
        "append_a_sequence_to_sequences.pvl",
        "class C {\n  requires |ss| == 1;\n  void m(seq<seq<int>> ss, seq<int> s) {\n    seq<seq<int>> t = ss ++ s;\n    assert |t| == 2 && t[1] == s;\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "append_a_sequence_is_not_concatenation.pvl",
        "class C {\n  requires |ss| == 1;\n  void m(seq<seq<int>> ss, seq<int> s) {\n    seq<seq<int>> t = ss ++ s;\n    assert |t| == 1 + |s|;\n  }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    // Injectivity of object receivers: assumed where the permission is received, checked
    // where it is given away (a caller passing one object twice fails).
    (
        "objects_of_a_sequence.pvl",
        "class E { int v; }\nclass C {\n  requires |xs| == 2;\n  requires (\\forall* int i; 0 <= i && i < 2; Perm(xs[i].v, write));\n  ensures (\\forall* int i; 0 <= i && i < 2; Perm(xs[i].v, write));\n  ensures xs[0].v == 1;\n  void m(seq<E> xs) { xs[0].v = 1; }\n}\n",
        "Verified",
        "",
    ),
    (
        "one_object_given_twice.pvl",
        "class E { int v; }\nclass C {\n  requires |xs| == 2;\n  requires (\\forall* int i; 0 <= i && i < 2; Perm(xs[i].v, 1\\4));\n  void m(seq<E> xs) { }\n  requires Perm(e.v, write);\n  void caller(E e) { m(seq<E> { e, e }); }\n}\n",
        "Failed",
        "V-NOT-INJECTIVE",
    ),
    (
        "one_object_twice_is_not_assumed_away.pvl",
        "class E { int v; }\nclass C {\n  requires |xs| == 2 && xs[0] == xs[1];\n  requires (\\forall* int i; 0 <= i && i < 2; Perm(xs[i].v, 1\\4));\n  void m(seq<E> xs) { assert false; }\n}\n",
        "Failed",
        "V-UNSAT-PRE",
    ),
    // ... also per thread of a par block (the injectivity fact is re-indexed with the thread).
    (
        "objects_per_thread.pvl",
        "class E { int v; }\nclass C {\n  context_everywhere |xs| == 4;\n  context (\\forall* int i; 0 <= i && i < 4; Perm(xs[i].v, write));\n  void m(seq<E> xs) {\n    par (int t = 0 .. 2)\n      context (\\forall* int i; 2 * t <= i && i < 2 * t + 2; Perm(xs[i].v, write));\n    {\n      xs[2 * t].v = 1;\n    }\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "objects_of_another_thread.pvl",
        "class E { int v; }\nclass C {\n  context_everywhere |xs| == 4;\n  context (\\forall* int i; 0 <= i && i < 4; Perm(xs[i].v, write));\n  void m(seq<E> xs) {\n    par (int t = 0 .. 2)\n      context (\\forall* int i; 2 * t <= i && i < 2 * t + 2; Perm(xs[i].v, write));\n    {\n      xs[(2 * t + 2) % 4].v = 1;\n    }\n  }\n}\n",
        "Failed",
        "V-PERM-WRITE",
    ),
    // Blocks `N*b <= k < N*(b+1)` of an `M*N` array per thread: the bounds of the products
    // are stated for Z3 (valid facts), and a block past the end or overlapping blocks still fail.
    (
        "blocks_of_threads.pvl",
        "class B {\n  context_everywhere ar != null ** N > 0 ** M > 0;\n  context_everywhere ar.length == M * N;\n  context (\\forall* int i; 0 <= i && i < M * N; Perm(ar[i], write));\n  ensures (\\forall int i; 0 <= i && i < M * N; ar[i] == 1);\n  void fill(int M, int N, int[] ar) {\n    par blocks (int b = 0 .. M)\n      context (\\forall* int k; N * b <= k && k < N * (b + 1); Perm(ar[k], write));\n      ensures (\\forall int k; N * b <= k && k < N * (b + 1); ar[k] == 1);\n    {\n      par cells (int c = N * b .. N * (b + 1))\n        context 0 <= b && b < M;\n        context Perm(ar[c], write);\n        ensures ar[c] == 1;\n      {\n        ar[c] = 1;\n      }\n    }\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "blocks_past_the_end.pvl",
        "class B {\n  context_everywhere ar != null ** N > 0 ** M > 0;\n  context_everywhere ar.length == M * N - 1;\n  context (\\forall* int i; 0 <= i && i < M * N - 1; Perm(ar[i], write));\n  ensures (\\forall int i; 0 <= i && i < M * N - 1; ar[i] == 1);\n  void fill(int M, int N, int[] ar) {\n    par blocks (int b = 0 .. M)\n      context (\\forall* int k; N * b <= k && k < N * (b + 1); Perm(ar[k], write));\n      ensures (\\forall int k; N * b <= k && k < N * (b + 1); ar[k] == 1);\n    {\n      par cells (int c = N * b .. N * (b + 1))\n        context 0 <= b && b < M;\n        context Perm(ar[c], write);\n        ensures ar[c] == 1;\n      {\n        ar[c] = 1;\n      }\n    }\n  }\n}\n",
        "Failed",
        "V-OOB",
    ),
    (
        "overlapping_blocks.pvl",
        "class B {\n  context_everywhere ar != null ** N > 0 ** M > 0;\n  context_everywhere ar.length == M * N;\n  context (\\forall* int i; 0 <= i && i < M * N; Perm(ar[i], write));\n  ensures (\\forall int i; 0 <= i && i < M * N; ar[i] == 1);\n  void fill(int M, int N, int[] ar) {\n    par blocks (int b = 0 .. M)\n      context (\\forall* int k; N * b <= k && k <= N * (b + 1) && k < M * N; Perm(ar[k], write));\n      ensures (\\forall int k; N * b <= k && k < N * (b + 1); ar[k] == 1);\n    {\n      par cells (int c = N * b .. N * (b + 1))\n        context 0 <= b && b < M;\n        context Perm(ar[c], write);\n        ensures ar[c] == 1;\n      {\n        ar[c] = 1;\n      }\n    }\n  }\n}\n",
        "Failed",
        "V-NOT-INJECTIVE",
    ),
    // A sized array of arrays is a matrix whose rows the member may read; a member that
    // states its own row permissions gets no implied ones (write plus an implied wildcard
    // would exceed 1 and make everything provable).
    (
        "sized_matrix_rows_readable.pvl",
        "class C {\n  context_everywhere m != null;\n  context (\\forall* int i; 0 <= i && i < M; (\\forall* int j; 0 <= j && j < N; Perm(m[i][j], write)));\n  ensures (\\forall int i; 0 <= i && i < M; (\\forall int j; 0 <= j && j < N; m[i][j] == 0));\n  void z(int M, int N, int[M][N] m) {\n    par (int i = 0 .. M, int j = 0 .. N)\n      context Perm(m[i][j], write);\n      ensures m[i][j] == 0;\n    { m[i][j] = 0; }\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "sized_matrix_stated_rows_not_vacuous.pvl",
        "class C {\n  requires m != null;\n  requires (\\forall* int i; 0 <= i && i < M; Perm(m[i], write));\n  void z(int M, int N, int[M][N] m) { assert false; }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    // A neighbour's cell `(i + c) % K` is one cell per value of `i` when the values of `i + c`
    // fit in one window of K (literal, or symbolic under the contract's facts): re-indexed over
    // the cell. Cells that collide (`% 16` for 32 threads) or a window wider than K still fail.
    (
        "neighbour_cells.pvl",
        "class C {\n  context_everywhere a != null && a.length == 32;\n  context (\\forall* int i; 0 <= i && i < 32; Perm(a[i], write));\n  ensures (\\forall int i; 0 <= i && i < 32; a[i] == (i + 31) % 32);\n  void rotate(int[] a) {\n    par (int tid = 0 .. 32)\n      context Perm(a[(tid + 1) % 32], write);\n      ensures a[(tid + 1) % 32] == tid;\n    {\n      a[(tid + 1) % 32] = tid;\n    }\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "neighbour_cells_collide.pvl",
        "class C {\n  context_everywhere a != null && a.length == 32;\n  context (\\forall* int i; 0 <= i && i < 32; Perm(a[i], write));\n  \n  void rotate(int[] a) {\n    par (int tid = 0 .. 32)\n      context Perm(a[(tid + 1) % 16], write);\n      ensures a[(tid + 1) % 16] == tid;\n    {\n      a[(tid + 1) % 16] = tid;\n    }\n  }\n}\n",
        "Failed",
        "V-NOT-INJECTIVE",
    ),
    (
        "shifted_window.pvl",
        "class C {\n  requires a != null && a.length == 32 && 0 <= s && 0 <= n && n <= 32;\n  requires (\\forall* int i; 0 <= i && i < n; Perm(a[(i + s) % 32], write));\n  ensures (\\forall* int i; 0 <= i && i < n; Perm(a[(i + s) % 32], write));\n  ensures (\\forall int i; 0 <= i && i < n; a[(i + s) % 32] == 0);\n  void clear(int[] a, int n, int s) {\n    loop_invariant 0 <= k && k <= n;\n    loop_invariant (\\forall* int i; 0 <= i && i < n; Perm(a[(i + s) % 32], write));\n    loop_invariant (\\forall int i; 0 <= i && i < k; a[(i + s) % 32] == 0);\n    for (int k = 0; k < n; k++) {\n      a[(k + s) % 32] = 0;\n    }\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "shifted_window_too_wide.pvl",
        "class C {\n  requires a != null && a.length == 32 && 0 <= s && 0 <= n && n <= 33;\n  requires (\\forall* int i; 0 <= i && i < n; Perm(a[(i + s) % 32], write));\n  ensures (\\forall* int i; 0 <= i && i < n; Perm(a[(i + s) % 32], write));\n  ensures (\\forall int i; 0 <= i && i < n; a[(i + s) % 32] == 0);\n  void clear(int[] a, int n, int s) {\n    loop_invariant 0 <= k && k <= n;\n    loop_invariant (\\forall* int i; 0 <= i && i < n; Perm(a[(i + s) % 32], write));\n    loop_invariant (\\forall int i; 0 <= i && i < k; a[(i + s) % 32] == 0);\n    for (int k = 0; k < n; k++) {\n      a[(k + s) % 32] = 0;\n    }\n  }\n}\n",
        "Failed",
        "V-NOT-INJECTIVE",
    ),
];

#[test]
fn termination_and_satisfiability_are_checked_and_unencodable_clauses_are_refused() {
    common::assert_cases("viper-soundness", CASES);
}

#[test]
fn the_satisfiability_check_can_be_switched_off() {
    let d = tmpdir("viper-soundness", "disable-sat");
    let p = d.join("unsat.pvl");
    std::fs::write(&p, "class C {\n  requires 3 == 4;\n  void m() { assert 5 == 6; }\n}\n")
        .expect("writable");
    let path = p.to_string_lossy().into_owned();
    let (code, out, err) = run_cli(&["verify", "--disable-sat", &path]);
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, out, err) = run_cli(&["verify", &path]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("V-UNSAT-PRE") || err.contains("V-UNSAT-PRE"), "{out}\n{err}");
}

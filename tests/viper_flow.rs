//! Functions, control flow and names in the Viper encoding: methods defined by an expression
//! (VerCors 1 functions), inline functions, early `return`, `goto`/`label`, pure functions with an
//! `if`/`return` body, and the mangling that keeps fields, members, overloads and locals apart.
//! Each feature has a program that verifies and a wrong one that must not; constructs that
//! cannot be encoded soundly are refused (V-UNSUPPORTED), never verified. Runs Silicon.

mod common;

/// (file name, program, verdict, code of the first diagnostic when not verified).
const CASES: &[(&str, &str, &str, &str)] = &[
    // ---- allocation of arrays of any dimension, of booleans and of objects
    (
        "new_arrays.pvl",
        "class E { int v; }\nclass T {\n  void test() {\n    int[][][] x = new int[5][6][7];\n    x[1][2][3] = 4;\n    assert x[1][2][3] == 4;\n    assert x[0][2][3] == 0;\n    boolean[][] b = new boolean[2][3];\n    b[1][1] = true;\n    assert !b[0][1];\n    E[] es = new E[3];\n    assert es[2] == null;\n    es[0] = new E();\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "new_arrays_are_zero.pvl",
        "class E { int v; }\nclass T {\n  void test() {\n    int[][][] x = new int[5][6][7];\n    x[1][2][3] = 4;\n    assert x[1][2][3] == 4;\n    assert x[0][2][3] == 0;\n    boolean[][] b = new boolean[2][3];\n    b[1][1] = true;\n    assert !b[0][1];\n    E[] es = new E[3];\n    assert es[2] == null;\n    es[0] = new E();\n    assert x[4][5][6] == 1;\n  }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    // ---- VerCors 1 binds a callee's `yields` variable in a `with` block too
    (
        "yields_in_with.pvl",
        "class Y {\n  yields seq<int> P;\n  ensures |P| == 1 && P[0] == x;\n  void one(int x) {\n    P = seq<int> { x };\n  }\n\n  yields seq<int> Q;\n  ensures |Q| == 1 && Q[0] == x;\n  void caller(int x) {\n    one(x) with { P = Q; };\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "yields_in_with_wrong.pvl",
        "class Y {\n  yields seq<int> P;\n  ensures |P| == 1 && P[0] == x;\n  void one(int x) {\n    P = seq<int> { x };\n  }\n\n  yields seq<int> Q;\n  ensures |Q| == 1 && Q[0] == x + 1;\n  void caller(int x) {\n    one(x) with { P = Q; };\n  }\n}\n",
        "Failed",
        "V-POST",
    ),
    // ---- methods defined by an expression, inline functions
    (
        "expr_function.pvl",
        "class C {\n  static int sq(int n) = n * n;\n  void m() { assert sq(3) == 9; }\n}\n",
        "Verified",
        "",
    ),
    (
        "expr_function_wrong.pvl",
        "class C {\n  static int sq(int n) = n * n;\n  void m() { assert sq(3) == 10; }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "expr_function_post_wrong.pvl",
        "class C {\n  ensures \\result > 0;\n  static int dec(int n) = n - 1;\n}\n",
        "Failed",
        "V-POST",
    ),
    (
        "inline_function.pvl",
        "class C {\n  inline int twice(int x) = x + x;\n  void m() { assert twice(3) == 6; }\n}\n",
        "Verified",
        "",
    ),
    (
        "inline_function_wrong.pvl",
        "class C {\n  inline int twice(int x) = x + x;\n  void m() { assert twice(3) == 7; }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "inline_function_recursive.pvl",
        "class C {\n  inline static int f(int x) = x <= 0 ? 0 : f(x - 1);\n  void m() { assert f(1) == 0; }\n}\n",
        "Unsupported",
        "V-UNSUPPORTED",
    ),
    // ---- names: a field and a method alike, overloads, a local named like a Viper member
    (
        "field_and_method.pvl",
        "class C {\n  int sum;\n  ensures \\result == a + b;\n  int sum(int a, int b) { return a + b; }\n  requires Perm(sum, write);\n  ensures Perm(sum, write) ** sum == 3;\n  void m() { sum = sum(1, 2); }\n}\n",
        "Verified",
        "",
    ),
    (
        "field_and_method_wrong.pvl",
        "class C {\n  int sum;\n  ensures \\result == a + b;\n  int sum(int a, int b) { return a + b; }\n  requires Perm(sum, write);\n  ensures Perm(sum, write) ** sum == 4;\n  void m() { sum = sum(1, 2); }\n}\n",
        "Failed",
        "V-POST",
    ),
    (
        "overloads.pvl",
        "class C {\n  pure int f(int a) = a;\n  pure int f(int a, int b) = a + b;\n  pure int f(boolean b) = b ? 1 : 0;\n  void m() { assert f(5) == 5 && f(1, 2) == 3 && f(true) == 1; }\n}\n",
        "Verified",
        "",
    ),
    (
        "overloads_wrong.pvl",
        "class C {\n  pure int f(int a) = a;\n  pure int f(int a, int b) = a + b;\n  void m() { assert f(1, 2) == 1; }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "local_like_member.pvl",
        "class C {\n  int x;\n  void m() { int C_x = 1; int loc = 2; assert C_x + loc == 3; }\n}\n",
        "Verified",
        "",
    ),
    // ---- early return
    (
        "early_return.pvl",
        "class C {\n  requires n >= 0;\n  ensures \\result >= 0;\n  int f(int n) {\n    int i = 0;\n    loop_invariant 0 <= i && i <= n;\n    while (i < n) {\n      if (i == 5) { return i; }\n      i = i + 1;\n    }\n    return n;\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "early_return_wrong.pvl",
        "class C {\n  requires n >= 0;\n  ensures \\result >= 0;\n  int f(int n) {\n    int i = 0;\n    loop_invariant 0 <= i && i <= n;\n    while (i < n) {\n      if (i == 5) { return -1; }\n      i = i + 1;\n    }\n    return n;\n  }\n}\n",
        "Failed",
        "V-POST",
    ),
    (
        "early_return_skips.pvl",
        "class C {\n  ensures \\result == 1;\n  int f(boolean b) {\n    if (b) { return 1; }\n    return 1;\n    assert false;\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "early_return_in_par.pvl",
        "class C {\n  void m() {\n    par (int t = 0 .. 2) { if (t == 0) { return; } }\n  }\n}\n",
        "Unsupported",
        "V-UNSUPPORTED",
    ),
    // ---- goto and labels
    (
        "goto_forward.pvl",
        "class C {\n  int m() {\n    int r = 3;\n    goto done;\n    r = 4;\n    label done;\n    assert r == 3;\n    return r;\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "goto_forward_wrong.pvl",
        "class C {\n  requires n > 0;\n  ensures \\result > 0;\n  int m(int n) {\n    int r;\n    goto done;\n    r = n;\n    label done;\n    return r;\n  }\n}\n",
        "Failed",
        "V-POST",
    ),
    (
        "goto_out_of_loop.pvl",
        "class C {\n  void m() {\n    int r = 10;\n    loop_invariant r == 10;\n    while (true) { r = 20; goto out; }\n    assert false;\n    label out;\n    assert r == 20;\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "goto_into_loop.pvl",
        "class C {\n  void m() {\n    int i = 0;\n    goto inside;\n    loop_invariant i <= 0;\n    while (i < 3) {\n      label inside;\n      i = i + 1;\n    }\n    assert false;\n  }\n}\n",
        "Unsupported",
        "V-UNSUPPORTED",
    ),
    (
        "goto_loop.pvl",
        "class C {\n  void m() {\n    int r = 0;\n    label top;\n    r = r + 1;\n    if (r < 2) { goto top; }\n    assert r == 2;\n  }\n}\n",
        "Unsupported",
        "V-UNSUPPORTED",
    ),
    (
        "goto_nowhere.pvl",
        "class C {\n  void m() {\n    goto nowhere;\n  }\n}\n",
        "Unsupported",
        "V-BAD-INPUT",
    ),
    // ---- pure functions with a statement body
    (
        "pure_return_chain.pvl",
        "class C {\n  requires x >= 0;\n  pure int g(int x) {\n    if (x == 0) { return 1; }\n    return 2 * x;\n  }\n  void m() { assert g(0) == 1 && g(3) == 6; }\n}\n",
        "Verified",
        "",
    ),
    (
        "pure_return_chain_wrong.pvl",
        "class C {\n  requires x >= 0;\n  pure int g(int x) {\n    if (x == 0) { return 1; } else { return 2 * x; }\n  }\n  void m() { assert g(3) == 5; }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "pure_statement_body.pvl",
        "class C {\n  pure int g(int x) {\n    int y = x;\n    return y;\n  }\n}\n",
        "Unsupported",
        "V-UNSUPPORTED",
    ),
    // ---- `s ++ x` with an element appends it
    (
        "seq_append_element.pvl",
        "class C {\n  void m() {\n    seq<int> a = seq<int> {1, 2};\n    assert a ++ 3 == seq<int> {1, 2, 3};\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "seq_append_element_wrong.pvl",
        "class C {\n  void m() {\n    seq<int> a = seq<int> {1, 2};\n    assert a ++ 3 == seq<int> {3, 1, 2};\n  }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    // ---- an abstract predicate has no body to unfold (Silicon rejected the program)
    (
        "unfold_abstract.pvl",
        "class C {\n  resource p();\n  requires p();\n  int f() = \\unfolding p() \\in 0;\n}\n",
        "Unsupported",
        "V-BAD-INPUT",
    ),
    // ---- assigned parameters: the contract reads the value passed in
    (
        "assigned_param.pvl",
        "class C {\n  ensures \\result == n + 1;\n  int f(int n) { n = n + 1; return n; }\n}\n",
        "Verified",
        "",
    ),
    (
        "assigned_param_wrong.pvl",
        "class C {\n  ensures \\result == n;\n  int f(int n) { n = n + 1; return n; }\n}\n",
        "Failed",
        "V-POST",
    ),
];

#[test]
fn functions_jumps_and_names_verify_and_wrong_programs_do_not() {
    common::assert_cases("viper-flow", CASES);
}

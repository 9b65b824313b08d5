//! The type checker (crates/analyze/src/typeck/): each error it reports, on small programs of our own,
//! and programs it must accept (integers as fractions, `null`, `R ** b && c`, given/yields,
//! VerCors' built-in functions, static calls). No Silicon.

use alpine_rs::analyze::typeck;
use alpine_rs::diag::{render_plain, SourceFile};

/// (name, program, the code of its first error; empty: accepted)
const CASES: &[(&str, &str, &str)] = &[
    ("duplicate_local", "class C {\n  void m() {\n    int x = 3;\n    int x = 4;\n  }\n}\n", "V-DUPLICATE"),
    ("local_hides_parameter", "class C {\n  void m(int x) {\n    int x = 4;\n  }\n}\n", "V-DUPLICATE"),
    ("duplicate_field", "class C {\n  int f;\n  boolean f;\n}\n", "V-DUPLICATE"),
    ("duplicate_parameter", "class C {\n  void m(int a, int a) { }\n}\n", "V-DUPLICATE"),
    ("constructor_name", "class Name1 {\n  Name2() { }\n}\n", "V-CONSTRUCTOR-NAME"),
    ("lock_invariant_without_constructor", "class C {\n  int f;\n  resource lock_invariant() = Perm(f, write);\n}\n", "V-LOCK-CONSTRUCTOR"),
    ("lock_invariant_with_constructor", "class C {\n  int f;\n  resource lock_invariant() = Perm(f, write);\n  C() { f = 1; }\n}\n", ""),
    ("undeclared_name", "class C {\n  void m() {\n    int x = y + 1;\n  }\n}\n", "V-UNDECLARED"),
    ("undeclared_field", "class D { int g; }\nclass C {\n  requires Perm(d.h, write);\n  void m(D d) { }\n}\n", "V-UNDECLARED"),
    // An unknown class may be declared in another file: the encoder reports it (V-BAD-INPUT).
    ("unknown_class_left_to_the_encoder", "class C {\n  void m() {\n    D d = new D();\n  }\n}\n", ""),
    ("ok_static_member_of_another_file", "class C {\n  void m() {\n    int x = D.f() + D.g;\n  }\n}\n", ""),
    ("arity", "class C {\n  int twice(int x) { return 2 * x; }\n  void m() {\n    int y = twice(1, 2);\n  }\n}\n", "V-ARITY"),
    ("arity_constructor", "class D {\n  D(int a) { }\n}\nclass C {\n  void m() {\n    D d = new D();\n  }\n}\n", "V-ARITY"),
    ("argument_type", "class C {\n  void f(boolean b) { }\n  void m() {\n    f(1);\n  }\n}\n", "V-TYPE"),
    ("condition", "class C {\n  void m(int n) {\n    if (n) { }\n  }\n}\n", "V-TYPE"),
    ("loop_condition", "class C {\n  void m(int n) {\n    while (n + 1) { }\n  }\n}\n", "V-TYPE"),
    // Found by the encoder fuzzer: the instance of a generic function whose body was
    // `c ? 0 : (d ? 1 : 0) <= f(…)` reached Silicon, which rejected its types.
    ("conditional_branches", "class C {\n  pure int f(int x) = x == 0 ? 0 : (x > 1 ? 1 : 0) <= x;\n}\n", "V-TYPE"),
    ("conditional_branches_generic", "pure int occ<T>(seq<T> xs, T x) =\n  |xs| == 0 ? 0 : (xs[0] == x ? 1 : 0) <= occ<T>(xs[1..], x);\nrequires occ<int>([1], 3) == 0;\nvoid m() { }\n", "V-TYPE"),
    // Also found by the encoder fuzzer with Silicon: arithmetic on tuples, `++` on integers.
    ("tuple_arithmetic", "class C {\n  void m() {\n    tuple<int, boolean> t = tuple<int, boolean>{3, true};\n    assert t / t;\n  }\n}\n", "V-TYPE"),
    ("tuple_projections", "class C {\n  void m() {\n    tuple<int, boolean> t = tuple<int, boolean>{3, true};\n    assert t.fst == 3 && t.snd && t == t;\n  }\n}\n", ""),
    ("concat_integers", "class C {\n  void m(int j) {\n    int k = j ++ 2;\n  }\n}\n", "V-TYPE"),
    ("append_element", "class C {\n  void m(seq<int> s) {\n    seq<int> t = s ++ 2;\n  }\n}\n", ""),
    ("vec_body", "class C {\n  void m(int n, int[] ar) {\n    vec (int j = 0 .. n) {\n      int c = 1;\n      ar[j] = c > c;\n    }\n  }\n}\n", "V-TYPE"),
    ("vec_bound", "class C {\n  void m(int[] a) {\n    vec (int j = 0 .. a) {\n      a[j] = 1;\n    }\n  }\n}\n", "V-TYPE"),
    ("number_plus_sequence", "class C {\n  requires a != null && a.length > 0;\n  ensures a[0] + [1] == [1];\n  void m(int[] a) { }\n}\n", "V-TYPE"),
    ("sequence_plus_sequence", "class C {\n  void m(seq<int> s) {\n    seq<int> t = s + [1];\n  }\n}\n", ""),
    ("enum_constant_as_condition", "enum Phase { Load, Compute }\n\nclass P {\n  Phase phase;\n  requires Perm(phase, write);\n  void m() {\n    if (Phase.Compute) { phase = Phase.Load; }\n  }\n}\n", "V-TYPE"),
    ("enum_constant_compared", "enum Phase { Load, Compute }\n\nclass P {\n  Phase phase;\n  requires Perm(phase, write);\n  void m() {\n    if (phase == Phase.Compute) { phase = Phase.Load; }\n  }\n}\n", ""),
    ("resource_compared", "class C {\n  int x;\n  requires (x > 0) == Perm(x, write);\n  void m() { }\n}\n", "V-TYPE"),
    ("conditional_null_and_object", "class C {\n  C m(boolean b) {\n    return b ? null : this;\n  }\n}\n", ""),
    ("compare_int_bool", "class C {\n  void m() {\n    assert 1 == true;\n  }\n}\n", "V-TYPE"),
    ("resource_in_and", "class C {\n  int x;\n  given frac p;\n  requires Perm(x, 1) ** Perm(x, p) && p > 0;\n  void m() { }\n}\n", "V-TYPE"),
    ("resource_in_forall", "class C {\n  int x;\n  void m() {\n    assert (\\forall int i; true; Value(x));\n  }\n}\n", "V-TYPE"),
    ("assign_type", "class C {\n  void m() {\n    int x = true;\n  }\n}\n", "V-TYPE"),
    ("return_type", "class C {\n  boolean m() {\n    return 1;\n  }\n}\n", "V-TYPE"),
    ("return_in_void", "class C {\n  void m() {\n    return 1;\n  }\n}\n", "V-TYPE"),
    ("assign_to_iteration_variable", "class C {\n  void m() {\n    par (int tid = 0 .. 4) {\n      tid = 0;\n    }\n  }\n}\n", "V-NOT-ASSIGNABLE"),
    ("assign_to_method", "class C {\n  int f() { return 1; }\n  void m() {\n    f = 2;\n  }\n}\n", "V-NOT-ASSIGNABLE"),
    ("ok_frac_and_int", "class C {\n  int x;\n  given frac p;\n  requires 0 < p && p <= 1 ** Perm(x, p);\n  void m() {\n    frac q = 1;\n    zfrac z = 0;\n  }\n}\n", ""),
    ("ok_star_then_and", "class C {\n  int[] a;\n  requires Perm(a, 1\\2) ** a != null && a.length == 5;\n  void m() { }\n}\n", ""),
    ("ok_null", "class N {\n  N next;\n  int[] a;\n  void m() {\n    N n = null;\n    int[] b = null;\n    assert n == null && b == null;\n  }\n}\n", ""),
    ("ok_shadow_in_inner_block", "class C {\n  void m() {\n    { int x = 1; }\n    { int x = 2; }\n  }\n}\n", ""),
    ("ok_given_yields", "class C {\n  given frac p;\n  yields int r;\n  requires 0 < p;\n  void callee() { r = 1; }\n  void m() {\n    int q;\n    callee() with { p = 1; } then { q = r; };\n  }\n}\n", ""),
    ("ok_local_hides_yields", "class C {\n  yields int r;\n  void m() {\n    int r = 1;\n  }\n}\n", ""),
    ("ok_constructor_case", "class CartTree {\n  cartTree() { }\n}\n", ""),
    ("seq_difference", "class C {\n  void m(seq<int> xs) {\n    seq<int> ys = xs - seq<int> { 1 };\n  }\n}\n", "V-TYPE"),
    ("ok_yields_in_with", "class C {\n  yields int r;\n  void callee() { r = 1; }\n  void m() {\n    int q;\n    callee() with { r = q; };\n  }\n}\n", ""),
    ("ok_builtin_function", "class C {\n  void m(seq<int> s) {\n    assert isEmpty(s) || true;\n  }\n}\n", ""),
    ("ok_bag_membership", "class C {\n  void m() {\n    bag<int> b = bag<int> {1, 1};\n    assert (1 in b) == 2;\n  }\n}\n", ""),
    ("ok_static_call", "class D {\n  static int f() { return 1; }\n}\nclass C {\n  void m() {\n    int x = D.f();\n  }\n}\n", ""),
];

#[test]
fn each_error_is_reported_and_valid_programs_are_accepted() {
    let mut bad = Vec::new();
    for (name, text, code) in CASES {
        let parsed = alpine_rs::front::parse(text, &Default::default());
        assert!(!parsed.has_errors(), "{name} does not parse");
        let ds = typeck::check(&parsed.program);
        let src = SourceFile::new(name.to_string(), text.to_string());
        let got = ds.iter().find(|d| d.is_error()).map_or("", |d| d.code.as_str());
        if got != *code {
            bad.push(format!(
                "{name}: expected {code:?}, got {got:?}\n{}",
                render_plain(&[&src], &ds)
            ));
        }
        // Every diagnostic points at the program and says how to fix it.
        for d in &ds {
            assert!(d.primary_span().is_some() && d.help.is_some(), "{name}: {d:?}");
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn a_duplicate_points_at_both_declarations() {
    let text = "class C {\n  void m() {\n    int x = 3;\n    int x = 4;\n  }\n}\n";
    let parsed = alpine_rs::front::parse(text, &Default::default());
    let ds = typeck::check(&parsed.program);
    let src = SourceFile::new("dup.pvl", text);
    let out = render_plain(&[&src], &ds);
    assert!(out.contains("declared again here") && out.contains("first declared here"), "{out}");
    assert!(out.contains("help: rename one of the two declarations"), "{out}");
}

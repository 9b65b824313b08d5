//! The Viper encoding is well-typed for Silicon: permissions mixed with integers (`frac`
//! comparisons, integer `given` arguments, integer amounts, conditional amounts, `frac`
//! functions), arrays of objects, `null` of an
//! object type, set and bag inclusion, triggers over computed indices, and an abstract predicate
//! that is unfolded (refused before Silicon sees it). Each program used to make Silicon reject
//! the encoding (E-INTERNAL); each `_wrong` twin shows that the coercion keeps its meaning.
//! Runs Silicon (the backend `.ci/run` installs).

mod common;

/// (file name, program, expected verdict, first diagnostic code when not verified)
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "frac_compare.pvl",
        "class C {\n  given frac p;\n  requires 0 < p && p < 1;\n  void m() { assert p != 1; assert 0 <= p; }\n}\n",
        "Verified",
        "",
    ),
    (
        "frac_compare_wrong.pvl",
        "class C {\n  given frac p;\n  requires 0 < p;\n  void m() { assert 1 < p; }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "given_int.pvl",
        "class C {\n  given frac p;\n  requires 0 < p;\n  void callee();\n\n  void m() { callee() with { p = 1; }; }\n}\n",
        "Verified",
        "",
    ),
    (
        "given_int_wrong.pvl",
        "class C {\n  given frac p;\n  requires 0 < p;\n  void callee();\n\n  void m() { callee() with { p = 0; }; }\n}\n",
        "Failed",
        "V-PRE",
    ),
    (
        "int_division_amount.pvl",
        "class C {\n  int x;\n  requires Perm(x, 1/2);\n  ensures Perm(x, 1\\2);\n  void m() { }\n}\n",
        "Failed",
        "V-POST",
    ),
    (
        "object_array.pvl",
        "class E { int v; }\nclass T {\n  E[] s;\n  requires Perm(s, 1\\2) ** s != null ** s.length > 0;\n  requires Perm(s[0], 1\\2) ** s[0] != null ** Perm(s[0].v, write);\n  void m() { s[0].v = 1; assert s[0].v == 1; }\n}\n",
        "Verified",
        "",
    ),
    (
        "object_array_wrong.pvl",
        "class E { int v; }\nclass T {\n  E[] s;\n  requires Perm(s, 1\\2) ** s != null ** s.length > 0;\n  requires Perm(s[0], 1\\2) ** s[0] != null ** Perm(s[0].v, write);\n  void m() { s[0].v = 1; assert s[0].v == 2; }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "null_object.pvl",
        "class N {\n  N next;\n  requires Perm(next, 1\\2) ** next != null;\n  void m() { N n = next; assert n != null; n = null; assert n == null; }\n}\n",
        "Verified",
        "",
    ),
    (
        "null_object_wrong.pvl",
        "class N {\n  N next;\n  requires Perm(next, 1\\2);\n  void m() { assert next != null; }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "bag_inclusion.pvl",
        "class B {\n  void m() {\n    bag<int> c = bag<int> {1, 2, 2};\n    bag<int> d = bag<int> {2};\n    set<int> a = set<int> {1, 2};\n    assert d < c && d <= c && c > d && !(c <= d);\n    assert set<int> {1} < a && !(a < a);\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "bag_inclusion_wrong.pvl",
        "class B {\n  void m() {\n    bag<int> c = bag<int> {1, 2, 2};\n    assert c < c;\n  }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "trigger_arith.pvl",
        "class T {\n  requires m != null ** 1 <= k ** k < m.length;\n  requires Perm(m[k - 1], 1\\2) ** m[k - 1] != null ** m[k - 1].length > 0;\n  requires (\\forall* int j; 0 <= j && j < m[k - 1].length; Perm(m[k - 1][j], write));\n  void f(int[][] m, int k) { m[k - 1][0] = 3; assert m[k - 1][0] == 3; }\n}\n",
        "Verified",
        "",
    ),
    (
        "abstract_unfold.pvl",
        "class C {\n  resource p();\n  requires p();\n  void m() { unfold p(); }\n}\n",
        "Unsupported",
        "V-BAD-INPUT",
    ),
    (
        "cond_amount.pvl",
        "class C {\n  int x;\n  requires Perm(x, b ? 1 : 1\\2);\n  ensures Perm(x, 1\\2);\n  void m(boolean b) { }\n}\n",
        "Verified",
        "",
    ),
    (
        "frac_function.pvl",
        "class C {\n  int x;\n  pure frac one() = 1;\n  requires Perm(x, one());\n  void m() { x = 2; }\n}\n",
        "Verified",
        "",
    ),
    (
        "frac_function_wrong.pvl",
        "class C {\n  int x;\n  pure frac half() = 1\\2;\n  requires Perm(x, half());\n  void m() { x = 2; }\n}\n",
        "Failed",
        "V-PERM-WRITE",
    ),
    (
        "perm_arith.pvl",
        "class C {\n  int x;\n  given frac p;\n  requires p == 1\\2;\n  requires Perm(x, p * 2);\n  ensures Perm(x, p / 2) ** Perm(x, 2 * p - p \\ 2);\n  void m(int n) { assert p + p == write; assert -p < none; }\n}\n",
        "Verified",
        "",
    ),
    (
        "perm_arith_wrong.pvl",
        "class C {\n  int x;\n  given frac p;\n  requires p == 1\\2;\n  requires Perm(x, p * 2);\n  ensures Perm(x, p / 2) ** Perm(x, 2 * p - p \\ 2);\n  void m(int n) { assert p + p == write; assert -p < none; assert p * 2 < write; }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
];

#[test]
fn encodings_are_well_typed_and_keep_their_meaning() {
    common::assert_cases("viper-types", CASES);
}

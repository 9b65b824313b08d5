//! Maps `map<K,V>` in the Viper encoding (`crates/viper/src/encode/maps.rs`): literals (a later entry
//! wins), the total lookup, updates `m ++ (k, v)` / `buildMap`, removal, keys and values, size,
//! disjointness and equality, maps as parameters, results and loop variables. Each feature has a
//! program that verifies and wrong ones that must not (`itemsMap`, the set of pairs, included);
//! an ill-typed map is a type error. Runs Silicon.

mod common;

/// (file name, program, verdict, code of the first diagnostic when not verified).
const CASES: &[(&str, &str, &str, &str)] = &[
    (
        "lookup_size_keys.pvl",
        "class M {\n  void lit() {\n    map<int, boolean> m = map<int, boolean>{1 -> true, 2 -> false, 1 -> false};\n    assert !m[1] && !getFromMap(m, 2);\n    assert |m| == 2;\n    assert keysMap(m) == {1, 2};\n    assert !(3 in keysMap(m));\n    assert !isEmpty(m);\n    assert isEmpty(map<int, boolean>{});\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "update_remove_disjoint.pvl",
        "class M {\n  requires 5 in keysMap(m) && m[5] == 7;\n  ensures 5 in keysMap(\\result) && \\result[5] == 7 && \\result[9] == 1;\n  ensures |\\result| <= |m| + 1;\n  map<int, int> upd(map<int, int> m) {\n    map<int, int> r = m ++ (9, 1);\n    return buildMap(r, 9, 1);\n  }\n  void rem() {\n    map<int, int> a = map<int, int>{1 -> 10, 2 -> 20};\n    map<int, int> b = removeFromMap(a, 1);\n    assert !(1 in keysMap(b)) && b[2] == 20;\n    assert b == map<int, int>{2 -> 20};\n    assert removeFromMap(map<int, int>{0 -> 3}, 0) == map<int, int>{};\n    assert valuesMap(b) == {20};\n    assert disjointMap(b, map<int, int>{1 -> 5});\n    assert !disjointMap(a, b);\n    assert equalsMap(a, b ++ (1, 10));\n  }\n  void total() {\n    map<int, int> a = map<int, int>{};\n    int x = a[3];\n    assert a[3] == x;\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "loop_invariant.pvl",
        "class M {\n  requires n >= 0;\n  ensures (\\forall int j; j in keysMap(\\result); \\result[j] == j * j);\n  map<int, int> squares(int n) {\n    map<int, int> a = map<int, int>{};\n    int i = 0;\n    loop_invariant 0 <= i && i <= n;\n    loop_invariant (\\forall int k; true; (0 <= k && k < i) == k in keysMap(a));\n    loop_invariant (\\forall int j; j in keysMap(a); a[j] == j * j);\n    while (i < n) {\n      a = a ++ (i, i * i);\n      i = i + 1;\n    }\n    return a;\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "literal_later_entry_wins.pvl",
        "class M {\n  void m() {\n    map<int, int> m = map<int, int>{1 -> 10, 1 -> 11};\n    assert m[1] == 10;\n  }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "lookup_outside_domain_unknown.pvl",
        "class M {\n  void m() {\n    map<int, int> a = map<int, int>{};\n    assert a[3] == 0;\n  }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "removal_leaves_key.pvl",
        "class M {\n  void m() {\n    map<int, int> a = map<int, int>{1 -> 10, 2 -> 20};\n    map<int, int> b = removeFromMap(a, 1);\n    assert 1 in keysMap(b);\n  }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "update_wrong_size.pvl",
        "class M {\n  void m() {\n    map<int, int> a = map<int, int>{1 -> 10, 2 -> 20} ++ (2, 5);\n    assert |a| == 3;\n  }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "disjoint_wrong.pvl",
        "class M {\n  requires 2 in keysMap(a);\n  void m(map<int, int> a) {\n    assert disjointMap(a, map<int, int>{2 -> 0, 3 -> 1});\n  }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "loop_post_wrong.pvl",
        "class M {\n  requires n > 0;\n  ensures (\\forall int j; j in keysMap(\\result); \\result[j] == j + j);\n  map<int, int> squares(int n) {\n    map<int, int> a = map<int, int>{};\n    int i = 0;\n    loop_invariant 0 <= i && i <= n;\n    loop_invariant (\\forall int j; j in keysMap(a); a[j] == j * j);\n    while (i < n) {\n      a = a ++ (i, i * i);\n      i = i + 1;\n    }\n    return a;\n  }\n}\n",
        "Failed",
        "V-POST",
    ),
    (
        "removal_values_wrong.pvl",
        "class M {\n  void m() {\n    map<int, boolean> a = map<int, boolean>{1 -> true, 2 -> true};\n    assert false in valuesMap(removeFromMap(a, 1));\n  }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "items.pvl",
        "class M {\n  requires 3 in keysMap(m);\n  ensures (\\forall tuple<int, int> t; t in \\result; t.fst in keysMap(m) && m[t.fst] == t.snd);\n  ensures tuple<int, int>{3, m[3]} in \\result && |\\result| == |m|;\n  set<tuple<int, int>> all(map<int, int> m) {\n    return itemsMap(m);\n  }\n  void lit() {\n    map<int, boolean> a = map<int, boolean>{1 -> true, 2 -> false};\n    set<tuple<int, boolean>> s = itemsMap(a);\n    assert tuple<int, boolean>{1, true} in s && tuple<int, boolean>{2, false} in s;\n    assert !(tuple<int, boolean>{1, false} in s) && |s| == 2;\n  }\n}\n",
        "Verified",
        "",
    ),
    (
        "items_wrong_value.pvl",
        "class M {\n  void m() {\n    map<int, boolean> a = map<int, boolean>{1 -> true};\n    set<tuple<int, boolean>> s = itemsMap(a);\n    assert tuple<int, boolean>{1, false} in s;\n  }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "items_missing_key.pvl",
        "class M {\n  void m(map<int, int> a) {\n    assert tuple<int, int>{0, a[0]} in itemsMap(a);\n  }\n}\n",
        "Failed",
        "V-ASSERT",
    ),
    (
        "map_value_ill_typed.pvl",
        "class M {\n  void m() {\n    map<int, int> a = map<int, int>{1 -> true};\n    boolean b = a[1];\n  }\n}\n",
        "Unsupported",
        "V-TYPE",
    ),
];

#[test]
fn map_programs_verify_or_fail_as_expected() {
    common::assert_cases("viper_maps", CASES);
}

/// Map literals parse (`->` after a key ends it, it starts no null-safe call), print and parse
/// back to the same tree.
#[test]
fn map_literals_round_trip() {
    use alpine_rs::front::ast::{ExprKind, Item, Member, MethodBody, StmtKind};
    use alpine_rs::front::printer::print_program;
    let src = "class M {\n  int f(int y) = y;\n  void m(int x) {\n    map<int, int> a = map<int,int>{x -> f(1), 2 -> x + 1, (x > 0 ? 1 : 2) -> 3};\n    map<int, boolean> b = map<int, boolean>{};\n    assert (a ++ (1, 2))[1] == 2;\n  }\n}\n";
    let p = alpine_rs::front::parse(src, &Default::default());
    assert!(!p.has_errors(), "{:?}", p.diagnostics);
    let Item::Class(c) = &p.program.items[0] else { panic!("a class") };
    let Member::Method(m) = &c.members[1] else { panic!("a method") };
    let MethodBody::Block(body) = &m.body else { panic!("a body") };
    let StmtKind::Decl { vars, .. } = &body.stmts[0].kind else { panic!("a declaration") };
    let Some(ExprKind::MapLit { entries, .. }) = vars[0].init.as_ref().map(|e| &e.kind) else {
        panic!("a map literal")
    };
    assert_eq!(entries.len(), 3);
    let printed = print_program(&p.program, p.dialect);
    let q = alpine_rs::front::parse(&printed, &Default::default());
    assert!(!q.has_errors(), "{printed}");
    assert_eq!(p.program, q.program, "{printed}");
    assert_eq!(print_program(&q.program, q.dialect), printed);
}

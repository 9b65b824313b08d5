//! The interpreter's values beyond integers, booleans, references and sequences: rationals
//! (`frac`, `zfrac`, `rational`, permission amounts as values), sets, bags, maps, options,
//! tuples and integers outside `i64`, on small programs of our own. Each property is checked
//! both ways: the right program runs clean, and a wrong one is caught with its code.

use alpine_rs::sem::{self, InVal, RunOptions, RunResult, Status, ValidateOptions, Verdict};

/// Run `entry` of `src` on `random` generated inputs.
fn run(src: &str, entry: &str, random: usize) -> Vec<RunResult> {
    let opts = RunOptions { entry: Some(entry.into()), random, seed: 5, ..RunOptions::default() };
    let runs = sem::run_program(src, &opts).unwrap_or_else(|e| panic!("{entry}: {e}"));
    for r in &runs {
        eprintln!("{entry} #{}: {:?} [{}]", r.input_id, r.status, r.input.describe());
        eprintln!("{}", sem::render("test.pvl", src, &r.errors));
    }
    runs
}

/// The one run of `entry` (it has no parameters).
fn run1(src: &str, entry: &str) -> RunResult {
    run(src, entry, 1).remove(0)
}

fn codes(r: &RunResult) -> Vec<&str> {
    r.errors.iter().map(|d| d.code.as_str()).collect()
}

/// `entry` fails with `code` (and only errors of that code).
fn fails_with(src: &str, entry: &str, status: Status, code: &str) {
    let r = run1(src, entry);
    assert_eq!(r.status, status, "{entry}: {:?}", codes(&r));
    assert!(!r.errors.is_empty(), "{entry}: no diagnostic");
    assert!(codes(&r).iter().all(|c| *c == code), "{entry}: {:?}", codes(&r));
}

const FRACTIONS: &str = r#"
class T {
  int f;
  frac g;

  pure frac half(frac x) = x \ 2;

  given frac p;
  requires 0 < p && p <= 1;
  context Perm(f, p);
  void good() {
    frac q = p \ 2;
    assert q < p && q + q == p && p * 2 == p + p;
    assert half(p) == q;
    assert 1\2 + 1\2 == 1 && 1\2 == 2\4 && 3 * (1\3) == write;
    assert none == 0 && read > 0 && read < 1\1000;
    assert perm(f) == p;
    zfrac z = 0;
    assert z == none;
    rational r = -1\3;
    assert r < 0 && -r == 1\3;
    frac w = 1;
    assert w == write;
  }

  void sum_wrong() { assert 1\2 + 1\3 == 1; }
  void read_is_not_a_fraction() { assert read == 1\1000; }
  given frac p;
  context Perm(f, p);
  void perm_wrong() { assert perm(f) == p + 1\8; }
  void zero_denominator() { frac x = 1 \ (1 - 1); }
  void integer_division_of_a_fraction() { frac p = 1; int y = 3; assert p / 2 == 0; }
  void half_of_read() { assert read \ 2 > 0; }

  requires Perm(g, 1) ** g == 1\2;
  ensures Perm(g, 1) ** g == 3\4;
  void field() { g = g + 1\4; }

  requires Perm(g, 1) ** g == 1\2;
  ensures Perm(g, 1) ** g == 3\4;
  void field_wrong() { g = g + 1\8; }

  resource st(frac p) = Perm(f, p);
  requires Perm(f, 1);
  void predicate_arguments_count() { fold st(1\2); unfold st(1); }
}
"#;

#[test]
fn fractions_compute_exactly() {
    assert_eq!(run(FRACTIONS, "good", 8).iter().filter(|r| r.status == Status::Ok).count(), 8);
    let f = run1(FRACTIONS, "field");
    assert_eq!(f.status, Status::Ok);
    let g = f.observables.iter().find(|o| o.path == "this.g").expect("this.g");
    assert_eq!(g.value.to_string(), "3/4");
}

#[test]
fn wrong_fraction_facts_are_caught() {
    fails_with(FRACTIONS, "sum_wrong", Status::Error, "R-ASSERT");
    fails_with(FRACTIONS, "read_is_not_a_fraction", Status::Error, "R-ASSERT");
    for r in run(FRACTIONS, "perm_wrong", 4) {
        assert_eq!((r.status, codes(&r)), (Status::Error, vec!["R-ASSERT"]));
    }
    fails_with(FRACTIONS, "field_wrong", Status::Error, "R-POST");
    fails_with(FRACTIONS, "zero_denominator", Status::Error, "R-DIV0");
    fails_with(FRACTIONS, "predicate_arguments_count", Status::Error, "R-PERM-TRANSFER");
}

#[test]
fn what_a_rational_cannot_say_exactly_is_inconclusive() {
    // `/` is integer division: on a rational it is no guess.
    fails_with(FRACTIONS, "integer_division_of_a_fraction", Status::Inconclusive, "R-UNSUPPORTED");
    fails_with(FRACTIONS, "half_of_read", Status::Inconclusive, "R-UNSUPPORTED");
}

const FRAC_INPUTS: &str = r#"
class T {
  given frac p;
  given zfrac z;
  requires 1\5 < p && p < 1\2;
  requires z < p;
  void m() { }
}
"#;

#[test]
fn generated_fractions_meet_the_precondition() {
    let runs = run(FRAC_INPUTS, "m", 20);
    assert_eq!(runs.len(), 20);
    let mut seen = std::collections::BTreeSet::new();
    for r in &runs {
        assert_eq!(r.status, Status::Ok);
        let arg = |n: &str| r.input.args.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        let (Some(p @ InVal::Rat(..)), Some(z @ InVal::Rat(..))) = (arg("p"), arg("z")) else {
            panic!("{}", r.input.describe())
        };
        let (p, z) = (p.amount().expect("p"), z.amount().expect("z"));
        assert!(p > alpine_rs::sem::value::Amt::frac(1, 5), "{p}");
        assert!(p < alpine_rs::sem::value::Amt::frac(1, 2), "{p}");
        assert!(z < p && !z.is_negative(), "{z} {p}");
        seen.insert(z.to_string());
    }
    assert!(seen.len() > 1, "{seen:?}");
}

#[test]
fn a_fraction_input_outside_the_precondition_is_rejected() {
    let input = |p: &str| sem::parse_input(&format!("args:\n  p: \"{p}\"\n  z: 0\n"), 0).unwrap();
    let opts = |i| RunOptions {
        entry: Some("m".into()),
        random: 0,
        inputs: vec![i],
        ..RunOptions::default()
    };
    let ok = sem::run_program(FRAC_INPUTS, &opts(input("1/3"))).unwrap();
    assert_eq!(ok[0].status, Status::Ok);
    let bad = sem::run_program(FRAC_INPUTS, &opts(input("1/2"))).unwrap();
    assert_eq!(bad[0].status, Status::InvalidInput);
}

const COLLECTIONS: &str = r#"
class T {
  void good() {
    set<int> s = {1, 2, 3};
    set<int> t = set<int>{3, 4, 3};
    assert s + t == {1, 2, 3, 4} && s - t == {1, 2} && s * t == {3};
    assert |s + t| == 4 && |t| == 2;
    assert {3} <= t && {3} < t && !(t < t) && t <= t && !(s <= t);
    assert 2 in s && !(4 in s);
    bag<int> b = bag<int>{1, 2, 1};
    assert (1 in b) == 2 && (3 in b) == 0;
    assert b + bag<int>{1} == bag<int>{1, 1, 1, 2};
    assert b - bag<int>{1, 5} == bag<int>{1, 2};
    assert b * bag<int>{1, 2, 2} == bag<int>{1, 2};
    assert bag<int>{1} < b && !(b < b) && !(bag<int>{2, 2} <= b);
    assert |b| == 3;
    assert {0 .. 3} == {2, 1, 0};
    assert set<int>{ x * x | int x; 0 <= x && x < 4 } == {0, 1, 4, 9};
    assert set<int>{ x + y | int x <- {1, 2}, int y <- {10, 20}; x != 2 || y != 20 } == {11, 12, 21};
    assert isEmpty({t: int}) && !isEmpty(s);
    assert seq<int>{1} ++ 2 == seq<int>{1, 2};
  }
  void append_wrong() { assert seq<int>{1} ++ 2 == seq<int>{2, 1}; }
  void set_wrong() { set<int> s = {1, 2}; assert s == {1, 2, 3}; }
  void subset_wrong() { set<int> s = {1, 2}; assert s < s; }
  void bag_wrong() { assert bag<int>{1, 1} == bag<int>{1}; }
  void multiplicity_wrong() { assert (1 in bag<int>{1, 1}) == 1; }
  void comprehension_wrong() { assert set<int>{x | int x <- {1, 2, 3}; x > 1} == {1, 2, 3}; }
  void unbounded() { set<int> d = set<int>{x | int x; x > 0}; }

  requires 1 in s;
  ensures 1 in \result && |\result| <= |s| + 1;
  set<int> add(set<int> s, int x) { return s + {x}; }

  requires 1 in s;
  ensures 1 in \result;
  set<int> remove_wrong(set<int> s, int x) { return s - {x}; }
}
"#;

#[test]
fn sets_and_bags_compute_canonically() {
    assert_eq!(run1(COLLECTIONS, "good").status, Status::Ok);
    let runs = run(COLLECTIONS, "add", 20);
    assert!(runs.iter().all(|r| r.status == Status::Ok));
    // The generator makes sets that satisfy `1 in s`.
    assert!(runs
        .iter()
        .all(|r| matches!(&r.input.args[0].1, InVal::Set(v) if v.contains(&InVal::Int(1)))));
}

#[test]
fn wrong_set_facts_are_caught() {
    for e in [
        "set_wrong",
        "subset_wrong",
        "bag_wrong",
        "multiplicity_wrong",
        "comprehension_wrong",
        "append_wrong",
    ] {
        fails_with(COLLECTIONS, e, Status::Error, "R-ASSERT");
    }
    fails_with(COLLECTIONS, "unbounded", Status::Inconclusive, "R-UNSUPPORTED");
    // Removing an element of the set breaks the postcondition for some input (x == 1).
    let runs = run(COLLECTIONS, "remove_wrong", 40);
    assert!(runs.iter().any(|r| r.status == Status::Error && codes(r) == ["R-POST"]));
}

const MAPS: &str = r#"
class T {
  void good() {
    map<int, int> m = map<int, int>{1 -> 10, 2 -> 20, 1 -> 11};
    assert m[1] == 11 && getFromMap(m, 2) == 20;
    assert |m| == 2 && cardMap(m) == 2 && !isEmpty(m);
    assert keysMap(m) == {1, 2} && valuesMap(m) == {11, 20};
    assert removeFromMap(m, 1) == map<int, int>{2 -> 20};
    assert buildMap(m, 3, 30)[3] == 30 && (m ++ (1, 5))[1] == 5;
    assert disjointMap(m, map<int, int>{3 -> 1}) && !disjointMap(m, map<int, int>{2 -> 1});
    assert equalsMap(m, map<int, int>{2 -> 20, 1 -> 11});
    assert tuple<int, int>{2, 20} in itemsMap(m);
    option<int> o = Some(3);
    option<int> n = None;
    assert getOption(o) == 3 && getOrElseOption(n, 4) == 4 && getOrElseOption(o, 4) == 3;
    assert o != n && n == None && o == Some(3);
  }
  void outside_the_domain() {
    map<int, boolean> m = map<int, boolean>{1 -> true};
    // VerCors leaves the value unspecified; the interpreter fixes the type's default.
    assert !m[7];
  }
  void lookup_wrong() { map<int, int> m = map<int, int>{1 -> 2}; assert m[1] == 3; }
  void update_wrong() { map<int, int> m = map<int, int>{1 -> 2}; assert |m ++ (2, 2)| == 1; }
  void option_wrong() { option<int> o = None; assert o == Some(0); }
  void get_none() { option<int> o = None; int x = getOption(o); }

  requires 0 in keysMap(m);
  ensures \result == m[0];
  int first(map<int, int> m) { return m[0]; }
}
"#;

#[test]
fn maps_and_options_behave_as_in_vercors() {
    assert_eq!(run1(MAPS, "good").status, Status::Ok);
    assert_eq!(run1(MAPS, "outside_the_domain").status, Status::Ok);
    let runs = run(MAPS, "first", 10);
    assert!(runs.iter().all(|r| r.status == Status::Ok));
}

#[test]
fn wrong_map_and_option_facts_are_caught() {
    fails_with(MAPS, "lookup_wrong", Status::Error, "R-ASSERT");
    fails_with(MAPS, "update_wrong", Status::Error, "R-ASSERT");
    fails_with(MAPS, "option_wrong", Status::Error, "R-ASSERT");
    fails_with(MAPS, "get_none", Status::Error, "R-OPTION-NONE");
}

/// Quantifiers over every integer whose formula is decided inside a collection: the binder
/// ranges over its members (exact, not a sample), in the condition or in the body.
const DOMAINS: &str = r#"
class T {
  void good() {
    map<int, int> m = map<int, int>{1 -> 1, 2 -> 4, 3 -> 9};
    set<int> s = {2, 5};
    assert (\forall int i; i < 1 || i > 3; !(i in keysMap(m)));
    assert (\forall int i; true; i in keysMap(m) ==> m[i] == i * i);
    assert (\forall int i; !(i in s) || i > 1);
    assert (\exists int i; true; i in s && i > 4);
    assert !(\exists int i; i in keysMap(m) && i > 3);
  }
  void outside_wrong() {
    map<int, int> m = map<int, int>{1 -> 1, 2 -> 4, 3 -> 9};
    assert (\forall int i; i < 2 || i > 3; !(i in keysMap(m)));
  }
  void body_wrong() {
    set<int> s = {2, 5};
    assert (\forall int i; i in s ==> i > 2);
  }
  void exists_wrong() {
    set<int> s = {2, 5};
    assert (\exists int i; true; i in s && i > 5);
  }
}
"#;

#[test]
fn quantifiers_decided_inside_a_collection_range_over_it() {
    assert_eq!(run1(DOMAINS, "good").status, Status::Ok);
    fails_with(DOMAINS, "outside_wrong", Status::Error, "R-ASSERT");
    fails_with(DOMAINS, "body_wrong", Status::Error, "R-ASSERT");
    fails_with(DOMAINS, "exists_wrong", Status::Error, "R-ASSERT");
}

const BIG: &str = r#"
class T {
  void good() {
    assert 9999999999999999999999 > 9223372036854775807;
    assert 9999999999999999999999 - 9999999999999999999998 == 1;
    assert -9999999999999999999999 < 0;
    assert 10000000000000000000000 / 3 == 3333333333333333333333;
    assert -10000000000000000000000 % 3 == 2;
  }
  void wrong() { assert 9999999999999999999999 == 9999999999999999999998; }
}
"#;

#[test]
fn integer_literals_beyond_64_bits_are_exact() {
    assert_eq!(run1(BIG, "good").status, Status::Ok);
    fails_with(BIG, "wrong", Status::Error, "R-ASSERT");
}

#[test]
fn validate_compares_rational_results() {
    let orig = "class V {\n  requires 0 < x && x <= 1;\n  frac h(frac x) { return x \\ 2; }\n}\n";
    let opt = orig.replace("x \\ 2", "x * (1\\2)");
    let wrong = orig.replace("x \\ 2", "x \\ 3");
    let o = ValidateOptions::default();
    let same = sem::validate(orig, &opt, &o);
    assert_eq!(same.verdict, Verdict::Same, "{}", same.summary);
    assert!(same.equivalent >= 20, "{}", same.summary);
    let diff = sem::validate(orig, &wrong, &o);
    assert_eq!(diff.verdict, Verdict::Different, "{}", diff.summary);
}

const RECURSION: &str = r#"
class C {
  requires n >= 0;
  ensures \result == n;
  static int depth(int n) {
    if (n <= 0) {
      return 0;
    }
    int rec = depth(n - 1);
    return rec + 1;
  }

  requires n >= 0;
  ensures \result == n;
  static int depth_wrong(int n) {
    if (n <= 1) {
      return 0;
    }
    int rec = depth_wrong(n - 1);
    return rec + 1;
  }
}
"#;

/// Once every lane has returned early, the warp runs on to the method's end without lanes:
/// the calls on its way are not entered (a recursive one used to recurse without end).
#[test]
fn a_recursive_call_after_an_early_return_terminates() {
    let runs = run(RECURSION, "depth", 10);
    assert!(runs.iter().all(|r| r.status == Status::Ok));
    let runs = run(RECURSION, "depth_wrong", 10);
    let post = |r: &RunResult| !r.errors.is_empty() && codes(r).iter().all(|c| *c == "R-POST");
    assert!(runs.iter().any(|r| r.status == Status::Error && post(r)));
}

const NULL_SAFE: &str = r#"
class N {
  int v;
  resource st() = Perm(v, 1);

  requires n->st();
  ensures n->st();
  static void keep(N n) { }

  requires n->st();
  ensures n->st();
  static void drop(N n) {
    if (n != null) {
      unfold n.st();
    }
  }
}
"#;

/// `n->st()` is `n != null ==> n.st()`: nothing for a null `n`, the instance otherwise.
#[test]
fn a_null_safe_predicate_call_holds_for_null() {
    let status = |entry: &str, n: &str| {
        let opts = RunOptions {
            entry: Some(entry.into()),
            random: 0,
            inputs: vec![sem::parse_input(&format!("args:\n  n: {n}\n"), 0).unwrap()],
            ..RunOptions::default()
        };
        let r = sem::run_program(NULL_SAFE, &opts).unwrap().remove(0);
        eprintln!("{entry} {n}: {:?} {:?}", r.status, codes(&r));
        r.status
    };
    assert_eq!(status("keep", "null"), Status::Ok);
    assert_eq!(status("keep", "{v: 3}"), Status::Ok);
    assert_eq!(status("drop", "null"), Status::Ok);
    assert_eq!(status("drop", "{v: 3}"), Status::Error);
}

/// A rational that is zero is shown as the value `0` (a permission amount of zero reads `none`
/// in permission messages, but a `zfrac`, `rational` or float is a number).
#[test]
fn a_zero_rational_input_reads_0() {
    let input = sem::parse_input("args:\n  p: \"1/3\"\n  z: 0\n", 0).unwrap();
    assert!(input.describe().contains("z = 0"), "{}", input.describe());
    assert!(!input.describe().contains("none"), "{}", input.describe());
}

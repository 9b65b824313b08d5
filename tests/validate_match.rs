//! `validate ORIG OPT` without `--entry`: methods matched by class and name, the ones that
//! differ validated one by one, a per-method table (text and JSON); object inputs.

mod common;

use std::path::{Path, PathBuf};

const THREE: &str = "class C {
  ensures \\result == x + y;
  int add(int x, int y) {
    return x + y;
  }

  requires n >= 0;
  int twice(int n) {
    return n + n;
  }

  requires a != null ** a.length == 4 ** Perm(a[0], write);
  ensures Perm(a[0], write);
  void bump(int[] a) {
    a[0] = a[0] + 1;
  }
}
";

fn tmp(name: &str, text: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("alpine-rs-validate-match-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    let p = d.join(name);
    std::fs::write(&p, text).expect("write");
    p
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// `validate ORIG OPT --json` with `extra` flags: exit code and the per-method rows by name.
fn rows(orig: &Path, opt: &Path, extra: &[&str]) -> (i32, serde_json::Value) {
    let mut args = vec!["validate", s(orig), s(opt), "--json"];
    args.extend_from_slice(extra);
    let (code, out, err) = common::run_cli(&args);
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}\n{err}"));
    assert_eq!(v["exit_code"].as_i64(), Some(code as i64), "{v}");
    (code, v)
}

fn row<'v>(v: &'v serde_json::Value, method: &str) -> &'v serde_json::Value {
    let rows = v["methods"].as_array().unwrap_or_else(|| panic!("no methods: {v}"));
    rows.iter().find(|r| r["method"] == method).unwrap_or_else(|| panic!("no {method}: {v}"))
}

#[test]
fn only_the_method_that_differs_is_compared() {
    let orig = tmp("three.pvl", THREE);
    // The same sum, written the other way round: equivalent.
    let opt = tmp("three_swapped.pvl", &THREE.replace("return x + y;", "return y + x;"));
    let (code, v) = rows(&orig, &opt, &["--random", "5"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(row(&v, "C.add")["verdict"], "equivalent", "{v}");
    assert_eq!(row(&v, "C.add")["inputs_executed"], 5, "{v}");
    for m in ["C.twice", "C.bump"] {
        assert_eq!(row(&v, m)["verdict"], "unchanged", "{v}");
        assert_eq!(row(&v, m)["inputs_executed"], 0, "{v}");
    }
    // The text table names the method too.
    let (code, out, _) = common::run_cli(&["validate", s(&orig), s(&opt), "--random", "5"]);
    assert_eq!(code, 0, "{out}");
    let line = out.lines().find(|l| l.starts_with("C.add")).unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains("equivalent") && line.contains(" 5 "), "{out}");
    assert!(out.contains("C.twice") && out.contains("unchanged"), "{out}");
}

#[test]
fn a_mutant_differs_with_its_location_and_input() {
    let orig = tmp("mut_orig.pvl", THREE);
    let opt = tmp("mut_opt.pvl", &THREE.replace("return n + n;", "return n - n;"));
    let (code, v) = rows(&orig, &opt, &[]);
    assert_eq!(code, 1, "{v}");
    let r = row(&v, "C.twice");
    assert_eq!(r["verdict"], "differs", "{v}");
    assert_eq!(r["mismatch"]["path"], "\\result", "{v}");
    assert!(r["mismatch"]["input"]["args"]["n"].is_i64(), "{v}");
    assert_eq!(row(&v, "C.add")["verdict"], "unchanged", "{v}");
    assert_eq!(v["verdict"], "different", "{v}");
}

#[test]
fn a_file_against_itself_checks_every_method() {
    let f = tmp("self.pvl", THREE);
    let (code, v) = rows(&f, &f, &["--random", "4"]);
    assert_eq!(code, 0, "{v}");
    for m in ["C.add", "C.twice", "C.bump"] {
        assert_eq!(row(&v, m)["verdict"], "equivalent", "{m}: {v}");
        assert_eq!(row(&v, m)["inputs_executed"], 4, "{m}: {v}");
    }
}

#[test]
fn a_method_of_one_file_only_is_a_row_not_an_error() {
    let orig = tmp("one_orig.pvl", THREE);
    let extra = "  int extra(int z) {\n    return z;\n  }\n}\n";
    let opt_text = format!("{}{extra}", THREE.trim_end().trim_end_matches('}'));
    let opt = tmp("one_opt.pvl", &opt_text.replace("return x + y;", "return y + x;"));
    let (code, v) = rows(&orig, &opt, &["--random", "3"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(row(&v, "C.extra")["verdict"], "only-in-opt", "{v}");
    assert_eq!(row(&v, "C.add")["verdict"], "equivalent", "{v}");
    // And the other way round.
    let (code, v) = rows(&opt, &orig, &["--random", "3"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(row(&v, "C.extra")["verdict"], "only-in-orig", "{v}");
}

#[test]
fn entry_still_picks_one_method() {
    let f = tmp("entry.pvl", THREE);
    let (code, v) = rows(&f, &f, &["--random", "2", "--entry", "twice"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["methods"], serde_json::json!([]), "{v}");
    assert_eq!(v["inputs"]["equivalent"], 2, "{v}");
}

#[test]
fn an_input_no_candidate_satisfies_names_the_clause() {
    let f = tmp(
        "never.pvl",
        "class A {\n  requires a != null && a.length == 3;\n  requires Perm(a[0], read);\n  \
         requires a[0] == 12345;\n  int m(int[] a) {\n    return a[0];\n  }\n}\n",
    );
    let (code, v) = rows(&f, &f, &["--random", "1"]);
    assert_eq!(code, 3, "{v}");
    let reason = row(&v, "A.m")["reason"].as_str().unwrap_or_default().to_string();
    assert!(reason.contains("`a[0] == 12345` (line 4"), "{v}");
}

#[test]
fn an_object_parameter_is_built_from_its_contract() {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/sem/object_param.pvl");
    let (code, out, err) = common::run_cli(&["run", s(&f), "--random", "3", "--json"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(!out.contains("R-NULL"), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    for r in v["runs"].as_array().expect("runs") {
        assert_eq!(r["status"], "ok", "{r}");
        let n = r["input"]["args"]["b"]["n"].as_i64().unwrap_or_else(|| panic!("{r}"));
        if r["method"] == "Main.next" {
            assert!(n > 2, "{r}");
        }
    }
    // A mutant of the method writing the object's field differs.
    let src = std::fs::read_to_string(&f).expect("fixture");
    let opt = tmp("object_mutant.pvl", &src.replace("b.n = b.n + b.n;", "b.n = b.n - b.n;"));
    let (code, v) = rows(&f, &opt, &[]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(row(&v, "Main.dbl")["verdict"], "differs", "{v}");
    assert_eq!(row(&v, "Main.next")["verdict"], "unchanged", "{v}");
    // Objects in input files: a map that is not an array spec.
    let input = tmp("object_input.yaml", "args:\n  b: { n: 5 }\n");
    let (code, out, err) =
        common::run_cli(&["run", s(&f), "--entry", "Main.next", "--input", s(&input)]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("result: 6"), "{out}");
}

/// VerCors constructs the interpreter runs: a VerCors 1 function without `pure` (`int f(int n)
/// = e;`), `isEmpty` and `removeAt` on sequences, and `Perm(a[*], p)` for every cell.
const BUILTINS: &str = "class B {
  int inc(int n) = n + 1;

  requires |xs| > 0;
  ensures \\result == |xs| - 1;
  int dropFirst(seq<int> xs) {
    seq<int> ys = removeAt(xs, 0);
    if (isEmpty(ys)) {
      return 0;
    }
    return |ys|;
  }

  context a != null ** Perm(a[*], write);
  requires a.length > 0;
  void set(int[] a, int n) {
    a[0] = inc(n);
  }
}
";

#[test]
fn vercors_builtins_run_and_a_mutant_of_them_differs() {
    let orig = tmp("builtins.pvl", BUILTINS);
    let (code, v) = rows(&orig, &orig, &[]);
    assert_eq!(code, 0, "{v}");
    for m in ["B.dropFirst", "B.set"] {
        assert_eq!(row(&v, m)["verdict"], "equivalent", "{v}");
        assert_eq!(row(&v, m)["inputs_executed"], 20, "{v}");
    }
    let opt =
        tmp("builtins_mut.pvl", &BUILTINS.replace("removeAt(xs, 0)", "removeAt(xs, |xs| - 1)"));
    let (code, v) = rows(&orig, &opt, &[]);
    // The length is the same either way: equivalent, and `set` is unchanged.
    assert_eq!(code, 0, "{v}");
    let opt = tmp("builtins_mut2.pvl", &BUILTINS.replace("n + 1;", "n + 2;"));
    let (code, v) = rows(&orig, &opt, &[]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(row(&v, "B.set")["verdict"], "differs", "{v}");
}

const CTOR: &str = "class P {
  int x;
  int y;
  ensures Perm(x, write) ** Perm(y, write) ** x == a;
  P(int a, int b) {
    x = a;
    y = b;
  }
}
";

#[test]
fn a_changed_constructor_is_compared_on_the_object_it_builds() {
    let orig = tmp("ctor_orig.pvl", CTOR);
    // `y` is not in the postcondition: only the fields of the new object show the change.
    let opt = tmp("ctor_opt.pvl", &CTOR.replace("y = b;", "y = a;"));
    let (code, v) = rows(&orig, &opt, &[]);
    assert_eq!(code, 1, "{v}");
    let r = row(&v, "P.P");
    assert_eq!(r["verdict"], "differs", "{v}");
    assert_eq!(r["mismatch"]["path"], "this.y", "{v}");
    // A constructor written differently but building the same object is equivalent.
    let same =
        tmp("ctor_same.pvl", &CTOR.replace("    x = a;\n    y = b;", "    y = b;\n    x = a;"));
    let (code, v) = rows(&orig, &same, &[]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(row(&v, "P.P")["verdict"], "equivalent", "{v}");
}

/// A program all of whose code is in a constructor: against itself, the constructor is
/// compared (there is nothing else to run), not "no runnable method".
#[test]
fn a_program_of_constructors_only_is_compared_on_them() {
    let orig = tmp("ctor_only.pvl", CTOR);
    let (code, v) = rows(&orig, &orig, &[]);
    assert_eq!(code, 0, "{v}");
    let r = row(&v, "P.P");
    assert_eq!(r["verdict"], "equivalent", "{v}");
    assert_eq!(r["inputs_executed"], 20, "{v}");
    // With a method beside it, that method is what runs (as before).
    let with = CTOR.replace("class P {", "class P {\n  int get() { return 1; }");
    let both = tmp("ctor_and_method.pvl", &with);
    let (code, v) = rows(&both, &both, &[]);
    assert_eq!(code, 0, "{v}");
    assert!(v.to_string().contains("P.get") && !v.to_string().contains("\"P.P\""), "{v}");
}

/// A program written without permissions (as VeyMont's global programs are): ORIG fails its
/// permission checks on every input, so the methods are compared without them, and the row
/// says so. A mutant still differs; a program failing a contract is not compared.
const NO_PERMS: &str = "class Acc {
  int total;

  void add(int x) {
    total = total + x;
  }

  int twice(int x) {
    add(x);
    add(x);
    return total;
  }
}
";

#[test]
fn a_program_without_permissions_is_compared_without_permission_checks() {
    let orig = tmp("noperm.pvl", NO_PERMS);
    let (code, v) = rows(&orig, &orig, &["--random", "6"]);
    assert_eq!(code, 0, "{v}");
    for m in ["Acc.add", "Acc.twice"] {
        let r = row(&v, m);
        assert_eq!(r["verdict"], "equivalent", "{v}");
        assert_eq!(r["inputs_executed"], 6, "{v}");
        let d = r["detail"].as_str().unwrap_or_default();
        assert!(d.contains("without permission checks") && d.contains("R-PERM-"), "{d}");
    }
    let opt = tmp("noperm_mut.pvl", &NO_PERMS.replace("total = total + x;", "total = total - x;"));
    let (code, v) = rows(&orig, &opt, &["--random", "6"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(row(&v, "Acc.add")["verdict"], "differs", "{v}");
    // A failed contract is a fault of the program itself: nothing to compare, also without
    // permission checks, and the reason names the contract.
    let bad = NO_PERMS.replace("  void add(int x) {", "  ensures false;\n  void add(int x) {");
    let bad = tmp("noperm_post.pvl", &bad);
    let (code, v) = rows(&bad, &bad, &["--random", "6"]);
    assert_eq!(code, 3, "{v}");
    let d = row(&v, "Acc.add")["detail"].as_str().unwrap_or_default().to_string();
    assert!(d.contains("fails its own checks") && d.contains("R-POST"), "{d}");
}

/// `--with` joins a file of the same program; a class restated there is one class, as in
/// `verify --program`, and a member declared differently is a conflict, not a silent choice.
#[test]
fn a_class_restated_in_a_with_file_is_one_class() {
    let lib = tmp("with_lib.pvl", "class Counter {\n  int x;\n  requires Perm(x, write);\n  ensures Perm(x, write) ** x == \\old(x) + 1;\n  void incr() { x = x + 1; }\n}\n");
    let user = tmp(
        "with_user.pvl",
        "class Counter {\n  int x;\n}\nclass User {\n  requires c != null ** Perm(c.x, write);\n  ensures Perm(c.x, write) ** c.x == \\old(c.x) + 2;\n  void twice(Counter c) { c.incr(); c.incr(); }\n}\n",
    );
    let (code, v) = rows(&user, &user, &["--with", s(&lib), "--random", "4"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(row(&v, "User.twice")["verdict"], "equivalent", "{v}");
    let other =
        tmp("with_other.pvl", "class Counter {\n  int x;\n  void incr() { x = x + 2; }\n}\n");
    let (code, _, err) =
        common::run_cli(&["run", s(&user), "--with", s(&lib), "--with", s(&other)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("declared in two files with different `incr`"), "{err}");
}

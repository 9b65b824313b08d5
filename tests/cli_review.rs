//! `alpine-rs diff` and `apply --diff --annotations-only`: hunks classified from both files'
//! syntax trees, colour, JSON, and `diff(1)`-style exit codes.

mod common;

use std::path::{Path, PathBuf};

fn run(args: &[&str]) -> (i32, String, String) {
    common::run_cli(args)
}

fn tmpdir(name: &str) -> PathBuf {
    common::tmpdir("review", name)
}

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/examples").join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

const ORIG: &str = "\
class Sum {
  context_everywhere a != null && a.length == n;
  requires n >= 0;
  context (\\forall* int k; 0 <= k && k < n; Perm(a[k], 1\\2));
  int total(int n, int[] a) {
    int s = 0;
    int i = 0;
    loop_invariant 0 <= i && i <= n;
    loop_invariant (\\forall* int k; 0 <= k && k < n; Perm(a[k], 1\\2));
    while (i < n) {
      s = s + a[i];
      i = i + 1;
    }
    return s;
  }
}
";

fn write_pair(dir: &Path, opt: &str) -> (PathBuf, PathBuf) {
    let (a, b) = (dir.join("orig.pvl"), dir.join("opt.pvl"));
    std::fs::write(&a, ORIG).unwrap();
    std::fs::write(&b, opt).unwrap();
    (a, b)
}

#[test]
fn identical_files_exit_0_without_output() {
    let d = tmpdir("same");
    let (a, b) = write_pair(&d, ORIG);
    assert_eq!(run(&["diff", s(&a), s(&b)]), (0, String::new(), String::new()));
    assert_eq!(run(&["diff", "--all", s(&a), s(&b)]).0, 0);
}

#[test]
fn code_only_changes_are_hidden_unless_all() {
    let d = tmpdir("code");
    let (a, b) = write_pair(&d, &ORIG.replace("s = s + a[i];", "s += a[i];"));
    let (code, out, err) = run(&["diff", s(&a), s(&b)]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("1 of 1 hunks change only code"), "{err}");
    let (code, out, _) = run(&["diff", "--all", s(&a), s(&b)]);
    assert_eq!(code, 1);
    assert!(out.contains("-      s = s + a[i];\n+      s += a[i];\n"), "{out}");
    assert!(!out.contains("annotations:"), "{out}");
}

#[test]
fn annotation_changes_are_shown_with_their_kinds() {
    let d = tmpdir("annot");
    let opt = ORIG
        .replace("0 <= i && i <= n;", "0 <= i && i <= n && s >= 0;")
        .replace("    return s;\n", "    assert i == n;\n    return s;\n")
        // A code-only change far from both: not shown.
        .replace("class Sum {", "class Sums {");
    let (a, b) = write_pair(&d, &opt);
    let (code, out, _) = run(&["diff", "-U", "1", s(&a), s(&b)]);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with(&format!("--- {}\n+++ {}\n", s(&a), s(&b))), "{out}");
    assert!(out.contains("@@ -7,3 +7,3 @@ annotations: loop invariant\n"), "{out}");
    assert!(
        out.contains("@@ -13,2 +13,3 @@ annotations: assertion\n     }\n+    assert i == n;\n"),
        "{out}"
    );
    assert!(!out.contains("class Sums"), "{out}");
    // Keywords in comments or strings are not annotations: a comment-only change is code.
    let (a, b) = write_pair(
        &d,
        &ORIG.replace("    int s = 0;\n", "    int s = 0; // loop_invariant s >= 0;\n"),
    );
    assert_eq!(run(&["diff", s(&a), s(&b)]).0, 0);
}

#[test]
fn bad_input_exits_2() {
    let d = tmpdir("bad");
    let (a, b) = write_pair(&d, &ORIG.replace("return s;", "return s"));
    let (code, out, err) = run(&["diff", s(&a), s(&b)]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(err.contains("error[A0001]") && err.contains("opt.pvl"), "{err}");
    assert_eq!(run(&["diff", s(&a), "/no/such/file.pvl"]).0, 2);
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let d = tmpdir("color");
    let (a, b) = write_pair(&d, &ORIG.replace("requires n >= 0;", "requires n >= 1;"));
    let (_, plain, _) = run(&["diff", s(&a), s(&b)]);
    assert!(!plain.contains('\u{1b}'), "piped output is plain");
    assert_eq!(run(&["diff", "--color", "never", s(&a), s(&b)]).1, plain);
    let (code, colored, _) = run(&["diff", "--color", "always", s(&a), s(&b)]);
    assert_eq!(code, 1);
    assert!(colored.contains("\u{1b}[31m") && colored.contains("\u{1b}[32m"), "{colored:?}");
    // Stripping the escapes gives back the plain diff.
    let mut stripped = String::new();
    let mut it = colored.chars();
    while let Some(c) = it.next() {
        if c == '\u{1b}' {
            for c in it.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            stripped.push(c);
        }
    }
    assert_eq!(stripped, plain);
}

#[test]
fn json_lists_classified_hunks() {
    let d = tmpdir("json");
    let (a, b) = write_pair(
        &d,
        &ORIG.replace("requires n >= 0;", "requires n >= 1;").replace("i = i + 1;", "i += 1;"),
    );
    let (code, out, _) = run(&["diff", "--all", "--format", "json", s(&a), s(&b)]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let hunks = v["hunks"].as_array().expect("hunks");
    assert_eq!(hunks.len(), 2, "{v}");
    assert_eq!(hunks[0]["annotation"], true);
    assert_eq!(hunks[0]["kinds"], serde_json::json!(["contract"]));
    assert_eq!(hunks[1]["annotation"], false);
    assert_eq!(v["exit"], 1);
}

#[test]
fn apply_diff_annotations_only_hides_code_hunks() {
    // maxsum: removing the two gpuopt lines is an annotation hunk; loading the registers is code.
    let f = example("maxsum.pvl");
    let (code, all, _) = run(&["apply", "--diff", s(&f)]);
    assert_eq!(code, 0);
    assert_eq!(all.matches("\n@@ ").count(), 2, "{all}");
    let (code, only, _) = run(&["apply", "--diff", "--annotations-only", s(&f)]);
    assert_eq!(code, 0);
    assert_eq!(only.matches("\n@@ ").count(), 1, "{only}");
    assert!(only.contains("annotations: gpuopt\n"), "{only}");
    assert!(!only.contains("x_reg_0"), "{only}");
    // The flag needs a diff to filter.
    assert_eq!(run(&["apply", "--annotations-only", s(&f)]).0, 2);
}

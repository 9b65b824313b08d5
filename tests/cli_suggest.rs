//! `alpine-rs suggest FILE`: the optimizations that apply, measured with the cost model on
//! generated inputs and ranked, each with the `apply` command that performs it; refused
//! attempts listed below; `--json`; exit codes.

mod common;

use common::{run_cli, tmpdir};
use std::path::{Path, PathBuf};

/// A par block whose threads each run a four-step loop: keeping the cell in a register saves its
/// rereads, unrolling saves loop heads (both improved), tiling with a literal size is refused
/// (A503: not provably below the symbolic thread count).
const KERNEL: &str = "class Inc {
  context_everywhere a != null && a.length == n;
  context n > 0;
  context (\\forall* int i; 0 <= i && i < n; Perm(a[i], write));
  void bump(int n, int[] a) {
    par (int tid = 0 .. n)
      context Perm(a[tid], write);
    {
      int k = 0;
      loop_invariant 0 <= k && k <= 4;
      loop_invariant Perm(a[tid], write);
      while (k < 4) {
        a[tid] = a[tid] + 1;
        k = k + 1;
      }
    }
  }
}
";

fn kernel(name: &str) -> PathBuf {
    let p = tmpdir("suggest", name).join("inc.pvl");
    std::fs::write(&p, KERNEL).expect("write the kernel");
    p
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Split a command line as the shell does for plain words and single-quoted ones.
fn shell_split(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut quoted, mut word) = (false, false);
    for ch in line.chars() {
        match ch {
            '\'' => {
                quoted = !quoted;
                word = true;
            }
            c if c.is_whitespace() && !quoted => {
                if word {
                    out.push(std::mem::take(&mut cur));
                }
                word = false;
            }
            c => {
                cur.push(c);
                word = true;
            }
        }
    }
    if word {
        out.push(cur);
    }
    out
}

/// Run an `alpine-rs …` argument list with the built binary: (exit code, stdout, stderr).
fn run_command(argv: &[String]) -> (i32, String, String) {
    assert_eq!(argv.first().map(String::as_str), Some("alpine-rs"), "{argv:?}");
    let args: Vec<&str> = argv[1..].iter().map(String::as_str).collect();
    run_cli(&args)
}

#[test]
fn suggest_ranks_applied_candidates_with_their_apply_commands() {
    let file = kernel("text");
    let (code, out, err) = run_cli(&["suggest", s(&file), "--set", "n=32", "--random", "2"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    let head = lines.iter().position(|l| l.starts_with("RANK")).expect("a table header");
    let rows: Vec<&str> =
        lines[head + 1..].iter().take_while(|l| !l.trim().is_empty()).copied().collect();
    let improved: Vec<&str> =
        rows.iter().filter(|r| r.split_whitespace().any(|w| w == "improved")).copied().collect();
    assert!(!improved.is_empty(), "no improved row:\n{out}");
    // The first row is the best one: the cell every iteration rereads kept in a register
    // (candidates by what executes); an unrolling improves too, by less.
    assert!(rows[0].starts_with("1 ") && rows[0].contains("prefetch"), "{out}");
    assert!(rows[0].split_whitespace().any(|w| w == "improved"), "{out}");
    assert!(rows.iter().any(|r| r.contains("unroll") && r.contains("improved")), "{out}");
    // Its command performs exactly that attempt.
    for row in improved {
        let at = row.find("alpine-rs apply").unwrap_or_else(|| panic!("no command in `{row}`"));
        let argv = shell_split(&row[at..]);
        let (c, applied, e) = run_command(&argv);
        assert_eq!(c, 0, "{argv:?}: {e}");
        assert_ne!(applied, KERNEL, "{argv:?} changed nothing");
    }
    // Refused attempts: one line per site and optimization, with the code.
    let refused = lines.iter().position(|l| *l == "refused:").expect("a refused section");
    let tile: Vec<&&str> = lines[refused + 1..].iter().filter(|l| l.contains(" tile ")).collect();
    assert_eq!(tile.len(), 1, "{out}");
    assert!(tile[0].contains("refused A503") && tile[0].contains("(2 attempts)"), "{out}");
    // Nothing is written next to the file.
    let dir = file.parent().expect("a folder");
    assert_eq!(std::fs::read_dir(dir).expect("the folder").count(), 1);
}

#[test]
fn suggest_json_is_ranked_and_its_commands_run() {
    let file = kernel("json");
    let args = ["suggest", s(&file), "--set", "n=32", "--random", "2", "--json"];
    let (code, out, err) = run_cli(&args);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"));
    assert_eq!(doc["exit_code"], 0);
    let rows = doc["suggestions"].as_array().expect("suggestions");
    assert!(rows.iter().any(|r| r["verdict"] == "improved"), "{out}");
    let changes: Vec<f64> = rows.iter().filter_map(|r| r["change"].as_f64()).collect();
    assert!(changes.windows(2).all(|w| w[0] <= w[1]), "not ranked: {changes:?}");
    let best = &rows[0];
    assert_eq!(best["rank"], 1);
    assert!(best["change"].as_f64().is_some_and(|c| c < 0.0), "{best}");
    assert!(best["after"]["steps"].as_u64() < best["before"]["steps"].as_u64(), "{best}");
    let argv: Vec<String> = best["argv"]
        .as_array()
        .expect("argv")
        .iter()
        .map(|w| w.as_str().expect("a word").to_string())
        .collect();
    assert_eq!(shell_split(best["command"].as_str().expect("command")), argv);
    let (c, _, e) = run_command(&argv);
    assert_eq!(c, 0, "{e}");
    let refused = doc["refused"].as_array().expect("refused");
    assert!(
        refused.iter().any(|r| r["optimization"] == "tile"
            && r["codes"] == serde_json::json!(["A503"])
            && r["attempts"] == 2),
        "{out}"
    );
    // Deterministic: the same document again.
    let (_, again, _) = run_cli(&args);
    assert_eq!(again, out);
}

#[test]
fn suggest_exit_codes() {
    // No input can be generated (n > 0 but --set n=0): some applied, none measured.
    let file = kernel("codes");
    let (code, out, err) = run_cli(&["suggest", s(&file), "--set", "n=0", "--random", "2"]);
    assert_eq!(code, 3, "{out}\n{err}");
    assert!(err.contains("no candidate's cost could be measured"), "{err}");
    // Bad input: a file that does not parse, a file that is not there, a bad flag value.
    let bad = file.with_file_name("bad.pvl");
    std::fs::write(&bad, "class { void").expect("write");
    assert_eq!(run_cli(&["suggest", s(&bad)]).0, 2);
    assert_eq!(run_cli(&["suggest", s(&file.with_file_name("none.pvl"))]).0, 2);
    assert_eq!(run_cli(&["suggest", s(&file), "--checks", "nonsense"]).0, 2);
    // Nothing applies: exit 0, and it says so.
    let plain = file.with_file_name("plain.pvl");
    std::fs::write(&plain, "class A {\n  int f(int x) {\n    return x;\n  }\n}\n").expect("write");
    let (code, out, err) = run_cli(&["suggest", s(&plain)]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("no optimization applies"), "{out}");
}

/// Candidates by what executes: a cell a kernel's loop reads on every iteration is read again by
/// the next one, so prefetching it into a register is proposed (and here ranked first: it saves
/// most of the global memory sectors).
#[test]
fn suggest_proposes_prefetching_a_cell_a_loop_rereads() {
    let p = common::root().join("fixtures/cuda/prefetch/ok_loop_register.cu");
    let (code, out, err) = run_cli(&["suggest", s(&p), "--set", "k=8"]);
    assert_eq!(code, 0, "{out}{err}");
    let first = out.lines().find(|l| l.starts_with("1 ")).unwrap_or_else(|| panic!("{out}"));
    assert!(first.contains("prefetch") && first.contains("array=y locations=t"), "{out}");
    assert!(first.contains("improved"), "{out}");
    // The row explains itself: the accesses it changed, and its gain at doubled sizes.
    assert!(
        out.contains(
            "AT 2x SIZES: the time change of the best 3 rows measured again at k = 8 -> 16"
        ),
        "{out}"
    );
    let (code, out, err) = run_cli(&["suggest", s(&p), "--set", "k=8", "--json"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(doc["doubled_sizes"], serde_json::json!([{"name": "k", "value": 8, "doubled": 16}]));
    let best = &doc["suggestions"][0];
    assert!(best["change_at_doubled_sizes"].as_f64().is_some_and(|c| c < 0.0), "{best}");
    let ys: Vec<&serde_json::Value> = best["accesses"]
        .as_array()
        .expect("accesses")
        .iter()
        .filter(|a| a["text"] == "y[t]" && a["write"] == false)
        .collect();
    assert_eq!(ys.len(), 1, "{best}");
    let runs = |side: &str| ys[0][side]["execs"].as_u64().unwrap_or(0);
    assert!(runs("after") < runs("before"), "the loop's reads of y[t] became one: {best}");
    // The rows below the best three are not measured again.
    let rows = doc["suggestions"].as_array().expect("rows");
    assert!(rows.iter().skip(3).all(|r| r["change_at_doubled_sizes"].is_null()), "{out}");
}

/// Linearization is measured on the corpus's matrix programs, in the layout whose cells the
/// lanes of a warp touch side by side. The column-shift program's contract gives `h` a linear
/// length (`h.length == w * d`), so generated matrices have more rows than `w`: the adapter
/// carries over the `w x d` block the program holds permissions for.
#[test]
fn suggest_measures_linearization_in_the_layout_that_coalesces() {
    let corpus = common::corpus_dir().join("linearize");
    for file in ["ok_colmajor_update.pvl", "ok_rowmajor_fill.pvl", "ok_mixed_layout_add.pvl"] {
        let p = corpus.join(file);
        let (code, out, err) = run_cli(&["suggest", s(&p), "--json"]);
        assert_eq!(code, 0, "{file}: {out}{err}");
        let doc: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        let rows: Vec<&serde_json::Value> = doc["suggestions"]
            .as_array()
            .expect("suggestions")
            .iter()
            .filter(|r| r["optimization"] == "linearize")
            .collect();
        assert!(!rows.is_empty(), "{file}: {out}");
        for r in rows {
            assert_eq!(r["measured"], true, "{file}: {r}");
            assert!(r["command"].as_str().is_some_and(|c| c.contains("--layout row")), "{r}");
            assert!(r["candidate_note"].as_str().is_some_and(|n| n.contains("row-major")), "{r}");
            assert!(r["after"]["sectors"].as_u64() < r["before"]["sectors"].as_u64(), "{r}");
        }
    }
    // A kernel whose threads each walk their own row coalesces column-major.
    let p = common::root().join("fixtures/cuda/linearize/ok_kernel_rows.cu");
    let (code, out, err) = run_cli(&["suggest", s(&p)]);
    assert_eq!(code, 0, "{out}{err}");
    let lin: Vec<&str> = out.lines().filter(|l| l.contains(" linearize ")).collect();
    assert_eq!(lin.len(), 1, "{out}");
    assert!(lin[0].contains("layout=col") && lin[0].contains("improved"), "{out}");
}

/// `--apply K` performs row K's command with both oracles: the output is written only when it
/// verifies (Silicon) and behaves as the file does, and it is the printed command's output.
#[test]
fn suggest_apply_writes_a_suggestion_only_after_both_oracles_pass() {
    let dir = tmpdir("suggest", "apply");
    let src = common::root().join("fixtures/cuda/prefetch/ok_loop_register.cu");
    let file = dir.join("loop.cu");
    std::fs::copy(&src, &file).expect("copy the kernel");
    let out = dir.join("loop_opt.cu");
    let (code, table, _) = run_cli(&["suggest", s(&file), "--set", "k=8"]);
    assert_eq!(code, 0, "{table}");
    let first = table.lines().find(|l| l.starts_with("1 ")).expect("a first row");
    let argv = shell_split(&first[first.find("alpine-rs apply").expect("a command")..]);
    assert!(argv.windows(2).any(|w| w == ["--z3-timeout", "2000"]), "{argv:?}");
    let (c, expected, e) = run_command(&argv);
    assert_eq!(c, 0, "{e}");
    let (code, stdout, err) =
        run_cli(&["suggest", s(&file), "--set", "k=8", "--apply", "1", "-o", s(&out)]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(err.contains("applying #1, prefetch") && err.contains("output verified"), "{err}");
    assert_eq!(std::fs::read_to_string(&out).expect("written"), expected);
    // Without -o the output goes to standard output.
    let (code, stdout, err) = run_cli(&["suggest", s(&file), "--set", "k=8", "--apply", "1"]);
    assert_eq!((code, stdout.as_str()), (0, expected.as_str()), "{err}");

    // A rank past the table, and --json without a file to write: usage errors.
    let (code, _, err) = run_cli(&["suggest", s(&file), "--apply", "99"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--apply 99: there are"), "{err}");
    assert_eq!(run_cli(&["suggest", s(&file), "--apply", "1", "--json"]).0, 2);
    assert_eq!(run_cli(&["suggest", s(&file), "-o", s(&out)]).0, 2, "-o needs --apply");
}

/// A kernel that runs correctly but whose loop invariant is too weak for its postcondition:
/// the interpreter measures and validates it, Silicon does not verify it, so `--apply` writes
/// and prints nothing and exits 1.
#[test]
fn suggest_apply_leaves_nothing_when_the_output_does_not_verify() {
    let weak = KERNEL.replace(
        "context Perm(a[tid], write);\n    {",
        "context Perm(a[tid], write);\n      ensures a[tid] == \\old(a[tid]) + 4;\n    {",
    );
    assert_ne!(weak, KERNEL);
    let dir = tmpdir("suggest", "apply_weak");
    let file = dir.join("weak.pvl");
    std::fs::write(&file, &weak).expect("write");
    let out = dir.join("weak_opt.pvl");
    let args = ["suggest", s(&file), "--set", "n=32", "--random", "2", "--apply", "1"];
    let (code, stdout, err) = run_cli(&[&args[..], &["-o", s(&out)]].concat());
    assert_eq!(code, 1, "{stdout}{err}");
    assert!(!out.exists(), "{err}");
    let (code, stdout, err) = run_cli(&args);
    assert_eq!(code, 1, "{err}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(err.contains("not printed because a check did not pass"), "{err}");
    let (code, _, err) = run_cli(&[&args[..], &["--in-place"]].concat());
    assert_eq!(code, 1, "{err}");
    assert_eq!(std::fs::read_to_string(&file).expect("read"), weak, "--in-place wrote");
}

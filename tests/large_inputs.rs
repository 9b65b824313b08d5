//! Very large inputs (issue 26, fault tests): a 10 MB program and 1 MB single lines give a result
//! or a diagnostic, never a stack overflow, a signal or an internal error. Speed is measured in
//! benches, not here; a quadratic blow-up would show as a test that does not finish (on a 2-core
//! machine the three files take about 10 s in a debug build; parsing is linear, see
//! `cargo bench --bench parse`).

mod common;

use common::{run_cli, tmpdir};

/// A method with a contract, a loop invariant and a loop, about 200 bytes.
fn method(i: usize) -> String {
    format!(
        "\n  requires n > 0;\n  ensures \\result >= 0;\n  int f{i}(int n) {{\n    int s = 0;\n    \
         loop_invariant s >= 0;\n    for (int i = 0; i < n; i++) {{ s = s + i * 2; }}\n    \
         return s;\n  }}\n"
    )
}

#[test]
fn a_10_mb_program_is_listed() {
    let dir = tmpdir("large", "ten_mb");
    let mut text = String::from("class Big {");
    let mut i = 0;
    while text.len() < 10_000_000 {
        text.push_str(&method(i));
        i += 1;
    }
    text.push_str("}\n");
    let f = dir.join("big.pvl");
    std::fs::write(&f, &text).expect("writes");
    let (code, out, err) = run_cli(&["list", f.to_str().expect("utf-8 path")]);
    assert_eq!(code, 0, "list of a 10 MB program: {err}");
    // Every method is listed, the last one included.
    let last = format!("method Big.f{}", i - 1);
    assert!(out.contains(&last), "{last} missing from the list");
}

#[test]
fn a_1_mb_line_of_statements_parses() {
    let dir = tmpdir("large", "line_statements");
    let body = "x = x + 1; ".repeat(100_000);
    let text = format!("class L {{ int g() {{ int x = 0; {body}return x; }} }}\n");
    assert!(text.len() > 1_000_000 && !text.trim_end().contains('\n'));
    let f = dir.join("line.pvl");
    std::fs::write(&f, &text).expect("writes");
    let (code, _, err) = run_cli(&["parse", f.to_str().expect("utf-8 path")]);
    assert_eq!(code, 0, "{err}");
}

/// 250,000 operands of one `+` chain: the tree is as deep as the chain, which the parser caps
/// with a diagnostic (exit 2) rather than recursing into a stack overflow.
#[test]
fn a_1_mb_expression_on_one_line_is_refused_with_a_diagnostic() {
    let dir = tmpdir("large", "line_expression");
    let sum = vec!["1"; 250_000].join(" + ");
    let text = format!("class L {{ int g() {{ return {sum}; }} }}\n");
    assert!(text.len() > 1_000_000);
    let f = dir.join("expr.pvl");
    std::fs::write(&f, &text).expect("writes");
    for cmd in ["parse", "list", "verify"] {
        let (code, _, err) = run_cli(&[cmd, f.to_str().expect("utf-8 path")]);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(err.contains("error[A0001]: nesting too deep"), "{cmd}: {err}");
    }
}

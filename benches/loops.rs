//! Loop unrolling and iteration merging end to end: `driver::apply` (parse, annotation order,
//! loop analysis, fact collection, Z3 queries, rewriting, re-parse after each step) on a generated
//! 2 000-line PVL file with 50 annotated loops: unroll and merge, `while` and `for`, host methods
//! and `par` blocks, nested loops, symbolic bounds whose facts come from contracts, exact and
//! remainder merges, `+`, `-`, `*` and `/` updates.
//!
//! `cargo bench --bench loops` prints the median time for the whole file, for a one-loop file, and
//! the per-loop cost of the large file relative to the one-loop file (1.0: the cost of a loop does
//! not depend on the size of the file around it). Target: the whole file under 50 ms in a release
//! build. `-- --dump FILE` writes the large file. Without `--bench` (as `cargo test --all-targets` runs it) it checks once that every
//! annotation applies and the output parses.

mod common;

use alpine_rs::front::{parse, ParseOptions};
use alpine_rs::transforms::driver::{apply, DriverOptions};
use std::time::Duration;

/// Number of annotated loops in the large file.
const LOOPS: usize = 50;
/// Lines of the large file (filler methods without annotations pad it to this size).
const LINES: usize = 2_000;

/// One group of annotated methods; `k` varies names and constants. Each entry is (number of
/// annotated loops, text).
fn templates(k: usize) -> Vec<(usize, String)> {
    let c = 3 + k % 4; // a literal bound that varies per group
    vec![
        // Host while loop, unroll, symbolic bound from a precondition.
        (
            1,
            format!(
                r#"  context_everywhere a != null && a.length == n;
  requires n >= {c};
  context (\forall* int q; 0 <= q && q < n; Perm(a[q], write));
  ensures (\forall int q; 0 <= q && q < n; a[q] == q + {k});
  void fill{k}(int n, int[] a) {{
    int i = 0;
    gpuopt loop_unroll i {c};
    loop_invariant 0 <= i && i <= n;
    loop_invariant (\forall* int q; 0 <= q && q < n; Perm(a[q], write));
    loop_invariant (\forall int q; 0 <= q && q < i; a[q] == q + {k});
    while (i < n) {{
      a[i] = i + {k};
      i = i + 1;
    }}
  }}

"#
            ),
        ),
        // Host for loop, merge in remainder mode (nothing known about n modulo 4).
        (
            1,
            format!(
                r#"  context_everywhere b != null && b.length == n;
  context (\forall* int q; 0 <= q && q < n; Perm(b[q], write));
  ensures (\forall int q; 0 <= q && q < n; b[q] == 2 * \old(b[q]));
  void scale{k}(int n, int[] b) {{
    gpuopt iter_merge i 4;
    loop_invariant 0 <= i && i <= n;
    loop_invariant (\forall* int q; 0 <= q && q < n; Perm(b[q], write));
    loop_invariant (\forall int q; 0 <= q && q < i; b[q] == 2 * \old(b[q]));
    loop_invariant (\forall int q; i <= q && q < n; b[q] == \old(b[q]));
    for (int i = 0; i < n; i++) {{
      b[i] = 2 * b[i];
    }}
  }}

"#
            ),
        ),
        // For loop in a par block, unroll, bound from context_everywhere.
        (
            1,
            format!(
                r#"  context_everywhere y != null && y.length == n;
  context_everywhere reps >= 2;
  context (\forall* int q; 0 <= q && q < n; Perm(y[q], write));
  ensures (\forall int q; 0 <= q && q < n; y[q] == \old(y[q]) + 2 * reps);
  void bump{k}(int n, int reps, int[] y) {{
    par lanes{k} (int tid = 0 .. n)
      context Perm(y[tid], write);
      ensures y[tid] == \old(y[tid]) + 2 * reps;
    {{
      int start = y[tid];
      gpuopt loop_unroll r 2;
      loop_invariant 0 <= r && r <= reps;
      loop_invariant Perm(y[tid], write);
      loop_invariant y[tid] == start + 2 * r;
      for (int r = 0; r < reps; r++) {{
        y[tid] = y[tid] + 2;
      }}
    }}
  }}

"#
            ),
        ),
        // Nested: outer while merged (remainder), inner for unrolled in every copy.
        (
            2,
            format!(
                r#"  context_everywhere h != null && h.length == n;
  requires m >= 2;
  context (\forall* int q; 0 <= q && q < n; Perm(h[q], write));
  ensures (\forall int q; 0 <= q && q < n; h[q] == m);
  void rows{k}(int n, int m, int[] h) {{
    int r = 0;
    gpuopt iter_merge r 2;
    loop_invariant 0 <= r && r <= n;
    loop_invariant m >= 2;
    loop_invariant (\forall* int q; 0 <= q && q < n; Perm(h[q], write));
    loop_invariant (\forall int q; 0 <= q && q < r; h[q] == m);
    while (r < n) {{
      h[r] = 0;
      gpuopt loop_unroll c 2;
      loop_invariant 0 <= c && c <= m;
      loop_invariant 0 <= r && r < n;
      loop_invariant (\forall* int q; 0 <= q && q < n; Perm(h[q], write));
      loop_invariant (\forall int q; 0 <= q && q < r; h[q] == m);
      loop_invariant h[r] == c;
      for (int c = 0; c < m; c++) {{
        h[r] = h[r] + 1;
      }}
      r = r + 1;
    }}
  }}

"#
            ),
        ),
        // Host while loop with a doubling stride, merged in exact mode (constant trip count).
        (
            1,
            format!(
                r#"  context_everywhere s != null && s.length == 64;
  context (\forall* int q; 0 <= q && q < 64; Perm(s[q], write));
  requires (\forall int q; 0 <= q && q < 64; s[q] >= 0);
  ensures (\forall int q; 0 <= q && q < 64; s[q] >= 0);
  void sweep{k}(int[] s) {{
    int d = 1;
    gpuopt iter_merge d 4;
    loop_invariant 1 <= d && d < 128;
    loop_invariant (\forall* int q; 0 <= q && q < 64; Perm(s[q], write));
    loop_invariant (\forall int q; 0 <= q && q < 64; s[q] >= 0);
    while (d < 64) {{
      s[63] = s[63] + s[63 - d] + {k};
      d = d * 2;
    }}
  }}

"#
            ),
        ),
        // Host countdown, unroll: the upper bound moves.
        (
            1,
            format!(
                r#"  context_everywhere w != null && w.length == n;
  requires n >= 3;
  context (\forall* int q; 0 <= q && q < n; Perm(w[q], write));
  ensures (\forall int q; 0 < q && q < n; w[q] == \old(w[q - 1]));
  void shift{k}(int n, int[] w) {{
    int i = n - 1;
    gpuopt loop_unroll i 2;
    loop_invariant 0 <= i && i < n;
    loop_invariant (\forall* int q; 0 <= q && q < n; Perm(w[q], write));
    loop_invariant (\forall int q; i < q && q < n; w[q] == \old(w[q - 1]));
    loop_invariant (\forall int q; 0 <= q && q <= i; w[q] == \old(w[q]));
    while (i > 0) {{
      w[i] = w[i - 1];
      i = i - 1;
    }}
  }}

"#
            ),
        ),
        // Segment-tree walk to the root, p / 2 from a symbolic leaf, unroll.
        (
            1,
            format!(
                r#"  context_everywhere t != null && t.length == 2 * n;
  requires 4 <= leaf && leaf < 2 * n;
  context (\forall* int q; 0 <= q && q < 2 * n; Perm(t[q], write));
  void walk{k}(int n, int leaf, int[] t) {{
    int p = leaf;
    gpuopt loop_unroll p 2;
    loop_invariant 1 <= p && p < 2 * n;
    loop_invariant (\forall* int q; 0 <= q && q < 2 * n; Perm(t[q], write));
    while (p > 1) {{
      p = p / 2;
      t[p] = t[p] + {k};
    }}
  }}

"#
            ),
        ),
    ]
}

/// A method without annotations (it pads the file; the driver parses it at every step).
fn filler(k: usize) -> String {
    format!(
        r#"  context_everywhere a != null && a.length == n;
  context (\forall* int q; 0 <= q && q < n; Perm(a[q], 1\2));
  ensures \result >= 0;
  int count{k}(int n, int[] a) {{
    int z = 0;
    int i = 0;
    loop_invariant 0 <= i && i <= n && 0 <= z && z <= i;
    loop_invariant (\forall* int q; 0 <= q && q < n; Perm(a[q], 1\2));
    while (i < n) {{
      if (a[i] == {k}) {{
        z = z + 1;
      }}
      i = i + 1;
    }}
    return z;
  }}

"#
    )
}

/// A file with `loops` annotated loops, padded with filler methods to about `lines` lines.
fn generate(loops: usize, lines: usize) -> String {
    let mut methods: Vec<String> = Vec::new();
    let mut count = 0;
    let mut k = 0;
    'outer: loop {
        for (n, text) in templates(k) {
            if count + n > loops {
                if count == loops {
                    break 'outer;
                }
                continue;
            }
            count += n;
            methods.push(text);
        }
        k += 1;
    }
    let used: usize = methods.iter().map(|m| m.lines().count()).sum::<usize>() + 3 * (k + 1);
    let mut f = 0;
    let filler_len = filler(0).lines().count();
    while used + f * filler_len < lines.saturating_sub(filler_len / 2) {
        // Spread the filler between the annotated methods.
        let at = (f * 7 + 3) % (methods.len() + 1);
        methods.insert(at, filler(f));
        f += 1;
    }
    // Classes of about ten methods each.
    let mut out = String::from("// Generated by benches/loops.rs.\n");
    for (c, chunk) in methods.chunks(10).enumerate() {
        out.push_str(&format!("class Loops{c} {{\n"));
        for m in chunk {
            out.push_str(m);
        }
        out.push_str("}\n\n");
    }
    out
}

fn run(src: &str) -> alpine_rs::transforms::driver::DriverResult {
    apply("bench.pvl", src, &DriverOptions::default())
}

fn check(name: &str, src: &str, loops: usize) {
    let res = run(src);
    let errors: Vec<String> = res
        .diagnostics()
        .filter(|(_, d)| d.is_error())
        .map(|(_, d)| format!("{} {}", d.code, d.message))
        .collect();
    assert!(
        res.exit_code() == 0 && errors.is_empty(),
        "{name}: exit {} {errors:?}",
        res.exit_code()
    );
    // Inner loops are copied by the outer merge before they are unrolled: more steps than loops.
    assert!(res.applied >= loops, "{name}: {} steps for {loops} loops", res.applied);
    assert!(!res.output.contains("gpuopt"), "{name}: an annotation was left");
    assert!(
        !parse(&res.output, &ParseOptions::default()).has_errors(),
        "{name}: the output does not parse"
    );
}

/// Mean CPU time of `f` over `runs` runs.
fn cpu_mean(runs: usize, mut f: impl FnMut()) -> Option<Duration> {
    let before = common::process_cpu()?;
    for _ in 0..runs {
        f();
    }
    Some((common::process_cpu()? - before) / runs as u32)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let benchmarking = args.iter().any(|a| a == "--bench");
    let large = generate(LOOPS, LINES);
    let single = generate(1, 0);
    // `-- --dump FILE` writes the large file, to look at it or run the CLI on it.
    if let Some(path) = args.iter().position(|a| a == "--dump").and_then(|i| args.get(i + 1)) {
        std::fs::write(path, &large).expect("the dump file can be written");
    }
    check("large", &large, LOOPS);
    check("single", &single, 1);
    if !benchmarking {
        println!(
            "loops bench: generated files apply cleanly (run `cargo bench --bench loops` to time)"
        );
        return;
    }
    let steps = run(&large).applied;
    // Warm up (the first call creates the thread's Z3 context).
    run(&single);
    let t1 = common::median(21, || {
        std::hint::black_box(run(&single));
    });
    let t50 = common::median(7, || {
        std::hint::black_box(run(&large));
    });
    let c1 = cpu_mean(21, || {
        std::hint::black_box(run(&single));
    });
    let c50 = cpu_mean(5, || {
        std::hint::black_box(run(&large));
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let cpu = |d: Option<Duration>| d.map_or("n/a".to_string(), |d| format!("{:.1} ms", ms(d)));
    println!(
        "single loop ({:>4} lines): median {:8.3} ms wall, {} CPU",
        single.lines().count(),
        ms(t1),
        cpu(c1)
    );
    println!(
        "{LOOPS} loops ({:>4} lines, {steps} steps): median {:8.3} ms wall, {} CPU; target under 50 ms: {}",
        large.lines().count(),
        ms(t50),
        cpu(c50),
        if ms(t50) < 50.0 { "met" } else { "missed" }
    );
    // Where the time goes: one parse of the large file (the driver parses once per round).
    let t_parse = common::median(11, || {
        std::hint::black_box(parse(&large, &ParseOptions::default()));
    });
    println!("  of which one parse of the large file: {:.3} ms", ms(t_parse));
    println!(
        "per step: {:.3} ms wall = {:.2} x the single-loop file; CPU ratio {}",
        ms(t50) / steps as f64,
        t50.as_secs_f64() / steps as f64 / t1.as_secs_f64(),
        match (c1, c50) {
            (Some(a), Some(b)) if !a.is_zero() =>
                format!("{:.2}", b.as_secs_f64() / steps as f64 / a.as_secs_f64()),
            _ => "n/a".to_string(),
        }
    );
}

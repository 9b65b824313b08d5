//! Parse-time benchmark: generated PVL files of 1 000 and 10 000 lines.
//!
//! `cargo bench --bench parse` times `front::parse` on both (median of several runs) and prints
//! the two figures and their ratio; linear growth gives a ratio near 10. The target is under
//! 50 ms for 10 000 lines in a release build. Without `--bench` (as `cargo test --all-targets`
//! runs it) it only checks once that the generated files parse cleanly.

mod common;

use alpine_rs::front::lexer::lex;
use alpine_rs::front::{dialect, parse, DialectChoice, ParseOptions};
use std::time::{Duration, Instant};

/// One kernel class in the style of the corpus: method contracts with quantified
/// permissions, a par block with a per-thread contract, a loop with invariants, a barrier, a
/// pure function, an annotated loop. `k` varies names and constants.
fn class(k: usize) -> String {
    format!(
        r#"// Generated kernel class {k}.
class Kernel{k} {{
  int total;

  context_everywhere a != null && b != null && n > 0;
  context_everywhere a.length == n && b.length == n;
  context (\forall* int i; 0 <= i && i < n; Perm(a[i], write));
  requires (\forall* int i; 0 <= i && i < n; Perm(b[i], 1\2));
  ensures (\forall* int i; 0 <= i && i < n; Perm(b[i], 1\2));
  ensures (\forall int i; 0 <= i && i < n; a[i] == b[i] + {k});
  void step{k}(int n, int[] a, int[] b) {{
    par lanes (int tid = 0 .. n)
      context Perm(a[tid], write);
      context Perm(b[tid], 1\2);
      ensures a[tid] == b[tid] + {k};
    {{
      int j = 0;
      a[tid] = b[tid];
      loop_invariant 0 <= j && j <= {k};
      loop_invariant Perm(a[tid], write) ** Perm(b[tid], 1\2);
      loop_invariant a[tid] == b[tid] + j;
      while (j < {k}) {{
        a[tid] = a[tid] + 1; /* one more */
        j = j + 1;
      }}
      barrier(lanes) {{
        context 0 <= tid && tid < n;
        requires Perm(a[tid], write);
        ensures Perm(a[tid], write) ** a[tid] == \old(a[tid]);
      }}
    }}
  }}

  requires n >= 0;
  ensures \result == n * (n - 1) / 2;
  static pure int tri{k}(int n) = n == 0 ? 0 : n - 1 + tri{k}(n - 1);

  context Perm(total, write);
  ensures total == \old(total) + {k} * 2;
  void bump{k}() {{
    int i = 0;
    gpuopt loop_unroll i 2;
    loop_invariant 0 <= i && i <= {k} && Perm(total, write);
    loop_invariant total == \old(total) + i * 2;
    while (i < {k}) {{
      total = total + 2;
      i = i + 1;
    }}
  }}
}}

"#
    )
}

fn generate(lines: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    let mut k = 0;
    while count < lines {
        let c = class(k);
        count += c.lines().count();
        out.push_str(&c);
        k += 1;
    }
    out
}

/// Median wall-clock time of a parse of `src`, and the mean CPU time per parse.
fn time_parse(src: &str, runs: usize) -> (Duration, Option<Duration>) {
    let opts = ParseOptions::default();
    // Keep the trees until the CPU time is read: dropping them is not part of parsing.
    let mut kept = Vec::with_capacity(runs);
    let cpu_before = common::process_cpu();
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let p = parse(src, &opts);
            let d = t.elapsed();
            kept.push(p);
            d
        })
        .collect();
    let cpu = match (cpu_before, common::process_cpu()) {
        (Some(a), Some(b)) => Some((b - a) / runs as u32),
        _ => None,
    };
    drop(kept);
    times.sort();
    (times[runs / 2], cpu)
}

fn main() {
    let benchmarking = std::env::args().any(|a| a == "--bench");
    let small = generate(1_000);
    let large = generate(10_000);
    for src in [&small, &large] {
        let p = parse(src, &ParseOptions::default());
        assert!(!p.has_errors(), "the generated file does not parse: {:?}", p.diagnostics.first());
    }
    if !benchmarking {
        println!("parse bench: generated files parse (run `cargo bench --bench parse` to time)");
        return;
    }
    // Warm up allocator and caches.
    time_parse(&large, 3);
    let (t_small, cpu_small) = time_parse(&small, 101);
    let (t_large, cpu_large) = time_parse(&large, 21);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let cpu_ms = |d: Option<Duration>| d.map_or("n/a".to_string(), |d| format!("{:.2} ms", ms(d)));
    for (src, t, cpu) in [(&small, t_small, cpu_small), (&large, t_large, cpu_large)] {
        println!(
            "parse {:>6} lines ({:>7} bytes): median {:8.3} ms wall, {} CPU per parse",
            src.lines().count(),
            src.len(),
            ms(t),
            cpu_ms(cpu)
        );
    }
    // Where the time goes, for the large file.
    let toks = lex(&large).tokens;
    let t_lex = common::median(15, || {
        std::hint::black_box(lex(&large));
    });
    let t_dialect = common::median(15, || {
        std::hint::black_box(dialect::select(&large, &toks, DialectChoice::Auto));
    });
    println!(
        "  of which lexing {:.3} ms, dialect detection {:.3} ms ({} tokens)",
        ms(t_lex),
        ms(t_dialect),
        toks.len()
    );
    println!(
        "ratio 10k/1k: {:.2} wall, {} CPU (linear growth: about 10); 10k target under 50 ms: {}",
        t_large.as_secs_f64() / t_small.as_secs_f64(),
        match (cpu_small, cpu_large) {
            (Some(a), Some(b)) => format!("{:.2}", b.as_secs_f64() / a.as_secs_f64()),
            _ => "n/a".to_string(),
        },
        if ms(t_large) < 50.0 { "met" } else { "missed" }
    );
}

//! Interpreter throughput: lane-statements ("simple statements") per second on a 1 024-thread
//! vector add and a 256-thread kernel with a 1 000-iteration loop, with all checks on and with
//! races/divergence only. Run with `cargo bench --bench sem`; `cargo bench --bench sem -- vadd`
//! runs the benchmarks whose name contains `vadd`. The `cost` lines count the cost model's
//! metrics (`run --cost`); compare each with the same line without it.
//!
//! A run (`sem::run_one`) is timed whole: placing the input on the heap, the entry
//! precondition, the launch, the postcondition and reading the final state back. The vector add
//! executes one statement per thread, so its rate is set by what each thread costs around that
//! statement (creating it, its entry and exit contracts, the method contract's quantifiers over
//! its cell), not by statement execution; the loop kernel measures statement execution.

mod common;

use alpine_rs::sem::compile::Ty;
use alpine_rs::sem::cost::CostConfig;
use alpine_rs::sem::{self, Checks, Config, InVal, Input};
use std::time::Instant;

const VADD: &str = r#"
class V {
  context_everywhere a != null && b != null && c != null;
  context_everywhere a.length == n && b.length == n && c.length == n;
  context (\forall* int i; 0 <= i && i < n; Perm(a[i], 1\2) ** Perm(b[i], 1\2));
  context (\forall* int i; 0 <= i && i < n; Perm(c[i], write));
  ensures (\forall int i; 0 <= i && i < n; c[i] == a[i] + b[i]);
  void vadd(int n, int[] a, int[] b, int[] c) {
    par k (int tid = 0 .. n)
      context Perm(a[tid], 1\2) ** Perm(b[tid], 1\2) ** Perm(c[tid], write);
      ensures c[tid] == a[tid] + b[tid];
    { c[tid] = a[tid] + b[tid]; }
  }
}
"#;

const LOOP: &str = r#"
class L {
  context_everywhere a != null && a.length == 256;
  context (\forall* int i; 0 <= i && i < 256; Perm(a[i], write));
  void spin(int[] a) {
    par k (int tid = 0 .. 256)
      context Perm(a[tid], write);
    {
      int s = 0;
      int j = 0;
      loop_invariant 0 <= j && j <= 1000;
      loop_invariant Perm(a[tid], write);
      while (j < 1000) {
        s = s + j * tid;
        j = j + 1;
      }
      a[tid] = s;
    }
  }
}
"#;

fn arr(n: usize) -> InVal {
    InVal::Array(Ty::Int, (0..n as i64).map(InVal::Int).collect())
}

fn bench(name: &str, src: &str, input: &Input, checks: Checks, reps: u32, cost: bool) {
    // `cargo bench --bench sem -- vadd` runs only the benchmarks whose name contains `vadd`.
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
        return;
    }
    let l = match sem::load(src) {
        Ok(l) => l,
        Err(e) => panic!("{name}: {e}"),
    };
    let m = match sem::entries(&l.prog, None) {
        Ok(v) => v[0],
        Err(e) => panic!("{name}: {e}"),
    };
    let cfg = Config {
        checks,
        // The lint belongs to "all checks"; the light runs measure races and divergence only.
        uniformity: checks.contracts,
        cost: cost.then(CostConfig::default),
        ..Config::default()
    };
    // `SEM_BENCH_SCALE=10` runs ten times the repetitions (for profiling).
    let scale: u32 =
        std::env::var("SEM_BENCH_SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    let reps = reps * scale.max(1);
    let input = std::sync::Arc::new(input.clone());
    let r = sem::run_one(&l, m, &input, 0, &cfg);
    assert_eq!(r.status, sem::Status::Ok, "{name}: {:?}", r.errors);
    let start = Instant::now();
    let cpu_start = thread_cpu_secs();
    let mut stmts = 0u64;
    for _ in 0..reps {
        stmts += sem::run_one(&l, m, &input, 0, &cfg).stmts;
    }
    let secs = start.elapsed().as_secs_f64();
    // The rate uses this thread's CPU time, so that it stays meaningful on a busy machine; the
    // wall time is printed next to it.
    let cpu = (thread_cpu_secs() - cpu_start).max(1e-9);
    println!(
        "{name:<42} {:>7} stmts/run {:>9.3} ms/run CPU {:>9.3} ms/run wall {:>8.2} M stmts/s",
        stmts / reps as u64,
        cpu * 1e3 / reps as f64,
        secs * 1e3 / reps as f64,
        stmts as f64 / cpu / 1e6
    );
}

/// CPU time consumed by the calling thread, in seconds.
fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant Linux supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn main() {
    let all = Checks::default();
    let light = Checks { contracts: false, perms: false, races: true, divergence: true };
    let vin = Input {
        args: vec![
            ("n".into(), InVal::Int(1024)),
            ("a".into(), arr(1024)),
            ("b".into(), arr(1024)),
            ("c".into(), arr(1024)),
        ],
        ..Input::default()
    };
    let lin = Input { args: vec![("a".into(), arr(256))], ..Input::default() };
    bench("vadd 1024 threads, all checks", VADD, &vin, all, 500, false);
    bench("vadd 1024 threads, races+divergence", VADD, &vin, light, 500, false);
    bench("loop 256 threads x 1000, all checks", LOOP, &lin, all, 3, false);
    bench("loop 256 threads x 1000, races+divergence", LOOP, &lin, light, 3, false);
    // The cost model (semantics.md §9) counting on: compare with the lines above.
    bench("vadd 1024 threads, all checks, cost", VADD, &vin, all, 500, true);
    bench("loop 256 threads x 1000, all checks, cost", LOOP, &lin, all, 3, true);
}

//! The cost model (semantics.md §9) against the cases of semantics.md §12 that fix its counts:
//! V1 (vector add), V1b (the guarded CUDA-style launch), V2 (coalescing under divergence), V3
//! (loop divergence), V4 (the coalescing and bank-conflict table) and V12 (`cost` verdicts).
//! Sectors, conflicts and divergent warps are RaCUDA's definitions; steps follow §9.4's
//! charging table. Every number below is from semantics.md, not from a run of ours.

use alpine_rs::sem::compile::Ty;
use alpine_rs::sem::cost::{CostConfig, CostReport, CostVerdict, Counts, Profile, Space};
use alpine_rs::sem::{self, Checks, Config, InVal, Input, RunOptions, Status};
use alpine_rs::sem::{ValidateOptions, Verdict};

fn ints(n: usize) -> InVal {
    InVal::Array(Ty::Int, (0..n as i64).map(|i| InVal::Int(i % 7)).collect())
}

fn input(args: Vec<(&str, InVal)>) -> Input {
    Input { args: args.into_iter().map(|(n, v)| (n.to_string(), v)).collect(), ..Input::default() }
}

fn cfg(profile: Profile, spaces: Vec<(&str, Space)>, all_checks: bool) -> Config {
    let checks = if all_checks {
        Checks::default()
    } else {
        // The race demos of §12 are unannotated: races and divergence only (§1).
        Checks { contracts: false, perms: false, races: true, divergence: true }
    };
    Config {
        checks,
        uniformity: all_checks,
        cost: Some(CostConfig {
            profile,
            spaces: spaces.into_iter().map(|(n, s)| (n.to_string(), s)).collect(),
        }),
        ..Config::default()
    }
}

/// The cost of one run of `src` on `inp`, which must be clean.
fn cost_of(src: &str, inp: Input, config: Config) -> CostReport {
    cost_with(src, inp, config, None)
}

/// The cost of one run of `src` on `inp`, which must be clean or have errors of code `allowed`
/// only (a race demo still has a cost: semantics.md §12 counts it).
fn cost_with(src: &str, inp: Input, config: Config, allowed: Option<&str>) -> CostReport {
    let opts = RunOptions { inputs: vec![inp], random: 0, config, ..RunOptions::default() };
    let mut runs = sem::run_program(src, &opts).unwrap_or_else(|e| panic!("{e}"));
    let r = runs.remove(0);
    let errs = sem::render("t.pvl", src, &r.errors);
    match allowed {
        None => assert_eq!(r.status, Status::Ok, "{errs}"),
        Some(code) => {
            assert!(matches!(r.status, Status::Ok | Status::Error), "{errs}");
            assert!(r.errors.iter().all(|d| d.code == code), "{errs}");
        }
    }
    r.cost.expect("counting was on")
}

fn counts(sectors: u64, conflicts: u64, divwarps: u64, steps: u64) -> Counts {
    Counts { sectors, conflicts, divwarps, steps }
}

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

fn vadd_input(n: usize) -> Input {
    input(vec![("n", InVal::Int(n as i64)), ("a", ints(n)), ("b", ints(n)), ("c", ints(n))])
}

#[test]
fn v1_vector_add() {
    let r = cost_of(VADD, vadd_input(256), cfg(Profile::racuda(), vec![], true));
    assert_eq!(r.sites.len(), 1);
    assert_eq!(r.sites[0].warps, 8);
    // 12 sectors and 16 steps (1+4, 1+4, 1, 1+4) per warp.
    assert_eq!(r.total, counts(96, 0, 0, 128));
    assert_eq!(r.sites[0].warp_max, counts(12, 0, 0, 16));
    // No barrier: the span is one warp's steps; T = W/P + S with P = 4.
    assert_eq!((r.work, r.span), (128, 16));
    assert_eq!(r.time, 48.0);
    let r = cost_of(VADD, vadd_input(257), cfg(Profile::racuda(), vec![], true));
    assert_eq!(r.sites[0].warps, 9);
    assert_eq!(r.total, counts(99, 0, 0, 135));
}

#[test]
fn v1_vector_add_n32768_counts_12288_sectors() {
    // The issue's figure: 1 024 full warps of 12 sectors. Checks off: only the counting matters.
    let mut c = cfg(Profile::racuda(), vec![], false);
    c.checks = Checks { contracts: false, perms: false, races: false, divergence: false };
    let r = cost_of(VADD, vadd_input(32768), c);
    assert_eq!(r.total.sectors, 12_288);
    assert_eq!(r.total.divwarps, 0);
    assert_eq!(r.sites[0].warps, 1024);
}

#[test]
fn v1b_guarded_launch() {
    let src = r#"
class V {
  context_everywhere a != null && b != null && c != null;
  context_everywhere a.length == n && b.length == n && c.length == n && n <= g;
  context (\forall* int i; 0 <= i && i < n; Perm(a[i], 1\2) ** Perm(b[i], 1\2));
  context (\forall* int i; 0 <= i && i < n; Perm(c[i], write));
  void vadd(int n, int g, int[] a, int[] b, int[] c) {
    par k (int tid = 0 .. g)
      context tid < n ==> Perm(a[tid], 1\2) ** Perm(b[tid], 1\2) ** Perm(c[tid], write);
    { if (tid < n) { c[tid] = a[tid] + b[tid]; } }
  }
}
"#;
    let mut inp = vadd_input(257);
    inp.args.insert(1, ("g".into(), InVal::Int(512)));
    let mut c = cfg(Profile::racuda(), vec![], true);
    // Two blocks of 256 threads, as the CUDA launch has.
    c.block_size = Some(256);
    let r = cost_of(src, inp, c);
    assert_eq!(r.sites[0].warps, 16);
    // Warps 0–7: 4 (test) + 16; warp 8: 4 + 1 (divergence) + 7; warps 9–15: 4.
    assert_eq!(r.total, counts(99, 0, 1, 200));
}

const EX1: &str = r#"
class E {
  void ex1(int[] g) {
    par w (int tid = 0 .. 32) { if (tid < 16) { g[tid * 4] = 0; } else { g[tid] = 0; } }
  }
}
"#;

#[test]
fn v2_coalescing_under_divergence() {
    // Lanes 4 and 16 both write g[16]: the example races, and is costed all the same.
    let g = || input(vec![("g", ints(64))]);
    let r = cost_with(EX1, g(), cfg(Profile::fermi_l1(), vec![], false), Some("R-RACE"));
    // RaCUDA's total: 4 literals + 3 variable reads + 2 operators + M^if + M^div + 2 + 1.
    assert_eq!(r.total, counts(3, 0, 1, 14));
    let r = cost_with(EX1, g(), cfg(Profile::racuda(), vec![], false), Some("R-RACE"));
    assert_eq!(r.total, counts(10, 0, 1, 21));
}

#[test]
fn v3_loop_divergence() {
    let src = r#"
class E {
  void ex2() {
    par w (int tid = 0 .. 32) { int i = 0; while (tid >= i * 16) { i = i + 1; } }
  }
}
"#;
    let r = cost_of(src, Input::default(), cfg(Profile::racuda(), vec![], false));
    // 2 (declaration) + 3 × 6 (tests) + 2 × 4 (bodies) + 1 (divergence at the second test).
    assert_eq!(r.total, counts(0, 0, 1, 29));
}

/// One V4 row: `int v = x[e];` by one full warp.
fn v4(index: &str, profile: Profile, shared: bool) -> Counts {
    let src = format!(
        "class E {{\n  void r(int[] x) {{\n    par r (int tid = 0 .. 32) {{ int v = x[{index}]; }}\n  }}\n}}\n"
    );
    let spaces = if shared { vec![("x", Space::Shared)] } else { vec![] };
    cost_of(&src, input(vec![("x", ints(1024))]), cfg(profile, spaces, false)).total
}

#[test]
fn v4_coalescing_and_bank_conflict_table() {
    // (index, sectors S=32, sectors S=128, conflicts charged)
    let table = [
        ("tid", 4, 1, 0),
        ("tid + 1", 5, 2, 0),
        ("2 * tid", 8, 2, 1),
        ("3 * tid", 12, 3, 0),
        ("32 * tid", 32, 32, 31),
        ("tid / 2", 2, 1, 0),
        ("0", 1, 1, 0),
    ];
    for (e, s32, s128, conf) in table {
        assert_eq!(v4(e, Profile::racuda(), false).sectors, s32, "x[{e}], S = 32");
        assert_eq!(v4(e, Profile::fermi_l1(), false).sectors, s128, "x[{e}], S = 128");
        let sh = v4(e, Profile::racuda(), true);
        assert_eq!((sh.conflicts, sh.sectors), (conf, 0), "x[{e}] shared");
    }
    // A boolean array: 32 one-byte elements in one sector.
    let src = "class E {\n  void r(boolean[] x) {\n    par r (int tid = 0 .. 32) { boolean v = x[tid]; }\n  }\n}\n";
    let bools = InVal::Array(Ty::Bool, (0..32).map(|i| InVal::Bool(i % 2 == 0)).collect());
    let c = cost_of(src, input(vec![("x", bools)]), cfg(Profile::racuda(), vec![], false));
    assert_eq!(c.total.sectors, 1);
}

#[test]
fn shared_arrays_by_the_blocks_idiom() {
    // Outer par = blocks, each allocating `s`; inner par = threads that use it: `s` is shared,
    // and a stride-2 index conflicts (degree 2, one conflict charged per access).
    let src = r#"
class S {
  void k(int[] g) {
    par b (int blk = 0 .. 1) {
      int[] s = new int[64];
      par t (int tid = 0 .. 32) { s[2 * tid] = tid; }
    }
  }
}
"#;
    let r = cost_of(src, input(vec![("g", ints(4))]), cfg(Profile::racuda(), vec![], false));
    let inner = r.sites.iter().find(|s| s.label == "t").expect("inner launch");
    assert_eq!(inner.counts.conflicts, 1);
    assert_eq!(inner.counts.sectors, 0);
    let acc = r.accesses.iter().find(|a| a.write && a.text.starts_with("s[")).expect("access");
    assert_eq!(acc.space, Some(Space::Shared));
}

/// `cost ORIG OPT` on one input: the summed counts of each.
fn compare(orig: &str, opt: &str) -> (Counts, Counts) {
    let opts = ValidateOptions {
        random: 1,
        config: Config { cost: Some(CostConfig::default()), ..Config::default() },
        ..ValidateOptions::default()
    };
    let out = sem::validate(orig, opt, &opts);
    assert_eq!(out.verdict, Verdict::Same, "{}", out.summary);
    // Without `--entry`, the changed methods are compared one by one (one here).
    let per_method = out.methods.iter().filter_map(|m| m.outcome.as_ref());
    let costs: Vec<_> = out.costs.iter().chain(per_method.flat_map(|o| &o.costs)).collect();
    let (_, a, b) = costs.first().expect("costs of an equivalent input");
    (a.total, b.total)
}

#[test]
fn v12_one_improvement_one_regression() {
    let looped = r#"
class U {
  context a != null && a.length == 32;
  context (\forall* int i; 0 <= i && i < 32; Perm(a[i], write));
  void inc(int[] a) {
    par t (int tid = 0 .. 32)
      context Perm(a[tid], write);
    {
      int k = 0;
      loop_invariant 0 <= k && k <= 4;
      loop_invariant Perm(a[tid], write);
      while (k < 4) { a[tid] = a[tid] + 1; k = k + 1; }
    }
  }
}
"#;
    let unrolled = looped.replace(
        "int k = 0;\n      loop_invariant 0 <= k && k <= 4;\n      loop_invariant Perm(a[tid], write);\n      while (k < 4) { a[tid] = a[tid] + 1; k = k + 1; }",
        "a[tid] = a[tid] + 1; a[tid] = a[tid] + 1; a[tid] = a[tid] + 1; a[tid] = a[tid] + 1;",
    );
    let (a, b) = compare(looped, &unrolled);
    assert_eq!((a, b), (counts(32, 0, 0, 86), counts(32, 0, 0, 48)));
    assert_eq!(CostVerdict::of(&a, &b), CostVerdict::Improved);

    let copy = r#"
class C {
  context a != null && b != null && a.length == 64 && b.length == 64;
  context (\forall* int i; 0 <= i && i < 64; Perm(a[i], 1\2) ** Perm(b[i], write));
  void copy(int[] a, int[] b) {
    par t (int tid = 0 .. 64)
      context Perm(a[tid], 1\2) ** Perm(b[tid], write);
    { b[tid] = a[tid]; }
  }
}
"#;
    let halved = copy
        .replace("par t (int tid = 0 .. 64)", "par t (int tid = 0 .. 32)")
        .replace(
            "context Perm(a[tid], 1\\2) ** Perm(b[tid], write);\n    { b[tid] = a[tid]; }",
            "context Perm(a[2*tid], 1\\2) ** Perm(b[2*tid], write);\n      context Perm(a[2*tid+1], 1\\2) ** Perm(b[2*tid+1], write);\n    { b[2*tid] = a[2*tid]; b[2*tid+1] = a[2*tid+1]; }",
        );
    let (a, b) = compare(copy, &halved);
    assert_eq!((a, b), (counts(16, 0, 0, 20), counts(32, 0, 0, 48)));
    assert_eq!(CostVerdict::of(&a, &b), CostVerdict::Regressed);
}

#[test]
fn counting_does_not_change_the_run() {
    // Same final state and statements with and without counting, with the shortcuts on.
    let opts = |cost| RunOptions {
        inputs: vec![vadd_input(100)],
        random: 0,
        config: Config { cost, ..Config::default() },
        ..RunOptions::default()
    };
    let a = sem::run_program(VADD, &opts(None)).expect("runs").remove(0);
    let b = sem::run_program(VADD, &opts(Some(CostConfig::default()))).expect("runs").remove(0);
    assert_eq!(a.observables, b.observables);
    assert_eq!((a.status, a.stmts), (b.status, b.stmts));
    assert!(a.cost.is_none() && b.cost.is_some());
}

/// `suggest` measures every candidate against one file: with a shared memo, ORIG's inputs are
/// drawn and run once, and each validation's outcome is the one it has without the memo.
#[test]
fn a_shared_memo_gives_the_outcomes_of_fresh_validations() {
    let opt =
        VADD.replace("{ c[tid] = a[tid] + b[tid]; }", "{ int s = a[tid]; c[tid] = s + b[tid]; }");
    assert_ne!(opt, VADD);
    let base = ValidateOptions {
        entry: Some("vadd".into()),
        random: 4,
        config: Config { cost: Some(CostConfig::default()), ..Config::default() },
        ..ValidateOptions::default()
    };
    let fresh = sem::validate(VADD, &opt, &base);
    let memo = std::sync::Arc::new(alpine_rs::sem::memo::RunMemo::default());
    let shared = ValidateOptions { memo: Some(memo.clone()), ..base.clone() };
    let first = sem::validate(VADD, &opt, &shared);
    assert_eq!(format!("{memo:?}"), "RunMemo(4 runs)");
    let again = sem::validate(VADD, &opt, &shared);
    for o in [&first, &again] {
        assert_eq!(o.verdict, fresh.verdict);
        assert_eq!(o.equivalent, fresh.equivalent);
        assert_eq!(o.costs, fresh.costs);
    }
    assert_eq!(fresh.verdict, Verdict::Same);
}

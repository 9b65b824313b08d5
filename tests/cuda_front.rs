//! The C/CUDA front end end to end: VerCors' own CUDA/OpenCL examples parse or are refused by
//! name, the ones VerCors verifies verify, our fixtures get their expected verdicts, kernels run,
//! and no input makes the front end panic. The optimizations on kernels: tests/cuda_opts.rs.
//! Runs Silicon (the backend `.ci/run` installs).

mod common;
use common::run_cli;
use std::path::PathBuf;

fn gpgpu() -> PathBuf {
    common::root().join("../shared/peer/vercors-v1.4.1/gpgpu")
}

fn fixture(name: &str) -> String {
    common::root().join("fixtures/cuda").join(name).display().to_string()
}

#[test]
fn every_peer_cuda_and_opencl_file_parses_or_is_refused_with_a_code() {
    let dir = gpgpu();
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).expect("peer gpgpu folder") {
        let p = e.expect("entry").path();
        if !matches!(p.extension().and_then(|x| x.to_str()), Some("cu" | "c")) {
            continue;
        }
        seen += 1;
        let (code, _, err) = run_cli(&["parse", &p.display().to_string()]);
        assert!(code == 0 || code == 2, "{}: exit {code}\n{err}", p.display());
        if code == 2 {
            assert!(err.contains("error[A0"), "{}: a refusal names its code\n{err}", p.display());
        }
        assert!(!err.contains("panicked"), "{}: {err}", p.display());
    }
    assert!(seen >= 8, "found {seen} files");
}

/// Verify `paths` in one `verify` run (one JVM, two files at a time): each file's verdict and
/// its JSON report.
fn verify(paths: &[PathBuf]) -> Vec<(String, serde_json::Value)> {
    let reports = common::verify_json(&["--jobs", "2"], paths);
    reports.into_iter().map(|r| (r["verdict"].as_str().unwrap_or("").to_string(), r)).collect()
}

#[test]
fn the_peer_kernels_vercors_verifies_verify() {
    // GPGPU-Example.cu indexes a grid of blocks of symbolic size: it verifies in the verifier's
    // flat kernel form (one `par` over the global index).
    let files = ["cuda.cu", "simple-ltid.cu", "opencl.c", "GPGPU-Example.cu"];
    let paths: Vec<PathBuf> = files.iter().map(|f| gpgpu().join(f)).collect();
    for (f, (verdict, report)) in files.iter().zip(verify(&paths)) {
        assert_eq!(verdict, "Verified", "{f}:\n{report:#}");
    }
}

#[test]
fn fixtures_get_their_verdicts() {
    let cases = [
        ("unroll/ok_scale_loop.cu", "Verified"),
        ("ok_launch.cu", "Verified"),
        ("reject_neighbour_write.cu", "Failed"),
        ("ok_shared_exchange.cu", "Verified"),
        ("reject_shared_uninit.cu", "Failed"),
        ("ok_dim3_launch.cu", "Verified"),
        ("reject_dim3_block_too_small.cu", "Failed"),
        ("ok_grid_symbolic_block.cu", "Verified"),
        ("reject_grid_symbolic_block_remainder.cu", "Failed"),
        ("ok_annotation_after_if.cu", "Verified"),
        ("reject_annotation_after_if.cu", "Failed"),
    ];
    let paths: Vec<PathBuf> = cases.iter().map(|(f, _)| PathBuf::from(fixture(f))).collect();
    for ((f, want), (verdict, report)) in cases.iter().zip(verify(&paths)) {
        assert_eq!(verdict, *want, "{f}:\n{report:#}");
    }
}

#[test]
fn a_dim3_launch_beyond_the_kernels_dimensions_is_refused_by_name() {
    let p = fixture("unsupported_dim3_extra_dimension.cu");
    let (code, out, err) = run_cli(&["verify", &p]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("error[A0014]") && err.contains("more dimensions"), "{out}{err}");
}

/// `__shared__` forms the kernel form does not hold (a scalar, a 2-D tile) and a barrier in a
/// `__device__` helper are refused where they are written, by both oracles (found by a user
/// triage: the scalar was read as a thread-local variable by `parse`, and `run` blamed the
/// user's names).
#[test]
fn shared_scalars_tiles_and_device_barriers_are_refused_where_written() {
    for (f, what, line) in [
        ("unsupported_shared_scalar.cu", "`__shared__` scalar", 10),
        ("unsupported_shared_2d.cu", "several dimensions", 11),
        ("unsupported_device_barrier.cu", "a barrier outside a kernel", 5),
    ] {
        let p = fixture(f);
        for cmd in ["verify", "run"] {
            let (code, out, err) = run_cli(&[cmd, &p]);
            assert_eq!(code, 2, "{cmd} {f}: {out}{err}");
            assert!(err.contains("error[A0014]") && err.contains(what), "{cmd} {f}: {err}");
            assert!(err.contains(&format!("{f}:{line}:")), "{cmd} {f}: {err}");
        }
    }
}

/// A call to a function the file does not declare is refused by name by both oracles (VerCors
/// 1.4 reads gpgpu/ASSSPv3.cu's `atomicRelax(…)` as a no-op; evaluated, its argument
/// `g_cost[g_start[tid]]` is not even known to be in bounds).
#[test]
fn a_call_to_an_undeclared_function_is_refused_by_both_oracles() {
    let p = fixture("unsupported_undeclared_call.cu");
    let (code, out, err) = run_cli(&["verify", &p]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("error[V-UNDECLARED]") && err.contains("`relax` is not declared"),
        "{err}"
    );
    // The interpreter cannot decide a run it cannot finish (R-UNSUPPORTED, exit 3).
    let (code, out, err) = run_cli(&["run", &p]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(format!("{out}{err}").contains("`relax`, which is not declared"), "{out}{err}");
    // Parsing and optimizing are unaffected: the call is kept as written.
    let (code, _, err) = run_cli(&["parse", &p]);
    assert_eq!(code, 0, "{err}");
    let asssp = gpgpu().join("ASSSPv3.cu").display().to_string();
    let (code, _, err) = run_cli(&["verify", &asssp]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`atomicRelax` is not declared"), "{err}");
}

/// The iteration variables of the outermost `par` of kernel `k` in `parsed`.
fn kernel_iters(parsed: &alpine_rs::front::Parsed, k: &str) -> Vec<String> {
    use alpine_rs::front::ast::{Item, MethodBody, StmtKind};
    for item in &parsed.program.items {
        if let Item::Method(m) = item {
            if m.name.name == k {
                if let MethodBody::Block(b) = &m.body {
                    if let Some(StmtKind::Par(p)) = b.stmts.first().map(|s| &s.kind) {
                        return p.arms[0].iters.iter().map(|i| i.name.name.clone()).collect();
                    }
                }
            }
        }
    }
    vec![]
}

#[test]
fn the_verifier_reads_kernels_with_independent_blocks_flat() {
    let grid = std::fs::read_to_string(fixture("ok_grid_symbolic_block.cu")).expect("fixture");
    let flat = alpine_rs::front::parse_for_verification(&grid, &Default::default());
    assert!(!flat.has_errors());
    assert_eq!(kernel_iters(&flat, "scale"), ["gid.x"]);
    // Everything else reads the two-level form of the text.
    let two = alpine_rs::front::parse_cuda(&grid);
    assert_eq!(kernel_iters(&two, "scale"), ["blockIdx.x"]);
    // Not flat: a barrier (shared memory), or a permission located by the thread index alone
    // (held once per block, which only the two-level form scales by the grid's size).
    for (f, k) in [("ok_shared_exchange.cu", "twice"), ("unroll/ok_scale_loop.cu", "bump")] {
        let text = std::fs::read_to_string(fixture(f)).expect("fixture");
        let p = alpine_rs::front::parse_for_verification(&text, &Default::default());
        assert_eq!(kernel_iters(&p, k), ["blockIdx.x"], "{f}");
    }
}

/// `--at` on a kernel's line names its threads (the par block its opening brace stands for), not
/// the method and the par block as two candidates (A0005); the load of `i` goes after its
/// declaration.
#[test]
fn at_on_a_kernel_line_selects_its_threads() {
    let f = fixture("ok_grid_symbolic_block.cu");
    let line = std::fs::read_to_string(&f)
        .expect("fixture")
        .lines()
        .position(|l| l.starts_with("__global__"))
        .expect("a kernel")
        + 1;
    let at = format!("line:{line}");
    let args = ["apply", "--opt", "prefetch", "--at", &at, "--array", "a", "--locations", "i", &f];
    let (code, out, err) = run_cli(&args);
    assert_eq!(code, 0, "{err}");
    let decl = out.find("int i = ").expect("the index declaration");
    let load = out.find("int a_reg_0 = a[i];").unwrap_or_else(|| panic!("no load:\n{out}"));
    assert!(decl < load, "{out}");
}

#[test]
fn kernels_run_under_the_interpreter() {
    let p = gpgpu().join("cuda.cu").display().to_string();
    let (code, out, err) = run_cli(&["run", &p, "--set", "blockDim.x=4", "--set", "gridDim.x=1"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("races pass"), "{out}");
}

#[test]
fn truncated_and_spliced_cuda_never_panics() {
    let text = std::fs::read_to_string(gpgpu().join("GPGPU-Example.cu")).expect("peer file");
    let cuts: Vec<usize> =
        (0..text.len()).step_by(37).filter(|&i| text.is_char_boundary(i)).collect();
    for &i in &cuts {
        // A prefix (unterminated comments, launches, blocks) and a splice of two halves.
        let parsed = alpine_rs::front::parse_cuda(&text[..i]);
        let _ = parsed.program;
        let spliced = format!(
            "{}{}",
            &text[..i],
            &text[text.len() - i..].trim_start_matches(|c: char| !c.is_ascii())
        );
        let _ = alpine_rs::front::parse_cuda(&spliced);
    }
}

/// Every `.cu`/`.c` file we have, each byte deleted, doubled or replaced by a C punctuation
/// character at a spread of positions: the front end, the site finder, the Viper encoder and the
/// interpreter's loader give diagnostics or results, never a panic.
#[test]
fn mutants_of_cuda_files_never_panic() {
    let mut inputs = common::files(&common::root().join("fixtures/cuda"), "cu");
    // Plain C with iteration contracts (read as C for their annotation comments alone).
    inputs.extend(common::files(&common::root().join("fixtures/cuda/iteration"), "c"));
    for e in std::fs::read_dir(gpgpu()).expect("peer gpgpu folder") {
        let p = e.expect("entry").path();
        if matches!(p.extension().and_then(|x| x.to_str()), Some("cu" | "c")) {
            inputs.push(p);
        }
    }
    let mut runs = 0;
    for p in &inputs {
        let text = std::fs::read_to_string(p).expect("readable");
        let step = (text.len() / 40).max(1);
        for (k, i) in (0..text.len()).step_by(step).enumerate() {
            if !text.is_char_boundary(i) || !text.is_char_boundary(i + 1) {
                continue;
            }
            let punct = ["{", "}", "(", ";", "*", "@", "/", "<<<"][k % 8];
            for m in [
                format!("{}{}", &text[..i], &text[i + 1..]),
                format!("{}{}", &text[..i + 1], &text[i..]),
                format!("{}{punct}{}", &text[..i], &text[i + 1..]),
            ] {
                let parsed = alpine_rs::front::parse(&m, &Default::default());
                let _ = alpine_rs::analyze::sites::sites(&parsed.program);
                if !parsed.has_errors() {
                    let src = alpine_rs::diag::SourceFile::new("m.cu", m.clone());
                    let _ = alpine_rs::viper::encode(&parsed.program, &src);
                    let _ = alpine_rs::sem::load(&m);
                }
                runs += 1;
            }
        }
    }
    assert!(runs > 1000, "{runs} mutants");
}

/// VerCors' C loops with an iteration contract (an annotation between the `for` header and the
/// body) are parallel loops: the front end reads them as `par` blocks (crates/front/src/cuda/
/// iteration.rs), in files that have no directive at all (read as C for their `/*@` comments).
/// Both oracles check them, and the optimizations refuse them by name.
#[test]
fn c_loops_with_iteration_contracts_are_parallel_loops() {
    let cases = [
        ("iteration/ok_iteration_contract.c", "Verified", ""),
        // The iteration writes its neighbour's cell, which its contract does not give it.
        ("iteration/reject_iteration_contract_neighbour.c", "Failed", "V-PERM-WRITE"),
        ("iteration/reject_iteration_contract_post.c", "Failed", ""),
    ];
    let paths: Vec<PathBuf> = cases.iter().map(|(f, _, _)| PathBuf::from(fixture(f))).collect();
    for ((f, want, code), (verdict, report)) in cases.iter().zip(verify(&paths)) {
        assert_eq!(verdict, *want, "{f}:\n{report:#}");
        if !code.is_empty() {
            assert_eq!(report["diagnostics"][0]["code"], *code, "{f}:\n{report:#}");
        }
    }
    // VerCors' own: a loop zeroing part of an array, and one over a pointer argument.
    let peer = common::root().join("../shared/peer/vercors-v1.4.1");
    let paths =
        [peer.join("carp/zero-sub-array.c"), peer.join("basic/par-pointer-simplification.c")];
    for (p, (verdict, report)) in paths.iter().zip(verify(&paths)) {
        assert_eq!(verdict, "Verified", "{}:\n{report:#}", p.display());
    }

    // The interpreter runs the iterations as threads with their contracts.
    let ok = fixture("iteration/ok_iteration_contract.c");
    let (code, out, err) = run_cli(&["run", &ok]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("races pass") && out.contains("contracts pass"), "{out}");
    let bad = fixture("iteration/reject_iteration_contract_neighbour.c");
    let (code, out, err) = run_cli(&["run", &bad]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(format!("{out}{err}").contains("R-PERM-WRITE"), "{out}{err}");

    // A loop that is not a counted range cannot be a parallel block: refused, never run as a
    // sequential loop that ignores its contract.
    let step = fixture("iteration/unsupported_iteration_contract_step.c");
    let (code, _, err) = run_cli(&["verify", &step]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("A0014") && err.contains("iteration contract"), "{err}");

    // The optimizations say why they do not take the loop.
    let (code, _, err) =
        run_cli(&["apply", "--opt", "unroll", "--factor", "2", "--at", "line:11", &ok]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("A0005") && err.contains("iteration contract"), "{err}");
}

/// A failure in a clause the encoder lifts from a kernel's threads to the whole kernel (a node
/// with no text of its own) is shown at that clause, not at line 1 of the file.
#[test]
fn a_failure_in_a_lifted_kernel_clause_points_at_the_clause() {
    let d = common::tmpdir("cuda_front", "lifted");
    let k = d.join("k.cu");
    // No `x != NULL`: the cells of the permission are not well-defined.
    let text = "#include <cuda.h>\n\n/*@\n  context_everywhere blockDim.x == 4 && gridDim.x == 1;\n  context (\\forall* int i; 0 <= i && i < 2; Perm(x[threadIdx.x + i], write));\n@*/\n__global__ void k(int *x) {\n  x[threadIdx.x] = 1;\n}\n";
    std::fs::write(&k, text).expect("writable");
    let reports = common::verify_json(&[], &[k]);
    let ds = reports[0]["diagnostics"].as_array().expect("diagnostics");
    assert!(!ds.is_empty(), "{:#}", reports[0]);
    for diag in ds {
        let spans = diag["spans"].as_array().expect("spans");
        let primary = spans.iter().find(|s| s["primary"] == true);
        let line = primary.and_then(|s| s["line"].as_u64());
        assert_eq!(line, Some(5), "{diag:#}");
    }
}

/// A launch whose grid may be empty fails at the launch, and says that the kernel's
/// precondition includes non-empty launch sizes (CUDA runs no kernel on an empty grid).
#[test]
fn an_empty_grid_is_reported_at_the_launch() {
    let f = common::root().join("fixtures/cuda/kernels/host_iota_bad_grid.cu");
    let reports = common::verify_json(&[], &[f]);
    let d = &reports[0]["diagnostics"][0];
    assert_eq!(d["code"], "V-PRE", "{:#}", reports[0]);
    let message = d["message"].as_str().unwrap_or_default();
    assert!(message.contains("launch") && message.contains("empty"), "{d:#}");
    let line = d["spans"].as_array().and_then(|s| s.iter().find(|s| s["primary"] == true));
    assert_eq!(line.and_then(|s| s["line"].as_u64()), Some(26), "{d:#}");
}

/// `verify` chooses the language of a file by its extension, as VerCors does: a `.c` file with
/// neither annotation nor directive is C (`int inline;` is invalid C, an Error in VerCors'
/// `technical/keywords/disallowed-c-inline.c`), while the same text in a `.pvl` file is a PVL
/// top-level method whose local is named `inline`.
#[test]
fn the_extension_chooses_c_for_verification() {
    let dir = common::tmpdir("cuda_front", "extension");
    let text = "void test() {\n  int inline;\n}\n";
    let c = dir.join("inline.c");
    let pvl = dir.join("inline.pvl");
    std::fs::write(&c, text).expect("write");
    std::fs::write(&pvl, text).expect("write");
    let reports = verify(&[c.clone(), pvl.clone()]);
    let (verdict, report) = &reports[0];
    assert_eq!(verdict, "Unsupported", "{report:#}");
    assert_eq!(report["diagnostics"][0]["code"], "A0001", "{report:#}");
    assert_eq!(reports[1].0, "Verified", "{:#}", reports[1].1);
}

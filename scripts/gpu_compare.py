#!/usr/bin/env python3
"""Run an original and an optimized CUDA kernel file on a real GPU and compare them.

    scripts/gpu_compare.py ORIG.cu OPT.cu HARNESS.cu [--arch sm_90] [--runs 5] [--rtol 1e-5]
    scripts/gpu_compare.py ORIG.cu OPT.cu HARNESS.cu --compile-only   # no GPU needed

Both kernel files are compiled with the same harness into two executables (nvcc -O3
-arch=sm_90 for H100/H200), each is run --runs times, alternately, and the script reports
whether their outputs agree and the ratio of their median kernel times (orig / opt: above 1
means the optimized kernel is faster).

The harness is a .cu file with a main() that includes the kernel file through the macro
KERNEL_FILE, which the script defines as the quoted path of ORIG or OPT:

    #include <cstdio>
    #include KERNEL_FILE          // the kernels under test, with their names unchanged
    int main() {
      // 1. inputs: deterministic (a formula or a fixed seed), the same in both builds
      // 2. one warm-up launch, then time several launches with cudaEvent_t
      // 3. print one line `alpine-time-ms: <milliseconds per launch>`
      // 4. print the outputs: numbers separated by white space, on any number of lines
      // exit non-zero on a CUDA error (check every cudaError_t)
    }

scripts/gpu_compare_harness.cu is a complete example for fixtures/cuda/ptx_smoke.cu. Outputs are
compared token by token: integers and other words exactly, numbers with a decimal point or an
exponent within --rtol (relative) or --atol (absolute). Every run of one executable must print
the same outputs too, which catches races that the comparison alone could miss.

nvcc: --nvcc, else $ALPINE_RS_NVCC, else the one `alpine-rs backend install --cuda` puts in the
cache ($ALPINE_RS_CACHE, $XDG_CACHE_HOME/alpine-rs or ~/.cache/alpine-rs, then cuda/bin/nvcc),
else nvcc on PATH; the same order as alpine-rs itself. g++ must be installed. The executables
link the CUDA runtime statically (libcudart_static.a, which the runtime wheel ships), so they
need no CUDA library at run time, only the GPU driver; the pip toolchain is CUDA 13, which needs a
driver of the 580 series or newer. With an older driver, set ALPINE_RS_NVCC to the machine's own
nvcc.

Exit codes: 0 outputs agree; 1 they differ (or a build is not deterministic); 2 bad arguments or
a file that does not compile; 3 no toolchain, or an executable that cannot run (no GPU, driver
too old).
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

TIME_RE = re.compile(r"^alpine-time-ms:\s*([0-9.eE+-]+)\s*$")
FLOAT_RE = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$|^[+-]?(inf|nan)$", re.I)


def find_nvcc(explicit):
    if explicit:
        return explicit
    if os.environ.get("ALPINE_RS_NVCC"):
        return os.environ["ALPINE_RS_NVCC"]
    if os.environ.get("ALPINE_RS_CACHE"):
        cache = Path(os.environ["ALPINE_RS_CACHE"])
    elif os.environ.get("XDG_CACHE_HOME"):
        cache = Path(os.environ["XDG_CACHE_HOME"]) / "alpine-rs"
    else:
        cache = Path.home() / ".cache" / "alpine-rs"
    cached = cache / "cuda" / "bin" / "nvcc"
    if cached.exists():
        return str(cached)
    return shutil.which("nvcc")


def fail(code, msg):
    print(f"gpu_compare: {msg}", file=sys.stderr)
    sys.exit(code)


def compile_exe(nvcc, arch, harness, kernel, out, extra):
    # The quotes are part of the macro's value: `#include KERNEL_FILE` needs a string literal.
    cmd = [nvcc, "-O3", f"-arch={arch}", f'-DKERNEL_FILE="{kernel.resolve()}"']
    cmd += extra + [str(harness), "-o", str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        fail(2, f"{kernel} does not compile with {harness}:\n{res.stdout}{res.stderr}")
    return " ".join(cmd)


def run_exe(exe, timeout):
    try:
        res = subprocess.run([str(exe)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        fail(3, f"{exe.name} did not finish within {timeout} s")
    if res.returncode != 0:
        fail(3, f"{exe.name} failed (exit {res.returncode}; no GPU, or a driver too old for "
                f"this CUDA?):\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
    times, tokens = [], []
    for line in res.stdout.splitlines():
        m = TIME_RE.match(line.strip())
        if m:
            times.append(float(m.group(1)))
        else:
            tokens.extend(line.split())
    if len(times) != 1:
        fail(2, f"{exe.name} printed {len(times)} `alpine-time-ms:` lines; the harness must "
                f"print exactly one")
    return times[0], tokens


def same(a, b, rtol, atol):
    if a == b:
        return True
    if FLOAT_RE.match(a) and FLOAT_RE.match(b) and ("." in a + b or "e" in (a + b).lower()):
        x, y = float(a), float(b)
        return abs(x - y) <= atol + rtol * max(abs(x), abs(y))
    return False


def first_difference(xs, ys, rtol, atol):
    """Index of the first token that differs, or None; a length difference counts."""
    for i, (a, b) in enumerate(zip(xs, ys)):
        if not same(a, b, rtol, atol):
            return i
    return None if len(xs) == len(ys) else min(len(xs), len(ys))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("orig", type=Path)
    p.add_argument("opt", type=Path)
    p.add_argument("harness", type=Path)
    p.add_argument("--arch", default="sm_90", help="GPU architecture (sm_90: H100, H200)")
    p.add_argument("--runs", type=int, default=5, help="runs of each executable")
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--atol", type=float, default=1e-8)
    p.add_argument("--timeout", type=int, default=120, help="seconds per run")
    p.add_argument("--nvcc", help="the nvcc to use")
    p.add_argument("--keep", type=Path, help="build the executables in this folder and keep them")
    p.add_argument("--compile-only", action="store_true", help="build, do not run (no GPU)")
    p.add_argument("--nvcc-arg", dest="extra", action="append", default=[],
                   help="extra nvcc argument, e.g. --nvcc-arg=-DN=4096 (repeatable)")
    a = p.parse_args()
    for f in (a.orig, a.opt, a.harness):
        if not f.is_file():
            fail(2, f"{f}: no such file")
    nvcc = find_nvcc(a.nvcc)
    if not nvcc:
        fail(3, "nvcc not found: run `alpine-rs backend install --cuda`, or set ALPINE_RS_NVCC")

    work = a.keep or Path(tempfile.mkdtemp(prefix="alpine-gpu-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        exes = {}
        for tag, kernel in (("orig", a.orig), ("opt", a.opt)):
            exes[tag] = work / tag
            cmd = compile_exe(nvcc, a.arch, a.harness, kernel, exes[tag], a.extra)
            print(f"built {tag}: {cmd}")
        if a.compile_only:
            return 0
        times = {"orig": [], "opt": []}
        outputs = {"orig": None, "opt": None}
        # Alternating runs spread clock and temperature drift over both kernels alike.
        for _ in range(a.runs):
            for tag in ("orig", "opt"):
                t, toks = run_exe(exes[tag], a.timeout)
                times[tag].append(t)
                if outputs[tag] is None:
                    outputs[tag] = toks
                elif first_difference(outputs[tag], toks, a.rtol, a.atol) is not None:
                    print(f"{tag}: two runs printed different outputs (a race?)")
                    return 1
        i = first_difference(outputs["orig"], outputs["opt"], a.rtol, a.atol)
        if i is not None:
            o, q = outputs["orig"], outputs["opt"]
            show = lambda xs: xs[i] if i < len(xs) else "<end>"  # noqa: E731
            print(f"outputs DIFFER at value {i}: orig {show(o)}, opt {show(q)} "
                  f"({len(o)} and {len(q)} values)")
            return 1
        mo, mq = statistics.median(times["orig"]), statistics.median(times["opt"])
        print(f"outputs agree ({len(outputs['orig'])} values, rtol {a.rtol})")
        print(f"time per launch, median of {a.runs}: orig {mo:.4f} ms, opt {mq:.4f} ms")
        ratio = mo / mq if mq > 0 else float("inf")
        print(f"ratio orig/opt: {ratio:.3f}x ({'faster' if ratio > 1 else 'not faster'})")
        return 0
    finally:
        if a.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

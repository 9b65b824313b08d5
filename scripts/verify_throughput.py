#!/usr/bin/env python3
"""Verification throughput on the corpus: one JVM per file against one JVM for all.

Verifies every .pvl under the corpus (recursively), with --no-cache, in one run:

  per-file   `alpine-rs verify --no-cache FILE` once per file, one after the other: a fresh
             Silicon JVM for each file (what `verify a b c` did before it shared one JVM);
  jobs=1     `alpine-rs verify --no-cache --jobs 1 FILE...`: one JVM, one file at a time
             (with --jobs1; separates what JVM reuse and concurrency each bring);
  jobs=N     `alpine-rs verify --no-cache --jobs N FILE...`: one JVM, N files at a time.

and prints files per second for each and the ratios. It also checks that every way gives each
file the same verdict and the same diagnostics (time fields aside): concurrency must not change a
result. Exit status 1 if any differ.

Usage: scripts/verify_throughput.py [--bin target/release/alpine-rs] [--corpus ../shared/corpus]
                                    [--jobs N] [--jobs1] [--limit K] [--json OUT]
Needs the backend (`alpine-rs backend install`).
"""

import argparse
import json
import os
import subprocess
import sys
import time


def corpus_files(root):
    out = []
    for d, _, names in os.walk(root):
        out.extend(os.path.join(d, n) for n in names if n.endswith(".pvl"))
    return sorted(out)


def strip_times(report):
    """A file's JSON report without what legitimately varies between runs."""
    r = dict(report)
    r.pop("time_ms", None)
    return r


def run_verify(binary, files, extra):
    """Runs one `verify` over `files`; returns (seconds, reports by file, exit code)."""
    cmd = [binary, "verify", "--no-cache", "--format", "json", *extra, *files]
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    secs = time.monotonic() - t0
    try:
        reports = json.loads(p.stdout)
    except json.JSONDecodeError:
        sys.exit(f"no JSON from {' '.join(cmd[:6])} …: {p.stderr[-2000:]}")
    return secs, {r["file"]: strip_times(r) for r in reports}, p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="target/release/alpine-rs")
    ap.add_argument("--corpus", default="../shared/corpus")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--jobs1", action="store_true", help="also time one JVM with --jobs 1")
    ap.add_argument("--limit", type=int, default=0, help="only the first K files")
    ap.add_argument("--json", help="write the figures and reports here")
    a = ap.parse_args()

    files = corpus_files(a.corpus)
    if a.limit:
        files = files[: a.limit]
    if not files:
        sys.exit(f"no .pvl files under {a.corpus}")
    n = len(files)
    print(f"{n} files under {a.corpus}; {a.bin}; {os.cpu_count()} cores", flush=True)

    ways = {}
    # One JVM per file: one process per file, one after the other.
    t0 = time.monotonic()
    per_file = {}
    codes = []
    for f in files:
        _, reps, code = run_verify(a.bin, [f], [])
        per_file.update(reps)
        codes.append(code)
    ways["per-file"] = (time.monotonic() - t0, per_file)
    print(f"  per-file done: {ways['per-file'][0]:.1f} s", flush=True)
    if a.jobs1:
        secs, reps, _ = run_verify(a.bin, files, ["--jobs", "1"])
        ways["jobs=1"] = (secs, reps)
        print(f"  jobs=1 done: {secs:.1f} s", flush=True)
    secs, reps, _ = run_verify(a.bin, files, ["--jobs", str(a.jobs)])
    ways[f"jobs={a.jobs}"] = (secs, reps)

    verdicts = {}
    for r in per_file.values():
        verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
    print(f"verdicts (per-file): {verdicts}")
    base = ways["per-file"][0]
    figures = {}
    for name, (secs, _) in ways.items():
        figures[name] = {"seconds": round(secs, 2), "files_per_s": round(n / secs, 4)}
        print(
            f"{name:>9}: {secs:8.1f} s  {n / secs:7.3f} files/s  "
            f"({base / secs:.2f}x the per-file rate)"
        )

    diffs = []
    for name, (_, reps) in ways.items():
        for f in files:
            if reps.get(f) != per_file.get(f):
                diffs.append((name, f))
    for name, f in diffs:
        print(f"DIFFERENT: {f} ({name} vs per-file)")
        print(f"  per-file: {json.dumps(per_file.get(f))[:600]}")
        print(f"  {name}: {json.dumps(ways[name][1].get(f))[:600]}")
    if not diffs:
        print("every way gave every file the same verdict and diagnostics")
    if a.json:
        with open(a.json, "w") as out:
            json.dump({"files": n, "figures": figures, "per_file": per_file,
                       "diffs": diffs}, out, indent=1)
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())

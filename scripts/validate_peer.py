#!/usr/bin/env python3
"""`validate F F` on every Pass row of the peer suite (issue 21's self-check over real code).

For each file that ../shared/peer/verdicts.tsv lists with VerCors' verdict Pass, runs
`alpine-rs validate F F` with the other files of its program as `--with` (alone when the group
does not form one program: manual/permissions.pvl belongs to several cases whose classes clash),
and prints one row per file: the exit code and, for a file not judged equivalent, the rows that
say why. Ends with the count judged (exit 0) of all, overall and without VeyMont's folder.

Usage: scripts/validate_peer.py [--bin target/release/alpine-rs] [--peer ../shared/peer]
                                [--filter TEXT] [--timeout S]
Slow (about 10 minutes on 2 cores): every method of every file runs 20 inputs.
"""

import argparse
import subprocess
import sys
from pathlib import Path


def run(bin_, path, others, timeout):
    cmd = [bin_, "validate", str(path), str(path)]
    for o in others:
        cmd += ["--with", str(o)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 3, "timed out"
    return p.returncode, p.stdout + p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/alpine-rs")
    ap.add_argument("--peer", default="../shared/peer")
    ap.add_argument("--filter", default="")
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args()
    peer = Path(a.peer)
    root = peer / "vercors-v1.4.1"
    rows = []
    for line in (peer / "verdicts.tsv").read_text().splitlines():
        cols = line.split("\t")
        if len(cols) < 2 or cols[1] != "Pass" or a.filter not in cols[0]:
            continue
        others = [root / o for o in (cols[3].split() if len(cols) > 3 else [])]
        code, out = run(a.bin, root / cols[0], others, a.timeout)
        if code == 2 and others:
            code, out = run(a.bin, root / cols[0], [], a.timeout)
        why = [l for l in out.splitlines() if "inconclusive" in l or "differs" in l or "error[" in l]
        rows.append((cols[0], code))
        print(f"{cols[0]}\t{code}\t{' | '.join(w.strip()[:200] for w in why[:3])}", flush=True)
    judged = sum(1 for _, c in rows if c == 0)
    non_vey = [(f, c) for f, c in rows if not f.startswith("veymont")]
    nv = sum(1 for _, c in non_vey if c == 0)
    print(f"judged equivalent: {judged}/{len(rows)}; without veymont-global-programs: {nv}/{len(non_vey)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

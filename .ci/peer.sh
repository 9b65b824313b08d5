#!/usr/bin/env bash
# Run `alpine-rs verify` over one of VerCors' example suites and print one row per program: file,
# VerCors' verdict, our exit code, seconds, our first diagnostic.
# Usage: [SUITE=dev] .ci/peer.sh [REGEX] > out.tsv   (REGEX filters the file column; BIN=path
# overrides the binary, JOBS=n the parallelism). Agreement: Pass↔0, Fail↔1, Error↔2.
# SUITE unset: ../shared/peer/verdicts.tsv (v1.4.1). A file of a case that spans several files is
# verified with the other files of its program, as one program (`verify --program`): the program
# of the row's first case (a file listed in several cases, manual/permissions.pvl, is also a case
# on its own, which its verdict is about).
# SUITE=dev: ../shared/peer/dev-verdicts.tsv (VerCors 2 at dev), whose fourth column lists the
# other files of the row's program.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$PWD/target/release/alpine-rs}
ROOT=${PEER:-$PWD/../shared/peer}
SUITE=${SUITE:-v1}
if [ "$SUITE" = dev ]; then TABLE=dev-verdicts.tsv BASE=vercors-dev; else TABLE=verdicts.tsv BASE=vercors-v1.4.1; fi
export BIN ROOT SUITE TABLE BASE
one() {
  IFS=$'\t' read -r file expected cases group <<< "$1"
  local files=("$ROOT/$BASE/$file") program=() g
  if [ "$SUITE" = dev ]; then
    for g in $group; do files+=("$ROOT/$BASE/$g"); done
  else
    local first=${cases%% *}
    if [ -n "$first" ]; then
      for g in $(grep -v '^#' "$ROOT/$TABLE" | awk -F'\t' -v c="$first" -v f="$file" \
        '$1 != f { n = split($3, a, " "); for (i = 1; i <= n; i++) if (a[i] == c) print $1 }'); do
        files+=("$ROOT/$BASE/$g")
      done
    fi
  fi
  [ "${#files[@]}" -gt 1 ] && program=(--program)
  local start end out code first
  start=$(date +%s%N)
  out=$(timeout 150 "$BIN" verify --timeout 60 "${program[@]}" "${files[@]}" 2>&1); code=$?
  end=$(date +%s%N)
  first=$(grep -m1 -oE '(error|warning)\[[A-Z0-9-]+\][^│]*' <<< "$out" | head -c 160)
  local key=$file
  for g in $group; do key+=" +$g"; done
  printf '%s\t%s\t%s\t%d.%d\t%s\n' "$key" "$expected" "$code" $(((end-start)/1000000000)) $((((end-start)/100000000)%10)) "$first"
}
export -f one
grep -v '^#' "$ROOT/$TABLE" | grep -E -- "^${1:-.}" | tr '\n' '\0' | xargs -0 -P"${JOBS:-2}" -I{} bash -c 'one "$@"' _ {} | sort

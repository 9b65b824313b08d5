#!/usr/bin/env bash
# Verification time per file of two alpine-rs binaries, run alternately on the same files (the
# order of the two flips from file to file), without the result cache: one line per file (file,
# seconds with OLD, seconds with NEW, NEW/OLD) and the median ratio last.
# Usage: scripts/verify_ratio.sh OLD_BIN NEW_BIN FILE...   (a verdict that differs is flagged)
set -uo pipefail
old=$1 new=$2; shift 2
ratios=()
flip=0
secs() { # BIN FILE -> "seconds exit"
  local s e code
  s=$(date +%s%N); "$1" verify --no-cache --timeout 120 "$2" >/dev/null 2>&1; code=$?; e=$(date +%s%N)
  echo "$(( (e - s) / 1000000 )) $code"
}
for f in "$@"; do
  if [ $flip -eq 0 ]; then read -r to co < <(secs "$old" "$f"); read -r tn cn < <(secs "$new" "$f")
  else read -r tn cn < <(secs "$new" "$f"); read -r to co < <(secs "$old" "$f"); fi
  flip=$((1 - flip))
  r=$(awk -v a="$to" -v b="$tn" 'BEGIN { printf "%.3f", b / a }')
  flag=""; [ "$co" != "$cn" ] && flag="  verdict $co -> $cn"
  awk -v f="$f" -v a="$to" -v b="$tn" -v r="$r" -v x="$flag" 'BEGIN { printf "%s\t%.1f\t%.1f\t%s%s\n", f, a / 1000, b / 1000, r, x }'
  ratios+=("$r")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "median NEW/OLD over %d files: %.3f\n", NR, m }'

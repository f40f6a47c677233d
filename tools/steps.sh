#!/usr/bin/env bash
# tools/steps.sh STEP...: runs `make STEP` for each step in order, stops at the first that
# fails, and prints a table of each step's wall time (also when one failed), so that a slow
# or a failing step is named at the end of a long log. `make test` runs its steps so.
set -uo pipefail
cd "$(dirname "$0")/.."

make_cmd=${MAKE:-make}
names=()
times=()
results=()
# Microseconds since the epoch, from bash itself (no bc, no date forks).
now_us() { echo "${EPOCHREALTIME/./}"; }
seconds_since() { local us=$(( $(now_us) - $1 )); printf '%d.%d' $((us / 1000000)) $(((us % 1000000) / 100000)); }
suite_started=$(now_us)
failed=""

for step in "$@"; do
  echo "=== $step" >&2
  started=$(now_us)
  "$make_cmd" --no-print-directory "$step"
  rc=$?
  names+=("$step")
  times+=("$(seconds_since "$started")")
  if [ "$rc" -ne 0 ]; then
    results+=("FAILED ($rc)")
    failed=$step
    break
  fi
  results+=("ok")
done

total=$(seconds_since "$suite_started")
{
  echo
  echo "== make test: wall time per step =="
  printf '  %-18s %9s  %s\n' step seconds result
  for i in "${!names[@]}"; do
    printf '  %-18s %9s  %s\n' "${names[$i]}" "${times[$i]}" "${results[$i]}"
  done
  printf '  %-18s %9s\n' total "$total"
} >&2
if [ -n "$failed" ]; then
  echo "make test: $failed failed" >&2
  exit 1
fi

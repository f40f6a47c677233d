#!/usr/bin/env bash
# tools/steps.sh --first "S..." --side "B..." --tests "T[:N,...]..." [--waiting "T[:N,...]..."]:
# how `make test` runs.
#
# Lanes, each a sequence of `make STEP`s. First the --first steps (setup), then the side lane
# (the artifacts, in the order the tests need them, then suites that need no other artifact; `A|B`
# builds two at once) runs
# in the background while the test lane runs its steps in order, and the waiting lane (suites that
# mostly wait: for session expiries, for servers they restart) runs beside both once the secured
# servers are up; `T:N,M` waits until steps N and M (of any lane) have finished. Most of a test's time is spent waiting for ZooKeeper, so the
# next artifact's compilation overlaps it: the suite is as long as the tests, not as the builds
# plus the tests. Every test is meant to pass on a loaded machine.
#
# Stops at the first failing step (a failed side step fails the run as soon as the test lane
# sees it) and prints a table of every step's start and wall time, also when one failed.
set -uo pipefail
cd "$(dirname "$0")/.."

first=() side=() side_entries=() tests=() waiting=()
while [ $# -gt 0 ]; do
  case "$1" in
    --first) read -ra first <<<"$2"; shift 2 ;;
    --side) read -ra side_entries <<<"$2"; read -ra side <<<"${2//|/ }"; shift 2 ;;
    --tests) read -ra tests <<<"$2"; shift 2 ;;
    --waiting) read -ra waiting <<<"$2"; shift 2 ;;
    *) echo "usage: tools/steps.sh --first 'S...' --side 'B...' --tests 'T[:B]...'" >&2; exit 2 ;;
  esac
done

make_cmd=${MAKE:-make}
lane_dir=target/steps
rm -rf "$lane_dir" && mkdir -p "$lane_dir"

# Microseconds since the epoch, from bash itself (no bc, no date forks).
now_us() { echo "${EPOCHREALTIME/./}"; }
tenths() { printf '%d.%d' $(($1 / 1000000)) $((($1 % 1000000) / 100000)); }
suite_started=$(now_us)

# Seconds of CPU, from the children line of bash's `times` ("0m12.345s 0m1.234s").
cpu_seconds() {
  local user sys
  read -r user sys
  awk -v u="$user" -v s="$sys" 'function sec(t) { split(t, p, "m"); sub("s", "", p[2]); return p[1] * 60 + p[2] }
    BEGIN { printf "%d", sec(u) + sec(s) }'
}

# run_step LANE STEP: `make STEP`, recording start, duration, status and the CPU seconds its
# processes used in target/steps/STEP (the machine has two cores: CPU, not waiting, is what
# the suite's length is made of).
run_step() {
  local lane=$1 step=$2 started rc cpu
  started=$(now_us)
  echo "=== [$lane] $step" >&2
  # `times` in the subshell that ran make: its children line is make's (a `times` in a pipe or
  # a command substitution would report that new subshell's, none).
  # The step's output also goes to target/steps/STEP.log: a failure's reasons are printed again
  # after the table (CI keeps only the end of the output).
  (
    "$make_cmd" --no-print-directory "$step" 2>&1 | tee "$lane_dir/$step.log"
    rc=${PIPESTATUS[0]}
    times >"$lane_dir/.$step.times"
    exit "$rc"
  )
  rc=$?
  cpu=$(tail -1 "$lane_dir/.$step.times" 2>/dev/null | cpu_seconds)
  echo "$lane $((started - suite_started)) $(($(now_us) - started)) $rc ${cpu:-0}" >"$lane_dir/$step"
  [ "$rc" -eq 0 ] || echo "=== [$lane] $step FAILED ($rc)" >&2
  return "$rc"
}

table() {
  {
    echo
    echo "== make test: wall time per step (the side lane runs beside the tests) =="
    printf '  %-20s %-6s %8s %8s %8s  %s\n' step lane 'start s' seconds 'cpu s' result
    local step lane start took rc cpu total_cpu=0
    for step in "${first[@]}" "${side[@]}" "${tests[@]%%:*}" "${waiting[@]%%:*}"; do
      [ -f "$lane_dir/$step" ] || continue
      read -r lane start took rc cpu <"$lane_dir/$step"
      total_cpu=$((total_cpu + cpu))
      printf '  %-20s %-6s %8s %8s %8s  %s\n' "$step" "$lane" "$(tenths "$start")" "$(tenths "$took")" "$cpu" \
        "$([ "$rc" -eq 0 ] && echo ok || echo "FAILED ($rc)")"
    done
    printf '  %-20s %-6s %8s %8s %8s\n' total '' '' "$(tenths $(($(now_us) - suite_started)))" "$total_cpu"
    for step in "${first[@]}" "${side[@]}" "${tests[@]%%:*}" "${waiting[@]%%:*}"; do
      [ -f "$lane_dir/$step" ] || continue
      read -r _ _ _ rc _ <"$lane_dir/$step"
      [ "$rc" -eq 0 ] && continue
      echo "== why $step failed (the last matching lines of $lane_dir/$step.log) =="
      grep -a -E 'FAIL|Fail|ERROR|Error|error:|panicked|not ok|Exception|Assertion|did not|crash|terminated|Killed' \
        "$lane_dir/$step.log" 2>/dev/null | grep -v -E '^\s*at ' | cut -c1-240 | tail -20
    done
  } >&2
}

# The secured servers (tests/with-secure-zk) once for every suite, as soon as the harness is
# built: each suite starting its own three JVMs and a KDC cost more than a minute in all.
secure_started=false
start_secure() {
  $secure_started && return 0
  [ -x target/debug/zk-harness ] || return 0
  secure_started=true
  coproc SECURE { exec target/debug/zk-harness serve --secure; }
  local line
  while read -r -t 240 line <&"${SECURE[0]}"; do
    case "$line" in
      ZK_CONNECT=*) export ZK_SECURE_PLAIN_CONNECT=${line#*=}; break ;;
      ZK_*=*) export "${line%%=*}=${line#*=}" ;;
    esac
  done
  [ -n "${ZK_SECURE_PLAIN_CONNECT:-}" ] || fail "the secured servers did not start"
  KRB5_CONFIG=$ZK_KRB5_CONFIG KRB5_CLIENT_KTNAME=$ZK_KRB5_KEYTAB
  KRB5CCNAME=FILE:$(mktemp -u "${TMPDIR:-/tmp}/zkrecipes-ccache.XXXXXX")
  export KRB5_CONFIG KRB5_CLIENT_KTNAME KRB5CCNAME
}

stop_secure() {
  $secure_started || return 0
  rm -f "${KRB5CCNAME#FILE:}"
  [ -n "${SECURE[1]:-}" ] && eval "exec ${SECURE[1]}>&-"
  wait "${SECURE_PID:-}" 2>/dev/null || true
}

fail() {
  echo "make test: $1" >&2
  stop_secure
  [ -n "${builder:-}" ] && kill -- -"$builder" 2>/dev/null
  [ -n "${waiter:-}" ] && kill -- -"$waiter" 2>/dev/null
  wait 2>/dev/null
  table
  exit 1
}

for step in "${first[@]}"; do
  run_step first "$step" || fail "$step failed"
done

# The side lane, in a process group of its own so that a failing test can stop it.
set -m
(
  for entry in "${side_entries[@]}"; do
    # `A|B`: built at once (different cargo profiles lock different directories), each its own step.
    steps=(${entry//|/ })
    if [ ${#steps[@]} -eq 1 ]; then
      run_step side "$entry" || exit 1
      continue
    fi
    pids=()
    for step in "${steps[@]}"; do
      run_step side "$step" &
      pids+=($!)
    done
    for pid in "${pids[@]}"; do
      wait "$pid" || exit 1
    done
  done
) &
builder=$!
set +m

# A step of the side or waiting lane that failed fails the run now, not when a test needs it.
check_side() {
  local step lane rc
  for step in "${side[@]}" "${waiting[@]%%:*}"; do
    [ -f "$lane_dir/$step" ] || continue
    read -r lane _ _ rc _ <"$lane_dir/$step"
    [ "$rc" -eq 0 ] || fail "$step failed"
  done
}

# Waits until every step of the comma-separated list has finished; 1 if one failed (said), 2 if
# the lane that runs it ended first.
wait_for() {
  local needs=$1 need rc
  for need in ${needs//,/ }; do
    while [ ! -f "$lane_dir/$need" ]; do
      # The lane that runs it is gone without it: a failure elsewhere (said there).
      lane_alive_for "$need" || [ -f "$lane_dir/$need" ] || return 2
      sleep 0.2
    done
    read -r _ _ _ rc _ <"$lane_dir/$need"
    [ "$rc" -eq 0 ] || return 1
  done
}

lane_alive_for() {
  local step
  for step in "${waiting[@]%%:*}"; do
    [ "$step" = "$1" ] && { kill -0 "${waiter:-0}" 2>/dev/null; return; }
  done
  for step in "${tests[@]%%:*}"; do
    [ "$step" = "$1" ] && return 0
  done
  kill -0 "$builder" 2>/dev/null
}

# The waiting lane, in a process group of its own, started with the secured servers' variables.
start_waiting() {
  [ ${#waiting[@]} -gt 0 ] && [ -z "${waiter:-}" ] || return 0
  set -m
  (
    for entry in "${waiting[@]}"; do
      step=${entry%%:*}
      [ "$entry" != "$step" ] && { wait_for "${entry#*:}" || exit 1; }
      run_step wait "$step" || exit 1
    done
  ) &
  waiter=$!
  set +m
}

for entry in "${tests[@]}"; do
  check_side
  step=${entry%%:*}
  if [ "$entry" != "$step" ]; then
    wait_for "${entry#*:}"
    case $? in
      1) fail "${entry#*:} failed (needed by $step)" ;;
      2) check_side; fail "a lane ended before ${entry#*:} (needed by $step)" ;;
    esac
  fi
  [ -f "$lane_dir/harness" ] && start_secure && start_waiting
  run_step test "$step" || fail "$step failed"
done

if [ -n "${waiter:-}" ]; then
  wait "$waiter" || { check_side; fail "a waiting step failed"; }
fi
wait "$builder" || fail "a side step failed"
stop_secure
table

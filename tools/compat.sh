#!/usr/bin/env bash
# The server-version lane: each recipe against each ZooKeeper release, on a standalone server
# of that release from Maven Central jars (the harness's ZK_VERSION).
#
#   tools/compat.sh [--full | --rotate] [VERSION...]
#
# Default: one test per recipe (the core's own, run as written) on 3.5.10, 3.6.4, 3.7.2, 3.8.4
# and 3.9.5 (`make compat`). --full runs every test of each recipe's test module instead
# (`make compat-full`). --rotate runs
# one older release, a different one each day of the year (`make test`'s short form; the suite
# runs 3.9 throughout). Prints a table of version x recipe (ok, FAIL) and, for a failure, where
# its output is; exits 1 if any failed. COMPAT_CARGO: the packages and features of the test
# build (default `-p zkrecipes`; `make test` passes its own, so nothing is built again).
set -uo pipefail
cd "$(dirname "$0")/.."

OLDER=(3.5.10 3.6.4 3.7.2 3.8.4)
full=0
rotate=0
case "${1:-}" in
  --full) full=1; shift ;;
  --rotate) rotate=1; shift ;;
esac
versions=("$@")
if [ $rotate -eq 1 ]; then
  day=$(date -u +%j)
  versions=("${OLDER[$(( 10#$day % ${#OLDER[@]} ))]}")
fi
# Rows whose test bounds a cost (requests per item, consumers' shares): true on a quiet machine,
# as `make compat` runs, not beside `make test`'s builds (the split-backlog row failed so once:
# one consumer starved of CPU took 82 items of 2,000). --rotate leaves them to `make compat`.
QUIET_ONLY="queue, consumers splitting a backlog"
[ ${#versions[@]} -gt 0 ] || versions=("${OLDER[@]}" 3.9.5)
read -r -a cargo_args <<<"${COMPAT_CARGO:--p zkrecipes}"

# recipe | test module (core/tests/recipes) | the test of it that shows the recipe working
ALL_RECIPES=(
  "lock|write_lock|twenty_contenders_never_overlap_and_tokens_strictly_increase"
  "read/write lock|read_write_lock|readers_share_and_a_writer_waits_for_them"
  "multi-lock|multi_lock|all_or_none_and_a_failed_try_leaves_nothing"
  "queue, several consumers|queue|concurrent_consumers_get_each_item_exactly_once"
  "queue, consumers splitting a backlog|queue_consumers|four_consumers_split_the_backlog_at_three_requests_per_item_at_most"
  "work queue|work_queue|concurrent_consumers_deliver_every_item_and_ack_each_once"
  "election|election|three_members_elect_one_leader_with_apache_event_order_and_hand_over_on_stop"
  "semaphore|semaphore|at_most_max_leases_and_a_release_lets_a_waiter_in"
  "leader latch|latch|one_leader_and_the_next_takes_over_with_a_higher_token"
  "barrier|barrier|a_barrier_holds_waiters_until_removed"
  "double barrier|barrier|members_enter_only_together_and_leave_together"
  "atomic long|counter|increments_from_many_clients_end_at_exactly_their_number"
  "shared count|shared_count|a_count_is_seeded_once_followed_everywhere_and_written_by_version"
  "node, children and tree caches|cache|a_cache_follows_changes_on_any_server_and_a_refusal_costs_one_reconnect"
  "group member|group|members_see_each_other_join_change_and_leave_and_an_expired_member_joins_again"
  "persistent node|group|a_persistent_node_comes_back_after_a_delete_with_its_latest_data"
)
RECIPES=()
for row in "${ALL_RECIPES[@]}"; do
  [ $rotate -eq 1 ] && [ "${row%%|*}" = "$QUIET_ONLY" ] && continue
  RECIPES+=("$row")
done

out=target/compat
rm -rf "$out" && mkdir -p "$out"
cargo build --quiet -p zk-harness || exit 1
modules=$(printf '%s\n' "${RECIPES[@]}" | cut -d'|' -f2 | sort -u)
# Built once, before any server runs.
cargo test --quiet "${cargo_args[@]}" --test recipes --no-run 2>"$out/build.log" || { cat "$out/build.log"; exit 1; }

failed=0
declare -A result
for version in "${versions[@]}"; do
  echo "== ZooKeeper $version" >&2
  # One server per version; every test of it runs against that server (ZK_CONNECT).
  if [ $full -eq 1 ]; then
    for module in $modules; do
      log="$out/$version-$module.log"
      if ZK_VERSION=$version timeout 900 tests/with-zk cargo test --quiet "${cargo_args[@]}" --test recipes -- "$module::" >"$log" 2>&1; then
        status=ok
      else
        status=FAIL; failed=1
      fi
      for row in "${RECIPES[@]}"; do
        IFS='|' read -r recipe m _ <<<"$row"
        [ "$m" = "$module" ] && result["$version|$recipe"]=$status
      done
    done
  else
    # shellcheck disable=SC2016
    ZK_VERSION=$version COMPAT_ARGS="${cargo_args[*]}" tests/with-zk bash -c '
      read -r -a cargo_args <<<"$COMPAT_ARGS"
      for row in "$@"; do
        IFS="|" read -r recipe module name <<<"$row"
        log="'"$out/$version"'-$module-$name.log"
        if timeout 300 cargo test --quiet "${cargo_args[@]}" --test recipes -- --exact "$module::$name" >"$log" 2>&1; then
          echo "$recipe|ok"
        else
          echo "$recipe|FAIL"
        fi
      done' compat "${RECIPES[@]}" >"$out/$version.results" || echo "the server of $version did not start" >&2
    while IFS='|' read -r recipe status; do
      result["$version|$recipe"]=$status
    done <"$out/$version.results"
    # A recipe with no result (the server never started) is a failure, not a pass.
    for row in "${RECIPES[@]}"; do
      IFS='|' read -r recipe _ _ <<<"$row"
      [ "${result["$version|$recipe"]:-}" = ok ] || { result["$version|$recipe"]=${result["$version|$recipe"]:-FAIL}; failed=1; }
    done
  fi
done

# The table, recipes down, versions across (the README's compatibility table is this one).
header="| recipe |"; rule="|---|"
for version in "${versions[@]}"; do header+=" $version |"; rule+="---|"; done
echo "$header"; echo "$rule"
for row in "${RECIPES[@]}"; do
  IFS='|' read -r recipe _ _ <<<"$row"
  line="| $recipe |"
  for version in "${versions[@]}"; do line+=" ${result["$version|$recipe"]:-not run} |"; done
  echo "$line"
done
[ $failed -eq 0 ] || echo "failures: their output is in $out/" >&2
exit $failed

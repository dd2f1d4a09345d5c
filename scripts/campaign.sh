#!/usr/bin/env bash
# Runs the false-alarm campaign (properties/tests/campaign_test.cpp) split into one process per
# (target, check), JOBS at a time, and sums what they print. Each shard draws exactly the cases the
# whole campaign draws for it, so the split changes nothing but the wall time.
#
#   GNNCHECK_CAMPAIGN_CASES=100000 scripts/campaign.sh build/properties/properties_campaign_100000_test 16 out/
#
# Writes OUT/TARGET.CHECK.log per shard, OUT/finished.txt (each shard's lines as it ends) and
# OUT/summary.txt (one line per system, target and check, then the totals). Exit 0 when every shard passed, 1 when one failed, 2 for bad arguments.
# GNNCHECK_CAMPAIGN_TARGETS / GNNCHECK_CAMPAIGN_CHECKS (comma-separated, as the test reads them)
# restrict the shards to those targets and checks, to finish a campaign cut short.
set -uo pipefail
if [[ $# -ne 3 ]]; then
  echo "usage: $0 CAMPAIGN_TEST_BINARY JOBS OUT_DIR" >&2
  exit 2
fi
binary=$1 jobs=$2 out=$3
[[ -x "$binary" ]] || { echo "$0: '$binary' is not an executable campaign test" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "$0: JOBS must be a positive integer, got '$jobs'" >&2; exit 2; }
mkdir -p "$out" || exit 2
rm -f "$out"/*.log "$out/shards.txt" "$out/summary.txt" "$out/finished.txt"

# Target names are the test instances' suffixes (AllTargets/Campaign.Name/TARGET).
mapfile -t targets < <("$binary" --gtest_list_tests | sed -n 's|^  [A-Za-z]*/\([a-z_0-9]*\).*|\1|p')
[[ ${#targets[@]} -gt 0 ]] || { echo "$0: '$binary' lists no targets" >&2; exit 2; }
checks=(differential gradient adjoint op_order metamorphic_relabel metamorphic_edge_order
        metamorphic_linearity state_interleaved state_repeat numerics resources)
keep() {  # NAME LIST: whether NAME is in the comma-separated LIST (an empty LIST keeps all)
  [[ -z "$2" || ",$2," == *",$1,"* ]]
}
for name in ${GNNCHECK_CAMPAIGN_TARGETS:+${GNNCHECK_CAMPAIGN_TARGETS//,/ }}; do
  [[ " ${targets[*]} " == *" $name "* ]] || { echo "$0: GNNCHECK_CAMPAIGN_TARGETS names '$name', which '$binary' does not list" >&2; exit 2; }
done
for name in ${GNNCHECK_CAMPAIGN_CHECKS:+${GNNCHECK_CAMPAIGN_CHECKS//,/ }}; do
  [[ " ${checks[*]} " == *" $name "* ]] || { echo "$0: GNNCHECK_CAMPAIGN_CHECKS names '$name', which is not a check" >&2; exit 2; }
done

shard() {  # target check binary out
  local log="$4/$1.$2.log"
  if OMP_NUM_THREADS=1 GNNCHECK_CAMPAIGN_TARGETS="$1" GNNCHECK_CAMPAIGN_CHECKS="$2" \
       "$3" --gtest_filter="*/$1" >"$log" 2>&1; then
    echo "ok $1 $2"
  else
    echo "FAILED $1 $2 (see $log)"
  fi
  # Appended as each shard ends (one short write each), so a run cut short keeps what finished.
  grep -h "conclusive of" "$log" >>"$4/finished.txt"
}
export -f shard
start=$(date +%s)
for t in "${targets[@]}"; do for c in "${checks[@]}"; do
  keep "$t" "${GNNCHECK_CAMPAIGN_TARGETS:-}" && keep "$c" "${GNNCHECK_CAMPAIGN_CHECKS:-}" && echo "$t $c"
done; done |
  xargs -P "$jobs" -n 2 bash -c 'shard "$0" "$1" '"'$binary'"' '"'$out'" >"$out/shards.txt"
seconds=$(( $(date +%s) - start ))

{
  grep -h -E "conclusive of" "$out"/*.log | sort
  awk '/conclusive of/ { cases += $7; conclusive += $4 } END {
         printf "total: %d cases, %d conclusive\n", cases, conclusive }' "$out"/*.log
  echo "shards failed: $(grep -c '^FAILED' "$out/shards.txt") of $(wc -l <"$out/shards.txt")"
  echo "wall: ${seconds} s with ${jobs} jobs"
} >"$out/summary.txt"
tail -n 3 "$out/summary.txt"
! grep -q '^FAILED' "$out/shards.txt"

#!/usr/bin/env bash
# Test of scripts/campaign.sh on a tiny campaign (3 cases per shard): the shards a restriction
# names and only those, every shard's lines in the summary, a name that is not a target or a
# check refused with exit 2 before anything runs, and the run with no restriction at all.
#   bash scripts/campaign_test.sh CAMPAIGN_TEST_BINARY
set -uo pipefail
binary=$1
script="$(cd "$(dirname "$0")" && pwd)/campaign.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

GNNCHECK_CAMPAIGN_CASES=3 GNNCHECK_CAMPAIGN_TARGETS=spmm,gcn GNNCHECK_CAMPAIGN_CHECKS=differential,numerics \
  bash "$script" "$binary" 2 "$work/some" >/dev/null 2>&1 || fail "a restricted run exited $?"
shards=$(sort "$work/some/shards.txt" | tr '\n' ' ')
[[ "$shards" == "ok gcn differential ok gcn numerics ok spmm differential ok spmm numerics " ]] || fail "shards: $shards"
grep -q "shards failed: 0 of 4" "$work/some/summary.txt" || fail "summary: $(cat "$work/some/summary.txt")"
grep -Eq "^cpu_float32 +gcn +numerics +3 conclusive of +3" "$work/some/summary.txt" || fail "no gcn numerics line"

for bad in "GNNCHECK_CAMPAIGN_TARGETS=spmmm" "GNNCHECK_CAMPAIGN_CHECKS=diferential"; do
  out=$(env GNNCHECK_CAMPAIGN_CASES=3 "$bad" bash "$script" "$binary" 2 "$work/bad" 2>&1); rc=$?
  [[ $rc -eq 2 ]] || fail "$bad: exit $rc, expected 2"
  [[ "$out" == *"names '${bad#*=}'"* ]] || fail "$bad: message '$out' does not name it"
  [[ ! -e "$work/bad/shards.txt" ]] || fail "$bad: shards ran"
done

GNNCHECK_CAMPAIGN_CASES=1 GNNCHECK_CAMPAIGN_CHECKS=numerics bash "$script" "$binary" 2 "$work/all" >/dev/null 2>&1 ||
  fail "a run restricted to one check exited $?"
targets=$("$binary" --gtest_list_tests | grep -c '^  ')
grep -q "shards failed: 0 of $targets" "$work/all/summary.txt" || fail "every target's numerics shard: $(tail -2 "$work/all/summary.txt")"
echo "campaign.sh: all cases passed"

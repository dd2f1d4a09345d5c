#!/usr/bin/env bash
# Tests scripts/suite_shards.sh: a correct system's shards sum to a pass (exit 0, every result
# counted), SHARES parts to their sum, a planted bug's to exit 1 with its re-run line, a shard cut
# short by its timeout to exit 1, a non-empty output directory and bad arguments to exit 2.   Usage: suite_shards_test.sh GNNCHECK
set -uo pipefail
gnncheck=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/suite.yaml" <<'YAML'
name: shards
seed: 7
cases_per_property: 20
systems:
  - {name: cpu_float32, required: true}
graphs:
  small: {family: random, max_nodes: 12, max_avg_degree: 3}
entries:
  - {name: da, systems: cpu_float32, checks: [differential, adjoint], graphs: small, cases: 30}
  - {name: meta, systems: cpu_float32, checks: [metamorphic_relabel, state_repeat, numerics], graphs: small}
  - {name: long, systems: cpu_float32, checks: [differential], graphs: small, cases: 200000}
YAML
fail() { echo "FAIL: $*"; exit 1; }

"$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 2 "$work/ok" "da meta" "spmm gcn" >"$work/ok.out" 2>&1 ||
  fail "a correct system's shards did not exit 0: $(cat "$work/ok.out")"
grep -q "^shards launched: 4, with a report: 4" "$work/ok/summary.txt" || fail "not 4 shards: $(cat "$work/ok/summary.txt")"
grep -q "^total: 10 results, .* 0 unmet" "$work/ok/summary.txt" || fail "not 10 results: $(cat "$work/ok/summary.txt")"
# numerics has no error bound, so no ratio: n/a, never nan or -inf.
grep -q "^meta cpu_float32 spmm numerics pass [0-9]*/20 worst n/a$" "$work/ok/summary.txt" || fail "no n/a for numerics"
grep -q "^da cpu_float32 gcn adjoint pass" "$work/ok/summary.txt" || fail "no gcn adjoint line"

sed 's/name: cpu_float32, required/name: tcgnn_backward_uses_A, required/; s/systems: cpu_float32/systems: tcgnn_backward_uses_A/' \
  "$work/suite.yaml" >"$work/bug.yaml"
"$here/suite_shards.sh" "$gnncheck" "$work/bug.yaml" 2 "$work/bug" "da" "spmm" >/dev/null 2>&1
[[ $? -eq 1 ]] || fail "a planted bug expected to pass did not exit 1"
grep -q "^UNMET da spmm" "$work/bug/summary.txt" || fail "no UNMET line: $(cat "$work/bug/summary.txt")"
grep -q "re-run: gnncheck repro .*da.spmm/cases/" "$work/bug/summary.txt" || fail "no re-run line"

# SHARES=3: each (entry, target) as three shards (--share P/3).
SHARES=3 "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 2 "$work/parts" "da" "spmm" >"$work/parts.out" 2>&1 ||
  fail "a correct system's parts did not exit 0: $(cat "$work/parts.out")"
grep -q "^shards launched: 3, with a report: 3" "$work/parts/summary.txt" || fail "not 3 parts: $(cat "$work/parts/summary.txt")"
# Shards deal out units (chunks of 64 cases; suites/SCHEMA.md): each 30-case check is one unit, whole in one shard.
grep -q "^da cpu_float32 spmm adjoint pass 30/30 worst .* part 2/3$" "$work/parts/summary.txt" || fail "no part 2/3 line"
grep -q "^da cpu_float32 spmm differential pass 30/30 worst .* part 1/3$" "$work/parts/summary.txt" ||
  fail "no part 1/3 line: $(cat "$work/parts/summary.txt")"
[[ -f "$work/parts/da.spmm.part3of3/report.json" ]] || fail "no report of part 3"
SHARES=3 SHARE_PARTS="2" "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 2 "$work/one" "da" "spmm" >/dev/null 2>&1 ||
  fail "SHARE_PARTS=2 did not exit 0"
[[ "$(ls "$work/one" | grep -c part)" -eq 1 && -d "$work/one/da.spmm.part2of3" ]] || fail "SHARE_PARTS=2 ran: $(ls "$work/one")"
SHARES=2 SHARE_PARTS="3" "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 2 "$work/bad" "da" "spmm" >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "SHARE_PARTS outside 1 … SHARES did not exit 2"

"$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 2 "$work/ok" "da" "spmm" >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "a non-empty output directory did not exit 2"
"$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" x "$work/x" "da" >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "JOBS=x did not exit 2"
"$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 2 "$work/none" "nosuch" "spmm" >/dev/null 2>&1
[[ $? -eq 1 ]] || fail "an unknown entry (no report) did not exit 1"
# The first shard (2·10^5 cases, seconds on any machine) outlives a 1 s deadline: it is stopped, and
# the shards after it never start.
DEADLINE_S=1 "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 1 "$work/late" "long da" "spmm gcn" >/dev/null 2>&1
[[ $? -eq 1 ]] || fail "shards left unstarted by the deadline did not exit 1"
grep -q "^long spmm exit 124" "$work/late/shards.txt" || fail "the long shard was not stopped at the deadline: $(cat "$work/late/shards.txt")"
grep -q "not started (deadline: " "$work/late/shards.txt" || fail "no shard was left unstarted by a 1 s deadline"
# MIN_SHARD_S longer than the deadline: nothing starts (each shard says so, with its part), and the
# run fails closed; a non-number is refused.
SHARES=2 MIN_SHARD_S=100 DEADLINE_S=50 "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 2 "$work/min" "da" "spmm" >/dev/null 2>&1
[[ $? -eq 1 ]] || fail "shards kept from starting by MIN_SHARD_S did not exit 1"
[[ "$(grep -c "^da spmm share [12]/2 not started (deadline: [0-9]* s left)$" "$work/min/shards.txt")" -eq 2 ]] ||
  fail "MIN_SHARD_S did not keep both parts from starting: $(cat "$work/min/shards.txt")"
MIN_SHARD_S=soon "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 2 "$work/minbad" "da" "spmm" >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "MIN_SHARD_S=soon did not exit 2"
echo "suite_shards.sh: all cases passed"

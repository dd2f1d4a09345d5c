#!/usr/bin/env bash
# Tests scripts/suite_shards.sh: a suite run as 3 shards and merged gives the unsplit run's report
# (results, verdicts, counts, worst errors; timings aside), narrowed alike by --entry/--target; a
# planted bug fails the merged run with its re-run line; a shard that did not finish (the deadline,
# SHARE_PARTS) leaves its tasks `not tested` and fails the run; bad arguments exit 2.
#   Usage: suite_shards_test.sh GNNCHECK
set -uo pipefail
gnncheck=$1
here=$(cd "$(dirname "$0")" && pwd)
python=/usr/bin/python3
[[ -x $python ]] || python=python3
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
  - {name: da, systems: cpu_float32, checks: [differential, adjoint], graphs: small, cases: 150}
  - {name: meta, systems: cpu_float32, checks: [metamorphic_relabel, state_repeat, numerics], graphs: small}
  - {name: replica, systems: tcgnn_backward_uses_A, checks: [adjoint, differential], graphs: small, cases: 100, expect: caught}
  - {name: long, systems: cpu_float32, checks: [differential], graphs: small, cases: 200000}
YAML
fail() { echo "FAIL: $*"; exit 1; }
narrow=(--entry da --entry meta --entry replica --target spmm --target gcn)

# report.json of a run, comparable: timings dropped, the report directory's path written as DIR.
same_report() {  # whole_dir merged_dir
  "$python" - "$1" "$2" <<'PY'
import json, sys
def load(d):
    text = open(d + "/report.json").read().replace(d, "DIR")
    j = json.loads(text)
    for k in ("seconds", "started_utc"):
        j.pop(k, None)
    for r in j["results"]:
        r.pop("seconds", None)
    return j
whole, merged = load(sys.argv[1]), load(sys.argv[2])
if whole != merged:
    for a, b in zip(whole["results"], merged["results"]):
        if a != b:
            print("first difference:\n whole  %s\n merged %s" % (json.dumps(a)[:600], json.dumps(b)[:600]))
            break
    print("totals whole %s\ntotals merged %s" % (whole["totals"], merged["totals"]))
    sys.exit(1)
PY
}

"$gnncheck" run "$work/suite.yaml" "${narrow[@]}" --jobs 1 --progress plain --report "$work/whole" >"$work/whole.out" 2>&1 ||
  fail "the unsplit run did not exit 0: $(tail -20 "$work/whole.out")"
"$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 3 2 "$work/ok" "${narrow[@]}" >"$work/ok.out" 2>&1 ||
  fail "a correct system's 3 shards did not exit 0: $(cat "$work/ok.out")"
for p in 1 2 3; do
  "$python" -c 'import json, sys; s = json.load(open(sys.argv[1]))["share"]; sys.exit((s["part"], s["of"]) != (int(sys.argv[2]), 3))' \
    "$work/ok/shard-$p/report.json" "$p" || fail "shard-$p's report is not shard $p/3"
done
[[ -f $work/ok/merged/junit.xml && -f $work/ok/merged/summary.md && -f $work/ok/merged/index.html ]] ||
  fail "the merged report lacks junit.xml, summary.md or index.html: $(ls "$work/ok/merged")"
same_report "$work/whole" "$work/ok/merged" || fail "3 shards merged differ from the unsplit run"
grep -q "^shard [123]/3 exit 0 " "$work/ok/shards.txt" || fail "no shard line: $(cat "$work/ok/shards.txt")"
grep -q "All expectations held" "$work/ok.out" || fail "the merge's table is not printed"

# A planted bug named as the system under test: the merged run fails, with the re-run line of the
# counterexample copied into the merged report.
"$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 3 2 "$work/bug" --entry da --target spmm \
  --system tcgnn_backward_uses_A >"$work/bug.out" 2>&1
[[ $? -eq 1 ]] || fail "a planted bug expected to pass did not exit 1: $(cat "$work/bug.out")"
grep -q "re-run: gnncheck repro .*$work/bug/merged/cases/" "$work/bug.out" || fail "no re-run line into merged/cases: $(cat "$work/bug.out")"
grep -q "fail" "$work/bug/merged/summary.md" || fail "the merged summary shows no failure"

# The deadline: the first shard (2·10^5 cases) is stopped at 2 s, the others never start; their
# tasks are `not tested` in the merged report, never dropped, and the run fails.
DEADLINE_S=2 "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 3 1 "$work/late" --entry long --entry da --target spmm \
  >"$work/late.out" 2>&1
[[ $? -eq 1 ]] || fail "shards stopped or left unstarted by the deadline did not exit 1: $(cat "$work/late.out")"
grep -q "^shard 1/3 exit 1[24][34] " "$work/late/shards.txt" || fail "shard 1 was not stopped at the deadline: $(cat "$work/late/shards.txt")"
grep -q "^shard [23]/3 not started (deadline: " "$work/late/shards.txt" || fail "no shard was left unstarted: $(cat "$work/late/shards.txt")"
"$python" - "$work/late/merged/report.json" <<'PY' || fail "the merged report of the cut run"
import json, sys
r = json.load(open(sys.argv[1]))
keys = sorted((x["entry"], x["check"]) for x in r["results"])
assert keys == [("da", "adjoint"), ("da", "differential"), ("long", "differential")], keys
assert all(x["verdict"] == "not tested" for x in r["results"]), [x["verdict"] for x in r["results"]]
assert not r["all_expectations_held"]
PY

# SHARE_PARTS: only shard 2 here, so 1 and 3 are not tested; the parts of two calls merge whole.
SHARE_PARTS=2 "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 3 1 "$work/two" "${narrow[@]}" >"$work/two.out" 2>&1
[[ $? -eq 1 ]] || fail "one shard of three merged alone did not exit 1"
grep -q "shards\? 1/3" "$work/two/merged/summary.md" || grep -q "shards\? 1/3" "$work/two/merged/report.json" ||
  fail "the merged report does not name the missing shards"
SHARE_PARTS="1 3" "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 3 2 "$work/rest" "${narrow[@]}" >/dev/null 2>&1
"$gnncheck" report merge "$work/two/shard-2" "$work/rest/shard-1" "$work/rest/shard-3" --output "$work/calls" >/dev/null 2>&1 ||
  fail "the shards of two calls did not merge to a pass"
same_report "$work/whole" "$work/calls" || fail "the shards of two calls merged differ from the unsplit run"

# Refused: a non-empty output directory, bad numbers, options set per shard, shards that all refuse.
expect_2() { local what=$1; shift; "$@" >/dev/null 2>&1; [[ $? -eq 2 ]] || fail "$what did not exit 2"; }
expect_2 "a non-empty output directory" "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 3 2 "$work/ok"
expect_2 "JOBS=x" "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 3 x "$work/x"
expect_2 "SHARDS=0" "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 0 2 "$work/x"
expect_2 "--share in the run options" "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 3 2 "$work/x" --share 1/3
expect_2 "SHARE_PARTS outside 1 … SHARDS" env SHARE_PARTS=4 "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 3 2 "$work/x2"
expect_2 "MIN_SHARD_S=soon" env MIN_SHARD_S=soon "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 3 2 "$work/x3"
expect_2 "an unknown entry (every shard refuses it)" "$here/suite_shards.sh" "$gnncheck" "$work/suite.yaml" 3 2 "$work/x4" --entry nosuch
echo "suite_shards.sh: all cases passed"

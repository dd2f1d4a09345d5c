#!/usr/bin/env bash
# Runs a suite split into one `gnncheck run` per (entry, target), JOBS at a time, and sums their
# reports. Each shard runs exactly the tasks the whole run would run for its entry and target (task
# seeds depend on the suite seed, entry, target and check only), so the split changes nothing but
# the wall time — and each shard has its own adapter process, where one run would share one.
#
#   scripts/suite_shards.sh build/suites/gnncheck suites/torch_campaign.yaml 14 out/ \
#       "torch-adjoint torch-differential torch-metamorphic torch-state-numerics-order" "gat gin gcn sage agnn spmm"
#
# OUT must be empty or absent. Writes OUT/ENTRY.TARGET/ (each shard's report and log) and OUT/summary.txt: one line per result
# (entry, system, target, check, verdict, conclusive of cases, worst error / bound), each unmet
# result's message and re-run line, and the totals. A shard that did not finish (killed, timed out)
# leaves no report.json and is counted as not finished. Exit 0 when every shard finished with all
# expectations held, 1 otherwise, 2 for bad arguments. SHARD_TIMEOUT_S (default 0: none) bounds
# each shard's seconds; DEADLINE_S (default 0: none) bounds the whole run's: no shard starts after
# it and a running one is stopped at it (SIGTERM: its report so far says interrupted), so the
# summary is written in time. MIN_SHARD_S (default 0) keeps a shard from starting with fewer seconds
# than that left before the deadline — a shard cut at the deadline is lost work, so set it to the
# time one shard takes and the slots left near the end stay idle instead. Shards start in the order
# ENTRY × TARGET: put the longest first.
# Without TMPDIR set, adapters' case directories go to /dev/shm where it is writable.
# SHARES=K (default 1) runs each (entry, target) as K shards, `gnncheck run --share P/K` for P in
# SHARE_PARTS (default 1 … K): disjoint parts of every check's cases, so one long check spreads over
# JOBS processes, or over several calls (each part's report stands alone: sum the parts'
# summaries). The summary then also gives each (entry, system, target, check) over the parts run.
set -uo pipefail
if [[ $# -ne 6 && $# -ne 5 ]]; then
  echo "usage: $0 GNNCHECK SUITE JOBS OUT_DIR \"ENTRY...\" [\"TARGET...\"]" >&2
  exit 2
fi
gnncheck=$1 suite=$2 jobs=$3 out=$4 entries=$5 targets=${6:-}
[[ -x "$gnncheck" ]] || { echo "$0: '$gnncheck' is not an executable" >&2; exit 2; }
[[ -f "$suite" ]] || { echo "$0: suite file '$suite' not found" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "$0: JOBS must be a positive integer, got '$jobs'" >&2; exit 2; }
[[ -n "$entries" ]] || { echo "$0: no entries given" >&2; exit 2; }
if [[ -z "$targets" ]]; then
  targets=$("$gnncheck" list targets | awk '/^  [a-z]/ { print $1 }' | tr '\n' ' ')
fi
if [[ -e "$out" && -n "$(ls -A "$out")" ]]; then
  echo "$0: '$out' is not empty (each run needs its own directory: old shards would be summed)" >&2; exit 2
fi
mkdir -p "$out" || exit 2
gnncheck=$(cd "$(dirname "$gnncheck")" && pwd)/$(basename "$gnncheck")
# Adapter case directories (adapters/PROTOCOL.md) go to TMPDIR; in memory they cost less per case
# (the torch adapter's spmm adjoint: 5.9 → 4.3 s per 1,000 cases on the development machine).
if [[ -z "${TMPDIR:-}" && -d /dev/shm && -w /dev/shm ]]; then export TMPDIR=/dev/shm; fi
timeout_s=${SHARD_TIMEOUT_S:-0}
shares=${SHARES:-1}
[[ "$shares" =~ ^[1-9][0-9]*$ ]] || { echo "$0: SHARES must be a positive integer, got '$shares'" >&2; exit 2; }
parts=${SHARE_PARTS:-$(seq -s ' ' 1 "$shares")}
for p in $parts; do
  [[ "$p" =~ ^[1-9][0-9]*$ && $p -le $shares ]] || { echo "$0: SHARE_PARTS: '$p' is not a part of 1 … $shares" >&2; exit 2; }
done
deadline=0
[[ ${DEADLINE_S:-0} -gt 0 ]] && deadline=$(( $(date +%s) + DEADLINE_S ))
min_shard=${MIN_SHARD_S:-0}
[[ "$min_shard" =~ ^[0-9]+$ ]] || { echo "$0: MIN_SHARD_S must be a number of seconds, got '$min_shard'" >&2; exit 2; }
export MIN_SHARD_S=$min_shard

shard() {  # entry target gnncheck suite out timeout deadline part shares
  local dir="$5/$1.$2" limit=$6 share=()
  if [[ $9 -gt 1 ]]; then dir="$dir.part$8of$9"; share=(--share "$8/$9"); fi
  if [[ $7 -gt 0 ]]; then
    local left=$(( $7 - $(date +%s) ))
    if [[ $left -le 0 || $left -lt $MIN_SHARD_S ]]; then
      echo "$1 $2${share[1]:+ share ${share[1]}} not started (deadline: $left s left)"; mkdir -p "$dir"; return
    fi
    [[ $limit -eq 0 || $left -lt $limit ]] && limit=$left
  fi
  mkdir -p "$dir"
  local start=$SECONDS
  timeout "$limit" "$3" run "$4" --entry "$1" --target "$2" "${share[@]}" --jobs 1 --progress plain --report "$dir" >"$dir/log" 2>&1
  echo "$1 $2${share[1]:+ share ${share[1]}} exit $? ($(( SECONDS - start )) s)"
}
export -f shard
start=$(date +%s)
for e in $entries; do for t in $targets; do for p in $parts; do echo "$e $t $p"; done; done; done |
  xargs -P "$jobs" -n 3 bash -c 'shard "$6" "$7" "$0" "$1" "$2" "$3" "$4" "$8" "$5"' \
    "$gnncheck" "$suite" "$out" "$timeout_s" "$deadline" "$shares" >"$out/shards.txt"
seconds=$(( $(date +%s) - start ))

python3 - "$out" "$seconds" "$jobs" >"$out/summary.txt" <<'PY'
import json, os, sys
out, seconds, jobs = sys.argv[1], sys.argv[2], sys.argv[3]
rows, unmet, unfinished = [], [], []
cases = conclusive = 0
combined = {}  # (entry, system, target, check) -> [parts, cases, conclusive, worst, verdicts]


def worst_text(ratio):
    # No ratio: a check without an error bound (numerics: finite or not), or no conclusive case.
    return f"{ratio:.3g}" if ratio == ratio and ratio != float("-inf") else "n/a"


for name in sorted(os.listdir(out)):
    path = os.path.join(out, name, "report.json")
    if not os.path.isdir(os.path.join(out, name)):
        continue
    if not os.path.exists(path):
        unfinished.append(name)
        continue
    report = json.load(open(path))
    if report.get("interrupted_by"):
        unfinished.append(name)
    for r in report["results"]:
        ratio = r["metric"] / r["bound"] if r.get("bound") else float("nan")
        share = report.get("share")
        part = f' part {share["part"]}/{share["of"]}' if share else ''
        rows.append(f'{r["entry"]} {r["system"]} {r["target"]} {r["check"]} {r["verdict"]} '
                    f'{r["conclusive"]}/{r["cases"]} worst {worst_text(ratio)}{part}')
        c = combined.setdefault((r["entry"], r["system"], r["target"], r["check"]), [0, 0, 0, float("-inf"), set()])
        c[0] += 1; c[1] += r["cases"]; c[2] += r["conclusive"]; c[4].add(r["verdict"])
        if ratio == ratio:
            c[3] = max(c[3], ratio)
        cases += r["cases"]
        conclusive += r["conclusive"]
        if not r["expectation_held"]:
            unmet.append(f'UNMET {r["entry"]} {r["target"]} {r["check"]}: {r["message"]}\n  re-run: {r["repro"]}')
print("\n".join(rows))
if any(c[0] > 1 for c in combined.values()):
    print("over the parts run (parts, conclusive of cases, verdicts, worst):")
    for (e, sy, t, ch), (n, ca, co, worst, verdicts) in sorted(combined.items()):
        print(f'{e} {sy} {t} {ch}: {n} parts, {co}/{ca}, {"+".join(sorted(verdicts))}, worst {worst_text(worst)}')
print("\n".join(unmet))
shards = sum(1 for line in open(os.path.join(out, "shards.txt")))
finished = sum(1 for name in os.listdir(out) if os.path.exists(os.path.join(out, name, "report.json")))
print(f"shards launched: {shards}, with a report: {finished}")
print(f"total: {len(rows)} results, {cases} cases, {conclusive} conclusive, {len(unmet)} unmet")
print(f"shards not finished: {len(unfinished)} {' '.join(unfinished)}")
print(f"wall: {seconds} s with {jobs} jobs")
PY
tail -n 3 "$out/summary.txt"
# Fail closed: no result at all, a shard without a report, or one unmet expectation is a failure.
grep -q "^total: [1-9][0-9]* results, .* 0 unmet" "$out/summary.txt" && grep -q "^shards not finished: 0" "$out/summary.txt" &&
  awk '/^shards launched:/ { exit !($3 + 0 == $7 + 0 && $3 > 0) }' FS='[ ,]+' "$out/summary.txt"

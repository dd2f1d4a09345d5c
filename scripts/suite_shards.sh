#!/usr/bin/env bash
# Runs a whole suite as SHARDS shards, JOBS at a time, and merges them into the whole run's report:
#
#   scripts/suite_shards.sh GNNCHECK SUITE SHARDS JOBS OUT_DIR [RUN_OPTION...]
#   scripts/suite_shards.sh build/suites/gnncheck suites/gpu_campaign.yaml 16 16 out/ --entry gpu-resources --target spmm
#
# Shard P is `gnncheck run SUITE --share P/SHARDS --report OUT_DIR/shard-P RUN_OPTION...` (its log in
# OUT_DIR/shard-P/log); every RUN_OPTION (--entry, --target, --seed, --system, --adapter, …) goes to
# every shard alike, so the shards are parts of one run. Then `gnncheck report merge
# OUT_DIR/shard-*… --output OUT_DIR/merged` writes the whole run's report.json, junit.xml, summary.md
# and index.html (suites/SCHEMA.md, "Splitting a run"): the same results as one unsplit run. A shard
# that did not finish (not started, killed, cut by a timeout or the deadline) is never dropped: its
# tasks are `not tested` in the merged report, so the run fails. OUT_DIR/shards.txt has one line per
# shard (exit status, seconds). Each shard runs with --jobs 1 --progress plain unless RUN_OPTION sets them.
#
# Exit status: the merge's (0 every expectation of the whole run held, 1 not), 1 when no shard left a
# report, 2 for bad arguments (and when every shard refused its arguments: the first log is printed).
#
# SHARE_PARTS (default 1 … SHARDS) runs only those shards: the others are then not tested in this
# call's merge; merge the shard-* folders of several calls with `gnncheck report merge` yourself.
# SHARD_TIMEOUT_S (default 0: none) bounds each shard's seconds; DEADLINE_S (default 0: none) bounds
# the whole call's: no shard starts after it and a running one is stopped at it (SIGTERM: its report
# so far says interrupted; SIGKILL 30 s later), so the merge is written in time. MIN_SHARD_S (default
# 0) keeps a shard from starting with fewer seconds than that left before the deadline — a shard cut
# at the deadline is lost work, so set it to the time one shard takes.
# Without TMPDIR set, adapters' case directories go to /dev/shm where it is writable.
set -uo pipefail
usage="usage: $0 GNNCHECK SUITE SHARDS JOBS OUT_DIR [RUN_OPTION...]"
if [[ $# -lt 5 ]]; then echo "$usage" >&2; exit 2; fi
gnncheck=$1 suite=$2 shards=$3 jobs=$4 out=$5
shift 5
run_options=("$@")
[[ -x "$gnncheck" ]] || { echo "$0: '$gnncheck' is not an executable" >&2; exit 2; }
[[ -f "$suite" ]] || { echo "$0: suite file '$suite' not found" >&2; exit 2; }
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "$0: SHARDS must be a positive integer, got '$shards'" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "$0: JOBS must be a positive integer, got '$jobs'" >&2; exit 2; }
own_jobs=(--jobs 1) own_progress=(--progress plain)
for o in "${run_options[@]}"; do
  case "$o" in
    --share|--share=*|--report|--report=*)
      echo "$0: $o is set per shard by this script (OUT_DIR/shard-P, --share P/SHARDS); give the other run options" >&2; exit 2 ;;
    -j|--jobs|--jobs=*|-j[0-9]*) own_jobs=() ;;
    --progress|--progress=*) own_progress=() ;;
  esac
done
if [[ -e "$out" && -n "$(ls -A "$out")" ]]; then
  echo "$0: '$out' is not empty (each run needs its own directory: old shards would be merged)" >&2; exit 2
fi
read -ra parts <<<"${SHARE_PARTS:-$(seq -s ' ' 1 "$shards")}"
[[ ${#parts[@]} -gt 0 ]] || { echo "$0: SHARE_PARTS names no shard" >&2; exit 2; }
for p in "${parts[@]}"; do
  [[ "$p" =~ ^[1-9][0-9]*$ && $p -le $shards ]] || { echo "$0: SHARE_PARTS: '$p' is not a part of 1 … $shards" >&2; exit 2; }
done
min_shard=${MIN_SHARD_S:-0} timeout_s=${SHARD_TIMEOUT_S:-0} deadline_s=${DEADLINE_S:-0}
for v in MIN_SHARD_S:$min_shard SHARD_TIMEOUT_S:$timeout_s DEADLINE_S:$deadline_s; do
  [[ "${v#*:}" =~ ^[0-9]+$ ]] || { echo "$0: ${v%%:*} must be a number of seconds, got '${v#*:}'" >&2; exit 2; }
done
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
gnncheck=$(cd "$(dirname "$gnncheck")" && pwd)/$(basename "$gnncheck")
# Adapter case directories (adapters/PROTOCOL.md) go to TMPDIR; in memory they cost less per case
# (the torch adapter's spmm adjoint: 5.9 → 4.3 s per 1,000 cases on the development machine).
if [[ -z "${TMPDIR:-}" && -d /dev/shm && -w /dev/shm ]]; then export TMPDIR=/dev/shm; fi
deadline=0
[[ $deadline_s -gt 0 ]] && deadline=$(( $(date +%s) + deadline_s ))

shard() {  # part: runs shard PART of $shards into $out/shard-PART, prints its line for shards.txt
  local part=$1 dir="$out/shard-$1" limit=$timeout_s
  mkdir -p "$dir"
  if [[ $deadline -gt 0 ]]; then
    local left=$(( deadline - $(date +%s) ))
    if [[ $left -le 0 || $left -lt $min_shard ]]; then
      echo "shard $part/$shards not started (deadline: $left s left)"; return
    fi
    [[ $limit -eq 0 || $left -lt $limit ]] && limit=$left
  fi
  local start=$SECONDS
  timeout -k 30 "$limit" "$gnncheck" run "$suite" --share "$part/$shards" --report "$dir" "${own_jobs[@]}" "${own_progress[@]}" \
    "${run_options[@]}" >"$dir/log" 2>&1
  echo "shard $part/$shards exit $? ($(( SECONDS - start )) s)"
}
export -f shard
export gnncheck suite shards out timeout_s deadline min_shard
export own_jobs_text="${own_jobs[*]}" own_progress_text="${own_progress[*]}"
# Arrays do not cross into xargs' shells: the run options travel NUL-separated in a file.
: >"$out/.run_options"
[[ ${#run_options[@]} -gt 0 ]] && printf '%s\0' "${run_options[@]}" >"$out/.run_options"
start=$(date +%s)
for p in "${parts[@]}"; do echo "$p"; done |
  xargs -P "$jobs" -I{} bash -c 'read -ra own_jobs <<<"$own_jobs_text"; read -ra own_progress <<<"$own_progress_text"
    run_options=(); while IFS= read -r -d "" o; do run_options+=("$o"); done <"$out/.run_options"
    shard {}' >"$out/shards.txt"
rm -f "$out/.run_options"
echo "wall: $(( $(date +%s) - start )) s for ${#parts[@]} shards, $jobs at a time" >>"$out/shards.txt"

reported=()
for p in $(seq 1 "$shards"); do [[ -f "$out/shard-$p/report.json" ]] && reported+=("$out/shard-$p"); done
if [[ ${#reported[@]} -eq 0 ]]; then
  cat "$out/shards.txt" >&2
  if ! grep "^shard " "$out/shards.txt" | grep -qv " exit 2 (" && [[ -f "$out/shard-${parts[0]}/log" ]]; then
    echo "$0: every shard refused its arguments; shard ${parts[0]}'s log:" >&2
    cat "$out/shard-${parts[0]}/log" >&2
    exit 2
  fi
  echo "$0: no shard left a report (see OUT_DIR/shard-*/log): nothing to merge, nothing tested" >&2
  exit 1
fi
cat "$out/shards.txt"
"$gnncheck" report merge "${reported[@]}" --output "$out/merged"

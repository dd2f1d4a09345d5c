#!/usr/bin/env bash
# adapters/replicas/gpu/device_checks.sh — on a machine with an NVIDIA GPU: the resources check on
# gnncheck's own device-memory measurement (correct systems pass, the two leak replicas are caught)
# and compute-sanitizer on real systems (the racy replica caught through `gnncheck check
# --sanitize`; cuSPARSE's own kernels under racecheck and memcheck, whose findings are listed and
# not counted). Everything goes into ONE file. Run from the project's root:
#
#   bash adapters/replicas/gpu/device_checks.sh OUTPUT_FILE [BIN_DIR]
#
# BIN_DIR holds `gnncheck` and `gpu_device_faults_test` built with -DGNNCHECK_CUDA=ON; without it
# both are built in /tmp/gnncheck-device-checks-build (the build is not part of the time below).
# Steps, each with the exit code it must give and, for those with a report, the verdicts its
# report.json must hold (the file ends with the step table; the script exits 0 only if every step
# held):
#   faults-test        gpu_device_faults_test: bytes one XORWOW / Philox generator holds, both leak
#                      replicas caught by resources, the racy one passing every check      rc 0
#   gpu-suite-small    gnncheck run suites/gpu.yaml --entry small: every target of the reference,
#                      8 checks with resources among them                                  rc 0
#   cusparse-T         gnncheck check --system cusparse --target T --check resources,
#                      T = spmm, spmm_ve                                                   rc 0
#   torch-T            the same for the PyTorch adapter on the GPU (a caching allocator),
#                      T = spmm, gcn                                                       rc 0
#   curand-leak        gnncheck check --system gpu-replica-curand-leak ... resources       rc 1 (caught)
#   malloc-leak        gnncheck check --system gpu-replica-leak ... resources              rc 1 (caught)
#   replica-suite      gnncheck run suites/gpu_replicas.yaml                               rc 0
#   racy-racecheck     gnncheck check --system gpu-replica-racy --target spmm --check differential
#                      --sanitize racecheck                                                rc 1 (caught)
#   cusparse-racecheck gnncheck run suites/gpu_replicas.yaml --entry cusparse-under-sanitizer
#                      --sanitize racecheck                                                rc 0
#   cusparse-memcheck  the same with --sanitize memcheck                                   rc 0
# After each run with a report, its results are printed (verdict, metric, bound, the tolerance
# model, the message: for sanitize_* results every finding, own and vendor). Expected time on one
# H200 with 16 cores: under 4 minutes.
set -uo pipefail
out=${1:?usage: adapters/replicas/gpu/device_checks.sh OUTPUT_FILE [BIN_DIR]}
bin=${2:-}
: >"$out"
work=$(mktemp -d)
table="$work/table.txt"
status=0
say() { printf '%s\n' "$*" >>"$out"; }

if [ -z "$bin" ]; then
  build=/tmp/gnncheck-device-checks-build
  say "=== build (not timed): $build"
  if ! { cmake -B "$build" -S . -G Ninja -DCMAKE_BUILD_TYPE=Release -DGNNCHECK_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
           -DGNNCHECK_PYTHON_PACKAGE=OFF &&
         cmake --build "$build" -j "$(nproc)" --target gnncheck gpu_device_faults_test; } >"$work/build.log" 2>&1; then
    tail -n 40 "$work/build.log" >>"$out"
    say "build failed"
    exit 1
  fi
  bin="$work/bin"
  mkdir -p "$bin"
  cp "$build/suites/gnncheck" "$build/adapters/replicas/gpu/gpu_device_faults_test" "$bin"/
fi
gnncheck="$bin/gnncheck"

{
  date -u
  nvidia-smi -L 2>&1
  nvidia-smi --query-gpu=driver_version,memory.total --format=csv,noheader 2>&1
  compute-sanitizer --version 2>&1 | tail -n 1
  git rev-parse HEAD 2>/dev/null
  python3 -c 'import torch, torch_geometric; print("torch", torch.__version__, "PyG", torch_geometric.__version__, "cuda", torch.cuda.is_available())' 2>&1
} >>"$out"

# The results of a report folder, one block each (python3 reads report.json).
show_report() {
  python3 - "$1/report.json" >>"$out" 2>&1 <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))
for r in run["results"]:
    print(f"  result: {r['entry']} | {r['system']} | {r['target']} | {r['check']}: {r['verdict']} "
          f"(expected {r['expectation']}, held {r['expectation_held']}); metric {r['metric']} bound {r['bound']}; "
          f"{r['cases']} cases, {r['conclusive']} conclusive; {r['seconds']:.2f} s")
    if r["check"] in ("resources",) or r["check"].startswith("sanitize_"):
        print("    tolerance model:", r["tolerance_model"])
    if r["message"]:
        print("    message:", r["message"].replace("\n", "\n      "))
resources = [r for r in run["results"] if r["check"] == "resources"]
if resources:
    print(f"  resources results: {len(resources)}, {sum(r['seconds'] for r in resources):.2f} s of "
          f"{sum(r['seconds'] for r in run['results']):.2f} s summed over all results; run wall {run['seconds']:.2f} s")
PY
}

# Whether report.json in $1 has, for every CHECK=VERDICT that follows, a result of that check with
# that verdict, and no result left `not tested`.
has_verdicts() {
  python3 - "$1/report.json" "${@:2}" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
ok = all(r["verdict"] != "not tested" for r in results)
for want in sys.argv[2:]:
    check, verdict = want.split("=")
    ok = ok and any(r["check"] == check and r["verdict"] == verdict for r in results)
sys.exit(0 if ok else 1)
PY
}

# step NAME EXPECTED_RC LIMIT_S [--report DIR [CHECK=VERDICT...]] -- COMMAND...: runs it, keeps its
# output (the last 150 lines) and, with a report, prints its results; the step holds when the exit
# code is EXPECTED_RC and the report has each CHECK=VERDICT (an exit 1 alone could be `not tested`).
step() {
  local name=$1 expected=$2 limit=$3 report=""
  local -a verdicts=()
  shift 3
  if [ "$1" = "--report" ]; then
    report=$2
    shift 2
    while [ "$1" != "--" ]; do verdicts+=("$1"); shift; done
  fi
  shift  # --
  say ""
  say "=== $name (must exit $expected${verdicts:+; with ${verdicts[*]}}): $*"
  local start=$SECONDS
  timeout "$limit" "$@" >"$work/step.log" 2>&1
  local rc=$? took=$((SECONDS - start))
  tail -n 150 "$work/step.log" >>"$out"
  local verdict=ok
  if [ -n "$report" ]; then
    if [ -f "$report/report.json" ]; then
      show_report "$report"
      has_verdicts "$report" "${verdicts[@]}" || verdict=UNEXPECTED
    else
      verdict=UNEXPECTED
      say "(no report.json in $report)"
    fi
  fi
  [ "$rc" -ne "$expected" ] && verdict=UNEXPECTED
  [ "$verdict" = ok ] || status=1
  say "--- $name: rc=$rc (expected $expected${verdicts:+, ${verdicts[*]}}) $verdict, ${took}s"
  printf '%-22s rc=%-3s expected=%-2s %-10s %4ss\n' "$name" "$rc" "$expected" "$verdict" "$took" >>"$table"
}

# A skipped test (no device, no compute-sanitizer) does not count as run.
step faults-test 0 90 -- bash -c 'log=$("$0" --gtest_color=no 2>&1); rc=$?; printf "%s\n" "$log";
  [ $rc -eq 0 ] && ! grep -q "SKIPPED \]" <<<"$log"' "$bin/gpu_device_faults_test"

# Correct systems: every target of the reference, cuSPARSE's own calls, PyTorch with its caching
# allocator. Each must pass at the default count (67 evaluations when device memory is measured).
# The gpu suite's `small` entry: every target of the reference, 20 cases, 8 checks, resources among
# them (its report says how much of the run resources took).
step gpu-suite-small 0 150 --report "$work/r-gpu-small" resources=pass -- "$gnncheck" run suites/gpu.yaml --entry small \
  --jobs 8 --progress plain --report "$work/r-gpu-small"
for target in spmm spmm_ve; do
  step "cusparse-$target" 0 60 --report "$work/r-cusparse-$target" resources=pass -- "$gnncheck" check --system cusparse \
    --target "$target" --check resources --cases 10 --report "$work/r-cusparse-$target"
done
for target in spmm gcn; do
  step "torch-$target" 0 120 --report "$work/r-torch-$target" resources=pass -- "$gnncheck" check \
    --adapter "python3 adapters/python/torch_adapter.py --device cuda" --target "$target" --check resources --cases 5 \
    --report "$work/r-torch-$target"
done

# The leaks, at the default settings of `gnncheck check` (20 cases): exit 1 is the catch.
step curand-leak 1 90 --report "$work/r-curand" resources=fail -- "$gnncheck" check --system gpu-replica-curand-leak --target spmm \
  --check resources --report "$work/r-curand"
step malloc-leak 1 90 --report "$work/r-malloc" resources=fail -- "$gnncheck" check --system gpu-replica-leak --target spmm \
  --check resources --report "$work/r-malloc"

step replica-suite 0 180 --report "$work/r-suite" resources=pass resources=fail -- "$gnncheck" run suites/gpu_replicas.yaml --jobs 8 --progress plain \
  --report "$work/r-suite"

# compute-sanitizer through `gnncheck check`: the racy replica passes differential, racecheck catches it.
step racy-racecheck 1 120 --report "$work/r-racy" differential=pass sanitize_racecheck=fail -- "$gnncheck" check --system gpu-replica-racy --target spmm \
  --check differential --sanitize racecheck --report "$work/r-racy"
# cuSPARSE's kernels under the sanitizer: its findings (if any) listed, not counted.
step cusparse-racecheck 0 150 --report "$work/r-cs-race" differential=pass sanitize_racecheck=pass -- "$gnncheck" run suites/gpu_replicas.yaml \
  --entry cusparse-under-sanitizer --jobs 4 --progress plain --sanitize racecheck --report "$work/r-cs-race"
step cusparse-memcheck 0 120 --report "$work/r-cs-mem" differential=pass sanitize_memcheck=pass -- "$gnncheck" run suites/gpu_replicas.yaml \
  --entry cusparse-under-sanitizer --jobs 4 --progress plain --sanitize memcheck --report "$work/r-cs-mem"
for tool in racecheck memcheck; do
  dir=$([ $tool = racecheck ] && echo "$work/r-cs-race" || echo "$work/r-cs-mem")
  say ""
  say "=== raw compute-sanitizer $tool logs of the cusparse entry (first 60 lines of each)"
  for log in "$dir"/sanitizer/*/sanitizer.*.log; do
    [ -f "$log" ] || continue
    say "--- $log"
    head -n 60 "$log" >>"$out"
  done
done

say ""
say "=== steps"
cat "$table" >>"$out"
rm -rf "$work"
exit $status

#!/usr/bin/env bash
# adapters/replicas/gpu/run_on_gpu.sh — the GPU bug replicas on a machine with a CUDA device, in one
# command: their unit test (each caught by its check, the `gpu` reference passing the same check),
# compute-sanitizer memcheck on it, the suite suites/gpu_replicas.yaml (each replica caught on
# random shrinking graphs, the reference passing the same checks), the default suite's replica
# entry (the CI suite catches the GPU replicas too), the GPU mutation-score table
# (gnncheck-mutation-score --gpu: cases until caught, shrunk counterexample), and the speed of the
# untransposed attention backward against its transposed twin (gnncheck_untransposed_speed on RMAT
# scales 18 and 20). Run from the project's root:
#
#   bash adapters/replicas/gpu/run_on_gpu.sh LOG_DIR [BIN_DIR]
#
# BIN_DIR holds already-built binaries (gnncheck gpu_replicas_test gpu_replicas_host_test
# gnncheck-mutation-score gnncheck_untransposed_speed); without
# it the project is configured with CUDA on and those are built in /tmp/gnncheck-replicas-build.
# LOG_DIR gets 8 files: summary.txt (the step table), one log per step (the mutation-score table is
# in gpu-mutation-score.log), and reports.tgz (the two suites' report folders: report.json,
# junit.xml, summary.md, index.html, failing cases). The last lines printed are the suite's replica
# table, the mutation-score table, the speed lines and the step table. The steps' time limits add
# up to 470 s;
# expected time on an H200: under 3 minutes. Exit code 0 only if every step passed.
set -uo pipefail
out=${1:?usage: adapters/replicas/gpu/run_on_gpu.sh LOG_DIR [BIN_DIR]}
bin=${2:-}
mkdir -p "$out"
summary="$out/summary.txt"
status=0
step() {  # step NAME LOG TIMEOUT_S COMMAND...
  local name=$1 log=$2 limit=$3; shift 3
  local start=$SECONDS
  timeout "$limit" "$@" >"$log" 2>&1
  local rc=$?
  [ $rc -ne 0 ] && status=1
  printf '%-16s rc=%-3s %4ss  %s\n' "$name" "$rc" "$((SECONDS - start))" "$*" | tee -a "$summary"
}

{ date -u; nvidia-smi -L; } >"$summary" 2>&1
if [ -z "$bin" ]; then
  bin=/tmp/gnncheck-replicas-build/bin
  if ! { cmake -B /tmp/gnncheck-replicas-build -S . -G Ninja -DCMAKE_BUILD_TYPE=Release -DGNNCHECK_CUDA=ON \
           -DCMAKE_CUDA_ARCHITECTURES=90 &&
         cmake --build /tmp/gnncheck-replicas-build -j "$(nproc)" --target gnncheck gpu_replicas_test \
           gpu_replicas_host_test gnncheck-mutation-score gnncheck_untransposed_speed; } >>"$summary" 2>&1; then
    echo "build failed (see $summary)"; tail -n 30 "$summary"; exit 1
  fi
  mkdir -p "$bin"
  cp /tmp/gnncheck-replicas-build/suites/gnncheck /tmp/gnncheck-replicas-build/adapters/replicas/gpu/gpu_replicas_test \
     /tmp/gnncheck-replicas-build/adapters/replicas/gpu/gpu_replicas_host_test \
     /tmp/gnncheck-replicas-build/gnncheck-mutation-score \
     /tmp/gnncheck-replicas-build/adapters/replicas/gpu/gnncheck_untransposed_speed "$bin"/
fi
jobs=$(( $(nproc) < 8 ? $(nproc) : 8 ))

reports=$(mktemp -d)
step tests       "$out/tests.log"                   60 bash -c "'$bin/gpu_replicas_host_test' --gtest_color=no && '$bin/gpu_replicas_test' --gtest_color=no"
step memcheck    "$out/memcheck.log"                80 compute-sanitizer --tool memcheck --error-exitcode 9 \
  "$bin/gpu_replicas_test" --gtest_color=no
step suite       "$out/gpu_replicas-suite.log"     120 "$bin/gnncheck" run suites/gpu_replicas.yaml --jobs "$jobs" \
  --progress plain --report "$reports/gpu_replicas-report"
step default     "$out/default-replicas.log"        60 "$bin/gnncheck" run suites/default.yaml --entry replicas-caught \
  --entry replicas-caught-layers --jobs "$jobs" --progress plain --report "$reports/default-replicas-report"
step mutation    "$out/gpu-mutation-score.log"      60 "$bin/gnncheck-mutation-score" --gpu --cases 100 --seed 1
step speed       "$out/untransposed_speed.log"      90 "$bin/gnncheck_untransposed_speed" 18 20
tar -czf "$out/reports.tgz" -C "$reports" . && rm -rf "$reports"

echo "--- final table of suites/gpu_replicas.yaml"
sed -n '/Bug replicas/,$p' "$out/gpu_replicas-suite.log" | head -n 20
echo "--- gnncheck-mutation-score --gpu --cases 100 --seed 1"
grep -E '^\||^Mutation score' "$out/gpu-mutation-score.log"
echo "--- gnncheck_untransposed_speed 18 20"
cat "$out/untransposed_speed.log"
echo "--- steps"
cat "$summary"
exit $status

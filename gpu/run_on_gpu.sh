#!/usr/bin/env bash
# gpu/run_on_gpu.sh — everything docs/gpu-results.md records for the GPU reference's correctness, in one
# command on a machine with a CUDA device: the GPU tests, the 2,000-cases-per-target property run,
# every check on both GPU systems, compute-sanitizer memcheck, racecheck and initcheck on the GPU
# test binary (and memcheck on the Kronecker generator's test), the 64-bit edge test (more than
# 2^31 edges), the device Kronecker generator's test, the peak memory of one GAT-1 training
# epoch, the Cora accuracy gate and the transpose benchmark.
# The Kronecker training scale runs are a second command (gpu/run_kronecker.sh), so that each
# stays under 8 minutes on an H200. Run from the project's root:
#
#   bash gpu/run_on_gpu.sh LOG_DIR [BIN_DIR]
#
# BIN_DIR holds already-built binaries (gpu_host_test gpu_ops_test gpu_training_kernels_test gpu_checks_test
# gpu_large_graph_test gpu_kronecker_test gnncheck_gpu_transpose_benchmark
# gnncheck_gpu_gat_epoch_memory gnncheck_gpu_accuracy_gate); without it the project is configured
# with CUDA on and those targets are built in /tmp/gnncheck-gpu-build. Datasets are found as
# fixtures/dataset.h says ($GNNCHECK_DATASETS or ../shared/datasets). Each step has a time limit;
# LOG_DIR receives two files: summary.txt (the step table and the summary) and logs.tgz (every
# step's full log, logs/<step>.log); the last lines printed are
# the summary. Expected time on an H200: about 200 s; the steps share a budget of 215 s
# (GNNCHECK_GPU_RUN_BUDGET_S), so the run ends in time whatever hangs, and a step the budget did
# not reach is reported NOT RUN. Exit code: 0 only if every step passed
# (see the racecheck note below).
set -uo pipefail
out=${1:?usage: gpu/run_on_gpu.sh LOG_DIR [BIN_DIR]}
bin=${2:-}
logs="$out/logs"  # one file per step; packed into $out/logs.tgz at the end
mkdir -p "$logs"
summary="$out/summary.txt"
status=0
step() {  # step NAME LOG TIMEOUT_S COMMAND...  (the limit shrinks to what is left of the budget)
  local name=$1 log=$2 limit=$3; shift 3
  local start=$SECONDS left=$((deadline - SECONDS))
  if [ "$left" -lt 5 ]; then
    echo "not run: the run's time budget is spent" >"$log"
    status=1
    printf '%-18s NOT RUN (time budget spent)  %s\n' "$name" "$*" | tee -a "$summary"
    return
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  timeout "$limit" "$@" >"$log" 2>&1
  local rc=$?
  [ $rc -ne 0 ] && status=1
  printf '%-18s rc=%-3s %4ss  %s\n' "$name" "$rc" "$((SECONDS - start))" "$*" | tee -a "$summary"
}

{ date -u; nvidia-smi -L; nvcc --version 2>/dev/null | tail -n 2; } >"$summary" 2>&1
if [ -z "$bin" ]; then
  bin=/tmp/gnncheck-gpu-build/gpu
  if ! { cmake -B /tmp/gnncheck-gpu-build -S . -G Ninja -DCMAKE_BUILD_TYPE=Release -DGNNCHECK_CUDA=ON \
           -DCMAKE_CUDA_ARCHITECTURES=90 &&
         cmake --build /tmp/gnncheck-gpu-build -j "$(nproc)" --target gpu_host_test gpu_ops_test gpu_training_kernels_test gpu_checks_test \
           gpu_large_graph_test gpu_kronecker_test gnncheck_gpu_transpose_benchmark gnncheck_gpu_gat_epoch_memory \
           gnncheck_gpu_accuracy_gate; } >>"$summary" 2>&1; then
    echo "build failed (see $summary)"; tail -n 30 "$summary"; exit 1
  fi
fi

# From here the steps share the budget (with prebuilt binaries, that is the whole run).
deadline=$((SECONDS + ${GNNCHECK_GPU_RUN_BUDGET_S:-215}))
step tests          "$logs/gpu_ops_test.log"      60 bash -c "'$bin/gpu_host_test' --gtest_color=no && '$bin/gpu_ops_test' --gtest_color=no && '$bin/gpu_training_kernels_test' --gtest_color=no"
step property       "$logs/property.log"         120 env GNNCHECK_GPU_CASES_PER_KIND=400 \
  "$bin/gpu_ops_test" --gtest_color=no --gtest_filter='GpuSystemsTest.Every*'
step checks         "$logs/checks.log"            60 "$bin/gpu_checks_test" --gtest_color=no
step large_graph    "$logs/large_graph.log"      120 "$bin/gpu_large_graph_test" --gtest_color=no
step kronecker_test "$logs/kronecker_test.log"    60 "$bin/gpu_kronecker_test" --gtest_color=no
step gat_epoch      "$logs/gat_epoch_memory.log"  60 "$bin/gnncheck_gpu_gat_epoch_memory"
# The out-of-memory test asks cudaMalloc for 4 PiB on purpose; the sanitizer would report that call.
step memcheck       "$logs/memcheck.log"          90 compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9 \
  "$bin/gpu_ops_test" --gtest_color=no --gtest_filter='-*OutOfMemory*'
# The device generator's kernels and CUB's sort/unique under memcheck (small scales).
step memcheck_kronecker "$logs/memcheck_kronecker.log" 60 compute-sanitizer --tool memcheck --leak-check full \
  --error-exitcode 9 "$bin/gpu_kronecker_test" --gtest_color=no
step initcheck      "$logs/initcheck.log"         90 compute-sanitizer --tool initcheck --error-exitcode 9 \
  "$bin/gpu_ops_test" --gtest_color=no --gtest_filter='-*OutOfMemory*'
# racecheck on the gnncheck kernels (every test but the `cusparse` system's), then on the `cusparse`
# system alone: cuSPARSE's own cusparseSDDMM kernel (sddmm_ker) reports shared-memory hazard
# warnings there (0 errors); they are recorded, not counted as a failure of this run.
step racecheck      "$logs/racecheck.log"        100 compute-sanitizer --tool racecheck --error-exitcode 9 \
  "$bin/gpu_ops_test" --gtest_color=no --gtest_filter='-*OutOfMemory*:*Cusparse*:*Duplicate*'
status_before_cusparse_racecheck=$status
step racecheck_cusparse "$logs/racecheck_cusparse.log" 60 compute-sanitizer --tool racecheck \
  "$bin/gpu_ops_test" --gtest_color=no --gtest_filter='*Cusparse*'
status=$status_before_cusparse_racecheck
{ echo; echo "===== racecheck of the cusparse system alone ====="; cat "$logs/racecheck_cusparse.log"; } >>"$logs/racecheck.log"
rm -f "$logs/racecheck_cusparse.log"
step gate           "$logs/accuracy_gate.log"    200 "$bin/gnncheck_gpu_accuracy_gate" cora 200
# Last, so that a run short of time loses the performance table rather than a correctness step.
step benchmark      "$logs/benchmark.log"         60 "$bin/gnncheck_gpu_transpose_benchmark"

{
  echo "--- property run"; grep -E "cases, worst|FAILED|PASSED" "$logs/property.log"
  echo "--- checks"; grep -cE "^PASS" "$logs/checks.log" | sed 's/$/ checks passed/'; grep -E "^FAIL|FAILED  \]" "$logs/checks.log"
  echo "--- 64-bit edges and the Kronecker generator"
  grep -hE "graph of|skipped|OK \]|FAILED|PASSED" "$logs/large_graph.log" "$logs/kronecker_test.log"
  echo "--- sanitizers"
  grep -hE "ERROR SUMMARY|LEAK SUMMARY" "$logs/memcheck.log" | sed "s/^/memcheck: /"
  grep -hE "ERROR SUMMARY|LEAK SUMMARY" "$logs/memcheck_kronecker.log" | sed "s/^/memcheck, Kronecker generator: /"
  grep -hE "ERROR SUMMARY" "$logs/initcheck.log" | sed "s/^/initcheck: /"
  grep -hE "RACECHECK SUMMARY" "$logs/racecheck.log" | sed -n '1s/^/racecheck, gnncheck kernels: /p;2s/^/racecheck, cusparse system: /p'
  echo "--- benchmark"; cat "$logs/benchmark.log"
  echo "--- GAT-1 training epoch memory"; cat "$logs/gat_epoch_memory.log"
  echo "--- accuracy gate"; cat "$logs/accuracy_gate.log"
} >>"$summary"
sed -n '/^--- property run/,$p' "$summary"
# Two files come back: summary.txt and logs.tgz (every step's full log).
tar -czf "$out/logs.tgz" -C "$out" logs && rm -rf "$logs"
exit $status

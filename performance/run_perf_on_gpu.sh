#!/usr/bin/env bash
# performance/run_perf_on_gpu.sh — every measurement of issue 8 (docs/performance.md) in one
# command on a machine with a CUDA device and PyTorch Geometric: the GPU reference's training on
# the Reddit-shaped graph, PyG on exactly the same graph file, the per-kernel benchmark, the GAT-1
# check against the oracle, and the overhead benchmark on Cora and sampled mini-batches. Run from
# the project's root:
#
#   bash performance/run_perf_on_gpu.sh LOG_DIR BIN_DIR [STEPS]
#
# STEPS (default all) is a comma-separated subset of reddit,pyg,kernels,overhead,verify, for a
# run that repeats only some measurements (pyg needs reddit's graph file from the same run).
#
# BIN_DIR holds gnncheck_gpu_reddit_bench, gnncheck_gpu_kernel_bench, gnncheck_gpu_reddit_verify
# and gnncheck_gpu_overhead_bench (those present are run) and may hold shared libraries they need
# (libfmt.so.9); it is put on LD_LIBRARY_PATH. The graph file (~1 GB) goes to $GNNCHECK_PERF_DATA
# (default /tmp/gnncheck-perf), not to LOG_DIR. Every step is time-boxed; the whole run takes
# about 4 minutes on an H200 and prints the goal table last. LOG_DIR ends with two files:
# goals.md (the table) and perf-logs.tgz (every log and JSON file of the run).
set -uo pipefail
out=${1:?usage: performance/run_perf_on_gpu.sh LOG_DIR BIN_DIR}
bin=${2:?usage: performance/run_perf_on_gpu.sh LOG_DIR BIN_DIR [STEPS]}
steps=",${3:-reddit,pyg,kernels,overhead,verify},"
bin=$(cd "$bin" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
data=${GNNCHECK_PERF_DATA:-/tmp/gnncheck-perf}
mkdir -p "$data"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
summary="$out/summary.txt"
# The whole run stays under 8 minutes: each step gets at most what is left of 450 s (the goal
# table and the copying of logs need the rest).
deadline=$((SECONDS + 450))
step() {  # step NAME LOG TIMEOUT_S COMMAND...
  local name=$1 log=$2 limit=$3; shift 3
  local start=$SECONDS left=$((deadline - SECONDS))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -le 5 ]; then
    printf '%-9s skipped: the time limit of the run is reached\n' "$name" | tee -a "$summary"
    return
  fi
  timeout "$limit" "$@" >"$log" 2>&1
  local rc=$?
  printf '%-9s rc=%-3s %4ss  %s\n' "$name" "$rc" "$((SECONDS - start))" "$*" | tee -a "$summary"
  tail -n 25 "$log"
}
have() { [ -x "$bin/$1" ]; }
wanted() { [[ "$steps" == *",$1,"* ]]; }

{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv;
  nproc; python3 -c 'import torch, torch_geometric; print("torch", torch.__version__, "PyG", torch_geometric.__version__)'
} >"$summary" 2>&1
cat "$summary"

# 1. The GPU reference (also writes the graph file for PyG).
wanted reddit && have gnncheck_gpu_reddit_bench &&
  step reddit "$out/reddit_bench.log" 150 "$bin/gnncheck_gpu_reddit_bench" --data "$data/reddit.bin" --json "$out/ours.json"
# 2. PyTorch Geometric on the same file: edge_index and torch.sparse CSR paths.
wanted pyg && [ -f "$data/reddit.bin" ] &&
  step pyg "$out/pyg_reddit.log" 200 python3 "$here/pyg_reddit_bench.py" --data "$data/reddit.bin" --json "$out/pyg.json"
rm -f "$data/reddit.bin"
# 3. Per kernel, F = 16 and 64, 1 and 3 heads for the edge kernels.
wanted kernels && have gnncheck_gpu_kernel_bench && {
  step kernels "$out/kernel_bench_f64.log" 60 "$bin/gnncheck_gpu_kernel_bench" --features 64 --json "$out/kernels_f64.json"
  step kernels "$out/kernel_bench_h3.log" 60 "$bin/gnncheck_gpu_kernel_bench" --features 16 --heads 3 --json "$out/kernels_h3.json"
}
# 4. Overhead on Cora and on sampled mini-batches (batch 256, fanout 10,10,10), ours and PyG's.
wanted overhead && have gnncheck_gpu_overhead_bench && {
  step overhead "$out/overhead.log" 90 "$bin/gnncheck_gpu_overhead_bench" --blocks-dir "$data/blocks" --json "$out/overhead_ours.json"
  [ -d "$data/blocks" ] &&
    step overhead "$out/overhead_pyg.log" 90 python3 "$here/pyg_overhead_bench.py" --blocks-dir "$data/blocks" --json "$out/overhead_pyg.json"
}
# 5. One GAT-1 layer forward + backward against the float64 oracle (goal: < 60 s end to end); last,
# with what is left of the time (it is the step whose length is least certain).
wanted verify && have gnncheck_gpu_reddit_verify &&
  step verify "$out/reddit_verify.log" 200 "$bin/gnncheck_gpu_reddit_verify" --json "$out/verify.json"
python3 "$here/reddit_goal_table.py" "$out" >"$out/goals.txt" 2>&1
# Few files come back from the device machine: everything goes into one archive beside the table.
(cd "$out" && tar czf perf-logs.tgz --exclude=perf-logs.tgz ./* && find . -type f ! -name perf-logs.tgz ! -name goals.md -delete)
echo
echo "===== goal table (issue 8) ====="
cat "$out/goals.md" 2>/dev/null || echo "no goal table (see perf-logs.tgz: goals.txt)"

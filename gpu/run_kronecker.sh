#!/usr/bin/env bash
# gpu/run_kronecker.sh — GCN training on Graph500 Kronecker graphs generated on the device
# (gnncheck_gpu_kronecker_gcn): a quick check at scale 20, then scales 25, 26 and 27 (about 1.07,
# 2.1 and 4.3 billion directed edges), each in its own process under its own time limit, so that
# a scale that does not fit or does not finish leaves the others' figures. Run from the project's
# root:
#
#   bash gpu/run_kronecker.sh LOG_DIR [BIN_DIR]
#
# BIN_DIR holds an already-built gnncheck_gpu_kronecker_gcn; without it the target is built in
# /tmp/gnncheck-gpu-build. LOG_DIR receives summary.txt (the step table and each scale's RESULT
# line, printed last) and logs.tgz (logs/kronecker_<scale>.log). Under 8 minutes on an H200
# whatever happens (the limits add up to 450 s).
set -uo pipefail
out=${1:?usage: gpu/run_kronecker.sh LOG_DIR [BIN_DIR]}
bin=${2:-}
logs="$out/logs"  # one file per step; packed into $out/logs.tgz at the end
mkdir -p "$logs"
summary="$out/summary.txt"
status=0
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=memory.total,memory.used --format=csv; } >"$summary" 2>&1
if [ -z "$bin" ]; then
  bin=/tmp/gnncheck-gpu-build/gpu
  if ! { cmake -B /tmp/gnncheck-gpu-build -S . -G Ninja -DCMAKE_BUILD_TYPE=Release -DGNNCHECK_CUDA=ON \
           -DCMAKE_CUDA_ARCHITECTURES=90 &&
         cmake --build /tmp/gnncheck-gpu-build -j "$(nproc)" --target gnncheck_gpu_kronecker_gcn; } >>"$summary" 2>&1; then
    echo "build failed (see $summary)"; tail -n 30 "$summary"; exit 1
  fi
fi
# GNNCHECK_KRONECKER_SCALES overrides the list of SCALE:LIMIT_S pairs (e.g. "25:30 27:40").
for scale_limit in ${GNNCHECK_KRONECKER_SCALES:-20:40 25:90 26:130 27:190}; do
  scale=${scale_limit%%:*} limit=${scale_limit##*:}
  start=$SECONDS
  timeout "$limit" "$bin/gnncheck_gpu_kronecker_gcn" "$scale" 3 1 >"$logs/kronecker_$scale.log" 2>&1
  rc=$?
  [ $rc -ne 0 ] && status=1
  printf 'scale %-3s rc=%-3s %4ss (limit %ss)\n' "$scale" "$rc" "$((SECONDS - start))" "$limit" | tee -a "$summary"
  [ $rc -eq 124 ] && echo "scale $scale: stopped at its time limit; last lines:" | tee -a "$summary" &&
    tail -n 3 "$logs/kronecker_$scale.log" | tee -a "$summary"
done
echo "--- results" >>"$summary"
grep -h -E "^RESULT|^FAILED" "$logs"/kronecker_*.log >>"$summary"
sed -n '/^--- results/,$p' "$summary"
# Two files come back: summary.txt and logs.tgz (every step's full log).
tar -czf "$out/logs.tgz" -C "$out" logs && rm -rf "$logs"
exit $status

#!/usr/bin/env bash
# On the GPU machine (../shared/device/README.md): what users run, under that machine's Python
# (NumPy 2, current PyTorch, PyTorch Geometric), from one source tree:
#   1. the gnncheck command built with CUDA;
#   2. the shipped `ci` and `full` suites against the torch/PyG adapter on the GPU
#      (adapters/python/torch_adapter.py); `full` in PARTS disjoint parts run side by side
#      (--share), its oracle and scale entries once, whole (they draw no cases to share);
#   3. `pip install .` of the Python package and its tests against the installed copy
#      (python/tests/pip_install_check.sh);
#   4. the gpu-labelled ctest tests (with GPU_TESTS=1; they need the test build).
# Carry [".device"] (pack-deps.sh); the source is the tree this runs in, or SRC_TAR (a `git archive`
# tarball carried in .device/) for an exact commit; GNNCHECK_BIN: a folder holding gnncheck and
# gnncheck-plugin-host built elsewhere (the device README's first way), used instead of building
# here. Logs and summary.txt go to $OUT.
#   bash scripts/device-verify.sh
set -u
OUT=${OUT:-/tmp/out}
PARTS=${PARTS:-8}
mkdir -p "$OUT"
eval "$(bash .device/unpack-deps.sh)"
root=$(pwd)
if [ -n "${SRC_TAR:-}" ]; then
  rm -rf /tmp/src && mkdir -p /tmp/src && tar -xf "$SRC_TAR" -C /tmp/src && cp -r .device /tmp/src/ && cd /tmp/src
  root=/tmp/src
fi
export GNNCHECK_SUITES_DIR="$root/suites"
summary() { echo "$*" | tee -a "$OUT/summary.txt"; }
# Each run below stops after DEADLINE seconds (exit 124) so that what finished still comes back.
DEADLINE=${DEADLINE:-450}
tests=OFF
[ "${GPU_TESTS:-0}" = 1 ] && tests=ON
start=$(date +%s)
if [ -n "${GNNCHECK_BIN:-}" ]; then
  mkdir -p /tmp/b/suites /tmp/b/adapters
  cp "$GNNCHECK_BIN/gnncheck" /tmp/b/suites/ && cp "$GNNCHECK_BIN/gnncheck-plugin-host" /tmp/b/adapters/
else
cmake -B /tmp/b -S . -G Ninja -DCMAKE_BUILD_TYPE=Release -DGNNCHECK_CUDA=ON -DGNNCHECK_BUILD_TESTS=$tests \
      -DGNNCHECK_PYTHON_PACKAGE=OFF > "$OUT/configure.log" 2>&1 || { tail -n 30 "$OUT/configure.log"; exit 1; }
targets="gnncheck gnncheck-plugin-host"
[ "$tests" = ON ] && targets=""
cmake --build /tmp/b -j "$(nproc)" ${targets:+--target $targets} > "$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log"; exit 1; }
fi
summary "build: $(( $(date +%s) - start )) s"
python3 -c "import numpy, torch, torch_geometric; print('numpy', numpy.__version__, 'torch', torch.__version__, 'pyg', torch_geometric.__version__, 'cuda', torch.cuda.is_available())" | tee -a "$OUT/summary.txt"

G=/tmp/b/suites/gnncheck
adapter="python3 $root/adapters/python/torch_adapter.py --device cuda"
whole_entries=$("$G" entries full | awk 'NR > 1 {print $1}' | grep -E '^(oracle|scale)-')
shared_entries=$("$G" entries full | awk 'NR > 1 {print $1}' | grep -vE '^(oracle|scale)-')
flags() { for e in "$@"; do printf ' --entry %s' "$e"; done; }
start=$(date +%s)
( timeout "$DEADLINE" "$G" run ci --adapter "$adapter" --report "$OUT/ci" > "$OUT/ci.log" 2>&1; echo "ci: exit $?, $(tail -n 1 "$OUT/ci.log")" > "$OUT/ci.status" ) &
( timeout "$DEADLINE" "$G" run full $(flags $whole_entries) --adapter "$adapter" --report "$OUT/full-whole" > "$OUT/full-whole.log" 2>&1
  echo "full, entries run whole: exit $?, $(tail -n 1 "$OUT/full-whole.log")" > "$OUT/full-whole.status" ) &
for p in $(seq 1 "$PARTS"); do
  ( timeout "$DEADLINE" "$G" run full $(flags $shared_entries) --share "$p/$PARTS" --adapter "$adapter" --report "$OUT/full-$p" > "$OUT/full-$p.log" 2>&1
    echo "full part $p/$PARTS: exit $?, $(tail -n 1 "$OUT/full-$p.log")" > "$OUT/full-$p.status" ) &
done
( OUT="$OUT/pip" timeout "$DEADLINE" bash python/tests/pip_install_check.sh > /dev/null 2>&1; echo "pip install + package tests: see pip/summary.txt" > "$OUT/pip.status" ) &
wait
summary "suites and package: $(( $(date +%s) - start )) s"
cat "$OUT"/*.status | tee -a "$OUT/summary.txt"
[ -f "$OUT/pip/summary.txt" ] && cat "$OUT/pip/summary.txt" | tee -a "$OUT/summary.txt"
if [ "$tests" = ON ]; then
  (cd /tmp/b && ctest -L gpu --output-on-failure > "$OUT/ctest-gpu.log" 2>&1; echo "ctest -L gpu: exit $?, $(grep 'tests passed' "$OUT/ctest-gpu.log")") | tee -a "$OUT/summary.txt"
fi

#!/usr/bin/env bash
# gnncheck.check_scale on the H200 (python/check-scale.md): the package's CUDA tests
# (python/tests/test_cuda.py, the scale tests included) and python/benchmarks/check_scale_h200.py —
# a correct torch SpMM on rmat:22 and kronecker:22, the A-for-Aᵀ backward caught on rmat:22, PyG's
# GCNConv on rmat:20 and kronecker:20 — with their seconds.
#
#   bash scripts/python_scale_h200.sh PY_BUILD OUT     # from the project's root; exit 0 when everything held
#
# PY_BUILD: a build of the Python package for this machine's python3 (torch 2.11, PyG 2.8); configured
# and built here, as python/README.md's CUDA section says, when it has none that this python3 imports.
# Writes OUT/test_cuda.txt and OUT/check_scale_h200.txt (every case's line, then a table).
set -uo pipefail
if [[ $# -ne 2 ]]; then
  echo "usage: $0 PY_BUILD OUT" >&2
  exit 2
fi
build=$(realpath -m "$1") out=$(realpath -m "$2")
mkdir -p "$out"
python=$(command -v python3)
if ! PYTHONPATH=$build/python "$python" -c "import gnncheck" 2>/dev/null; then
  echo "building gnncheck_python for $python in $build"
  start=$(date +%s)
  if ! { cmake -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGNNCHECK_CUDA=OFF -DGNNCHECK_PYTHON="$python" \
           -DPython3_EXECUTABLE="$python" -Dpybind11_DIR="$("$python" -c "import pybind11; print(pybind11.get_cmake_dir())")" &&
         cmake --build "$build" --target gnncheck_python; } > "$out/build.txt" 2>&1; then
    echo "building gnncheck_python failed; see $out/build.txt" >&2
    tail -20 "$out/build.txt" >&2
    exit 1
  fi
  echo "built in $(( $(date +%s) - start )) s"
fi
status=0
(cd python/tests && PYTHONPATH=$build/python OMP_NUM_THREADS=1 "$python" run_pytest.py --needs torch --needs cuda -- \
   -q -s -p no:cacheprovider test_cuda.py) > "$out/test_cuda.txt" 2>&1 || status=1
tail -3 "$out/test_cuda.txt"
# The oracle's part uses every core (OpenMP), as `gnncheck scale` does.
PYTHONPATH=$build/python "$python" python/benchmarks/check_scale_h200.py --device cuda > "$out/check_scale_h200.txt" 2>&1 || status=1
tail -9 "$out/check_scale_h200.txt"
exit $status

#!/usr/bin/env bash
# `pip install .` of the Python package, then its tests against the installed copy, on a machine
# whose python3 has scikit-build-core, pybind11, numpy, torch and pytest (the GPU machine's, with the
# carried Debian packages unpacked). Run from the repository root; logs go to $OUT (default /tmp/out).
#   bash python/tests/pip_install_check.sh [OLD_KIT.py OLD_SYSTEM.py]
# With the two files of an earlier commit it also runs the layout tests against them ("before").
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
ROOT=$(pwd)
SITE=/tmp/gnncheck-site
python3 -c "import sys, numpy, torch, pybind11, scikit_build_core, pytest; print('python', sys.version.split()[0], 'numpy', numpy.__version__, 'torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'pybind11', pybind11.__version__, 'scikit-build-core', scikit_build_core.__version__, 'pytest', pytest.__version__)" | tee "$OUT/versions.txt"
start=$(date +%s)
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) python3 -m pip install --no-build-isolation --no-deps --no-index --target "$SITE" -v . > "$OUT/pip-install.log" 2>&1
status=$?
echo "pip install . exit $status in $(( $(date +%s) - start )) s" | tee "$OUT/summary.txt"
if [ $status -ne 0 ]; then  # the tests still run, against the CMake route's build tree
  cmake -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DGNNCHECK_CUDA=OFF -DGNNCHECK_BUILD_TESTS=OFF \
        -DGNNCHECK_PYTHON_PACKAGE=ON -DPython3_EXECUTABLE="$(command -v python3)" > "$OUT/cmake-build.log" 2>&1 &&
    cmake --build /tmp/b -j "$(nproc)" --target gnncheck_python >> "$OUT/cmake-build.log" 2>&1
  echo "fallback: the CMake route's build exit $?; the tests below use /tmp/b/python" | tee -a "$OUT/summary.txt"
  SITE=/tmp/b/python
fi
(cd "$SITE" && find . -path ./gnncheck/__pycache__ -prune -o -type f -print | sort) > "$OUT/installed-files.txt"
cd /tmp
PYTHONPATH=$SITE python3 -c "import gnncheck, importlib.metadata as m; print('imported', gnncheck.__version__, 'from', gnncheck.__file__); print('pytest11:', [e.value for e in m.entry_points(group='pytest11') if e.name == 'gnncheck']); import numpy as np; from gnncheck.adapter_kit.gnncheck_adapter import write_npy; write_npy('/tmp/t.npy', np.zeros((2, 3), np.float32).T); print('issue 34 one-liner:', np.load('/tmp/t.npy').shape)" 2>&1 | tee -a "$OUT/summary.txt"
cd "$ROOT/python/tests"
tests="test_layouts.py test_numpy2_compat.py test_numpy.py test_describe.py test_skeleton.py test_spmm.py test_layers.py test_errors.py test_plugin.py test_rerun.py test_torch_adapter.py test_cuda.py test_scale.py"
PYTHONPATH=$SITE timeout 300 python3 -m pytest -q -rs -p no:cacheprovider $tests > "$OUT/pytest-after.log" 2>&1
echo "after: exit $? — $(tail -1 "$OUT/pytest-after.log")" | tee -a "$OUT/summary.txt"
if [ $# -ge 2 ]; then
  rm -rf /tmp/gnncheck-before && cp -r "$SITE" /tmp/gnncheck-before
  cp "$1" /tmp/gnncheck-before/gnncheck/adapter_kit/gnncheck_adapter.py
  cp "$2" /tmp/gnncheck-before/gnncheck/_system.py
  find /tmp/gnncheck-before -name __pycache__ -prune -exec rm -rf {} +
  PYTHONPATH=/tmp/gnncheck-before timeout 120 python3 -m pytest -q -rf -p no:cacheprovider test_layouts.py > "$OUT/pytest-before.log" 2>&1
  echo "before (the earlier kit and _system.py): exit $? — $(tail -1 "$OUT/pytest-before.log")" | tee -a "$OUT/summary.txt"
fi

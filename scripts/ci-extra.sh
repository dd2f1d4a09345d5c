#!/usr/bin/env bash
# scripts/ci-extra.sh — the bounded reliability steps for CI: a subset of the CPU tests under
# AddressSanitizer + UndefinedBehaviorSanitizer, then every libFuzzer target for a few seconds on its
# seed corpus. Exits non-zero when either step finds anything.
#
#   scripts/ci-extra.sh                  # both steps; build dir build-sanitizers
#   FUZZ_SECONDS=30 scripts/ci-extra.sh  # longer fuzzing (default 5 s per target, 8 targets)
#   FUZZ_SEED= scripts/ci-extra.sh       # random fuzz seeds instead of the fixed FUZZ_SEED=1
#   STEPS=asan scripts/ci-extra.sh       # only the sanitizer step (STEPS=fuzz: only fuzzing)
#   BUILD_DIR=/tmp/s scripts/ci-extra.sh # another build dir
#
# Both steps share one clang tree: every file compiled once with ASan + UBSan and libFuzzer's
# coverage instrumentation (-fsanitize=fuzzer-no-link, which the tests run with and never read),
# so the libraries that the sanitizer subset and the fuzz targets both link (oracle, fixtures,
# adapters) are built once, not once per compiler: on 2 cores with a cold compiler cache CI's time
# is mostly compiling. (scripts/sanitize.sh alone keeps gcc's sanitizers, for the whole ctest -L cpu.)
#
# The sanitizer subset is the code that reads what gnncheck does not control — the parsers of graph,
# tensor and dataset files, the adapter protocol, the process and plugin systems with their faulty
# adapters and plugins — plus the oracle's index-heavy graph and op code (forward and backward) and
# the checks that everything feeds. It needs only the oracle, fixtures, adapters and checks libraries,
# not the suites/reports/training half of the build, and its tests took 38 s under ASan. The whole
# `ctest -L cpu` under ASan is `scripts/sanitize.sh` (too long for every CI run on 2 cores; see
# docs/reliability.md for its last result). Each step prints its wall time.
#
# The fuzz step runs every target with one fixed seed (FUZZ_SEED, default 1; see scripts/fuzz.sh), so
# CI fails only on a finding that the same command reproduces, never on a random draw nobody has
# seen; the longer manual runs (scripts/fuzz.sh 60) use random seeds to find new things.
set -euo pipefail

source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
steps="${STEPS:-asan fuzz}"
fuzz_seconds="${FUZZ_SECONDS:-5}"
fuzz_seed="${FUZZ_SEED-1}"  # FUZZ_SEED= (empty): random seeds
status=0

build_dir="${BUILD_DIR:-${source_dir}/build-sanitizers}"
jobs="${JOBS:-2}"
asan_targets=(
  core_graph_test oracle_ops_golden_test oracle_ops_gradcheck_test oracle_ops_determinism_test
  oracle_ops_bad_input_test
  fixtures_npy_test fixtures_matrix_market_test fixtures_edge_list_test fixtures_dataset_test
  fixtures_corrupted_input_test fixtures_absurd_sizes_test
  protocol_test process_system_test plugin_system_test checks_test
)
# ctest names equal the target names; anchor them so that no other test is picked up.
asan_regex="^($(IFS='|'; echo "${asan_targets[*]}"))\$"

start=$(date +%s)
wanted=()
[[ " ${steps} " == *" asan "* ]] && wanted+=("${asan_targets[@]}")
[[ " ${steps} " == *" fuzz "* ]] && wanted+=(gnncheck_fuzz_targets)  # fuzz/CMakeLists.txt
# -O1 with line tables: fast enough to fuzz, reports keep file:line, asserts stay on (no NDEBUG).
CC=clang CXX=clang++ cmake -S "${source_dir}" -B "${build_dir}" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer" \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer" \
  -DGNNCHECK_SANITIZE=ON -DGNNCHECK_FUZZ=ON -DGNNCHECK_BUILD_TESTS=ON -DGNNCHECK_CUDA=OFF \
  -DGNNCHECK_BENCHMARKS=OFF -DGNNCHECK_PYTHON_PACKAGE=OFF >/dev/null
cmake --build "${build_dir}" -j "${jobs}" --target "${wanted[@]}" || exit 1
echo "ci-extra.sh: configure and build (one clang tree for both steps) $(( $(date +%s) - start )) s"

if [[ " ${steps} " == *" asan "* ]]; then
  start=$(date +%s)
  # The oracle's random-direction gradcheck on a 110,000-edge graph measures numerics, not memory
  # safety: the same index code runs under the sanitizers on the small graphs of the full-Jacobian
  # test, and the large one (30 s of CPU uninstrumented, 190 s instrumented) runs in the plain ctest.
  GTEST_FILTER="-OpsGradcheck.RandomDirectionsOnGraphWithOver100kEdges" \
  NO_BUILD=1 BUILD_DIR="${build_dir}" "${source_dir}/scripts/sanitize.sh" -R "${asan_regex}" ||
    status=1
  echo "ci-extra.sh: ASan + UBSan step $(( $(date +%s) - start )) s"
fi

if [[ " ${steps} " == *" fuzz "* ]]; then
  start=$(date +%s)
  NO_BUILD=1 SEED="${fuzz_seed}" BUILD_DIR="${build_dir}" "${source_dir}/scripts/fuzz.sh" "${fuzz_seconds}" || status=1
  echo "ci-extra.sh: fuzz step (${fuzz_seconds} s per target, seed ${fuzz_seed:-random}) $(( $(date +%s) - start )) s"
fi

exit "${status}"

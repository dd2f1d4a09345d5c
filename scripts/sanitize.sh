#!/usr/bin/env bash
# scripts/sanitize.sh — builds the CPU tests with AddressSanitizer + UndefinedBehaviorSanitizer and
# runs every test labelled `cpu` on that build. Any sanitizer report fails the test that printed it
# (ASan aborts; UBSan is made fatal below), so a clean run is a zero exit status.
#
#   scripts/sanitize.sh                 # build dir: build-asan, 2 jobs
#   BUILD_DIR=/tmp/asan JOBS=8 scripts/sanitize.sh
#   scripts/sanitize.sh -R fixtures_    # extra arguments go to ctest
#   TARGETS="fixtures_npy_test protocol_test" scripts/sanitize.sh -R "fixtures_npy|protocol"
#                                       # build only these targets (then select their tests with -R)
#   NO_BUILD=1 BUILD_DIR=build-sanitizers scripts/sanitize.sh -R …
#                                       # run the tests of a tree configured and built already
#                                       # (scripts/ci-extra.sh's clang tree)
#
# -O1 with line tables: sanitizer reports keep file:line, asserts stay on (no NDEBUG), and the build
# is much faster than -O2 -g.
set -euo pipefail

source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-${source_dir}/build-asan}"
jobs="${JOBS:-2}"

start=$(date +%s)
if [[ -z "${NO_BUILD:-}" ]]; then
cmake -S "${source_dir}" -B "${build_dir}" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DGNNCHECK_SANITIZE=ON -DGNNCHECK_CUDA=OFF -DGNNCHECK_BENCHMARKS=OFF -DGNNCHECK_BUILD_TESTS=ON
if [[ -n "${TARGETS:-}" ]]; then
  # shellcheck disable=SC2086  # TARGETS is a space-separated list
  cmake --build "${build_dir}" -j "${jobs}" --target ${TARGETS}
else
  cmake --build "${build_dir}" -j "${jobs}"
fi
fi
built=$(date +%s)

# halt_on_error makes UBSan reports fatal (by default UBSan prints and carries on, which a
# passing test would hide). detect_leaks stays on: a leak fails the test too.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=${source_dir}/scripts/lsan-suppressions.txt}"
# One OpenMP thread per test: ctest runs ${jobs} tests at a time.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
status=0
ctest --test-dir "${build_dir}" -L cpu -j "${jobs}" --output-on-failure "$@" || status=$?
finished=$(date +%s)

echo "sanitize.sh: build $((built - start)) s, ctest -L cpu $((finished - built)) s, exit status ${status}"
exit "${status}"

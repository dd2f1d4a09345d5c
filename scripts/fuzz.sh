#!/usr/bin/env bash
# scripts/fuzz.sh — builds the libFuzzer targets of fuzz/ with clang (ASan + UBSan + coverage) and
# runs each for a bounded time on a copy of its seed corpus (fuzz/corpus/<target>/).
#
#   scripts/fuzz.sh                 # every target, 60 s each; build dir: build-fuzz
#   scripts/fuzz.sh 10 fuzz_npy     # 10 s, one target
#   BUILD_DIR=/tmp/fz JOBS=8 scripts/fuzz.sh 300
#   NO_BUILD=1 scripts/fuzz.sh 60 fuzz_npy   # run what is built, without configuring or building
#   SEED=1 scripts/fuzz.sh 5        # fixed seed (CI): every run explores the same input sequence
#
# Seeds: without SEED each target draws a random seed (printed in its line) — right for the longer
# manual runs, which should explore something new each time. With SEED=N every target runs with
# -seed=N, so its mutations follow one fixed sequence from its seed corpus; a time-bounded run then
# explores a prefix of that sequence (longer on a faster or less loaded machine), and a finding it
# reports is one the same command reproduces, not a chance draw nobody has seen before. To re-run a
# random-seed run exactly, pass the seed its line printed: SEED=<seed> scripts/fuzz.sh <seconds> <target>.
#
# A finding is anything but "a valid object or an InputError": an escaping exception, a crash, a
# sanitizer report, a broken invariant, an input taking over 10 s, more than 2 GiB resident or a
# single allocation over 1 GiB. libFuzzer writes the input that triggered it to
# <build>/fuzz-runs/<target>/artifacts/; re-run it with `<build>/fuzz/<target> <that file>`.
# Prints one line per target (executions, findings) and exits non-zero if any target found anything.
#
# -O1 with line tables: fast enough to fuzz, reports keep file:line, asserts stay on.
set -euo pipefail

seconds="${1:-60}"
shift || true
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-${source_dir}/build-fuzz}"
jobs="${JOBS:-2}"
all_targets=(fuzz_matrix_market fuzz_edge_list fuzz_dataset_folder fuzz_npy fuzz_suite fuzz_case_json
             fuzz_result_json fuzz_plugin_values)
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${all_targets[@]}")

if [[ -z "${NO_BUILD:-}" ]]; then  # NO_BUILD=1: run the targets already built (while another build runs)
build_start=$(date +%s)
CC=clang CXX=clang++ cmake -S "${source_dir}" -B "${build_dir}" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer" \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer" \
  -DGNNCHECK_FUZZ=ON -DGNNCHECK_CUDA=OFF -DGNNCHECK_BUILD_TESTS=OFF -DGNNCHECK_BENCHMARKS=OFF >/dev/null
cmake --build "${build_dir}" -j "${jobs}" --target "${targets[@]}"
echo "fuzz.sh: configure and build $(( $(date +%s) - build_start )) s"
fi

export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export OMP_NUM_THREADS=1
failed=0
summary=()
for target in "${targets[@]}"; do
  run_dir="${build_dir}/fuzz-runs/${target}"
  rm -rf "${run_dir}"
  mkdir -p "${run_dir}/corpus" "${run_dir}/artifacts"
  cp "${source_dir}/fuzz/corpus/${target}/"* "${run_dir}/corpus/"
  status=0
  seed_option=()
  [[ -n "${SEED:-}" ]] && seed_option=(-seed="${SEED}")
  "${build_dir}/fuzz/${target}" "${run_dir}/corpus" -max_total_time="${seconds}" -timeout=10 \
    -rss_limit_mb=2048 -malloc_limit_mb=1024 -print_final_stats=1 "${seed_option[@]}" \
    -artifact_prefix="${run_dir}/artifacts/" >"${run_dir}/log.txt" 2>&1 || status=$?
  executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "${run_dir}/log.txt" | tail -1)
  seed_used=$(sed -n 's/^INFO: Seed: *//p' "${run_dir}/log.txt" | head -1)
  findings=$(find "${run_dir}/artifacts" -type f | wc -l)
  summary+=("$(printf '%-22s %4ss  seed %-10s executions %-10s findings %s  exit %s' "${target}" "${seconds}" \
               "${seed_used:-?}" "${executions:-?}" "${findings}" "${status}")")
  if [[ ${status} -ne 0 || ${findings} -ne 0 ]]; then
    failed=1
    echo "== ${target}: finding; log ${run_dir}/log.txt" >&2
    grep -m 20 -E "ERROR|finding|terminate|what\(\)|SUMMARY" "${run_dir}/log.txt" >&2 || true
  fi
done
printf '%s\n' "${summary[@]}"
exit "${failed}"

#!/usr/bin/env bash
# performance/tests/run_reddit_models_test.sh — the Reddit benchmark's training loop against the
# float64 oracle on a CUDA device (gpu_reddit_models_test, every test in it), then every mutant
# binary found beside it (gpu_reddit_models_test_<mutation>, built from a deliberately broken copy
# of the loop, with <mutation>.diff saying what was broken): each must FAIL its device tests.
# Run from the project's root:
#
#   bash performance/tests/run_reddit_models_test.sh LOG_DIR BIN_DIR
#
# LOG_DIR receives three files: summary.txt (the verdict table; also printed, its last line the
# overall verdict), reddit_models_test.log and mutants.log (every mutant's log, one after the
# other). The mutants run in parallel (two OpenMP threads each). Exit code 0 only if the real loop passes and every mutant fails.
set -uo pipefail
out=${1:?usage: run_reddit_models_test.sh LOG_DIR BIN_DIR}
bin=${2:?usage: run_reddit_models_test.sh LOG_DIR BIN_DIR}
mkdir -p "$out"
summary="$out/summary.txt"
{ date -u; nvidia-smi -L 2>&1; } >"$summary"
status=0

start=$SECONDS
timeout 200 "$bin/gpu_reddit_models_test" --gtest_color=no >"$out/reddit_models_test.log" 2>&1
rc=$?
verdict=PASS
if [ $rc -ne 0 ] || grep -q "SKIPPED \]" "$out/reddit_models_test.log"; then verdict=FAIL; status=1; fi
grep -E "^GPU |^\[  (PASSED|FAILED) " "$out/reddit_models_test.log" >>"$summary"
printf 'correct loop                  %s (rc=%s, %ss)\n' "$verdict" "$rc" "$((SECONDS - start))" | tee -a "$summary"

mutants=0 caught=0
pids=() names=()
for m in "$bin"/gpu_reddit_models_test_*; do
  [ -x "$m" ] || continue
  name=${m##*/gpu_reddit_models_test_}
  OMP_NUM_THREADS=2 timeout 200 "$m" --gtest_color=no --gtest_filter='BenchmarkModels/RedditModelsTest.*:RedditColumnReductions.*' \
    >"$out/mutant-$name.log" 2>&1 &
  pids+=($!) names+=("$name")
done
for k in "${!pids[@]}"; do
  wait "${pids[$k]}"
  rc=$?
  name=${names[$k]} log="$out/mutant-${names[$k]}.log"
  mutants=$((mutants + 1))
  what=$(head -n 1 "$bin/$name.diff" 2>/dev/null | sed 's/^# //')
  failed=$(grep -oE "^\[  FAILED  \] [A-Za-z][A-Za-z0-9/._]+" "$log" | sed -e 's/^\[  FAILED  \] //' \
    -e 's/.*TrainingStepsMatchTheFloat64Oracle\///' | sort -u | tr '\n' ' ')
  first=$(grep -m 1 -E "elements outside their bound|oracle:" "$log" | cut -c1-220)
  if [ $rc -ne 0 ] && [ $rc -ne 124 ] && ! grep -q "SKIPPED \]" "$log" && [ -n "$failed" ]; then
    caught=$((caught + 1))
    printf 'mutant %-28s CAUGHT (failed: %s) — %s\n    first: %s\n' "$name" "$failed" "$what" "$first" | tee -a "$summary"
  else
    status=1
    printf 'mutant %-28s NOT CAUGHT (rc=%s) — %s\n' "$name" "$rc" "$what" | tee -a "$summary"
  fi
  { printf '===== mutant %s (rc=%s): %s\n' "$name" "$rc" "$what"; cat "$log"; } >>"$out/mutants.log"
  rm -f "$log"
done
printf 'reddit models test: correct loop %s; mutants caught %s of %s; %ss in all\n' "$verdict" "$caught" "$mutants" \
  "$((SECONDS - start))" | tee -a "$summary"
exit $status

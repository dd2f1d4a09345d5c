#!/usr/bin/env bash
# `ARGS --expect caught` in gnncheck_add_*_test is the planted-bug form of EXPECT caught: the test's
# command carries --expect once (the command refuses it twice: "At Most 1 required"); EXPECT and
# ARGS --expect that disagree are refused at configure time, naming both.
#   cmake/tests/suite_test_expect_args_test.sh CMAKE_SOURCE_DIR
set -euo pipefail
source_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
project() {
  mkdir -p "$work/$1"
  cat >"$work/$1/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(expect NONE)
enable_testing()
add_executable(gnncheck::gnncheck IMPORTED)
set_target_properties(gnncheck::gnncheck PROPERTIES IMPORTED_LOCATION /bin/true)
include("$source_dir/cmake/GnncheckDownstream.cmake")
$2
CMAKE
}
project ok 'gnncheck_add_adapter_test(NAME planted COMMAND python3 my_adapter.py ARGS --seed 3 --expect caught)
gnncheck_add_adapter_test(NAME planted_eq COMMAND python3 my_adapter.py ARGS --expect=caught)
gnncheck_add_adapter_test(NAME plain COMMAND python3 my_adapter.py ARGS --seed 3)'
cmake -S "$work/ok" -B "$work/ok/build" >/dev/null
testfile="$work/ok/build/CTestTestfile.cmake"
line() { grep "add_test(\[=\[$1\]=\]" "$testfile"; }
for t in planted planted_eq; do
  [[ $(line $t | grep -o '"--expect"' | wc -l) -eq 1 ]] || { echo "$t: expected one --expect"; line $t; exit 1; }
  line $t | grep -q '"--expect" "caught"' || { echo "$t: expected --expect caught"; line $t; exit 1; }
done
line planted | grep -q '"--seed" "3"' || { echo "planted: the other ARGS were lost"; exit 1; }
line plain | grep -q '"--expect" "pass"' || { echo "plain: expected --expect pass"; exit 1; }
project bad 'gnncheck_add_adapter_test(NAME planted COMMAND python3 my_adapter.py EXPECT pass ARGS --expect caught)'
if out=$(cmake -S "$work/bad" -B "$work/bad/build" 2>&1); then echo "a contradiction was accepted"; exit 1; fi
grep -q "EXPECT pass and ARGS --expect caught disagree" <<<"$out" || { echo "$out"; exit 1; }
echo "ok"

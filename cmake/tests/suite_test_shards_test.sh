#!/usr/bin/env bash
# gnncheck_add_adapter_test(… SHARDS 3) registers three shard tests and one merging test, the merge
# ordered after the shards; SHARDS 1 (or none) registers the one test it always did.
#   cmake/tests/suite_test_shards_test.sh CMAKE_SOURCE_DIR
set -euo pipefail
source_dir=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project"
cat >"$work/project/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.20)
project(shards NONE)
enable_testing()
add_executable(gnncheck::gnncheck IMPORTED)
set_target_properties(gnncheck::gnncheck PROPERTIES IMPORTED_LOCATION /bin/true)
include("$source_dir/cmake/GnncheckDownstream.cmake")
gnncheck_add_adapter_test(NAME split COMMAND python3 my_adapter.py SHARDS 3)
gnncheck_add_adapter_test(NAME whole COMMAND python3 my_adapter.py)
CMAKE
cmake -S "$work/project" -B "$work/build" >/dev/null
listed=$(cd "$work/build" && ctest -N)
echo "$listed"
count() { grep -c "$1" <<<"$listed" || true; }
[[ $(count 'split.shard-[123]-of-3$') -eq 3 ]] || { echo "expected 3 shard tests"; exit 1; }
[[ $(count ' split$') -eq 1 ]] || { echo "expected the merging test 'split'"; exit 1; }
[[ $(count ' whole$') -eq 1 && $(count 'whole.shard') -eq 0 ]] || { echo "expected one unsplit test 'whole'"; exit 1; }
grep -q -- '"--share" "2/3"' "$work/build/CTestTestfile.cmake" || { echo "shard 2 does not run --share 2/3"; exit 1; }
grep -q '"report" "merge"' "$work/build/CTestTestfile.cmake" || { echo "the merging test does not run report merge"; exit 1; }
grep -q 'DEPENDS' "$work/build/CTestTestfile.cmake" || { echo "the merge is not ordered after the shards"; exit 1; }
echo "ok"

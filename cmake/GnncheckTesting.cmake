# gnncheck_add_test(NAME name SOURCES a.cpp ... LIBS lib ... LABELS cpu property ... [TIMEOUT s])
# One GoogleTest executable registered as one ctest test (so its labels are exact and its output
# is one readable log). Labels: cpu, gpu, property, e2e, dataset, slow.
# The test runs from the project's root so that ../shared/datasets resolves as documented.
# RUNS_GNNCHECK: the test runs the `gnncheck` command as a user does — it is built first, its path is
# GNNCHECK_EXE and the project's root is on the include path (suites/tests/command_runner.h).
# COST: the test's measured seconds on the 2-core machine, for the tests that take a minute or more.
# `ctest -j` starts the costliest tests first, but it learns their cost only from a tree that has
# run them; on a fresh clone (CI) a long test declared late would otherwise run alone at the end.
function(gnncheck_add_test)
  if(NOT GNNCHECK_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(T "RUNS_GNNCHECK" "NAME;TIMEOUT;COST" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  # A test's own file is set-up and assertions; the code under test comes optimized from its
  # libraries. -O1 (after the build type's -O3) compiles the test files about a third faster on the
  # 2-core machine (reports' html_figures_test 20 → 11 s, protocol_test 20 → 15 s, checks_test 13 → 8 s).
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${T_NAME} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
  endif()
  if(T_RUNS_GNNCHECK)
    add_dependencies(${T_NAME} gnncheck)
    target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
    target_compile_definitions(${T_NAME} PRIVATE GNNCHECK_EXE="$<TARGET_FILE:gnncheck>")
  endif()
  add_test(NAME ${T_NAME} COMMAND ${T_NAME} --gtest_color=no)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES
    LABELS "${T_LABELS}"
    TIMEOUT ${T_TIMEOUT}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    # ctest -j 2 on 2 cores: one OpenMP thread per test, so tests never spin at barriers against
    # each other (results do not depend on the thread count; the determinism tests set it themselves).
    ENVIRONMENT "GNNCHECK_SOURCE_DIR=${PROJECT_SOURCE_DIR};OMP_NUM_THREADS=1")
  # A GPU test binary on a machine without a device skips every test with this reason; ctest then
  # reports the test as skipped (never as passed). Only GPU tests may be skipped this way.
  if("gpu" IN_LIST T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES SKIP_REGULAR_EXPRESSION "skipped: no CUDA device")
  endif()
  if(T_COST)
    set_tests_properties(${T_NAME} PROPERTIES COST ${T_COST})
  endif()
endfunction()

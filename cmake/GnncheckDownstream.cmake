# Functions for projects that test their own kernels with gnncheck from ctest (installed with the
# gnncheck package; see examples/downstream/).
#
#   gnncheck_add_plugin_test(TARGET my_kernel SUITE ci [NAME test] [EXPECT pass|caught] [LABELS …] [ARGS …]
#                            [TIMEOUT s] [CASE_TIMEOUT s] [STARTUP_TIMEOUT s] [SHARDS K])
#       one ctest test running `gnncheck run <SUITE> --plugin $<TARGET_FILE:my_kernel>`: the suite's
#       entries that expect `pass` run against the plugin (a MODULE library implementing
#       gnncheck/plugin.h); it passes when every expectation held. A plugin that does not load, or
#       answers no case, fails the test. EXPECT caught declares a planted bug: the test passes only
#       when some check catches it (exit 0 of `--expect caught`; a usage error, exit 2, never does).
#   gnncheck_add_adapter_test(NAME test COMMAND prog arg… [SUITE ci] [EXPECT pass|caught] [LABELS …] [ARGS …]
#                             [TIMEOUT s] [CASE_TIMEOUT s] [STARTUP_TIMEOUT s] [SHARDS K])
#       the same against an external adapter process (adapters/PROTOCOL.md), e.g.
#       COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/my_adapter.py
#   CASE_TIMEOUT / STARTUP_TIMEOUT: seconds per case and for the start-up (hello) of the process
#   (gnncheck's --case-timeout / --startup-timeout; start-up is not charged to the suite's budget).
#   EXPECT caught may also be written as the command's own flag, ARGS --expect caught (one or the
#   other; two that disagree are refused when the project is configured).
#   SHARDS K (K > 1): the run split into K tests <test>.shard-P-of-K (`--share P/K`, each with its own
#   report), which `ctest -j`, CDash or a CI matrix spread, and one test <test> that runs after them
#   and merges their reports (`gnncheck report merge`) into the whole run's (suites/SCHEMA.md,
#   "Splitting a run"); a shard that did not report leaves its tasks `not tested` there.
#
# The report of each test goes to <build dir>/gnncheck-reports/<test>/ (index.html, junit.xml, …);
# failing cases are saved under its cases/ and the test's log prints how to re-run them.

function(_gnncheck_add_suite_test name suite system_flag system_value)
  cmake_parse_arguments(G "" "TIMEOUT;EXPECT;CASE_TIMEOUT;STARTUP_TIMEOUT;SHARDS" "LABELS;ARGS" ${ARGN})
  # `ARGS --expect caught` is what a user of the command writes; the test passes --expect itself
  # (EXPECT), and the command takes it once: it becomes EXPECT, or a contradiction is refused.
  set(args "")
  set(expect_from_args "")
  set(taking_expect FALSE)
  foreach(arg IN LISTS G_ARGS)
    if(taking_expect)
      set(expect_from_args ${arg})
      set(taking_expect FALSE)
    elseif(arg STREQUAL "--expect")
      set(taking_expect TRUE)
    elseif(arg MATCHES "^--expect=(.*)$")
      set(expect_from_args ${CMAKE_MATCH_1})
    else()
      list(APPEND args ${arg})
    endif()
  endforeach()
  if(taking_expect)
    message(FATAL_ERROR "gnncheck test '${name}': ARGS ends with --expect and no value; write EXPECT pass|caught")
  endif()
  if(expect_from_args)
    if(G_EXPECT AND NOT G_EXPECT STREQUAL expect_from_args)
      message(FATAL_ERROR "gnncheck test '${name}': EXPECT ${G_EXPECT} and ARGS --expect ${expect_from_args} disagree; "
                          "give one (EXPECT pass|caught)")
    endif()
    set(G_EXPECT ${expect_from_args})
  endif()
  set(G_ARGS ${args})
  if(NOT G_EXPECT)
    set(G_EXPECT pass)
  endif()
  if(NOT G_EXPECT MATCHES "^(pass|caught)$")
    message(FATAL_ERROR "gnncheck test '${name}': EXPECT must be pass or caught, not '${G_EXPECT}'")
  endif()
  set(limits "")
  if(G_CASE_TIMEOUT)
    list(APPEND limits --case-timeout ${G_CASE_TIMEOUT})
  endif()
  if(G_STARTUP_TIMEOUT)
    list(APPEND limits --startup-timeout ${G_STARTUP_TIMEOUT})
  endif()
  if(NOT TARGET gnncheck::gnncheck)
    message(FATAL_ERROR "gnncheck_add_*_test: the gnncheck::gnncheck command is not defined (find_package(gnncheck) first)")
  endif()
  if(NOT G_TIMEOUT)
    set(G_TIMEOUT 900)
  endif()
  if(NOT G_SHARDS)
    set(G_SHARDS 1)
  endif()
  if(NOT G_SHARDS MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "gnncheck test '${name}': SHARDS must be a positive integer, not '${G_SHARDS}'")
  endif()
  set(reports ${CMAKE_BINARY_DIR}/gnncheck-reports/${name})
  if(G_SHARDS EQUAL 1)
    add_test(NAME ${name}
             COMMAND gnncheck::gnncheck run ${suite} ${system_flag} ${system_value} --expect ${G_EXPECT} ${limits}
                     --progress plain --report ${reports} ${G_ARGS})
    set_tests_properties(${name} PROPERTIES LABELS "gnncheck;${G_LABELS}" TIMEOUT ${G_TIMEOUT})
    return()
  endif()
  set(shard_dirs "")
  set(shard_tests "")
  foreach(part RANGE 1 ${G_SHARDS})
    set(shard ${name}.shard-${part}-of-${G_SHARDS})
    add_test(NAME ${shard}
             COMMAND gnncheck::gnncheck run ${suite} ${system_flag} ${system_value} --expect ${G_EXPECT} ${limits}
                     --share ${part}/${G_SHARDS} --progress plain --report ${reports}/shard-${part} ${G_ARGS})
    set_tests_properties(${shard} PROPERTIES LABELS "gnncheck;gnncheck-shard;${G_LABELS}" TIMEOUT ${G_TIMEOUT})
    list(APPEND shard_dirs ${reports}/shard-${part})
    list(APPEND shard_tests ${shard})
  endforeach()
  # The merge runs after the shards (DEPENDS orders, and runs it even when a shard failed, so the one
  # report says what failed); a shard that left no report makes it refuse or name what is missing.
  add_test(NAME ${name} COMMAND gnncheck::gnncheck report merge ${shard_dirs} --output ${reports})
  set_tests_properties(${name} PROPERTIES LABELS "gnncheck;${G_LABELS}" TIMEOUT 300 DEPENDS "${shard_tests}")
endfunction()

function(gnncheck_add_plugin_test)
  cmake_parse_arguments(G "" "TARGET;SUITE;NAME;TIMEOUT;EXPECT;CASE_TIMEOUT;STARTUP_TIMEOUT;SHARDS" "LABELS;ARGS" ${ARGN})
  if(NOT G_TARGET)
    message(FATAL_ERROR "gnncheck_add_plugin_test: TARGET <plugin library target> is required")
  endif()
  if(NOT TARGET ${G_TARGET})
    message(FATAL_ERROR "gnncheck_add_plugin_test: '${G_TARGET}' is not a target of this project")
  endif()
  if(NOT G_SUITE)
    set(G_SUITE ci)
  endif()
  if(NOT G_NAME)
    set(G_NAME gnncheck.${G_TARGET}.${G_SUITE})
  endif()
  _gnncheck_add_suite_test(${G_NAME} ${G_SUITE} --plugin $<TARGET_FILE:${G_TARGET}>
                           LABELS ${G_LABELS} ARGS ${G_ARGS} TIMEOUT ${G_TIMEOUT} EXPECT ${G_EXPECT}
                           CASE_TIMEOUT ${G_CASE_TIMEOUT} STARTUP_TIMEOUT ${G_STARTUP_TIMEOUT} SHARDS ${G_SHARDS})
endfunction()

function(gnncheck_add_adapter_test)
  cmake_parse_arguments(G "" "SUITE;NAME;TIMEOUT;EXPECT;CASE_TIMEOUT;STARTUP_TIMEOUT;SHARDS" "COMMAND;LABELS;ARGS" ${ARGN})
  if(NOT G_COMMAND)
    message(FATAL_ERROR "gnncheck_add_adapter_test: COMMAND <program> [args…] is required")
  endif()
  if(NOT G_NAME)
    message(FATAL_ERROR "gnncheck_add_adapter_test: NAME <test name> is required")
  endif()
  if(NOT G_SUITE)
    set(G_SUITE ci)
  endif()
  # gnncheck splits the command itself (no shell); quote each argument that has blanks.
  set(command_line "")
  foreach(arg IN LISTS G_COMMAND)
    if(arg MATCHES "[ \t'\"\\\\]")
      string(REPLACE "'" "'\\''" arg "${arg}")
      set(arg "'${arg}'")
    endif()
    string(APPEND command_line " ${arg}")
  endforeach()
  string(STRIP "${command_line}" command_line)
  _gnncheck_add_suite_test(${G_NAME} ${G_SUITE} --adapter "${command_line}"
                           LABELS ${G_LABELS} ARGS ${G_ARGS} TIMEOUT ${G_TIMEOUT} EXPECT ${G_EXPECT}
                           CASE_TIMEOUT ${G_CASE_TIMEOUT} STARTUP_TIMEOUT ${G_STARTUP_TIMEOUT} SHARDS ${G_SHARDS})
endfunction()

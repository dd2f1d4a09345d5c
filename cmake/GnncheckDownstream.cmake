# Functions for projects that test their own kernels with gnncheck from ctest (installed with the
# gnncheck package; see examples/downstream/).
#
#   gnncheck_add_plugin_test(TARGET my_kernel SUITE ci [NAME test] [LABELS …] [ARGS …] [TIMEOUT s])
#       one ctest test running `gnncheck run <SUITE> --plugin $<TARGET_FILE:my_kernel>`: the suite's
#       entries that expect `pass` run against the plugin (a MODULE library implementing
#       gnncheck/plugin.h); it passes when every expectation held.
#   gnncheck_add_adapter_test(NAME test COMMAND prog arg… [SUITE ci] [LABELS …] [ARGS …] [TIMEOUT s])
#       the same against an external adapter process (adapters/PROTOCOL.md), e.g.
#       COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/my_adapter.py
#
# The report of each test goes to <build dir>/gnncheck-reports/<test>/ (index.html, junit.xml, …);
# failing cases are saved under its cases/ and the test's log prints how to re-run them.

function(_gnncheck_add_suite_test name suite system_flag system_value)
  cmake_parse_arguments(G "" "TIMEOUT" "LABELS;ARGS" ${ARGN})
  if(NOT TARGET gnncheck::gnncheck)
    message(FATAL_ERROR "gnncheck_add_*_test: the gnncheck::gnncheck command is not defined (find_package(gnncheck) first)")
  endif()
  if(NOT G_TIMEOUT)
    set(G_TIMEOUT 900)
  endif()
  add_test(NAME ${name}
           COMMAND gnncheck::gnncheck run ${suite} ${system_flag} ${system_value} --progress plain
                   --report ${CMAKE_BINARY_DIR}/gnncheck-reports/${name} ${G_ARGS})
  set_tests_properties(${name} PROPERTIES LABELS "gnncheck;${G_LABELS}" TIMEOUT ${G_TIMEOUT})
endfunction()

function(gnncheck_add_plugin_test)
  cmake_parse_arguments(G "" "TARGET;SUITE;NAME;TIMEOUT" "LABELS;ARGS" ${ARGN})
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
                           LABELS ${G_LABELS} ARGS ${G_ARGS} TIMEOUT ${G_TIMEOUT})
endfunction()

function(gnncheck_add_adapter_test)
  cmake_parse_arguments(G "" "SUITE;NAME;TIMEOUT" "COMMAND;LABELS;ARGS" ${ARGN})
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
                           LABELS ${G_LABELS} ARGS ${G_ARGS} TIMEOUT ${G_TIMEOUT})
endfunction()

# ctest script (cmake -P): install this build into a scratch prefix, check what was installed (no
# empty folders, exactly the public headers), then configure, build and test examples/downstream and,
# as a C-only project with find_package(gnncheck COMPONENTS plugin), examples/plugin against the
# installed package exactly as a downstream project would (building examples/downstream compiles
# every installed header alone).
#   -DBUILD_DIR=<this build>  -DSOURCE_DIR=<gnncheck sources>  -DWORK_DIR=<scratch>  -DGENERATOR=<generator>
#   [-DPYTHON=<python3 with numpy and scipy>: also registers and runs the example's adapter test]
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "GnncheckDownstreamTest.cmake needs -D${var}=…")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "downstream example: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "downstream example: ${what}: ok")
  set(last_output "${out}" PARENT_SCOPE)
endfunction()
run_step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)

# The installed tree: no empty folders, and the public headers only (cmake/GnncheckInstall.cmake).
set(prefix ${WORK_DIR}/prefix)
file(GLOB_RECURSE installed_dirs LIST_DIRECTORIES true ${prefix}/*)
set(empty_dirs "")
foreach(entry IN LISTS installed_dirs)
  if(IS_DIRECTORY ${entry})
    file(GLOB children ${entry}/*)
    if(NOT children)
      list(APPEND empty_dirs ${entry})
    endif()
  endif()
endforeach()
if(empty_dirs)
  list(JOIN empty_dirs "\n  " empty_dirs)
  message(FATAL_ERROR "installed tree: empty folders were installed:\n  ${empty_dirs}")
endif()
file(GLOB_RECURSE installed_headers RELATIVE ${prefix}/include ${prefix}/include/*)
list(SORT installed_headers)
set(public_headers gnncheck/core/case.h gnncheck/core/error.h gnncheck/core/graph.h gnncheck/core/memory_figures.h
                   gnncheck/core/system.h gnncheck/core/tensor.h gnncheck/plugin.h)
if(NOT installed_headers STREQUAL public_headers)
  message(FATAL_ERROR "installed tree: include/ holds\n  ${installed_headers}\nexpected the public headers only:\n  ${public_headers}")
endif()
message(STATUS "downstream example: installed tree: no empty folders, public headers only: ok")
set(python_hint "")
if(PYTHON)
  set(python_hint -DPython3_EXECUTABLE=${PYTHON})
endif()
run_step("configure" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/downstream -B ${WORK_DIR}/build -G ${GENERATOR}
         -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${python_hint})
run_step("build" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step("ctest" ${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/build --output-on-failure)
message(STATUS "${last_output}")
set(expected 4)  # two plugin tests, the planted bug caught, the C++ consumer
if(PYTHON)
  set(expected 5)
endif()
if(NOT last_output MATCHES "100% tests passed, 0 tests failed out of ${expected}")
  message(FATAL_ERROR "downstream example: expected its ${expected} tests to pass")
endif()

# examples/plugin on its own: a LANGUAGES C project; find_package(gnncheck COMPONENTS plugin) must
# not look up any C++ dependency (OpenMP for CXX would fail without a C++ compiler enabled).
run_step("configure examples/plugin (C only)" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/plugin -B ${WORK_DIR}/plugin-build
         -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
foreach(cxx_lookup OpenMP fmt Eigen3 CMAKE_CXX_COMPILER)
  if(last_output MATCHES "${cxx_lookup}")
    message(FATAL_ERROR "examples/plugin (C only): configuring it mentions ${cxx_lookup}:\n${last_output}")
  endif()
endforeach()
file(STRINGS ${WORK_DIR}/plugin-build/CMakeCache.txt cxx_compiler REGEX "^CMAKE_CXX_COMPILER:")
if(cxx_compiler)
  message(FATAL_ERROR "examples/plugin (C only): a C++ compiler was looked up: ${cxx_compiler}")
endif()
run_step("build examples/plugin" ${CMAKE_COMMAND} --build ${WORK_DIR}/plugin-build)
run_step("ctest examples/plugin" ${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/plugin-build --output-on-failure)
message(STATUS "${last_output}")
if(NOT last_output MATCHES "100% tests passed, 0 tests failed out of 1")
  message(FATAL_ERROR "examples/plugin: expected its 1 test (gnncheck_add_plugin_test) to pass")
endif()

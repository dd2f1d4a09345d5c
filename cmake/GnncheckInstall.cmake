# `cmake --install` for gnncheck: the libraries, their headers (plugin.h included), the gnncheck
# command and its plugin host, the shipped suites, and a CMake package so that a downstream project
# can write
#
#   find_package(gnncheck CONFIG REQUIRED)
#   gnncheck_add_plugin_test(TARGET my_kernel SUITE ci)
#
# Layout under the prefix:
#   bin/gnncheck, bin/gnncheck-plugin-host
#   include/gnncheck/<part>/*.h     (the project-root include style: "oracle/graph.h")
#   include/gnncheck/plugin.h       (the C plugin ABI)
#   lib/libgnncheck_*.a
#   lib/cmake/gnncheck/             gnncheckConfig.cmake, targets, GnncheckDownstream.cmake
#   share/gnncheck/suites/*.yaml    (found by `gnncheck run ci`)
#   share/gnncheck/python/          the Python adapter kit (gnncheck_adapter.py) and reference adapters
#   <GNNCHECK_INSTALL_PYTHON_DIR>/gnncheck/   the Python package `import gnncheck` (installed by python/CMakeLists.txt)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GNNCHECK_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/gnncheck)
set(GNNCHECK_INSTALL_PYTHONDIR ${CMAKE_INSTALL_DATADIR}/gnncheck/python)

# Exported names: gnncheck::oracle, gnncheck::checks, … (the same names as inside this build).
set(gnncheck_export_libraries
  gnncheck_oracle gnncheck_fixtures gnncheck_device_memory gnncheck_adapters gnncheck_plugin_abi gnncheck_checks
  gnncheck_properties gnncheck_training gnncheck_reports gnncheck_suites)
if(TARGET gnncheck_gpu)
  list(APPEND gnncheck_export_libraries gnncheck_gpu)
endif()
if(TARGET gnncheck_gpu_replicas)  # linked by gnncheck_suites in CUDA builds
  list(APPEND gnncheck_export_libraries gnncheck_gpu_replicas)
endif()
foreach(lib IN LISTS gnncheck_export_libraries)
  string(REGEX REPLACE "^gnncheck_" "" export_name ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${export_name})
endforeach()
set_target_properties(gnncheck PROPERTIES EXPORT_NAME gnncheck)

install(TARGETS ${gnncheck_export_libraries} gnncheck gnncheck-plugin-host
        EXPORT gnncheckTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gnncheck)

# Headers keep their folder so that "oracle/graph.h" resolves against include/gnncheck.
foreach(part oracle fixtures adapters checks properties training reports suites gpu)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${part}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gnncheck/${part}
          FILES_MATCHING PATTERN "*.h" PATTERN "*.cuh"
          PATTERN "tests" EXCLUDE PATTERN "benchmarks" EXCLUDE PATTERN "python" EXCLUDE PATTERN "include" EXCLUDE)
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/adapters/include/gnncheck/plugin.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gnncheck)

install(FILES ${PROJECT_SOURCE_DIR}/suites/default.yaml ${PROJECT_SOURCE_DIR}/suites/ci.yaml
              ${PROJECT_SOURCE_DIR}/suites/full.yaml ${PROJECT_SOURCE_DIR}/suites/gpu.yaml
              ${PROJECT_SOURCE_DIR}/suites/accuracy.yaml ${PROJECT_SOURCE_DIR}/suites/SCHEMA.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gnncheck/suites)
# The Python adapter kit and its reference adapters (adapters/PROTOCOL.md), for adapters written
# outside this tree: the package config names the folder gnncheck_PYTHON_ADAPTERS_DIR.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/adapters/python/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gnncheck/python
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE PATTERN "tests" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/reports/report.schema.json ${PROJECT_SOURCE_DIR}/reports/SCHEMA.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gnncheck/reports)

install(EXPORT gnncheckTargets NAMESPACE gnncheck:: DESTINATION ${GNNCHECK_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gnncheckConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/gnncheckConfig.cmake
                              INSTALL_DESTINATION ${GNNCHECK_INSTALL_CMAKEDIR}
                              PATH_VARS GNNCHECK_INSTALL_PYTHONDIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gnncheckConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gnncheckConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/gnncheckConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/GnncheckDownstream.cmake
        DESTINATION ${GNNCHECK_INSTALL_CMAKEDIR})

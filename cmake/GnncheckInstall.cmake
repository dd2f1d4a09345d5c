# `cmake --install` for gnncheck: the command and its plugin host, the public headers, the shipped
# suites, and a CMake package so that a downstream project can write
#
#   find_package(gnncheck CONFIG REQUIRED COMPONENTS plugin)   # a C plugin: no C++ dependencies looked up
#   gnncheck_add_plugin_test(TARGET my_kernel SUITE ci)
#
# Layout under the prefix:
#   bin/gnncheck, bin/gnncheck-plugin-host
#   include/gnncheck/plugin.h       the C plugin ABI (gnncheck::plugin_abi)
#   include/gnncheck/core/{system,case,graph,tensor,error,memory_figures}.h
#                                   the System interface and the case vocabulary it speaks (gnncheck::core)
#   lib/libgnncheck_core.a, lib/libgnncheck_oracle.a
#   lib/cmake/gnncheck/             gnncheckConfig.cmake, gnncheckPluginTargets.cmake (plugin_abi, the command),
#                                   gnncheckTargets.cmake (core, oracle), GnncheckDownstream.cmake
#   share/gnncheck/suites/*.yaml    (found by `gnncheck run ci`)
#   share/gnncheck/python/          the Python adapter kit (gnncheck_adapter.py) and reference adapters
#   <GNNCHECK_INSTALL_PYTHON_DIR>/gnncheck/   the Python package `import gnncheck` (installed by python/CMakeLists.txt)
# Only these headers are public: the other parts' headers are the implementation of the command and
# the Python package, which are installed whole (the executables and the extension link them statically).
# Each public header includes only public headers and compiles alone: examples/downstream compiles
# every installed header in a translation unit of its own (its target installed_headers_compile_alone).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GNNCHECK_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/gnncheck)
set(GNNCHECK_INSTALL_PYTHONDIR ${CMAKE_INSTALL_DATADIR}/gnncheck/python)

# Exported names: gnncheck::plugin_abi, gnncheck::gnncheck (the command), gnncheck::core, gnncheck::oracle.
set_target_properties(gnncheck_plugin_abi PROPERTIES EXPORT_NAME plugin_abi)
set_target_properties(gnncheck PROPERTIES EXPORT_NAME gnncheck)
set_target_properties(gnncheck_core PROPERTIES EXPORT_NAME core)
set_target_properties(gnncheck_oracle PROPERTIES EXPORT_NAME oracle)

# The component `plugin`: the C ABI header and the command, nothing that needs a C++ toolchain.
install(TARGETS gnncheck_plugin_abi gnncheck
        EXPORT gnncheckPluginTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS gnncheck-plugin-host RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The component `cxx`: the vocabulary and the library behind the System interface.
install(TARGETS gnncheck_core gnncheck_oracle
        EXPORT gnncheckTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gnncheck)

# The public headers keep their folder so that "core/graph.h" resolves against include/gnncheck.
install(FILES ${PROJECT_SOURCE_DIR}/adapters/include/gnncheck/plugin.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gnncheck)
install(FILES ${PROJECT_SOURCE_DIR}/core/system.h ${PROJECT_SOURCE_DIR}/core/case.h ${PROJECT_SOURCE_DIR}/core/graph.h
              ${PROJECT_SOURCE_DIR}/core/tensor.h ${PROJECT_SOURCE_DIR}/core/error.h ${PROJECT_SOURCE_DIR}/core/memory_figures.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gnncheck/core)

install(FILES ${PROJECT_SOURCE_DIR}/suites/default.yaml ${PROJECT_SOURCE_DIR}/suites/ci.yaml
              ${PROJECT_SOURCE_DIR}/suites/full.yaml ${PROJECT_SOURCE_DIR}/suites/gpu.yaml
              ${PROJECT_SOURCE_DIR}/suites/accuracy.yaml ${PROJECT_SOURCE_DIR}/suites/leaks.yaml
              ${PROJECT_SOURCE_DIR}/suites/SCHEMA.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gnncheck/suites)
# The Python adapter kit and its reference adapters (adapters/PROTOCOL.md), for adapters written
# outside this tree: the package config names the folder gnncheck_PYTHON_ADAPTERS_DIR.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/adapters/python/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gnncheck/python
        FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE PATTERN "tests" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/reports/report.schema.json ${PROJECT_SOURCE_DIR}/reports/SCHEMA.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/gnncheck/reports)

install(EXPORT gnncheckPluginTargets NAMESPACE gnncheck:: DESTINATION ${GNNCHECK_INSTALL_CMAKEDIR})
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

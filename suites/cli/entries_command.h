// gnncheck/suites/cli/entries_command.h — `gnncheck entries`: list the entries of suites, or write
// them as ctest tests (gnncheck.<suite>.<entry>, with the entry's labels).
//
//   gnncheck entries ci full --ctest-file build/gnncheck_suite_tests.cmake
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gnncheck::suites {

struct EntriesCommandArgs {
  std::vector<std::string> suites;
  std::string ctest_file;  // empty: print the entries
};

CLI::App* add_entries_command(CLI::App& app, EntriesCommandArgs& args);
// Throws InputError for an unreadable or invalid suite, or a ctest file that cannot be written.
int run_entries_command(const EntriesCommandArgs& args, const std::filesystem::path& executable_dir);

}  // namespace gnncheck::suites

// gnncheck/suites/cli/skeleton_command.h — `gnncheck skeleton`: a stub adapter or plugin for one
// target, with every tensor, attribute and shape filled in from the catalogue.
//
//   gnncheck skeleton --target gcn --lang python --output gcn_adapter.py   # adapter kit (numpy)
//   gnncheck skeleton --target spmm --lang torch --output test_spmm.py     # import gnncheck, in process
//   gnncheck skeleton --target spmm --lang c --output spmm_plugin.c        # C plugin (gnncheck/plugin.h)
//
// What it writes runs as it is and answers `unsupported` for every case — so a run of it is
// `not tested`, never a pass — until the math is written where the file says.
#pragma once

#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>

namespace gnncheck::suites {

struct SkeletonCommandArgs {
  std::string target;
  std::string lang;                  // python, torch or c
  std::string precision = "float32";  // what the stub declares its kernel computes in
  std::string output;                // empty: standard output
};

// Adds the `skeleton` subcommand with its flags bound to `args`.
CLI::App* add_skeleton_command(CLI::App& app, SkeletonCommandArgs& args);

// Writes the skeleton. `executable_dir` locates the adapter kit for Python adapters (the installed
// share/gnncheck/python, else the source tree's adapters/python). Throws InputError for an unknown
// target, an existing --output file or an adapter kit that cannot be found.
int run_skeleton_command(const SkeletonCommandArgs& args, const std::filesystem::path& executable_dir);

// The text of a skeleton (what run_skeleton_command writes); `adapter_kit_dir` is used by python only.
std::string skeleton_text(const std::string& target, const std::string& lang, const std::string& precision,
                          const std::filesystem::path& adapter_kit_dir);

}  // namespace gnncheck::suites

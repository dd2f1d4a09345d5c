// gnncheck/suites/cli/selfcheck_command.h — `gnncheck selfcheck`: the oracle's backward of every op
// and layer against finite differences.
//
//   gnncheck selfcheck --quick --target gat
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace gnncheck::suites {

struct SelfcheckCommandArgs {
  std::uint64_t seed = 1;
  bool quick = false;
  std::vector<std::string> targets;
};

CLI::App* add_selfcheck_command(CLI::App& app, SelfcheckCommandArgs& args);
// Exit 0 when the oracle agrees with finite differences everywhere, 1 otherwise.
int run_selfcheck_command(const SelfcheckCommandArgs& args);

}  // namespace gnncheck::suites

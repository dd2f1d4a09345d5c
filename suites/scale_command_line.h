// gnncheck/suites/scale_command_line.h — the `gnncheck scale` command line that repeats a scale check.
//
//   std::string line = scale_command_line({.system_flag = "--system gpu", .target = "spmm", .graph = "g.yaml"});
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "scale/row_sampling.h"

namespace gnncheck::suites {

// `gnncheck scale …`: the one command line that repeats a scale check — the line the command prints
// and the one a suite's scale result carries. Options at their defaults are left out.
struct ScaleCommandLine {
  std::string system_flag;  // "--system NAME", "--adapter '…'", "--plugin …"
  std::string target, graph;
  std::int64_t rows = 1000;
  std::uint64_t seed = 1;
  std::int64_t hub_edges = scale::kDefaultHubEdgeBudget;
  std::int64_t hub_sources = scale::kDefaultHubSourceBudget;
  double magnitude = 1.0;
  std::optional<std::string> features, hidden_features, out_features, heads, norm;  // the flags' values, as given
  bool expect_caught = false;
};
std::string scale_command_line(const ScaleCommandLine& c);

}  // namespace gnncheck::suites

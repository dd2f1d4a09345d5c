// gnncheck/suites/cli/scale_command.h — `gnncheck scale`: one system on one big graph, verified
// against the exact oracle on sampled rows (scale/README.md).
//
//   gnncheck scale --system cpu_float32 --target spmm --graph rmat:20,10 --rows 1000 --seed 1 --report out/
//
// Exit codes as for every subcommand: 0 the expectation held (--expect pass: the check passed;
// caught: it failed; an error catches nothing), 1 it did not, 2 a usage or input error naming the flag.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "scale/row_sampling.h"
#include "suites/system_registry.h"

namespace gnncheck::suites {

struct ScaleCommandArgs {
  std::string system, adapter, plugin;  // exactly one
  std::string target;
  std::string graph;
  std::int64_t rows = 1000;
  std::int64_t hub_edges = scale::kDefaultHubEdgeBudget;
  std::int64_t hub_sources = scale::kDefaultHubSourceBudget;
  std::uint64_t seed = 1;
  double magnitude = 1.0;
  std::optional<std::int64_t> features, hidden_features, out_features, heads;
  std::optional<std::string> norm;
  std::string expect = "pass";
  std::string report;
  // The tolerance model's oracle evaluations side by side (checks::ToleranceOptions); changes
  // memory and time, never a value. Unset: scale::default_oracle_evaluations().
  std::optional<int> oracle_evaluations;
};

// Adds the `scale` subcommand with its flags bound to `args`.
CLI::App* add_scale_command(CLI::App& app, ScaleCommandArgs& args);
// Runs it; throws InputError for bad arguments (the caller maps it to exit code 2).
int run_scale_command(const ScaleCommandArgs& args, SystemRegistry& registry);

}  // namespace gnncheck::suites

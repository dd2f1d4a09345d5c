// gnncheck/properties/counterexample.h — a failing case on disk, and loading it back to re-run it.
//
// A counterexample directory holds
//   graph.mtx                  the graph (MatrixMarket, entries in edge-id order, so edge ids survive)
//   inputs/<name>.npy          every input, float64
//   parameters/<name>.npy      every parameter
//   grad_outputs/<name>.npy    every output gradient
//   case.json                  {format, target, attributes (typed), seed, system, check, files,
//                               verdict {passed, tensor, metric, bound, worst, precision, tolerance,
//                               message}, rapidcheck {seed, reproduce}, rerun}
// load_counterexample() rebuilds exactly the Case (bit-identical tensors) and says which system and
// check failed on it; unit tests and the runner re-run it with checks::run_check.
//
//   properties::write_counterexample("cases/spmm-adjoint", c, verdict, {.rapidcheck_seed = 42});
//   properties::SavedCase saved = properties::load_counterexample("cases/spmm-adjoint");
//   checks::Verdict again = checks::run_check(saved.check, *system, saved.c);
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "checks/verdict.h"
#include "core/case.h"

namespace gnncheck::properties {

inline constexpr int kCounterexampleFormat = 1;

struct CounterexampleProvenance {
  std::uint64_t rapidcheck_seed = 0;
  std::string reproduce;  // RapidCheck's reproduce string ("" when not from a property run)
  std::string rerun;      // the command that re-runs the saved case
};

// Creates `dir` (and parents) and writes the case into it, replacing files of the same names.
// Throws InputError when the directory cannot be written.
void write_counterexample(const std::filesystem::path& dir, const Case& c, const checks::Verdict& verdict,
                          const CounterexampleProvenance& provenance = {});

struct SavedCase {
  Case c;
  std::string system;           // the system that failed
  checks::CheckKind check = checks::CheckKind::differential;
  std::string verdict_message;  // the failure as recorded
  CounterexampleProvenance provenance;
};

// Throws InputError naming the file and field when the directory is incomplete or malformed.
SavedCase load_counterexample(const std::filesystem::path& dir);

// "gnncheck repro <dir>": the command that re-runs a saved counterexample (suites/cli/repro_command.cpp;
// the one re-run program: it registers the recorded system again, built-in, adapter or plugin).
std::string repro_command(const std::filesystem::path& dir);

}  // namespace gnncheck::properties

// gnncheck/oracle/selfcheck.h — the oracle verifying its own backward passes (`gnncheck selfcheck`).
//
// run_selfcheck takes every target of oracle::all_targets() (ops and, once registered, layers) and
// compares the oracle's backward with central finite differences of its forward (gradcheck.h):
//   * the full Jacobian on small built-in graphs — non-square with a duplicate edge, an empty row and
//     an isolated source; square and directed with a self-loop and in-degrees ≠ out-degrees; a
//     sampled 2×5 block — for the default attributes and for variants (heads = 2, the other norm, …);
//   * random directions vᵀJu on a built-in skewed graph with ≥ 100,000 edges.
// It prints one line per target × input with the worst relative error measured and the bound.
//
//   gnncheck::oracle::SelfcheckOptions options;
//   options.out = &std::cout;
//   auto report = gnncheck::oracle::run_selfcheck(options);
//   return report.all_passed ? 0 : 1;
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "oracle/gradcheck.h"

namespace gnncheck::oracle {

struct SelfcheckOptions {
  std::uint64_t seed = 1;             // seeds every case and direction; printed in the header line
  bool include_large = true;          // the random-direction check on the large graph
  index_t large_edges = 120'000;      // edges of the large graph (at least 100,000 for the bar)
  std::vector<std::string> targets;   // only these targets (empty = all); an unknown name is an InputError
  GradcheckOptions gradcheck;         // step, bound, directions (its seed is replaced by `seed`)
  CaseEvaluator evaluate;             // whose backward is checked: empty = the oracle in float64; any
                                      // float64 evaluation (e.g. a System's) may be given instead
  std::ostream* out = nullptr;        // where the lines go (nullptr = silent)
};

// The verdict for one differentiable input of one target, over every graph and attribute variant.
struct SelfcheckLine {
  std::string target;
  std::string input;
  index_t full_cases = 0;               // (graph, variant) pairs checked with the full Jacobian
  double full_worst_error = 0.0;        // worst relative error over them
  std::string full_worst_where;         // "<graph> <attributes>: d y[3] / d x[7]"
  index_t directions = 0;               // random directions checked on the large graph
  double directions_worst_error = 0.0;
  std::string directions_worst_where;
  double bound = 0.0;
  std::string failure;                  // an evaluation that failed, with the case that failed
  bool passed = false;
  // Jacobian columns and directions left out because every step tried crossed a kink
  // (oracle/gradcheck.h, kGradcheckKinkHalvings): shown, never compared.
  index_t left_out_at_kinks = 0;
};

struct SelfcheckReport {
  std::uint64_t seed = 0;
  std::vector<SelfcheckLine> lines;  // target order of the catalogue, inputs in spec order
  double seconds = 0.0;
  bool all_passed = false;
};

SelfcheckReport run_selfcheck(const SelfcheckOptions& options = {});

// The built-in graphs (also used by the oracle's tests and benchmarks).
struct NamedGraph {
  std::string name;
  std::shared_ptr<const Graph> graph;
};
std::vector<NamedGraph> selfcheck_small_graphs();
// A seeded random graph with skewed (power-law-like) in- and out-degrees that differ from each
// other: destination = ⌊n_dst·r²⌋ and source = ⌊n_src·r'³⌋ for uniform r, r', so low ids are hubs.
// Duplicate edges and self-loops occur naturally and are kept. Identical on every platform.
Graph make_skewed_graph(index_t n_dst, index_t n_src, index_t num_edges, std::uint64_t seed);

}  // namespace gnncheck::oracle

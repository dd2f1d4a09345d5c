// gnncheck/gpu/tests/gpu_test_support.h — what the GPU tests share: the device skip, seeded random
// graphs of the awkward kinds, and the error bound a float32 result is held to.
//
// error_bounds() is the check library's model (checks/tolerance.h) for a system declaring
// float32 — the same bound `gnncheck run` holds the `gpu` system to, with no test-only additions:
// the closed form 2·γ_{k+r}·Σ|a||b| for the sparse ops, and for edge_softmax and the layers the
// measured model (the oracle's own float32 error in three summation orders, times 16) with its
// classical floor 2·γ·|f(|inputs|)| over the layer's chain of sums.
//
//   GNNCHECK_GPU_TEST_REQUIRES_DEVICE();
//   auto bounds = gnncheck::gpu::testing::error_bounds(c, exact);
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "core/system.h"
#include "gpu/context.h"
#include "core/case.h"
#include "core/graph.h"

#define GNNCHECK_GPU_TEST_REQUIRES_DEVICE()                                          \
  do {                                                                               \
    if (!::gnncheck::gpu::probe_device().available) GTEST_SKIP() << "skipped: no CUDA device"; \
  } while (0)

namespace gnncheck::gpu::testing {

// The kinds of graph every op is checked on. All are seeded; the seed is part of the summary.
enum class GraphKind {
  square_with_duplicates,  // self-loops, duplicate edges, some empty rows
  non_square_wide,         // n_dst < n_src (a sampled block)
  non_square_tall,         // n_dst > n_src
  hub_rows,                // a few rows with hundreds of edges (multi-pass warp loops)
  no_edges,                // nodes but no edges
  tiny,                    // 1 × 1 with one edge
};
const char* to_string(GraphKind kind);
Graph random_graph(GraphKind kind, std::uint64_t seed);

// Per output/gradient label ("output y", "gradient x"): the element-wise bound of checks::ToleranceModel.
std::map<std::string, Tensor> error_bounds(const Case& c, const Result& exact);

// Compares `got` with `exact` under `bounds`: `problem` is empty when every element is within
// bound, otherwise it names the tensor, the element, both values and the bound; `worst_ratio` is
// the largest |got − exact| / bound seen.
struct Comparison {
  std::string problem;
  double worst_ratio = 0.0;
};
Comparison compare(const Result& exact, const Result& got, const std::map<std::string, Tensor>& bounds);

// "target gat, heads=3 ..., Graph 37×53, 200 edges, seed 17" for failure messages.
std::string describe(const Case& c);

}  // namespace gnncheck::gpu::testing

namespace gnncheck::gpu::testing {

// Attributes for a target drawn from the awkward values: heads 1–8, odd and > 32 feature widths,
// both normalizations, bias/self-loops/concat/root_weight on and off, relations 1–7 and bases 0–4.
// Only attributes the spec declares.
Attributes random_attributes(const std::string& target, std::mt19937_64& rng);

// oracle::make_random_case for any attributes: a layer with bias = false declares a bias input
// but gives it no shape, so the case is drawn with bias on and the tensors the target does not
// take with `attributes` are dropped.
Case make_case(const std::string& target, std::shared_ptr<const Graph> graph, const Attributes& attributes,
               std::uint64_t seed);

// Whether the target's layer convention allows the graph (layers need n_dst ≤ n_src).
bool graph_fits(const std::string& target, const Graph& g);

}  // namespace gnncheck::gpu::testing

namespace gnncheck::gpu::testing {

inline constexpr GraphKind kAllKinds[] = {GraphKind::square_with_duplicates, GraphKind::non_square_wide,
                                          GraphKind::non_square_tall,        GraphKind::hub_rows,
                                          GraphKind::no_edges,               GraphKind::tiny};

struct TargetTally {
  int cases = 0;
  double worst_ratio = 0.0;  // largest |system − oracle| / bound over every element of every case
};

// Evaluates `cases_per_kind` random cases of `target` per graph kind on `system` and compares them
// with the oracle under error_bounds(). Every failure is a GoogleTest failure naming the case
// (target, attributes, graph, seed); a system that measures memory must report peak_bytes > 0.
TargetTally check_target(System& system, const std::string& target, int cases_per_kind, std::uint64_t base_seed);

}  // namespace gnncheck::gpu::testing

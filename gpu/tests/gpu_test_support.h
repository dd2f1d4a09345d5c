// gnncheck/gpu/tests/gpu_test_support.h — what the GPU tests share: the device skip, seeded random
// graphs of the awkward kinds, and the error bound a float32 result is held to.
//
// error_bounds() is the one place the tolerance is computed (so it can be swapped for the check
// library's model). Two forms, after DESIGN.md "Tolerances come from error analysis":
//   closed form (bilinear sparse ops): bound = 2 · γ_{k+3} · Σ|w||x|, with Σ|w||x| the oracle's
//     own target evaluated in float64 on |inputs| and |output gradients|, k the largest row or
//     column length of the graph, and 3 roundings per term besides the additions (the inputs'
//     rounding to float32, the product, a degree factor);
//   measured (edge_softmax, layers): the oracle's code in float32 on the same case gives the
//     rounding error e a correct float32 implementation makes; bound = 8 · max(e_i, rms(e)) +
//     2 · γ_{k+4} · |y_i|.
//
//   GNNCHECK_GPU_TEST_REQUIRES_DEVICE();
//   auto bounds = gnncheck::gpu::testing::error_bounds(c, exact);
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "gpu/context.h"
#include "oracle/case.h"
#include "oracle/graph.h"

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

// Per output/gradient label ("output y", "gradient x"): the element-wise bound.
std::map<std::string, Tensor> error_bounds(const Case& c, const Result& exact);

// Compares `got` with `exact` under `bounds`; an empty string when every element is within bound,
// otherwise a message naming the tensor, the element, both values and the bound.
std::string compare(const Result& exact, const Result& got, const std::map<std::string, Tensor>& bounds);

// "target gat, heads=3 ..., Graph 37×53, 200 edges, seed 17" for failure messages.
std::string describe(const Case& c);

}  // namespace gnncheck::gpu::testing

namespace gnncheck::gpu::testing {

// Attributes for a target drawn from the awkward values: heads 1–8, odd and > 32 feature widths,
// both normalizations, bias/self-loops/concat on and off. Only attributes the spec declares.
Attributes random_attributes(const std::string& target, std::mt19937_64& rng);

// Whether the target's layer convention allows the graph (layers need n_dst ≤ n_src).
bool graph_fits(const std::string& target, const Graph& g);

}  // namespace gnncheck::gpu::testing

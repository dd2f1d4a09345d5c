// The device Kronecker generator (gpu/kronecker.cuh) on a small scale: the same graph for the same
// seed and another for another seed; exactly the graph the definition gives when rebuilt on the
// host from the same per-edge draws (both directions, self-loops and duplicates removed, rows
// sorted); symmetric; skewed degrees; bad parameters are InputErrors.
#include <algorithm>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "gpu/kronecker.cuh"
#include "gpu/tests/gpu_test_support.h"
#include "core/error.h"

namespace gnncheck::gpu::testing {
namespace {

struct HostCsr {
  std::vector<offset_t> row_ptr;
  std::vector<node_t> col_idx;
  bool operator==(const HostCsr&) const = default;
};

HostCsr download(GpuContext& ctx, const KroneckerGraph& g) {
  return {g.row_ptr.download(ctx.stream), g.col_idx.download(ctx.stream)};
}

// The definition, on the host: every draw in both directions, minus self-loops and duplicates.
HostCsr reference(const KroneckerParams& p) {
  const std::int64_t nodes = std::int64_t{1} << p.scale, generated = p.edge_factor << p.scale;
  std::vector<std::pair<node_t, node_t>> pairs;  // (row, col)
  for (std::int64_t k = 0; k < generated; ++k) {
    const KroneckerEdge e = kronecker_edge(p, static_cast<std::uint64_t>(k));
    if (e.src == e.dst) continue;
    pairs.emplace_back(static_cast<node_t>(e.dst), static_cast<node_t>(e.src));
    pairs.emplace_back(static_cast<node_t>(e.src), static_cast<node_t>(e.dst));
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  HostCsr csr;
  csr.row_ptr.assign(static_cast<std::size_t>(nodes) + 1, 0);
  for (const auto& [row, col] : pairs) {
    ++csr.row_ptr[static_cast<std::size_t>(row) + 1];
    csr.col_idx.push_back(col);
  }
  for (std::int64_t i = 0; i < nodes; ++i) csr.row_ptr[i + 1] += csr.row_ptr[i];
  return csr;
}

class KroneckerTest : public ::testing::Test {
 protected:
  void SetUp() override { GNNCHECK_GPU_TEST_REQUIRES_DEVICE(); }
};

TEST_F(KroneckerTest, SameSeedSameGraphAndItIsTheDefinition) {
  GpuContext ctx;
  const KroneckerParams params{.scale = 12, .seed = 42};
  const KroneckerGraph first = generate_kronecker(ctx, params);
  const KroneckerGraph second = generate_kronecker(ctx, params);
  const HostCsr a = download(ctx, first), b = download(ctx, second);
  EXPECT_EQ(first.nodes, 4096);
  EXPECT_EQ(first.generated_edges, 16 * 4096);
  EXPECT_TRUE(a == b) << "two generations with seed 42 differ";
  EXPECT_TRUE(a == reference(params)) << "the device graph is not the definition's graph";

  const HostCsr other = download(ctx, generate_kronecker(ctx, {.scale = 12, .seed = 43}));
  EXPECT_FALSE(a == other) << "seeds 42 and 43 gave the same graph";
  // Generation memory is returned: only the kept CSR arrays are live.
  EXPECT_EQ(ctx.allocator.current_bytes(),
            static_cast<std::int64_t>(GpuContext::cublas_workspace_bytes + first.row_ptr.bytes() +
                                      first.col_idx.bytes() + second.row_ptr.bytes() + second.col_idx.bytes()));
}

TEST_F(KroneckerTest, SymmetricSimpleAndSkewed) {
  GpuContext ctx;
  const KroneckerGraph g = generate_kronecker(ctx, {.scale = 14, .seed = 7});
  const HostCsr csr = download(ctx, g);
  const std::int64_t n = g.nodes, edges = g.num_edges();
  ASSERT_EQ(csr.row_ptr.back(), edges);
  EXPECT_GT(edges, 0);
  EXPECT_LE(edges, 2 * g.generated_edges);
  EXPECT_EQ(edges % 2, 0) << "a symmetric graph without self-loops has an even number of directed edges";
  std::int64_t max_degree = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto begin = csr.col_idx.begin() + csr.row_ptr[i], end = csr.col_idx.begin() + csr.row_ptr[i + 1];
    max_degree = std::max<std::int64_t>(max_degree, end - begin);
    for (auto it = begin; it != end; ++it) {
      const node_t j = *it;
      ASSERT_NE(j, i) << "self-loop at node " << i;
      ASSERT_TRUE(it == begin || *(it - 1) < j) << "row " << i << " is not strictly increasing (duplicate or unsorted)";
      const auto row_j_begin = csr.col_idx.begin() + csr.row_ptr[j], row_j_end = csr.col_idx.begin() + csr.row_ptr[j + 1];
      ASSERT_TRUE(std::binary_search(row_j_begin, row_j_end, static_cast<node_t>(i)))
          << "edge " << i << " <- " << j << " has no reverse";
    }
  }
  // R-MAT with a = .57 concentrates edges: the largest degree is far above the mean.
  EXPECT_GT(max_degree, 20 * edges / n);
}

TEST_F(KroneckerTest, BadParametersAreInputErrors) {
  GpuContext ctx;
  EXPECT_THROW(generate_kronecker(ctx, {.scale = 0}), InputError);
  EXPECT_THROW(generate_kronecker(ctx, {.scale = 31}), InputError);
  EXPECT_THROW(generate_kronecker(ctx, {.scale = 10, .edge_factor = 0}), InputError);
  EXPECT_THROW(generate_kronecker(ctx, {.scale = 10, .a = 0.6, .b = 0.3, .c = 0.2}), InputError);
  EXPECT_EQ(ctx.allocator.current_bytes(), static_cast<std::int64_t>(GpuContext::cublas_workspace_bytes));
}

}  // namespace
}  // namespace gnncheck::gpu::testing

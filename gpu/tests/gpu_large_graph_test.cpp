// 64-bit edges on the device: a graph with more than 2^31 edges (1,048,576 nodes, about 2052 edges
// each, 2,151,677,942 in all) is filled on the device from a formula, and the CSR aggregation
// (spmm, the row-mean normalized aggregation of GCN), the Aᵀ aggregation over the CSC built on the
// device (64-bit col_ptr), an edge-parallel kernel (sddmm_add over the row-ordered COO) and edge
// values read through the 64-bit edge_perm are checked against exact expectations: all-ones
// features give each row's degree and each column's count (cross-checked against an independent
// count by atomics), features j mod 8 give integer sums the host computes for the rows whose
// offsets lie beyond 2^31. Float32 represents every expected value exactly (all below 2^24).
// The test needs about 73 GiB of device memory (at the CSC build); with less free, it skips and
// says so.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gpu/degree_norm.cuh"
#include "gpu/device_graph.h"
#include "gpu/sddmm.cuh"
#include "gpu/spmm.cuh"
#include "gpu/spmm_ve.cuh"
#include "gpu/tests/gpu_test_support.h"
#include "gpu/tests/large_graph_kernels.cuh"
#include "core/error.h"

namespace gnncheck::gpu::testing {
namespace {

constexpr std::int64_t kNodes = std::int64_t{1} << 20;
constexpr std::int64_t kTwoTo31 = std::int64_t{1} << 31;

std::int64_t degree(std::int64_t i) { return 2048 + i % 9; }

std::vector<offset_t> pattern_row_ptr() {
  std::vector<offset_t> row_ptr(static_cast<std::size_t>(kNodes) + 1, 0);
  for (std::int64_t i = 0; i < kNodes; ++i) row_ptr[i + 1] = row_ptr[i] + degree(i);
  return row_ptr;
}

std::vector<float> download_range(GpuContext& ctx, const float* device, std::int64_t begin, std::int64_t count) {
  std::vector<float> host(static_cast<std::size_t>(count));
  GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(host.data(), device + begin, host.size() * sizeof(float),
                                      cudaMemcpyDeviceToHost, ctx.stream));
  ctx.synchronize();
  return host;
}

class LargeGraphTest : public ::testing::Test {
 protected:
  void SetUp() override { GNNCHECK_GPU_TEST_REQUIRES_DEVICE(); }
};

TEST_F(LargeGraphTest, OffsetsThatDisagreeWithTheColumnsAreAnInputError) {
  GpuContext ctx;
  DeviceBuffer<offset_t> row_ptr(ctx.allocator, 3);
  row_ptr.upload(std::vector<offset_t>{0, 2, 5}, ctx.stream);
  DeviceBuffer<node_t> col_idx(ctx.allocator, 4);  // row_ptr says 5
  try {
    DeviceGraph g(ctx, 2, 2, std::move(row_ptr), std::move(col_idx));
    FAIL() << "row_ptr[2] = 5 with 4 column indices was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("row_ptr[n_dst] = 5"), std::string::npos) << e.what();
  }
}

TEST_F(LargeGraphTest, NodeCountsBeyond32BitsAreAnInputError) {
  GpuContext ctx;
  try {
    DeviceGraph g(ctx, kTwoTo31, 4, DeviceBuffer<offset_t>(), DeviceBuffer<node_t>());
    FAIL() << "a device graph with 2^31 destinations was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("32 bits"), std::string::npos) << e.what();
  }
}

TEST_F(LargeGraphTest, AggregationOverMoreThan2To31EdgesIsExact) {
  const std::vector<offset_t> h_row_ptr = pattern_row_ptr();
  const std::int64_t edges = h_row_ptr.back();
  ASSERT_GT(edges, kTwoTo31);
  // At the CSC build: col_idx, row_of_edge, row_idx (4 bytes per edge each) and the sort's 24
  // transient bytes per edge; plus the node-sized arrays and a margin.
  const std::int64_t needed = 36 * edges + 64 * kNodes + (std::int64_t{1} << 30);
  std::size_t free_bytes = 0, total_bytes = 0;
  GNNCHECK_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (static_cast<std::int64_t>(free_bytes) < needed)
    GTEST_SKIP() << fmt::format("skipped: the {}-edge graph needs {:.1f} GiB of device memory; {:.1f} GiB of {:.1f} "
                                "GiB are free",
                                edges, needed / 1073741824.0, free_bytes / 1073741824.0, total_bytes / 1073741824.0);

  GpuContext ctx;
  DeviceBuffer<offset_t> row_ptr(ctx.allocator, kNodes + 1);
  row_ptr.upload(h_row_ptr, ctx.stream);
  DeviceBuffer<node_t> col_idx(ctx.allocator, edges);
  fill_pattern_columns(ctx, kNodes, kNodes, row_ptr.data(), col_idx.data());
  DeviceGraph g(ctx, kNodes, kNodes, std::move(row_ptr), std::move(col_idx));
  EXPECT_EQ(g.num_edges(), edges);
  EXPECT_EQ(edges, 2151677942);
  EXPECT_FALSE(g.fits_cusparse()) << "2^31 edges or more need 64-bit column indices in cuSPARSE";

  // Rows whose edges lie beyond 2^31 (where 32-bit offsets would wrap), and the first rows.
  std::vector<std::int64_t> checked_rows;
  for (std::int64_t i = 0; i < kNodes; ++i)
    if (i < 64 || h_row_ptr[i + 1] > kTwoTo31 - 4096) checked_rows.push_back(i);
  ASSERT_GT(checked_rows.size(), 1000u);

  DeviceBuffer<float> x(ctx.allocator, kNodes), y(ctx.allocator, kNodes);
  {  // all-ones features: every row sums to its degree
    x.upload(std::vector<float>(kNodes, 1.0f), ctx.stream);
    spmm_forward(ctx, g, x.data(), 1, y.data());
    const std::vector<float> got = y.download(ctx.stream);
    std::int64_t wrong = 0, first_wrong = -1;
    for (std::int64_t i = 0; i < kNodes; ++i)
      if (got[i] != static_cast<float>(degree(i)) && wrong++ == 0) first_wrong = i;
    EXPECT_EQ(wrong, 0) << "row " << first_wrong << ": got " << got[first_wrong] << ", degree "
                        << degree(first_wrong);
  }
  {  // GCN's row-mean normalized aggregation of all-ones features: 1 in every row
    normalized_spmm_forward(ctx, g, DegreeNorm::row_mean, SourceDegree::out, x.data(), 1, y.data());
    const std::vector<float> got = y.download(ctx.stream);
    std::int64_t wrong = 0, first_wrong = -1;
    for (std::int64_t i = 0; i < kNodes; ++i)
      if (std::abs(got[i] - 1.0f) > 4e-4f && wrong++ == 0) first_wrong = i;  // 2052 sums: γ_2052 ≈ 2.4e-4
    EXPECT_EQ(wrong, 0) << "row " << first_wrong << ": got " << got[first_wrong] << ", expected 1";
  }
  {  // features j mod 8: integer sums over each row's columns
    std::vector<float> h_x(kNodes);
    for (std::int64_t j = 0; j < kNodes; ++j) h_x[j] = static_cast<float>(j % 8);
    x.upload(h_x, ctx.stream);
    spmm_forward(ctx, g, x.data(), 1, y.data());
    const std::vector<float> got = y.download(ctx.stream);
    for (std::int64_t i : checked_rows) {
      std::int64_t expected = 0;
      for (std::int64_t t = 0; t < degree(i); ++t) expected += pattern_column(i, t, kNodes) % 8;
      ASSERT_EQ(got[i], static_cast<float>(expected)) << "row " << i << " (offsets " << h_row_ptr[i] << ".."
                                                      << h_row_ptr[i + 1] << ")";
    }
  }
  {  // Aᵀ over the CSC built on the device (64-bit col_ptr): all-ones features give each column's
     // count, which the symmetric normalization counts independently (64-bit atomics over col_idx)
    g.ensure_csc(ctx);
    x.upload(std::vector<float>(kNodes, 1.0f), ctx.stream);
    spmm_transposed_forward(ctx, g, x.data(), 1, y.data());
    const std::vector<float> counts = y.download(ctx.stream);
    const DegreeFactors factors = degree_factors(ctx, g, DegreeNorm::symmetric, SourceDegree::out);
    const std::vector<float> src = factors.src.download(ctx.stream);
    double total = 0.0;
    for (std::int64_t j = 0; j < kNodes; ++j) {
      total += counts[j];
      const float expected = counts[j] > 0 ? 1.0f / std::sqrt(counts[j]) : 0.0f;
      ASSERT_EQ(src[j], expected) << "column " << j << ": CSC count " << counts[j];
    }
    EXPECT_EQ(total, static_cast<double>(edges)) << "the CSC's columns do not hold every edge once";
  }
  {  // edge-parallel over the row-ordered COO: e[k] = a[row of k] + b[col of k] with b = 0
    std::vector<float> h_a(kNodes);
    for (std::int64_t i = 0; i < kNodes; ++i) h_a[i] = static_cast<float>(i % 1000);
    x.upload(h_a, ctx.stream);
    y.zero(ctx.stream);
    DeviceBuffer<float> e(ctx.allocator, edges);
    sddmm_add_forward(ctx, g, x.data(), y.data(), 1, e.data());
    for (std::int64_t begin : {std::int64_t{0}, kTwoTo31 - (std::int64_t{1} << 20), edges - (std::int64_t{1} << 22)}) {
      const std::int64_t count = std::min<std::int64_t>(std::int64_t{1} << 22, edges - begin);
      const std::vector<float> got = download_range(ctx, e.data(), begin, count);
      std::int64_t row = std::upper_bound(h_row_ptr.begin(), h_row_ptr.end(), begin) - h_row_ptr.begin() - 1;
      for (std::int64_t k = begin; k < begin + count; ++k) {
        while (h_row_ptr[row + 1] <= k) ++row;
        ASSERT_EQ(got[k - begin], static_cast<float>(row % 1000)) << "edge " << k << " of row " << row;
      }
    }
    // Edge values read through the 64-bit edge_perm (the fused eShuffle + SpMMve of attention
    // backward) against the same sums read through row_idx: Σ_{p in column j} w[edge_perm[p]] with
    // w = a[row] must equal Σ_{p in column j} a[row_idx[p]] exactly (integers below 2^24, same order).
    DeviceBuffer<float> ones(ctx.allocator, kNodes), through_perm(ctx.allocator, kNodes);
    ones.upload(std::vector<float>(kNodes, 1.0f), ctx.stream);
    spmm_ve_transposed_forward(ctx, g, e.data(), 1, ones.data(), 1, through_perm.data(),
                               TransposeMethod::fused_csc_kernel);
    spmm_transposed_forward(ctx, g, x.data(), 1, y.data());
    const std::vector<float> a = through_perm.download(ctx.stream), b = y.download(ctx.stream);
    std::int64_t wrong = 0, first_wrong = -1;
    for (std::int64_t j = 0; j < kNodes; ++j)
      if (a[j] != b[j] && wrong++ == 0) first_wrong = j;
    EXPECT_EQ(wrong, 0) << "column " << first_wrong << ": through edge_perm " << a[first_wrong] << ", through row_idx "
                        << b[first_wrong];
  }
  std::printf("graph of %lld nodes and %lld edges: device peak %.2f GiB\n", static_cast<long long>(kNodes),
              static_cast<long long>(edges), ctx.allocator.peak_bytes() / 1073741824.0);
}

}  // namespace
}  // namespace gnncheck::gpu::testing

// gpu/benchmarks/transpose_benchmark.cpp — native transposed SpMM vs a materialized CSC vs the fused
// CSC kernel, and the peak device memory of one GAT layer (1 head) forward + backward.
//
// Usage: gnncheck_gpu_transpose_benchmark [EDGES ...]   (default: 1048576 67108864)
// For each edge count: a random graph with E/16 nodes (row lengths uniform in [0, 32], sources
// uniform, so Aᵀ has the same shape statistics), features F = 16 and 64, heads 1. Each variant
// runs 3 warm-ups and 10 timed calls (CUDA events around each call, which includes the cuSPARSE
// workspace allocation and the synchronization every call makes); the median is printed, with the
// extra device bytes the variant needs beyond A's CSR. Prints one table row per measurement.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "gpu/context.h"
#include "gpu/benchmarks/event_timing.h"
#include "gpu/cuda_check.h"
#include "gpu/device_graph.h"
#include "gpu/device_tensor.h"
#include "gpu/gpu_systems.h"
#include "gpu/spmm.cuh"
#include "gpu/spmm_ve.cuh"
#include "core/graph.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace {

using namespace gnncheck;
using namespace gnncheck::gpu;

Graph random_graph(index_t edges_wanted, std::uint64_t seed) {
  const index_t n = std::max<index_t>(1, edges_wanted / 16);
  std::mt19937_64 rng(seed);
  std::vector<index_t> row_ptr(static_cast<std::size_t>(n) + 1, 0), col_idx;
  col_idx.reserve(static_cast<std::size_t>(edges_wanted) + 64);
  for (index_t i = 0; i < n; ++i) {
    const index_t degree = static_cast<index_t>(rng() % 33);
    for (index_t k = 0; k < degree; ++k) col_idx.push_back(static_cast<index_t>(rng() % static_cast<std::uint64_t>(n)));
    row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<index_t>(col_idx.size());
  }
  return Graph::from_csr(n, n, std::move(row_ptr), std::move(col_idx));
}

template <class Fn>
float median_ms(GpuContext& ctx, Fn&& fn) {
  const std::vector<float> ms = event_times_ms(ctx.stream, fn, 3, 10);
  return (ms[4] + ms[5]) / 2;
}

void transpose_rows(index_t edges_wanted) {
  const Graph host = random_graph(edges_wanted, 42);
  GpuContext ctx;
  DeviceGraph g(ctx, host);
  const std::int64_t csr_bytes = g.storage_bytes();
  g.ones(ctx);
  const std::int64_t ones_bytes = g.storage_bytes() - csr_bytes;
  g.ensure_csc(ctx);
  const std::int64_t csc_bytes = g.storage_bytes() - csr_bytes - ones_bytes;
  for (std::int64_t f : {16, 64}) {
    DeviceTensor y(ctx, {g.n_dst(), f}), z(ctx, {g.n_src(), f}), x(ctx, {g.n_src(), f}), out(ctx, {g.n_dst(), f});
    DeviceTensor w(ctx, {g.num_edges(), 1});
    const float forward = median_ms(ctx, [&] { spmm_forward(ctx, g, x.data(), f, out.data()); });
    std::printf("| %lld | %lld | %lld | A·X (cusparseSpMM) | — | %.3f | 0 |\n", static_cast<long long>(g.n_dst()),
                static_cast<long long>(g.num_edges()), static_cast<long long>(f), forward);
    for (TransposeMethod m :
         {TransposeMethod::native_cusparse, TransposeMethod::materialized_csc, TransposeMethod::fused_csc_kernel}) {
      const float unweighted = median_ms(ctx, [&] { spmm_transposed_forward(ctx, g, y.data(), f, z.data(), m); });
      const float weighted =
          median_ms(ctx, [&] { spmm_ve_transposed_forward(ctx, g, w.data(), 1, y.data(), f, z.data(), m); });
      // Beyond A's CSR: the CSC arrays (the materialized weighted product also shuffles w: +4E bytes).
      const std::int64_t extra = m == TransposeMethod::native_cusparse ? 0 : csc_bytes;
      std::printf("| %lld | %lld | %lld | Aᵀ·Y %s | %.3f | %.3f | %lld |\n", static_cast<long long>(g.n_dst()),
                  static_cast<long long>(g.num_edges()), static_cast<long long>(f), std::string(to_string(m)).c_str(),
                  unweighted, weighted, static_cast<long long>(extra));
    }
  }
  std::printf("(CSR %lld bytes, unit values %lld bytes, CSC with edge_perm %lld bytes)\n",
              static_cast<long long>(csr_bytes), static_cast<long long>(ones_bytes), static_cast<long long>(csc_bytes));
}

void gat_peak(index_t edges_wanted) {
  auto graph = std::make_shared<const Graph>(random_graph(edges_wanted, 7));
  const oracle::TargetDef& def = oracle::find_target("gat");
  const Attributes attrs{{"in_features", std::int64_t{128}}, {"out_features", std::int64_t{16}},
                         {"heads", std::int64_t{1}}};
  const Case c = oracle::make_random_case(def, graph, attrs, 7, {});
  auto gpu = make_gpu_system();
  gpu->evaluate(c);  // warm-up: creates the context (cuBLAS workspace)
  const Result r = gpu->evaluate(c);
  if (!r.ok()) {
    std::printf("GAT evaluation failed: %s\n", r.message.c_str());
    return;
  }
  std::printf("GAT-1 layer forward+backward, %lld nodes, %lld edges (+%lld self-loops), in 128, out 16: "
              "peak %lld bytes (%.1f MiB), %.3f s including transfers; held between evaluations %lld bytes\n",
              static_cast<long long>(graph->n_dst()), static_cast<long long>(graph->num_edges()),
              static_cast<long long>(graph->n_dst()), static_cast<long long>(*r.peak_bytes),
              static_cast<double>(*r.peak_bytes) / (1 << 20), r.seconds, static_cast<long long>(*gpu->live_bytes()));
}

}  // namespace

int main(int argc, char** argv) {
  if (!probe_device().available) {
    std::printf("skipped: no CUDA device\n");
    return 0;
  }
  std::vector<index_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoll(argv[i]));
  if (sizes.empty()) sizes = {1 << 20, 1 << 26};
  std::printf("| nodes | edges | F | product | unweighted ms | weighted ms (w [E]) | extra bytes |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- |\n");
  for (index_t e : sizes) transpose_rows(e);
  gat_peak(1 << 20);
  return 0;
}

// gnncheck_untransposed_speed: what leaving out the transpose saves in GAT's aggregation backward
// (replica 5; the pitfalls paper reports whole GAT training 1.34× faster without it). On RMAT
// graphs (Graph500 parameters, symmetrized, no self-loops or duplicates) it times, for
// grad_h = A_αᵀ·ḡ with H heads of C channels:
//   untransposed  the replica's kernel: walks the CSR reading w[p]           (A_α·ḡ, wrong)
//   csc_twin      the same kernel walking the CSC reading w[edge_perm[p]]    (A_αᵀ·ḡ, right)
//   reference     the GPU reference's fused eShuffle+SpMMve kernel          (A_αᵀ·ḡ, right)
// Each time is the median of 20 runs after 3 warm-ups (CUDA events on the context's stream); the
// CSC and edge_perm are built during the warm-ups, as a training run builds them once.
//
//   gnncheck_untransposed_speed [SCALE]...      (default: 18 20)
// Prints one line per graph and width: "RESULT scale=.. nodes=.. edges=.. heads=.. channels=..
// untransposed_ms=.. csc_twin_ms=.. reference_ms=.. twin_over_untransposed=..".
#include <algorithm>
#include <cstdlib>
#include <functional>
#include <vector>

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "adapters/replicas/gpu/replica_kernels.cuh"
#include "fixtures/generators.h"
#include "gpu/context.h"
#include "gpu/benchmarks/event_timing.h"
#include "gpu/cuda_check.h"
#include "gpu/device_graph.h"
#include "gpu/spmm_ve.cuh"
#include "core/graph.h"

namespace {

using namespace gnncheck;

double median_ms(gpu::GpuContext& ctx, const std::function<void()>& run) {
  const std::vector<float> times = gpu::event_times_ms(ctx.stream, run, 3, 20);
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> scales;
  for (int k = 1; k < argc; ++k) scales.push_back(std::atoi(argv[k]));
  if (scales.empty()) scales = {18, 20};
  if (!gpu::probe_device().available) {
    fmt::print("skipped: no CUDA device ({})\n", gpu::probe_device().reason);
    return 0;
  }
  gpu::GpuContext ctx;
  for (int scale : scales) {
    RmatParams params;
    params.scale = scale;
    params.symmetrize = true;
    const Graph g = rmat(params, 1);
    gpu::DeviceGraph dg(ctx, g);
    struct Width {
      std::int64_t heads, channels;
    };
    for (const Width width : {Width{1, 16}, Width{1, 64}, Width{8, 8}}) {
      const std::int64_t e = g.num_edges(), row = width.heads * width.channels;
      gpu::DeviceBuffer<float> w(ctx.allocator, e * width.heads);
      gpu::DeviceBuffer<float> grad_out(ctx.allocator, g.n_dst() * row);
      gpu::DeviceBuffer<float> grad_h(ctx.allocator, g.n_src() * row);
      // Byte 0x3c everywhere: every value is the float 0.0115 (finite, nonzero).
      GNNCHECK_CUDA_CHECK(cudaMemset(w.data(), 0x3c, static_cast<std::size_t>(e * width.heads) * sizeof(float)));
      GNNCHECK_CUDA_CHECK(cudaMemset(grad_out.data(), 0x3c, static_cast<std::size_t>(g.n_dst() * row) * sizeof(float)));
      const double untransposed = median_ms(ctx, [&] {
        gpu_replicas::gather_rows_weighted(ctx, dg, w.data(), width.heads, grad_out.data(), width.channels, grad_h.data());
      });
      const double twin = median_ms(ctx, [&] {
        gpu_replicas::gather_columns_shuffled(ctx, dg, w.data(), width.heads, grad_out.data(), width.channels,
                                              grad_h.data());
      });
      const double reference = median_ms(ctx, [&] {
        gpu::spmm_ve_transposed_forward(ctx, dg, w.data(), width.heads, grad_out.data(), width.channels, grad_h.data(),
                                        gpu::TransposeMethod::fused_csc_kernel);
      });
      fmt::print("RESULT scale={} nodes={} edges={} heads={} channels={} untransposed_ms={:.3f} csc_twin_ms={:.3f} "
                 "reference_ms={:.3f} twin_over_untransposed={:.2f}\n",
                 scale, g.n_dst(), e, width.heads, width.channels, untransposed, twin, reference, twin / untransposed);
      std::fflush(stdout);
    }
  }
  return 0;
}

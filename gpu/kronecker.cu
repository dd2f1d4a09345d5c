#include "gpu/kronecker.cuh"

#include <chrono>
#include <cmath>
#include <vector>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include "gpu/launch.cuh"
#include "core/splitmix64.h"
#include "core/error.h"

namespace gnncheck::gpu {
namespace {

using namespace detail;

__global__ void kronecker_keys_kernel(KroneckerParams params, std::int64_t generated, std::uint64_t sentinel,
                                      std::uint64_t* __restrict__ keys) {
  for (std::int64_t k = global_thread(); k < generated; k += thread_count()) {
    const KroneckerEdge e = kronecker_edge(params, static_cast<std::uint64_t>(k));
    const bool self_loop = e.src == e.dst;
    // Row (destination) in the high bits, so sorted keys are CSR order.
    keys[2 * k] = self_loop ? sentinel : (std::uint64_t{e.dst} << params.scale) | e.src;
    keys[2 * k + 1] = self_loop ? sentinel : (std::uint64_t{e.src} << params.scale) | e.dst;
  }
}

__global__ void columns_kernel(std::int64_t edges, const std::uint64_t* __restrict__ keys, std::uint64_t mask,
                               node_t* __restrict__ col_idx) {
  for (std::int64_t k = global_thread(); k < edges; k += thread_count()) col_idx[k] = static_cast<node_t>(keys[k] & mask);
}

// row_ptr[i] = the first position whose key's row is ≥ i (binary search over the sorted keys).
__global__ void row_ptr_kernel(std::int64_t nodes, std::int64_t edges, const std::uint64_t* __restrict__ keys,
                               int scale, offset_t* __restrict__ row_ptr) {
  for (std::int64_t i = global_thread(); i <= nodes; i += thread_count()) {
    const std::uint64_t first_key = static_cast<std::uint64_t>(i) << scale;
    std::int64_t lo = 0, hi = edges;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (keys[mid] < first_key) lo = mid + 1;
      else hi = mid;
    }
    row_ptr[i] = lo;
  }
}

void validate(const KroneckerParams& p) {
  if (p.scale < 1 || p.scale > 30)
    throw InputError("Kronecker generator: scale = " + std::to_string(p.scale) + "; expected 1..30");
  if (p.edge_factor < 1)
    throw InputError("Kronecker generator: edge_factor = " + std::to_string(p.edge_factor) + "; expected ≥ 1");
  const bool probabilities = p.a >= 0 && p.b >= 0 && p.c >= 0 && p.a + p.b + p.c <= 1.0;
  if (!probabilities)
    throw InputError("Kronecker generator: a, b, c = " + std::to_string(p.a) + ", " + std::to_string(p.b) + ", " +
                     std::to_string(p.c) + "; expected non-negative probabilities with a + b + c ≤ 1");
}

}  // namespace

KroneckerGraph generate_kronecker(GpuContext& ctx, const KroneckerParams& params, KroneckerTimings* timings) {
  validate(params);
  KroneckerTimings phases;
  auto phase_start = std::chrono::steady_clock::now();
  auto end_phase = [&](double& seconds) {  // synchronizes: the phase's kernels are done
    ctx.synchronize();
    const auto now = std::chrono::steady_clock::now();
    seconds = std::chrono::duration<double>(now - phase_start).count();
    phase_start = now;
  };
  KroneckerGraph g;
  const int s = params.scale;
  g.nodes = std::int64_t{1} << s;
  g.generated_edges = params.edge_factor << s;
  const std::int64_t keys_count = 2 * g.generated_edges;
  const std::uint64_t mask = (std::uint64_t{1} << s) - 1;
  const std::uint64_t sentinel = (mask << s) | mask;  // the self-loop (n-1, n-1): never a real edge; sorts last

  std::int64_t edges = 0;
  {
    DeviceBuffer<std::uint64_t> keys(ctx.allocator, keys_count), keys_alt(ctx.allocator, keys_count);
    kronecker_keys_kernel<<<blocks_for_threads(g.generated_edges), block_threads, 0, ctx.stream>>>(
        params, g.generated_edges, sentinel, keys.data());
    GNNCHECK_CHECK_LAUNCH();
    end_phase(phases.draw_s);

    cub::DoubleBuffer<std::uint64_t> sorted(keys.data(), keys_alt.data());
    DeviceBuffer<std::int64_t> unique_count(ctx.allocator, 1);
    std::size_t sort_bytes = 0, unique_bytes = 0;
    GNNCHECK_CUDA_CHECK(
        cub::DeviceRadixSort::SortKeys(nullptr, sort_bytes, sorted, keys_count, 0, 2 * s, ctx.stream));
    GNNCHECK_CUDA_CHECK(cub::DeviceSelect::Unique(nullptr, unique_bytes, keys.data(), keys_alt.data(),
                                                  unique_count.data(), keys_count, ctx.stream));
    DeviceBuffer<unsigned char> temp(ctx.allocator, static_cast<std::int64_t>(std::max(sort_bytes, unique_bytes)));
    std::size_t temp_bytes = temp.bytes();
    GNNCHECK_CUDA_CHECK(
        cub::DeviceRadixSort::SortKeys(temp.data(), temp_bytes, sorted, keys_count, 0, 2 * s, ctx.stream));
    end_phase(phases.sort_s);
    std::uint64_t* sorted_keys = sorted.Current();
    std::uint64_t* unique_keys = sorted.Alternate();
    temp_bytes = temp.bytes();
    GNNCHECK_CUDA_CHECK(cub::DeviceSelect::Unique(temp.data(), temp_bytes, sorted_keys, unique_keys,
                                                  unique_count.data(), keys_count, ctx.stream));
    edges = unique_count.download(ctx.stream)[0];
    if (edges > 0) {  // drop the self-loop sentinel if any self-loop was drawn
      std::uint64_t last = 0;
      GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(&last, unique_keys + edges - 1, sizeof(last), cudaMemcpyDeviceToHost,
                                          ctx.stream));
      ctx.synchronize();
      if (last == sentinel) --edges;
    }
    end_phase(phases.unique_s);
    g.col_idx = DeviceBuffer<node_t>(ctx.allocator, edges);
    g.row_ptr = DeviceBuffer<offset_t>(ctx.allocator, g.nodes + 1);
    if (edges > 0) {
      columns_kernel<<<blocks_for_threads(edges), block_threads, 0, ctx.stream>>>(edges, unique_keys, mask,
                                                                                  g.col_idx.data());
      GNNCHECK_CHECK_LAUNCH();
    }
    row_ptr_kernel<<<blocks_for_threads(g.nodes + 1), block_threads, 0, ctx.stream>>>(g.nodes, edges, unique_keys,
                                                                                      s, g.row_ptr.data());
    GNNCHECK_CHECK_LAUNCH();
    ctx.synchronize();  // the key buffers are freed at the end of this scope
  }
  end_phase(phases.csr_s);
  if (timings) *timings = phases;
  return g;
}

}  // namespace gnncheck::gpu

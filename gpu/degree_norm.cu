#include "gpu/degree_norm.cuh"

#include "gpu/aggregate.cuh"
#include "gpu/elementwise.cuh"
#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

// Integer atomics are exact, so the counts do not depend on the order edges are visited in.
// 64-bit counters: one node may have 2^31 or more edges.
__global__ void count_columns_kernel(std::int64_t edges, const node_t* __restrict__ col_idx,
                                     unsigned long long* __restrict__ counts) {
  for (std::int64_t k = global_thread(); k < edges; k += thread_count()) atomicAdd(&counts[col_idx[k]], 1ull);
}

// factor = degree^-power for degree > 0, else 0; power is 0.5 or 1.
__device__ __forceinline__ float inverse_power(std::int64_t degree, bool square_root) {
  if (degree == 0) return 0.0f;
  return square_root ? 1.0f / sqrtf(static_cast<float>(degree)) : 1.0f / static_cast<float>(degree);
}

__global__ void row_factors_kernel(std::int64_t rows, const offset_t* __restrict__ row_ptr, bool square_root,
                                   float* __restrict__ factors) {
  for (std::int64_t i = global_thread(); i < rows; i += thread_count())
    factors[i] = inverse_power(row_ptr[i + 1] - row_ptr[i], square_root);
}

// Source j's own in-degree (row j's length) for j < n_dst, 0 beyond: one degree per node; a degree
// of 0 gives factor 0, or is taken as 1 (zero_as_one).
__global__ void source_row_factors_kernel(std::int64_t n_src, std::int64_t n_dst, const offset_t* __restrict__ row_ptr,
                                          bool zero_as_one, float* __restrict__ factors) {
  for (std::int64_t j = global_thread(); j < n_src; j += thread_count()) {
    const std::int64_t degree = j < n_dst ? row_ptr[j + 1] - row_ptr[j] : 0;
    factors[j] = inverse_power(degree == 0 && zero_as_one ? 1 : degree, true);
  }
}

__global__ void count_factors_kernel(std::int64_t n, const unsigned long long* __restrict__ counts, bool square_root,
                                     float* __restrict__ factors) {
  for (std::int64_t j = global_thread(); j < n; j += thread_count()) factors[j] = inverse_power(static_cast<std::int64_t>(counts[j]), square_root);
}

__global__ void edge_values_kernel(std::int64_t edges, const node_t* __restrict__ row_of_edge,
                                   const node_t* __restrict__ col_idx, const float* __restrict__ dst,
                                   const float* __restrict__ src, float* __restrict__ values) {
  for (std::int64_t k = global_thread(); k < edges; k += thread_count())
    values[k] = dst[row_of_edge[k]] * (src ? src[col_idx[k]] : 1.0f);
}

}  // namespace

DegreeFactors degree_factors(GpuContext& ctx, DeviceGraph& g, DegreeNorm norm, SourceDegree source_degree,
                             ZeroDegree zero_degree) {
  const bool symmetric = norm == DegreeNorm::symmetric;
  DegreeFactors f;
  f.dst = DeviceBuffer<float>(ctx.allocator, g.n_dst());
  if (g.n_dst() > 0) {
    row_factors_kernel<<<blocks_for_threads(g.n_dst()), block_threads, 0, ctx.stream>>>(g.n_dst(), g.row_ptr(),
                                                                                       symmetric, f.dst.data());
    GNNCHECK_CHECK_LAUNCH();
  }
  if (symmetric && source_degree == SourceDegree::in) {
    f.src = DeviceBuffer<float>(ctx.allocator, g.n_src());
    if (g.n_src() > 0) {
      source_row_factors_kernel<<<blocks_for_threads(g.n_src()), block_threads, 0, ctx.stream>>>(
          g.n_src(), g.n_dst(), g.row_ptr(), zero_degree == ZeroDegree::one, f.src.data());
      GNNCHECK_CHECK_LAUNCH();
    }
  } else if (symmetric) {
    f.src = DeviceBuffer<float>(ctx.allocator, g.n_src());
    if (g.n_src() > 0) {
      DeviceBuffer<unsigned long long> counts(ctx.allocator, g.n_src());
      counts.zero(ctx.stream);
      if (g.num_edges() > 0) {
        count_columns_kernel<<<blocks_for_threads(g.num_edges()), block_threads, 0, ctx.stream>>>(
            g.num_edges(), g.col_idx(), counts.data());
        GNNCHECK_CHECK_LAUNCH();
      }
      count_factors_kernel<<<blocks_for_threads(g.n_src()), block_threads, 0, ctx.stream>>>(g.n_src(), counts.data(),
                                                                                           true, f.src.data());
      GNNCHECK_CHECK_LAUNCH();
      ctx.synchronize();  // counts is freed on return
    }
  }
  return f;
}

void degree_norm_edge_values(GpuContext& ctx, DeviceGraph& g, DegreeNorm norm, SourceDegree source_degree,
                             float* values, ZeroDegree zero_degree) {
  if (g.num_edges() == 0) return;
  const DegreeFactors f = degree_factors(ctx, g, norm, source_degree, zero_degree);
  edge_values_kernel<<<blocks_for_threads(g.num_edges()), block_threads, 0, ctx.stream>>>(
      g.num_edges(), g.row_of_edge(ctx), g.col_idx(), f.dst.data(), f.src.empty() ? nullptr : f.src.data(), values);
  GNNCHECK_CHECK_LAUNCH();
  ctx.synchronize();  // f is freed on return
}

void normalized_spmm_forward(GpuContext& ctx, DeviceGraph& g, DegreeNorm norm, SourceDegree source_degree,
                             const float* x, std::int64_t f, float* y, ZeroDegree zero_degree) {
  const DegreeFactors factors = degree_factors(ctx, g, norm, source_degree, zero_degree);
  aggregate(ctx, {g.n_dst(), g.row_ptr(), g.col_idx()}, {},
            {factors.dst.data(), factors.src.empty() ? nullptr : factors.src.data()}, x, f, y);
  ctx.synchronize();
}

void normalized_spmm_backward(GpuContext& ctx, DeviceGraph& g, DegreeNorm norm, SourceDegree source_degree,
                              const float* grad_y, std::int64_t f, float* grad_x, ZeroDegree zero_degree) {
  const DegreeFactors factors = degree_factors(ctx, g, norm, source_degree, zero_degree);
  aggregate(ctx, {g.n_src(), g.col_ptr(ctx), g.row_idx(ctx)}, {},
            {factors.src.empty() ? nullptr : factors.src.data(), factors.dst.data()}, grad_y, f, grad_x);
  ctx.synchronize();
}

}  // namespace gnncheck::gpu

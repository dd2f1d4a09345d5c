#include "gpu/aggregate.cuh"

#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

__global__ void aggregate_kernel(std::int64_t rows, const offset_t* __restrict__ ptr, const node_t* __restrict__ idx,
                                 const float* __restrict__ w, const edge_t* __restrict__ perm, std::int64_t heads,
                                 const float* __restrict__ row_scale, const float* __restrict__ col_scale,
                                 const float* __restrict__ x, std::int64_t channels, float* __restrict__ out) {
  const int lane = threadIdx.x % warp_size;
  const std::int64_t width = heads * channels;
  for (std::int64_t i = global_warp(); i < rows; i += warp_count()) {
    const offset_t begin = ptr[i], end = ptr[i + 1];
    const float scale_i = row_scale ? row_scale[i] : 1.0f;
    for (std::int64_t f0 = 0; f0 < width; f0 += warp_size) {
      const std::int64_t f = f0 + lane;
      const std::int64_t h = f < width ? f / channels : 0;
      float acc = 0.0f;
      for (offset_t p = begin; p < end; ++p) {
        const node_t j = idx[p];
        float weight = w ? w[(perm ? perm[p] : p) * heads + h] : 1.0f;
        if (col_scale) weight *= col_scale[j];
        if (f < width) acc += weight * x[static_cast<std::int64_t>(j) * width + f];
      }
      if (f < width) out[i * width + f] = scale_i * acc;
    }
  }
}

}  // namespace

void aggregate(GpuContext& ctx, const CompressedView& m, const EdgeWeights& w, const Scales& s, const float* x,
               std::int64_t channels, float* out) {
  const std::int64_t width = w.heads * channels;
  if (m.rows == 0 || width == 0) return;
  aggregate_kernel<<<blocks_for_warps(m.rows), block_threads, 0, ctx.stream>>>(
      m.rows, m.ptr, m.idx, w.values, w.perm, w.heads, s.row, s.col, x, channels, out);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace gnncheck::gpu

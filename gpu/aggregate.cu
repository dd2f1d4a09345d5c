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

// Rows narrower than a warp (GCN's hidden 16, 7 classes, one head of width 1): lanes form 32/G
// groups of G lanes (G ≥ width, a power of two), each group takes every (32/G)-th edge of the row,
// and the groups' partial sums meet in a fixed xor-shuffle tree — all 32 lanes work, and the
// result is still bit-identical run to run (the order depends only on the row, not on timing).
template <int G>
__global__ void aggregate_narrow_kernel(std::int64_t rows, const offset_t* __restrict__ ptr,
                                        const node_t* __restrict__ idx, const float* __restrict__ w,
                                        const edge_t* __restrict__ perm, std::int64_t heads,
                                        const float* __restrict__ row_scale, const float* __restrict__ col_scale,
                                        const float* __restrict__ x, std::int64_t channels, float* __restrict__ out) {
  constexpr int groups = warp_size / G;
  const int lane = threadIdx.x % warp_size;
  const int group = lane / G, f = lane % G;
  const std::int64_t width = heads * channels;
  const bool active = f < width;
  const std::int64_t h = active ? f / channels : 0;
  for (std::int64_t i = global_warp(); i < rows; i += warp_count()) {
    const offset_t begin = ptr[i], end = ptr[i + 1];
    float acc = 0.0f;
    for (offset_t p = begin + group; p < end; p += groups) {
      const node_t j = idx[p];
      float weight = w ? w[(perm ? perm[p] : p) * heads + h] : 1.0f;
      if (col_scale) weight *= col_scale[j];
      if (active) acc += weight * x[static_cast<std::int64_t>(j) * width + f];
    }
    for (int offset = warp_size / 2; offset >= G; offset /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
    if (group == 0 && active) out[i * width + f] = (row_scale ? row_scale[i] : 1.0f) * acc;
  }
}

template <int G>
void launch_narrow(GpuContext& ctx, const CompressedView& m, const EdgeWeights& w, const Scales& s, const float* x,
                   std::int64_t channels, float* out) {
  aggregate_narrow_kernel<G><<<blocks_for_warps(m.rows), block_threads, 0, ctx.stream>>>(
      m.rows, m.ptr, m.idx, w.values, w.perm, w.heads, s.row, s.col, x, channels, out);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace

void aggregate(GpuContext& ctx, const CompressedView& m, const EdgeWeights& w, const Scales& s, const float* x,
               std::int64_t channels, float* out) {
  const std::int64_t width = w.heads * channels;
  if (m.rows == 0 || width == 0) return;
  if (width == 1) return launch_narrow<1>(ctx, m, w, s, x, channels, out);
  if (width == 2) return launch_narrow<2>(ctx, m, w, s, x, channels, out);
  if (width <= 4) return launch_narrow<4>(ctx, m, w, s, x, channels, out);
  if (width <= 8) return launch_narrow<8>(ctx, m, w, s, x, channels, out);
  if (width <= 16) return launch_narrow<16>(ctx, m, w, s, x, channels, out);
  aggregate_kernel<<<blocks_for_warps(m.rows), block_threads, 0, ctx.stream>>>(
      m.rows, m.ptr, m.idx, w.values, w.perm, w.heads, s.row, s.col, x, channels, out);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace gnncheck::gpu

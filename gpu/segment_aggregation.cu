#include "gpu/segment_aggregation.cuh"

#include <cmath>

#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

// The segment's softmax, shared by forward and backward: its largest t·x, Σ exp(t·x − top), and the
// aggregation y = Σ softmax(t·x)·x.
struct SegmentSoftmax {
  float top, norm, y;
};

__device__ SegmentSoftmax segment_softmax(const float* x, std::int64_t features, std::int64_t f, offset_t begin,
                                          offset_t end, float t) {
  SegmentSoftmax s{-INFINITY, 0.0f, 0.0f};
  for (offset_t k = begin; k < end; ++k) s.top = fmaxf(s.top, t * x[k * features + f]);
  for (offset_t k = begin; k < end; ++k) s.norm += expf(t * x[k * features + f] - s.top);
  for (offset_t k = begin; k < end; ++k) {
    const float v = x[k * features + f];
    s.y += expf(t * v - s.top) / s.norm * v;
  }
  return s;
}

// The segment's mean and population variance, PyG's mean of squares minus the squared mean.
struct SegmentMoments {
  float mean, var;
};

__device__ SegmentMoments segment_moments(const float* x, std::int64_t features, std::int64_t f, offset_t begin,
                                          offset_t end) {
  if (end == begin) return {0.0f, 0.0f};
  float sum = 0.0f, squares = 0.0f;
  for (offset_t k = begin; k < end; ++k) {
    const float v = x[k * features + f];
    sum += v, squares += v * v;
  }
  const float count = static_cast<float>(end - begin), mean = sum / count;
  return {mean, squares / count - mean * mean};
}

// PyG's StdAggregation floor on the variance (oracle/segment_aggregation.h, kStdVarianceFloor).
constexpr float kStdVarianceFloor = 1e-5f;

__global__ void forward_kernel(SegmentAggregationKind kind, std::int64_t n_dst, std::int64_t features,
                               const offset_t* __restrict__ row_ptr, const float* __restrict__ x,
                               const float* __restrict__ t_ptr, float* __restrict__ y) {
  const std::int64_t n = n_dst * features;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t i = id / features, f = id % features;
    const offset_t begin = row_ptr[i], end = row_ptr[i + 1];
    if (kind == SegmentAggregationKind::var) {
      y[id] = segment_moments(x, features, f, begin, end).var;
    } else if (kind == SegmentAggregationKind::std) {
      const float var = segment_moments(x, features, f, begin, end).var;
      y[id] = var > kStdVarianceFloor ? sqrtf(var) : 0.0f;
    } else if (kind == SegmentAggregationKind::mul) {
      float product = 1.0f;
      for (offset_t k = begin; k < end; ++k) product *= x[k * features + f];
      y[id] = product;
    } else {
      y[id] = segment_softmax(x, features, f, begin, end, *t_ptr).y;
    }
  }
}

__global__ void backward_kernel(SegmentAggregationKind kind, std::int64_t n_dst, std::int64_t features,
                                const offset_t* __restrict__ row_ptr, const float* __restrict__ x,
                                const float* __restrict__ t_ptr, const float* __restrict__ grad_y,
                                float* __restrict__ grad_x, float* grad_t) {
  const std::int64_t n = n_dst * features;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t i = id / features, f = id % features;
    const offset_t begin = row_ptr[i], end = row_ptr[i + 1];
    if (end == begin) continue;
    const float g = grad_y[id];
    if (kind == SegmentAggregationKind::var) {
      const float count = static_cast<float>(end - begin), mean = segment_moments(x, features, f, begin, end).mean;
      for (offset_t k = begin; k < end; ++k) grad_x[k * features + f] = g * (2.0f / count) * (x[k * features + f] - mean);
    } else if (kind == SegmentAggregationKind::std) {
      const SegmentMoments m = segment_moments(x, features, f, begin, end);
      if (!(m.var > kStdVarianceFloor)) continue;  // the masked value is constant: grad_x stays 0
      const float scale = g / (static_cast<float>(end - begin) * sqrtf(m.var));
      for (offset_t k = begin; k < end; ++k) grad_x[k * features + f] = scale * (x[k * features + f] - m.mean);
    } else if (kind == SegmentAggregationKind::mul) {
      // grad_x holds the product of the rows after k first (a backward pass), then times the
      // product of those before k and g (a forward pass): no division, so zeros are exact.
      float after = 1.0f;
      for (offset_t k = end - 1; k >= begin; --k) {
        grad_x[k * features + f] = after;
        after *= x[k * features + f];
      }
      float before = 1.0f;
      for (offset_t k = begin; k < end; ++k) {
        grad_x[k * features + f] = g * (before * grad_x[k * features + f]);
        before *= x[k * features + f];
      }
    } else {
      const float t = *t_ptr;
      const SegmentSoftmax s = segment_softmax(x, features, f, begin, end, t);
      float dt = 0.0f;
      for (offset_t k = begin; k < end; ++k) {
        const float v = x[k * features + f], a = expf(t * v - s.top) / s.norm;
        grad_x[k * features + f] = g * a * (1.0f + t * (v - s.y));
        dt += a * v * (v - s.y);
      }
      atomicAdd(grad_t, g * dt);
    }
  }
}

}  // namespace

void segment_aggregation_forward(GpuContext& ctx, DeviceGraph& g, SegmentAggregationKind kind, std::int64_t features,
                                 const float* x, const float* t, float* y) {
  const std::int64_t n = g.n_dst() * features;
  if (n == 0) return;
  forward_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(kind, g.n_dst(), features, g.row_ptr(), x, t,
                                                                          y);
  GNNCHECK_CHECK_LAUNCH();
}

void segment_aggregation_backward(GpuContext& ctx, DeviceGraph& g, SegmentAggregationKind kind, std::int64_t features,
                                  const float* x, const float* t, const float* grad_y, float* grad_x, float* grad_t) {
  const std::int64_t edge_values = g.num_edges() * features;
  if (edge_values > 0) GNNCHECK_CUDA_CHECK(cudaMemsetAsync(grad_x, 0, edge_values * sizeof(float), ctx.stream));
  if (grad_t) GNNCHECK_CUDA_CHECK(cudaMemsetAsync(grad_t, 0, sizeof(float), ctx.stream));
  const std::int64_t n = g.n_dst() * features;
  if (n == 0) return;
  backward_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(kind, g.n_dst(), features, g.row_ptr(), x,
                                                                           t, grad_y, grad_x, grad_t);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace gnncheck::gpu

// gnncheck/gpu/training_kernels.cuh — what a device-resident training loop needs beyond the ops:
// deterministic random features and labels, softmax cross-entropy with its gradient, column sums
// that scale to hundreds of millions of rows, and Adam. Used by the training benchmarks
// (gnncheck_gpu_kronecker_gcn, gnncheck_gpu_gat_epoch_memory); every call is asynchronous on
// ctx.stream unless it says otherwise.
//
//   random_uniform(ctx, n * f, seed, -1.0f, 1.0f, d_x);
//   float loss = softmax_cross_entropy(ctx, n, classes, d_logits, d_labels, d_logits);  // in place
//   adam_step(ctx, adam, step, n, d_w, d_grad_w, d_m, d_v);
#pragma once

#include <cstdint>

#include "gpu/context.h"

namespace gnncheck::gpu {

// out[k] = lo + (hi − lo)·u(seed, k) for k < n, u a hash-based uniform in [0, 1): the same values
// for the same seed, whatever the launch configuration.
void random_uniform(GpuContext& ctx, std::int64_t n, std::uint64_t seed, float lo, float hi, float* out);
// labels[k] = hash(seed, k) mod classes.
void random_labels(GpuContext& ctx, std::int64_t n, std::uint64_t seed, std::int32_t classes, std::int32_t* labels);

// Mean softmax cross-entropy over all n rows of logits [n, classes]; grad [n, classes] gets its
// gradient (softmax − one-hot)/n (grad == logits allowed: overwritten in place). Returns the mean
// loss (synchronizes; the sum is accumulated in float64 with atomics, so its last bits may vary
// run to run — the gradient does not).
double softmax_cross_entropy(GpuContext& ctx, std::int64_t n, std::int64_t classes, const float* logits,
                             const std::int32_t* labels, float* grad);

// out[c] = Σ_i x[i, c] for x [rows, width]: fixed-size row chunks summed in parallel, then the
// chunk sums in chunk order — deterministic, and fast for rows in the hundreds of millions.
void chunked_column_sums(GpuContext& ctx, std::int64_t rows, std::int64_t width, const float* x, float* out);

struct AdamConfig {
  float learning_rate = 0.01f, beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
};
// One Adam update of n parameters at step `step` (1-based), with the moments m and v.
void adam_step(GpuContext& ctx, const AdamConfig& adam, int step, std::int64_t n, float* param, const float* grad,
               float* m, float* v);

}  // namespace gnncheck::gpu

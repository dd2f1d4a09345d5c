// gnncheck/gpu/training_kernels.cuh — what a device-resident training loop needs beyond the ops:
// deterministic random features and labels, (masked) softmax cross-entropy with its gradient,
// column sums that scale to hundreds of millions of rows, and Adam. Used by the training benchmarks
// (gnncheck_gpu_kronecker_gcn, gnncheck_gpu_gat_epoch_memory) and the performance study
// (performance/); every call is asynchronous on ctx.stream unless it says otherwise.
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

// Softmax cross-entropy of logits [rows, classes] over the rows with mask[i] ≠ 0 (mask = nullptr:
// every row), as torch's F.cross_entropy: grad[i, c] = scale · (softmax(z_i)_c − [c = label_i]) on
// those rows and 0 on the others (scale = 1 / the number of rows counted gives the mean's gradient;
// grad == logits allowed, overwritten in place); *loss_sum (one double on the device, overwritten)
// = Σ over those rows of logsumexp(z_i) − z_i[label_i]. Asynchronous. The sum is accumulated in
// float64 with atomics, so its last bits may vary run to run; the gradient does not.
void softmax_cross_entropy(GpuContext& ctx, std::int64_t rows, std::int64_t classes, const float* logits,
                           const std::int32_t* labels, const std::uint8_t* mask, float scale, double* loss_sum,
                           float* grad);
// The same over all n rows with scale 1/n; returns the mean loss (synchronizes).
double softmax_cross_entropy(GpuContext& ctx, std::int64_t n, std::int64_t classes, const float* logits,
                             const std::int32_t* labels, float* grad);

// Column sums over many rows, in parallel and in a fixed order (bit-identical run to run):
//   out[h·C + c] = Σ_i w[i, h] · x[i, h·C + c]      (w = nullptr: every weight is 1)
// for x [rows, H·C]: a bias gradient (H = 1, w = nullptr) and GAT's attention-vector gradient (w =
// the gradient of the per-node scores). Each of column_sum_slices blocks sums a slice of the rows,
// then a second pass adds the slices in order; gpu/README.md derives the error bound. `partials`
// holds column_sum_slices · H·C floats. Asynchronous.
inline constexpr int column_sum_slices = 512;
void weighted_column_sums(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels,
                          const float* x, const float* w, float* partials, float* out);
// out[c] = Σ_i x[i, c] for x [rows, width]: weighted_column_sums with its partials allocated here
// (synchronizes before freeing them).
void column_sums_of_rows(GpuContext& ctx, std::int64_t rows, std::int64_t width, const float* x, float* out);

struct AdamConfig {
  float learning_rate = 0.01f, beta1 = 0.9f, beta2 = 0.999f, epsilon = 1e-8f;
};
// One Adam update of n parameters at step `step` (1-based), with the moments m and v.
void adam_step(GpuContext& ctx, const AdamConfig& adam, int step, std::int64_t n, float* param, const float* grad,
               float* m, float* v);

}  // namespace gnncheck::gpu

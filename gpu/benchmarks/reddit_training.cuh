// gnncheck/gpu/benchmarks/reddit_training.cuh — the two training pieces the benchmark models need
// beyond gpu/'s ops: masked softmax cross-entropy (loss and its gradient in one pass) and Adam.
// Both as torch does them (F.cross_entropy with mean reduction over the masked rows;
// torch.optim.Adam without weight decay), so that one epoch is the same work in both systems.
//
//   softmax_cross_entropy(ctx, n, classes, d_logits, d_labels, d_mask, train_count, d_loss, d_grad);
//   adam_step(ctx, n, lr, 0.9f, 0.999f, 1e-8f, step, d_param, d_grad, d_m, d_v);
#pragma once

#include <cstdint>

#include "gpu/context.h"

namespace gnncheck::perf {

// loss (one float, overwritten) = (1/train_count) Σ_{i: mask[i]} (logsumexp(z_i) − z_i[label_i]);
// grad[i, c] = mask[i]/train_count · (softmax(z_i)_c − [c = label_i]). One warp per row; the loss
// sum uses float atomics (its last bits depend on the order; it is only printed).
void softmax_cross_entropy(gpu::GpuContext& ctx, std::int64_t rows, std::int64_t classes, const float* logits,
                           const std::int32_t* labels, const std::uint8_t* mask, std::int64_t train_count,
                           float* loss, float* grad);

// Column sums over many rows, in parallel and in a fixed order (bit-identical run to run):
//   out[h·C + c] = Σ_i w[i, h] · x[i, h·C + c]      (w = nullptr: every weight is 1)
// for x [rows, H·C]: the bias gradient (H = 1, w = nullptr) and GAT's attention-vector gradient
// (w = the gradient of the per-node scores). gpu/elementwise's column_sums and head_dot_backward
// give one thread a whole column (rows serial loads, milliseconds at Reddit's 232,965 rows); here
// each of `reduction_blocks` blocks sums a slice of the rows and a second pass adds the slices.
// `partials` holds reduction_blocks · H·C floats (ColumnSums owns it).
inline constexpr int reduction_blocks = 512;
void weighted_column_sums(gpu::GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels,
                          const float* x, const float* w, float* partials, float* out);

// grad_x[i, h, c] += g[i, h] · a[h, c]: the input gradient of the per-head score ⟨x[i, h, :], a[h, :]⟩
// (the grad_x half of gpu::head_dot_backward; its grad_a half is weighted_column_sums).
void add_head_products(gpu::GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels,
                       const float* g, const float* a, float* grad_x);

// One Adam step (t = step ≥ 1) on n values: m, v updated in place, then param.
void adam_step(gpu::GpuContext& ctx, std::int64_t n, float learning_rate, float beta1, float beta2, float epsilon,
               int step, float* param, const float* grad, float* m, float* v);

}  // namespace gnncheck::perf

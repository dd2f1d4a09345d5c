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

// One Adam step (t = step ≥ 1) on n values: m, v updated in place, then param.
void adam_step(gpu::GpuContext& ctx, std::int64_t n, float learning_rate, float beta1, float beta2, float epsilon,
               int step, float* param, const float* grad, float* m, float* v);

}  // namespace gnncheck::perf

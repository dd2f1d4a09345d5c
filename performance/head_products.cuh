// gnncheck/performance/head_products.cuh — the one piece the benchmark models need beyond gpu/'s
// ops and training kernels (gpu/training_kernels.cuh: the loss, the column sums, Adam).
//
//   add_head_products(ctx, rows, heads, channels, d_g, d_a, d_grad_x);
#pragma once

#include <cstdint>

#include "gpu/context.h"

namespace gnncheck::perf {

// grad_x[i, h, c] += g[i, h] · a[h, c]: the input gradient of the per-head score ⟨x[i, h, :], a[h, :]⟩
// (the grad_x half of gpu::head_dot_backward; its grad_a half is gpu::weighted_column_sums).
void add_head_products(gpu::GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels,
                       const float* g, const float* a, float* grad_x);

}  // namespace gnncheck::perf

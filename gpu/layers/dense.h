// gnncheck/gpu/layers/dense.h — the dense products of the GPU layers, through cuBLAS (float32,
// pedantic math: no TF32), on row-major tensors.
//
// Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ, so each call swaps its operands for cuBLAS.
// `beta` = 1 accumulates into C (used to add a second product into the same gradient).
//
//   matmul(ctx, n, in, out, d_x, d_w, d_h);          // h [n, out] = x [n, in] · W [in, out]
//   matmul_at_b(ctx, n, in, out, d_x, d_g, d_gw);    // grad_W [in, out] = xᵀ · g
//   matmul_a_bt(ctx, n, out, in, d_g, d_w, d_gx);    // grad_x [n, in] = g · Wᵀ
#pragma once

#include <cstdint>

#include "gpu/context.h"

namespace gnncheck::gpu {

// C [m, n] = A [m, k] · B [k, n] + beta · C
void matmul(GpuContext& ctx, std::int64_t m, std::int64_t k, std::int64_t n, const float* a, const float* b, float* c,
            float beta = 0.0f);
// C [k, n] = Aᵀ · B + beta · C,   A [m, k], B [m, n]
void matmul_at_b(GpuContext& ctx, std::int64_t m, std::int64_t k, std::int64_t n, const float* a, const float* b,
                 float* c, float beta = 0.0f);
// C [m, k] = A · Bᵀ + beta · C,   A [m, n], B [k, n]
void matmul_a_bt(GpuContext& ctx, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b,
                 float* c, float beta = 0.0f);
// ⟨x, y⟩ over n values, returned to the host (synchronizes).
float dot(GpuContext& ctx, std::int64_t n, const float* x, const float* y);

}  // namespace gnncheck::gpu

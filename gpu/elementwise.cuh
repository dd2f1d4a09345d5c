// gnncheck/gpu/elementwise.cuh — the dense element-wise pieces the ops and layers need.
//
// All buffers are device pointers to float32 row-major data; sizes are explicit; every call is
// asynchronous on ctx.stream. Backward functions take what their forward saved.
//
//   scale_rows(ctx, n, width, dst_factors, y, y);      // y[i,:] *= dst_factors[i]
//   leaky_relu_forward(ctx, n, 0.2f, s, s);
#pragma once

#include <cstdint>

#include "gpu/context.h"

namespace gnncheck::gpu {

// out[k] = in[k · stride + offset] for k < n (one column of a row-major [n, stride] tensor).
void gather_column(GpuContext& ctx, std::int64_t n, std::int64_t stride, std::int64_t offset, const float* in,
                   float* out);
// out[k · stride + offset] = in[k] for k < n.
void scatter_column(GpuContext& ctx, std::int64_t n, std::int64_t stride, std::int64_t offset, const float* in,
                    float* out);

// out[i, :] = factors[i] · in[i, :] for a [rows, width] tensor (in == out allowed).
void scale_rows(GpuContext& ctx, std::int64_t rows, std::int64_t width, const float* factors, const float* in,
                float* out);
// out[i, h, c] = factors[i, h] · in[i, h, c] for [rows, heads, channels] (in == out allowed).
void scale_heads(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels, const float* factors,
                 const float* in, float* out);

// y[k] = a·x[k] + b·y[k] for k < n.
void axpby(GpuContext& ctx, std::int64_t n, float a, const float* x, float b, float* y);
// y[i, :] += bias[:] for a [rows, width] tensor.
void add_bias(GpuContext& ctx, std::int64_t rows, std::int64_t width, const float* bias, float* y);
// grad_bias[c] = Σ_i grad_y[i, c] (fixed order, one thread per column).
void column_sums(GpuContext& ctx, std::int64_t rows, std::int64_t width, const float* grad_y, float* grad_bias);
// out[i, h] = Σ_c x[i, h, c] for [rows, heads, channels].
void head_sums(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels, const float* x,
               float* out);
// out[i, h] = ⟨x[i, h, :], a[h, :]⟩ for x [rows, heads, channels] and a [heads, channels].
void head_dot(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels, const float* x,
              const float* a, float* out);
// grad_x[i, h, c] (+)= g[i, h] · a[h, c]; grad_a[h, c] = Σ_i g[i, h] · x[i, h, c] (backward of head_dot).
void head_dot_backward(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels, const float* x,
                       const float* a, const float* g, bool accumulate_grad_x, float* grad_x, float* grad_a);

// Mean over heads: out[i, c] = (1/H)·Σ_h in[i, h, c]; its backward gives every head grad/H.
void mean_over_heads(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels, const float* in,
                     float* out);
void mean_over_heads_backward(GpuContext& ctx, std::int64_t rows, std::int64_t heads, std::int64_t channels,
                              const float* grad_out, float* grad_in);

// Row L2 normalization with a floor (PyG's F.normalize): divisor[i] = max(‖x_i‖, floor),
// out = x / divisor. Backward adds into grad_x: (grad_n − n·⟨n, grad_n⟩)/divisor above the floor,
// grad_n / floor at it.
void row_normalize(GpuContext& ctx, std::int64_t rows, std::int64_t width, float floor, const float* x, float* out,
                   float* divisor);
void row_normalize_backward_add(GpuContext& ctx, std::int64_t rows, std::int64_t width, float floor,
                                const float* normalized, const float* divisor, const float* grad_normalized,
                                float* grad_x);

// LeakyReLU with the given negative slope and ReLU; backward reads the forward's input.
void leaky_relu_forward(GpuContext& ctx, std::int64_t n, float slope, const float* in, float* out);
void leaky_relu_backward(GpuContext& ctx, std::int64_t n, float slope, const float* in, const float* grad_out,
                         float* grad_in);
void relu_forward(GpuContext& ctx, std::int64_t n, const float* in, float* out);
void relu_backward(GpuContext& ctx, std::int64_t n, const float* in, const float* grad_out, float* grad_in);

}  // namespace gnncheck::gpu

#include "gpu/layers/dense.h"

#include <climits>

#include <fmt/format.h>

#include "gpu/cuda_check.h"
#include "core/error.h"

namespace gnncheck::gpu {
namespace {

int narrow(std::int64_t v, const char* what) {
  if (v > INT_MAX) throw InputError(fmt::format("cuBLAS dimension {} = {} exceeds 2^31-1", what, v));
  return static_cast<int>(v);
}

// C = 0·C + 0 when the product has no terms (k = 0), which cuBLAS may leave untouched.
void scale_or_zero(GpuContext& ctx, std::int64_t count, float beta, float* c) {
  if (count == 0 || beta == 1.0f) return;
  GNNCHECK_CUDA_CHECK(cudaMemsetAsync(c, 0, static_cast<std::size_t>(count) * sizeof(float), ctx.stream));
}

}  // namespace

void matmul(GpuContext& ctx, std::int64_t m, std::int64_t k, std::int64_t n, const float* a, const float* b, float* c,
            float beta) {
  if (m == 0 || n == 0) return;
  if (k == 0) return scale_or_zero(ctx, m * n, beta, c);
  const float alpha = 1.0f;
  // Column-major: Cᵀ [n × m] = Bᵀ [n × k] · Aᵀ [k × m].
  GNNCHECK_CUBLAS_CHECK(cublasSgemm(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_N, narrow(n, "n"), narrow(m, "m"),
                                    narrow(k, "k"), &alpha, b, narrow(n, "n"), a, narrow(k, "k"), &beta, c,
                                    narrow(n, "n")));
}

void matmul_at_b(GpuContext& ctx, std::int64_t m, std::int64_t k, std::int64_t n, const float* a, const float* b,
                 float* c, float beta) {
  if (k == 0 || n == 0) return;
  if (m == 0) return scale_or_zero(ctx, k * n, beta, c);
  const float alpha = 1.0f;
  // Column-major: Cᵀ [n × k] = Bᵀ [n × m] · A [m × k]; A's column-major view is Aᵀ, so op = T.
  GNNCHECK_CUBLAS_CHECK(cublasSgemm(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_T, narrow(n, "n"), narrow(k, "k"),
                                    narrow(m, "m"), &alpha, b, narrow(n, "n"), a, narrow(k, "k"), &beta, c,
                                    narrow(n, "n")));
}

void matmul_a_bt(GpuContext& ctx, std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b,
                 float* c, float beta) {
  if (m == 0 || k == 0) return;
  if (n == 0) return scale_or_zero(ctx, m * k, beta, c);
  const float alpha = 1.0f;
  // Column-major: Cᵀ [k × m] = B [k × n] · Aᵀ [n × m]; B's column-major view is Bᵀ, so op = T.
  GNNCHECK_CUBLAS_CHECK(cublasSgemm(ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, narrow(k, "k"), narrow(m, "m"),
                                    narrow(n, "n"), &alpha, b, narrow(n, "n"), a, narrow(n, "n"), &beta, c,
                                    narrow(k, "k")));
}

float dot(GpuContext& ctx, std::int64_t n, const float* x, const float* y) {
  float result = 0.0f;
  if (n == 0) return result;
  GNNCHECK_CUBLAS_CHECK(cublasSdot(ctx.cublas, narrow(n, "n"), x, 1, y, 1, &result));
  ctx.synchronize();
  return result;
}

}  // namespace gnncheck::gpu

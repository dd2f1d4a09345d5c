#include "gpu/tests/storage_sums_kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gpu/launch.cuh"

namespace gnncheck::gpu::testing {
namespace {

using namespace detail;

__device__ __forceinline__ float rounded(float v, StorageFormat format) {
  switch (format) {
    case StorageFormat::float16: return __half2float(__float2half_rn(v));
    case StorageFormat::bfloat16: return __bfloat162float(__float2bfloat16_rn(v));
    case StorageFormat::float32: return v;
  }
  return v;
}

__global__ void spmm_summing_in_storage_kernel(std::int64_t rows, const offset_t* __restrict__ row_ptr,
                                               const node_t* __restrict__ col_idx, StorageFormat format,
                                               const float* __restrict__ x, std::int64_t f, float* __restrict__ y) {
  const std::int64_t n = rows * f;
  for (std::int64_t t = global_thread(); t < n; t += thread_count()) {
    const std::int64_t i = t / f, c = t % f;
    float acc = 0.0f;
    for (offset_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p)
      acc = rounded(acc + rounded(x[static_cast<std::int64_t>(col_idx[p]) * f + c], format), format);
    y[t] = acc;
  }
}

}  // namespace

void spmm_summing_in_storage(GpuContext& ctx, DeviceGraph& g, StorageFormat format, const float* x, std::int64_t f,
                             float* y) {
  const std::int64_t n = g.n_dst() * f;
  if (n == 0) return;
  spmm_summing_in_storage_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(
      g.n_dst(), g.row_ptr(), g.col_idx(), format, x, f, y);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace gnncheck::gpu::testing

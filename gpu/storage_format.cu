#include "gpu/storage_format.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

__device__ __forceinline__ void store(float v, __half* out) { *out = __float2half_rn(v); }
__device__ __forceinline__ void store(float v, __nv_bfloat16* out) { *out = __float2bfloat16_rn(v); }
__device__ __forceinline__ float widen(__half v) { return __half2float(v); }
__device__ __forceinline__ float widen(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T>
__global__ void round_kernel(std::int64_t n, const float* __restrict__ in, T* __restrict__ out) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) store(in[k], out + k);
}

template <typename T>
__global__ void widen_kernel(std::int64_t n, const T* __restrict__ in, float* __restrict__ out) {
  for (std::int64_t k = global_thread(); k < n; k += thread_count()) out[k] = widen(in[k]);
}

template <typename T>
void round_as(GpuContext& ctx, const float* in, std::int64_t n, void* out) {
  round_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, in, static_cast<T*>(out));
  GNNCHECK_CHECK_LAUNCH();
}

template <typename T>
void widen_as(GpuContext& ctx, const void* in, std::int64_t n, float* out) {
  widen_kernel<<<blocks_for_threads(n), block_threads, 0, ctx.stream>>>(n, static_cast<const T*>(in), out);
  GNNCHECK_CHECK_LAUNCH();
}

void copy_floats(GpuContext& ctx, const void* in, std::int64_t n, void* out) {
  GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(out, in, static_cast<std::size_t>(n) * sizeof(float), cudaMemcpyDeviceToDevice,
                                      ctx.stream));
}

}  // namespace

void round_to_storage(GpuContext& ctx, StorageFormat format, const float* in, std::int64_t n, void* out) {
  if (n == 0) return;
  switch (format) {
    case StorageFormat::float32: return copy_floats(ctx, in, n, out);
    case StorageFormat::float16: return round_as<__half>(ctx, in, n, out);
    case StorageFormat::bfloat16: return round_as<__nv_bfloat16>(ctx, in, n, out);
  }
}

void widen_from_storage(GpuContext& ctx, StorageFormat format, const void* in, std::int64_t n, float* out) {
  if (n == 0) return;
  switch (format) {
    case StorageFormat::float32: return copy_floats(ctx, in, n, out);
    case StorageFormat::float16: return widen_as<__half>(ctx, in, n, out);
    case StorageFormat::bfloat16: return widen_as<__nv_bfloat16>(ctx, in, n, out);
  }
}

}  // namespace gnncheck::gpu

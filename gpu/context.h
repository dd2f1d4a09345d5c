// gnncheck/gpu/context.h — what every GPU op needs: a stream, the cuSPARSE and cuBLAS handles
// bound to it, and the accounting allocator.
//
// The cuBLAS handle is given a workspace from the allocator (cublasSetWorkspace) so that cuBLAS
// never allocates behind the allocator's back; cuSPARSE workspaces are allocated per call from
// the allocator as well. One context per thread: ops on a context run in stream order.
//
//   gnncheck::gpu::GpuContext ctx;                 // throws CudaError without a device
//   gnncheck::gpu::DeviceBuffer<float> y(ctx.allocator, n);
//   ctx.synchronize();
#pragma once

#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include "gpu/device_allocator.h"

namespace gnncheck::gpu {

// Whether a CUDA device can be used here; `reason` says why not ("no CUDA device", or the
// runtime's error when the driver itself is missing or broken). Never throws.
struct DeviceStatus {
  bool available = false;
  std::string reason;
};
DeviceStatus probe_device();

class GpuContext {
 public:
  // Bytes handed to cuBLAS as its workspace; cuBLAS picks GEMM algorithms that fit what it is
  // given, so a larger value only trades memory for speed.
  static constexpr std::size_t cublas_workspace_bytes = 4u << 20;

  GpuContext();
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  void synchronize() const;

  DeviceAllocator allocator;  // declared first: destroyed last, after every buffer below
  cudaStream_t stream = nullptr;
  cusparseHandle_t cusparse = nullptr;
  cublasHandle_t cublas = nullptr;

 private:
  DeviceBuffer<unsigned char> cublas_workspace_;
};

}  // namespace gnncheck::gpu

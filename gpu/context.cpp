#include "gpu/context.h"

#include "gpu/cuda_check.h"

namespace gnncheck::gpu {

DeviceStatus probe_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return {false, std::string("no CUDA device (") + cudaGetErrorName(status) + ": " + cudaGetErrorString(status) + ")"};
  }
  if (count == 0) return {false, "no CUDA device"};
  return {true, ""};
}

GpuContext::GpuContext() {
  try {
    GNNCHECK_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    GNNCHECK_CUSPARSE_CHECK(cusparseCreate(&cusparse));
    GNNCHECK_CUSPARSE_CHECK(cusparseSetStream(cusparse, stream));
    GNNCHECK_CUBLAS_CHECK(cublasCreate(&cublas));
    GNNCHECK_CUBLAS_CHECK(cublasSetStream(cublas, stream));
    // Plain float32 GEMMs (no TF32 tensor cores): the system declares float32.
    GNNCHECK_CUBLAS_CHECK(cublasSetMathMode(cublas, CUBLAS_PEDANTIC_MATH));
    cublas_workspace_ = DeviceBuffer<unsigned char>(allocator, static_cast<std::int64_t>(cublas_workspace_bytes));
    GNNCHECK_CUBLAS_CHECK(cublasSetWorkspace(cublas, cublas_workspace_.data(), cublas_workspace_.bytes()));
  } catch (...) {
    if (cublas) cublasDestroy(cublas);
    if (cusparse) cusparseDestroy(cusparse);
    if (stream) cudaStreamDestroy(stream);
    throw;
  }
}

GpuContext::~GpuContext() {
  if (stream) cudaStreamSynchronize(stream);
  if (cublas) cublasDestroy(cublas);
  if (cusparse) cusparseDestroy(cusparse);
  if (stream) cudaStreamDestroy(stream);
}

void GpuContext::synchronize() const { GNNCHECK_CUDA_CHECK(cudaStreamSynchronize(stream)); }

}  // namespace gnncheck::gpu

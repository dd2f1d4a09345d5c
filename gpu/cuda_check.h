// gnncheck/gpu/cuda_check.h — error checks for CUDA runtime, cuSPARSE and cuBLAS calls.
//
// Each macro evaluates the call once and, on failure, throws gnncheck::gpu::CudaError whose
// message carries file:line, the call's text, the library's error string and the numeric code:
//   gpu/spmm.cu:88: cusparseSpMM(handle, ...) failed: CUSPARSE_STATUS_INVALID_VALUE (3) invalid value
// Throwing (rather than exiting) lets RAII free every buffer and handle on the way out and lets
// the runner report the failure as the GPU system's verdict.
//
//   GNNCHECK_CUDA_CHECK(cudaMemcpy(d_x, h_x, bytes, cudaMemcpyHostToDevice));
//   GNNCHECK_CUSPARSE_CHECK(cusparseCreate(&handle));
#pragma once

#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

namespace gnncheck::gpu {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline std::string cuda_failure_message(const char* file, int line, const char* call, const char* name, int code,
                                        const char* description) {
  return std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " + name + " (" +
         std::to_string(code) + ") " + description;
}

inline const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

}  // namespace gnncheck::gpu

#define GNNCHECK_CUDA_CHECK(call)                                                                          \
  do {                                                                                                      \
    const cudaError_t gnncheck_status_ = (call);                                                            \
    if (gnncheck_status_ != cudaSuccess)                                                                    \
      throw ::gnncheck::gpu::CudaError(::gnncheck::gpu::cuda_failure_message(                               \
          __FILE__, __LINE__, #call, cudaGetErrorName(gnncheck_status_), static_cast<int>(gnncheck_status_), \
          cudaGetErrorString(gnncheck_status_)));                                                           \
  } while (0)

#define GNNCHECK_CUSPARSE_CHECK(call)                                                                   \
  do {                                                                                                   \
    const cusparseStatus_t gnncheck_status_ = (call);                                                    \
    if (gnncheck_status_ != CUSPARSE_STATUS_SUCCESS)                                                     \
      throw ::gnncheck::gpu::CudaError(::gnncheck::gpu::cuda_failure_message(                            \
          __FILE__, __LINE__, #call, "cusparseStatus_t", static_cast<int>(gnncheck_status_),             \
          cusparseGetErrorString(gnncheck_status_)));                                                    \
  } while (0)

#define GNNCHECK_CUBLAS_CHECK(call)                                                                         \
  do {                                                                                                       \
    const cublasStatus_t gnncheck_status_ = (call);                                                          \
    if (gnncheck_status_ != CUBLAS_STATUS_SUCCESS)                                                           \
      throw ::gnncheck::gpu::CudaError(::gnncheck::gpu::cuda_failure_message(                                \
          __FILE__, __LINE__, #call, ::gnncheck::gpu::cublas_status_name(gnncheck_status_),                  \
          static_cast<int>(gnncheck_status_), cublasGetStatusString(gnncheck_status_)));                     \
  } while (0)

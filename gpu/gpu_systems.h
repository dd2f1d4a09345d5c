// gnncheck/gpu/gpu_systems.h — the GPU reference and cuSPARSE as Systems (core/system.h).
//
// `gpu`       every op and layer of the catalogue that gpu/ implements, in float32, with its own
//             kernels, no cuSPARSE call: SpMM by the CSR row kernel, Aᵀ·Y by the fused CSC kernel
//             (gpu/README.md, "Choices"), edge-parallel SDDMM over the row-ordered COO, edge
//             softmax with max subtraction, the fused eShuffle+SpMMve kernel for attention
//             backward, degree normalization fused with aggregation, cuBLAS for dense products.
// `cusparse`  only what cuSPARSE itself computes — spmm, spmm_transposed, spmm_ve,
//             spmm_ve_transposed and sddmm_dot, forward and backward, each product a cusparseSpMM
//             (native transpose) or cusparseSDDMM call — so the library is checked on its own.
// `cusparse_float16`, `cusparse_bfloat16`  the same cuSPARSE calls on tensors stored in float16
//             (CUDA_R_16F) or bfloat16 (CUDA_R_16BF) with float32 sums (computeType CUDA_R_32F):
//             each float32 input rounded to nearest on the device, each result widened back, and
//             Aᵀ products as non-transposed SpMMs over the CSC (cuSPARSE's opA = TRANSPOSE in half
//             was measured summing coarser than float32: gpu/README.md); they declare precision
//             float16 / bfloat16 and accumulation float32. float16 has all five
//             targets; bfloat16 only spmm and spmm_transposed (cuSPARSE has no bfloat16 SDDMM, which
//             sddmm_dot's forward and spmm_ve's grad_w need).
// `gpu_float16_float32_sums`, `gpu_bfloat16_float32_sums`, `gpu_tf32_float32_sums`  the `gpu`
//             reference stored in a coarser format, for every op and layer: each input, parameter
//             and output gradient rounded to it before upload (index tensors kept), the float32
//             kernels, each output and gradient rounded to it after download — what a tensor-core
//             or fused kernel reading and writing that format with float32 sums returns (its
//             intermediates in float32, which the tolerance model for such a declaration allows:
//             checks/tolerance.md, "Storage and accumulation"). They declare precision
//             float16 / bfloat16 / tf32 and accumulation float32; the CPU controls
//             cpu_<format>_float32_sums are the same model around the oracle's float32 code.
// All report availability() = {false, "no CUDA device"} when the CUDA runtime finds no device
// (evaluate() then returns Status::unsupported with that reason); nothing touches the GPU before
// the first evaluate(). Each Result carries the allocator's peak device bytes for that evaluation
// (graph storage, tensors, workspaces, and the 4 MiB cuBLAS workspace held by the system) and the
// seconds from the first upload to the last download. live_bytes() is what the system holds
// between evaluations (the cuBLAS workspace only).
//
//   auto gpu = gnncheck::make_gpu_system();
//   if (gpu->availability().available) { gnncheck::Result r = gpu->evaluate(c); }
#pragma once

#include <memory>
#include <string>

#include "core/system.h"

namespace gnncheck {

std::unique_ptr<System> make_gpu_system();
// storage: float16, bfloat16 or tf32 (InternalError otherwise).
std::unique_ptr<System> make_gpu_stored_system(Precision storage);
// Its name, also where CUDA is not built (gnncheck list still shows the system, unavailable).
inline std::string gpu_stored_system_name(Precision storage) {
  return "gpu_" + std::string(to_string(storage)) + "_float32_sums";
}
std::unique_ptr<System> make_cusparse_system();
std::unique_ptr<System> make_cusparse_float16_system();
std::unique_ptr<System> make_cusparse_bfloat16_system();

}  // namespace gnncheck

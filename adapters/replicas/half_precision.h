// gnncheck/adapters/replicas/half_precision.h — half-precision storage with float32 sums: correct
// systems that compute so (the controls of replicas 31 and 32) and the kernels the replicas share.
//
// Tensor-core and fused kernels (cuSPARSE with computeType CUDA_R_32F, cuBLAS, TC-GNN, fused GAT)
// read and write float16 or bfloat16 (or round a matmul's operands to TF32) and accumulate in float32, and declare so (System::accumulation;
// adapters/PROTOCOL.md §2). These systems do the same on the CPU, so that the tolerance model for
// such a declaration (checks/tolerance.md, "Storage and accumulation") can be held to a correct
// implementation — no false alarm — and to the two ways such kernels go wrong — caught.
//
//   auto control = gnncheck::make_half_storage_system(Precision::float16);  // cpu_float16_float32_sums
//   Result r = control->evaluate(c);  // inputs rounded to float16, float32 code, results rounded
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/system.h"

namespace gnncheck {

// A correct system storing in `storage` (float16, bfloat16 or tf32) and computing in float32, for every
// target: each input, parameter and output gradient rounded to `storage` (index tensors left as
// they are), the oracle's float32 code, each output and gradient rounded to `storage`. Named
// cpu_<storage>_float32_sums; declares precision `storage`, accumulation float32.
std::unique_ptr<System> make_half_storage_system(Precision storage);

// The targets half_sparse_kernel computes: the sums of one sparse product each.
const std::vector<std::string>& half_kernel_targets();

// The sparse kernels written out with float16 storage, forward and backward: every input rounded to
// float16, every product and partial sum rounded to `accumulation` (float32: what the kernels claim;
// float16: replica 31's bug), the result rounded to float16. Status::unsupported for another target.
Result half_sparse_kernel(const Case& c, Precision accumulation);

// half_sparse_kernel with float32 sums as a system (spmm_float16_float32_sums): replica 31's control.
std::unique_ptr<System> make_half_kernel_system();

}  // namespace gnncheck

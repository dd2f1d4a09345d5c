// The device-fault replicas (device_fault_replicas.h): the reference's spmm with a leak or a race added.
#include "adapters/replicas/gpu/device_fault_replicas.h"

#include <curand.h>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "adapters/replicas/gpu/device_fault_kernels.cuh"
#include "gpu/cuda_check.h"
#include "gpu/device_allocator.h"
#include "gpu/gpu_targets.h"
#include "gpu/spmm.cuh"
#include "core/error.h"

namespace gnncheck {
namespace {

using gpu::GpuTargetFn;
using gpu::TargetRun;

// The reference's spmm, plus a staging buffer per evaluation that nobody frees.
GpuTargetFn leaking_spmm() {
  GpuTargetFn reference = gpu::gpu_op_targets(gpu::Library::reference).at("spmm");
  return [reference](TargetRun& run) {
    void* staging = nullptr;
    GNNCHECK_CUDA_CHECK(cudaMalloc(&staging, static_cast<std::size_t>(kLeakReplicaBytesPerEvaluation)));
    GNNCHECK_CUDA_CHECK(cudaMemsetAsync(staging, 0, static_cast<std::size_t>(kLeakReplicaBytesPerEvaluation), run.ctx.stream));
    reference(run);
  };
}

// cuRAND has no error-string function: the message names the call and its status code.
#define GNNCHECK_CURAND_CHECK(call)                                                                       \
  do {                                                                                                     \
    const curandStatus_t gnncheck_status_ = (call);                                                        \
    if (gnncheck_status_ != CURAND_STATUS_SUCCESS)                                                         \
      throw gpu::CudaError(gpu::cuda_failure_message(__FILE__, __LINE__, #call, "curandStatus_t",          \
                                                     static_cast<int>(gnncheck_status_), "(see curand.h)")); \
  } while (0)

// The reference's spmm after drawing an edge dropout mask (which spmm then does not use) from a
// cuRAND XORWOW generator created for this call and never destroyed: its device state stays
// allocated inside cuRAND, which no allocator of the system counts.
GpuTargetFn curand_leaking_spmm() {
  GpuTargetFn reference = gpu::gpu_op_targets(gpu::Library::reference).at("spmm");
  return [reference](TargetRun& run) {
    curandGenerator_t generator = nullptr;
    GNNCHECK_CURAND_CHECK(curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_XORWOW));
    GNNCHECK_CURAND_CHECK(curandSetStream(generator, run.ctx.stream));
    GNNCHECK_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(generator, 20250707));
    gpu::DeviceBuffer<float> mask(run.ctx.allocator, std::max<std::int64_t>(run.graph().num_edges(), 1));
    GNNCHECK_CURAND_CHECK(curandGenerateUniform(generator, mask.data(), static_cast<std::size_t>(mask.size())));
    reference(run);
    // The bug: no curandDestroyGenerator(generator).
  };
}

// Forward through the racy kernel; backward as the reference (its fused CSC kernel).
void racy_spmm(TargetRun& run) {
  const gpu::DeviceTensor& x = run.input("x");
  const index_t f = x.row_size();
  gpu::DeviceGraph& g = run.graph();
  gpu::DeviceTensor& y = run.new_output("y", {g.n_dst(), f});
  gpu_replicas::racy_spmm_forward(run.ctx, g, x.data(), f, y.data());
  if (!run.backward()) return;
  gpu::DeviceTensor& gx = run.new_gradient("x", x.shape());
  gpu::spmm_backward(run.ctx, g, run.grad_output("y").data(), f, gx.data());
}

}  // namespace

std::unique_ptr<System> make_gpu_device_fault_replica(const std::string& name) {
  if (name == "gpu-replica-leak") return gpu::make_gpu_system_from_targets(name, {{"spmm", leaking_spmm()}});
  if (name == "gpu-replica-curand-leak")
    return gpu::make_gpu_system_from_targets(name, {{"spmm", curand_leaking_spmm()}});
  if (name == "gpu-replica-racy") return gpu::make_gpu_system_from_targets(name, {{"spmm", racy_spmm}});
  std::vector<std::string> names;
  for (const auto& info : gpu_device_fault_catalogue()) names.push_back(info.name);
  throw InputError(fmt::format("unknown device-fault replica '{}'; known: {}", name, fmt::join(names, ", ")));
}

}  // namespace gnncheck

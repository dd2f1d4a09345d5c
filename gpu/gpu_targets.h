// gnncheck/gpu/gpu_targets.h — the GPU implementations of the catalogue's targets, by name.
//
// gpu_op_targets(Library::reference) is every sparse op as the `gpu` system computes it (the row,
// edge-parallel and fused kernels of gpu/*.cu); gpu_op_targets(Library::cusparse_only) is only what
// cuSPARSE itself computes (SpMM, its native transpose, SDDMM), for the `cusparse` system: the
// same as cusparse_op_targets(StorageFormat::float32). cusparse_op_targets(float16 or bfloat16)
// are those cuSPARSE computes on tensors stored in that format with float32 sums, Aᵀ products over
// the CSC (gpu/cusparse_targets.cpp; bfloat16: spmm and spmm_transposed, since cuSPARSE has no
// bfloat16 SDDMM).
// gpu_layer_targets() are the layers (gpu/layers/).
//
//   for (const auto& [name, fn] : gnncheck::gpu::gpu_op_targets(gnncheck::gpu::Library::reference)) ...
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>

#include "core/system.h"
#include "gpu/storage_format.cuh"
#include "gpu/target_run.h"

namespace gnncheck::gpu {

enum class Library { reference, cusparse_only };

std::map<std::string, GpuTargetFn> gpu_op_targets(Library library);
std::map<std::string, GpuTargetFn> cusparse_op_targets(StorageFormat format);
std::map<std::string, GpuTargetFn> gpu_layer_targets();

// A float32 GPU System named `name` that evaluates exactly `targets`, with the same case
// validation, upload, allocator accounting and error handling as `gpu` (gpu_systems.cpp). The GPU
// bug replicas (adapters/replicas/gpu/) are built this way from gpu_op_targets() with one target's
// kernel replaced.
std::unique_ptr<System> make_gpu_system_from_targets(std::string name, std::map<std::string, GpuTargetFn> targets);
// The same, declaring `storage` as every target's precision and `accumulation` as its accumulation
// (System::precision, System::accumulation; accumulation_fits(storage, accumulation) must hold).
std::unique_ptr<System> make_gpu_system_from_targets(std::string name, std::map<std::string, GpuTargetFn> targets,
                                                     Precision storage, Precision accumulation);

// The target implementations of a System made here (`gpu`, `cusparse`, a GPU replica), for a
// caller that runs them on a graph held only on the device (scale/device_scale_check.h); nullptr
// for any other System.
const std::map<std::string, GpuTargetFn>* device_targets_of(const System& system);

// The targets whose implementations read the graph only through TargetRun's device accessors
// (graph(), aggregation_graph(), require_destinations_are_sources()), so they may run on a
// device-only graph; and of those, the ones that never read edge_perm, which may run on a graph
// declared symmetric (DeviceGraph::declare_symmetric_pattern()). Both are read from the catalogue
// entries (oracle::GpuFacts): a new target declares them in its entry, never in a list here.
const std::set<std::string>& device_resident_targets();
const std::set<std::string>& targets_without_edge_perm();

}  // namespace gnncheck::gpu

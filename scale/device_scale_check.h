// gnncheck/scale/device_scale_check.h — a scale check whose graph and tensors live on the device.
//
// At Kronecker scale 25–27 (10⁹–4.3·10⁹ edges) the host cannot hold the graph as a gnncheck Graph
// (32 bytes per edge) nor its inputs in float64. run_device_scale_check keeps everything big on the
// device, for a GPU system (gpu/gpu_targets.h: `gpu`, the GPU replicas):
//   graph     generated there (gpu/kronecker.cuh; the definition of gpu/kronecker.h, which the
//             host's `kronecker:SCALE` builds too), CSR only; for targets that read no edge_perm it
//             is declared symmetric (A = Aᵀ), so Aᵀ products walk the CSR and no CSC is built;
//   inputs    drawn there in float32, the system's precision (each value a hash of seed, tensor
//             name and index); parameters and the sampled output gradient drawn on the host,
//             rounded to float32 and uploaded;
//   sampling  on the device's offsets (DeviceGraphRows): the hub stratum's largest rows ranked
//             there, and only the rows sampling asks about (candidates, the sampled rows) read
//             back — K-sized answers, never one value per node;
//   oracle    the host receives, for the K sampled rows, their offsets and columns, the
//             neighbourhood's source numbering (its map of one entry per node lives on the device)
//             and the rows of every tensor the neighbourhood holds — K × degree values, never E —
//             and evaluates the neighbourhood exactly as run_scale_check does
//             (scale/neighbourhood.h), on the very float32 values the device used;
//   zero check  run on the device over every gradient (a row mask of n bytes).
// The sources' out-degrees the symmetric normalization reads are their in-degrees (A = Aᵀ).
//
//   auto* targets = gnncheck::gpu::device_targets_of(*system);
//   ScaleResult r = gnncheck::scale::run_device_scale_check(system->name(), *targets, 25, options);
#pragma once

#include <map>
#include <string>

#include "gpu/context.h"
#include "gpu/device_graph.h"
#include "gpu/gpu_targets.h"
#include "scale/row_sampling.h"
#include "scale/scale_check.h"

namespace gnncheck::scale {

// GraphRows of a CSR on the device (row_ptr [n_dst + 1], col_idx of sources in [0, n_src), kept by
// the caller): each question is answered by a kernel and comes back K-sized
// (scale/device_scale_kernels.cuh).
class DeviceGraphRows final : public GraphRows {
 public:
  DeviceGraphRows(gpu::GpuContext& ctx, const gpu::offset_t* row_ptr, const gpu::node_t* col_idx, index_t n_dst, index_t n_src);
  index_t rows() const override { return n_dst_; }
  index_t edges() const override { return edges_; }
  std::vector<RowExtent> extents(std::span<const index_t> rows) const override;
  index_t row_holding_edge(index_t edge) const override;
  std::vector<RowDegree> largest_rows(index_t count) const override;
  std::vector<index_t> rows_where(index_t lo, index_t hi, RowFilter filter) const override;
  std::vector<index_t> sources_read_together(std::span<const index_t> rows) const override;

 private:
  gpu::GpuContext& ctx_;
  const gpu::offset_t* row_ptr_;
  const gpu::node_t* col_idx_;
  index_t n_dst_, n_src_, edges_ = 0;
};

// Throws InputError for a target the device path does not run (gpu::device_resident_targets())
// or bad options; a fault of the system (a CUDA error, an unsupported case) is an error result.
ScaleResult run_device_scale_check(const std::string& system_name, const std::map<std::string, gpu::GpuTargetFn>& targets,
                                   int kronecker_scale, const ScaleOptions& options);

}  // namespace gnncheck::scale

// gnncheck/gpu/device_graph.h — a Graph on the device, stored in the GraphPy style.
//
// Index widths, the views it stores (CSR, COO, CSC, unit values, 32-bit offsets for cuSPARSE) and
// the storage per layer kind: gpu/README.md.
//
//   gnncheck::gpu::DeviceGraph dg(ctx, graph);       // CSR (+ COO on demand)
//   dg.ensure_csc(ctx);                               // before a CSC-reading kernel
//   spmm_forward(ctx, dg, x.data(), f, y.data());
#pragma once

#include <cstdint>
#include <limits>

#include "gpu/context.h"

namespace gnncheck {
class Graph;  // core/graph.h (not included: .cu files compile without the oracle headers)
}

namespace gnncheck::gpu {

using node_t = std::int32_t;    // a node id on the device
using offset_t = std::int64_t;  // a position in an E-sized array (row_ptr, col_ptr entries)
using edge_t = std::int64_t;    // an edge id (edge_perm entries)

// Node counts the device graph accepts: node ids are 32-bit.
inline constexpr std::int64_t max_device_nodes = std::numeric_limits<node_t>::max() - 1;
// Edges beyond which cuSPARSE would need 64-bit column indices.
inline constexpr std::int64_t max_cusparse_edges = std::numeric_limits<std::int32_t>::max();

class DeviceGraph {
 public:
  // Uploads CSR from a host graph. Throws InputError if n_dst or n_src exceeds max_device_nodes.
  DeviceGraph(GpuContext& ctx, const Graph& graph);
  // Takes a CSR built on the device (row_ptr [n_dst+1], col_idx [row_ptr[n_dst]] entries, each
  // < n_src). There is no host copy: the views are derived on the device — row_of_edge expanded
  // from the offsets; the CSC by a stable sort of the edge ids by column (gpu/graph_kernels.cuh),
  // which also yields edge_perm (kept: 8 bytes per edge) and needs 24 transient bytes per edge.
  DeviceGraph(GpuContext& ctx, std::int64_t n_dst, std::int64_t n_src, DeviceBuffer<offset_t> row_ptr,
              DeviceBuffer<node_t> col_idx);

  std::int64_t n_dst() const { return n_dst_; }
  std::int64_t n_src() const { return n_src_; }
  std::int64_t num_edges() const { return num_edges_; }
  bool has_host() const { return host_ != nullptr; }
  const Graph& host() const;

  const offset_t* row_ptr() const { return row_ptr_.data(); }
  const node_t* col_idx() const { return col_idx_.data(); }
  // Built on first use (uploaded from the host graph's views; for a device-built graph, derived
  // on the device).
  const node_t* row_of_edge(GpuContext& ctx);
  const offset_t* col_ptr(GpuContext& ctx);
  const node_t* row_idx(GpuContext& ctx);
  const edge_t* edge_perm(GpuContext& ctx);
  const float* ones(GpuContext& ctx);
  void ensure_csc(GpuContext& ctx);  // col_ptr and row_idx (not edge_perm)
  // 32-bit copies of the offsets for cuSPARSE (only while fits_cusparse()).
  const std::int32_t* cusparse_row_ptr(GpuContext& ctx);
  const std::int32_t* cusparse_col_ptr(GpuContext& ctx);

  // Whether cuSPARSE can take this CSR with 32-bit indices: fewer than 2^31 edges, and no more
  // stored entries than rows × cols (cusparseCreateCsr refuses that; only duplicate edges cause
  // it, e.g. a 1×1 graph with a self-loop twice).
  bool fits_cusparse() const { return num_edges_ <= max_cusparse_edges && num_edges_ <= n_dst_ * n_src_; }

  // Declares A = Aᵀ (as a multiset of (row, column) pairs; a square graph). The CSC views then
  // alias the CSR arrays — col_ptr() is row_ptr(), row_idx() is col_idx() — so an Aᵀ product walks
  // the CSR, summing each column's terms in its row's order, and the graph holds no CSC at all
  // (at 4·10⁹ edges the CSC and its sort would need 17 GB + 100 GB). edge_perm() is not defined
  // for such a graph (an InternalError): targets that read edge values in CSC order need the CSC.
  // Throws InputError for a non-square graph.
  void declare_symmetric_pattern();
  bool symmetric_pattern() const { return symmetric_pattern_; }

  // A + I on the device (the block convention of oracle/layers/self_loops.h: (i, i) appended to
  // every row i); square or n_dst ≤ n_src. The result keeps this graph's symmetric declaration.
  DeviceGraph with_destination_self_loops(GpuContext& ctx) const;

  // Device bytes held by this graph's arrays now.
  std::int64_t storage_bytes() const;

 private:
  const Graph* host_ = nullptr;
  bool symmetric_pattern_ = false;
  std::int64_t n_dst_ = 0, n_src_ = 0, num_edges_ = 0;
  DeviceBuffer<offset_t> row_ptr_, col_ptr_;
  DeviceBuffer<node_t> col_idx_, row_of_edge_, row_idx_;
  DeviceBuffer<edge_t> edge_perm_;
  DeviceBuffer<std::int32_t> cusparse_row_ptr_, cusparse_col_ptr_;
  DeviceBuffer<float> ones_;
};

}  // namespace gnncheck::gpu

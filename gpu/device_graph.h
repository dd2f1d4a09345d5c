// gnncheck/gpu/device_graph.h — a Graph on the device, stored in the GraphPy style.
//
// What is stored (32-bit indices, as cuSPARSE's CSR kernels take them):
//   CSR      row_ptr [n_dst+1], col_idx [E]; an edge's id is its CSR position (implicit edge id),
//            so edge tensors [E, H] need no id array.
//   COO      row_of_edge [E]: the destination of each edge in edge-id order. With col_idx it forms
//            a row-ordered COO that shares the column array, for edge-parallel SDDMM.
//   CSC      col_ptr [n_src+1], row_idx [E], built on first use by an Aᵀ product (the fused CSC
//            kernel measured fastest for Aᵀ on the H200, gpu/RESULTS.md); edge_perm [E] (CSC
//            position -> edge id) only when edge values must be read in CSC order (attention
//            backward, column sums of edge tensors).
//   ones     [E] float32 1.0 values, only for cuSPARSE calls on the unweighted A (cuSPARSE has no
//            pattern-only SpMM).
// Storage by layer kind (4-byte words; V = nodes, E = edges, square graph, self-loops included in E):
//   GCN              CSR (V + E) + CSC (V + E) + 2V degree factors         4V + 2E
//   SAGE-mean        CSR + CSC + V row-mean factors                        3V + 2E
//   GIN              CSR + unit values for cusparseSpMM (E) + CSC          2V + 3E
//   GAT, AGNN        CSR + COO rows (E) + CSC + edge_perm (E)              2V + 4E
// The paper's GraphPy counts V + E for GCN and V + 3E for attention, using cuSPARSE's native
// transposed SpMM (no CSC). Here the CSC (V + E more) buys a deterministic Aᵀ that measured
// 1.2–2× faster than the native transpose on the H200 (gpu/RESULTS.md); the `cusparse` system
// still checks the native transpose. GCN's forward is the fused normalize+aggregate kernel and
// needs no unit values.
//
//   gnncheck::gpu::DeviceGraph dg(ctx, graph);       // CSR (+ COO on demand)
//   dg.ensure_csc(ctx);                               // before a CSC-reading kernel
//   spmm_forward(ctx, dg, x.data(), f, y.data());
#pragma once

#include <cstdint>

#include "gpu/context.h"

namespace gnncheck {
class Graph;  // oracle/graph.h (not included: .cu files compile without the oracle headers)
}

namespace gnncheck::gpu {

using dindex_t = std::int32_t;  // device index type

class DeviceGraph {
 public:
  // Uploads CSR. Throws InputError if the graph has more than 2^31-1 edges or nodes (the limit of
  // 32-bit cuSPARSE indices).
  DeviceGraph(GpuContext& ctx, const Graph& graph);

  std::int64_t n_dst() const { return n_dst_; }
  std::int64_t n_src() const { return n_src_; }
  std::int64_t num_edges() const { return num_edges_; }
  const Graph& host() const { return *host_; }

  const dindex_t* row_ptr() const { return row_ptr_.data(); }
  const dindex_t* col_idx() const { return col_idx_.data(); }
  // Built on first use (uploaded from the host graph's views; no device sort).
  const dindex_t* row_of_edge(GpuContext& ctx);
  const dindex_t* col_ptr(GpuContext& ctx);
  const dindex_t* row_idx(GpuContext& ctx);
  const dindex_t* edge_perm(GpuContext& ctx);
  const float* ones(GpuContext& ctx);
  void ensure_csc(GpuContext& ctx);  // col_ptr and row_idx (not edge_perm)

  // Whether cuSPARSE accepts this CSR: cusparseCreateCsr refuses more stored entries than
  // rows × cols, which only duplicate edges can cause (e.g. a 1×1 graph with a self-loop twice).
  bool fits_cusparse() const { return num_edges_ <= n_dst_ * n_src_; }

  // Device bytes held by this graph's arrays now.
  std::int64_t storage_bytes() const;

 private:
  const Graph* host_;
  std::int64_t n_dst_, n_src_, num_edges_;
  DeviceBuffer<dindex_t> row_ptr_, col_idx_;
  DeviceBuffer<dindex_t> row_of_edge_;
  DeviceBuffer<dindex_t> col_ptr_, row_idx_, edge_perm_;
  DeviceBuffer<float> ones_;
};

}  // namespace gnncheck::gpu

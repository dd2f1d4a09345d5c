// gnncheck/gpu/device_graph.h — a Graph on the device, stored in the GraphPy style.
//
// Index widths: edge OFFSETS and EDGE IDS are 64-bit (a graph may hold 2^31 or more edges);
// NODE IDS are 32-bit (half the bytes of the E-sized arrays), so node counts must stay below
// 2^31 - 1 (an InputError names the limit otherwise).
//   offset_t (int64)  row_ptr, col_ptr                       [n + 1]
//   edge_t   (int64)  edge_perm, edge-parallel loop counters [E]
//   node_t   (int32)  col_idx, row_of_edge, row_idx          [E]
//
// What is stored:
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
//   32-bit offsets for cuSPARSE [n+1]: cuSPARSE's generic API documents one index type per
//            matrix (CUSPARSE_INDEX_32I or _64I for both offsets and column indices), so a cuSPARSE
//            call gets a 32-bit copy of the offsets, built on first use, while E < 2^31. At 2^31 edges
//            or more, cuSPARSE would need 64-bit column indices too (4E more bytes): the `gpu`
//            system computes those graphs with its own kernels, and fits_cusparse() is false.
// Storage by layer kind (bytes; V = nodes, E = edges, square graph, self-loops included in E):
//   GCN        CSR 8V + 4E, CSC 8V + 4E, two degree-factor vectors 8V             24V + 8E
//   SAGE-mean  CSR + CSC + one factor vector 4V                                    20V + 8E
//   GIN        CSR + CSC                                                           16V + 8E
//   GAT, AGNN  CSR + COO rows 4E + CSC + edge_perm 8E                              16V + 20E
// (the `gpu` system computes A·X with its own CSR kernel; the `cusparse` system adds the 32-bit
// offsets, 4V, and for unweighted products the unit values, 4E)
// (each n+1 array counted as n). The paper's GraphPy counts V + E words for GCN and V + 3E for
// attention, using cuSPARSE's native transposed SpMM (no CSC). Here the CSC buys a deterministic
// Aᵀ that measured 1.2–2× faster than the native transpose on the H200 (gpu/RESULTS.md); the
// `cusparse` system still checks the native transpose.
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

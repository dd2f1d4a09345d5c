#include "gpu/device_graph.h"

#include <span>
#include <vector>

#include <fmt/format.h>

#include "gpu/cuda_check.h"
#include "gpu/graph_kernels.cuh"
#include "core/error.h"
#include "core/graph.h"

namespace gnncheck::gpu {
namespace {

template <class T>
std::vector<T> convert(std::span<const index_t> values) {
  return std::vector<T>(values.begin(), values.end());
}

void check_node_counts(std::int64_t n_dst, std::int64_t n_src, const std::string& what) {
  if (n_dst > max_device_nodes || n_src > max_device_nodes || n_dst < 0 || n_src < 0)
    throw InputError(fmt::format("the GPU reference stores node ids in 32 bits: n_dst and n_src must be in "
                                 "[0, {}]; got {}",
                                 max_device_nodes, what));
}

// Uploads `host` converted to T into a new buffer; synchronizes (the host copy dies on return).
template <class T>
DeviceBuffer<T> upload_converted(GpuContext& ctx, std::span<const index_t> host) {
  DeviceBuffer<T> buffer(ctx.allocator, static_cast<std::int64_t>(host.size()));
  const auto converted = convert<T>(host);
  buffer.upload(converted, ctx.stream);
  ctx.synchronize();
  return buffer;
}

}  // namespace

DeviceGraph::DeviceGraph(GpuContext& ctx, const Graph& graph)
    : host_(&graph), n_dst_(graph.n_dst()), n_src_(graph.n_src()), num_edges_(graph.num_edges()) {
  check_node_counts(n_dst_, n_src_, graph.summary());
  row_ptr_ = upload_converted<offset_t>(ctx, graph.row_ptr());
  col_idx_ = upload_converted<node_t>(ctx, graph.col_idx());
}

DeviceGraph::DeviceGraph(GpuContext& ctx, std::int64_t n_dst, std::int64_t n_src, DeviceBuffer<offset_t> row_ptr,
                         DeviceBuffer<node_t> col_idx)
    : n_dst_(n_dst), n_src_(n_src), num_edges_(col_idx.size()), row_ptr_(std::move(row_ptr)),
      col_idx_(std::move(col_idx)) {
  check_node_counts(n_dst_, n_src_, fmt::format("a device graph of {} × {}", n_dst, n_src));
  if (row_ptr_.size() != n_dst_ + 1)
    throw InputError(fmt::format("device graph: row_ptr has {} entries; expected n_dst + 1 = {}", row_ptr_.size(),
                                 n_dst_ + 1));
  offset_t last = 0;  // row_ptr[n_dst] must be the number of column indices
  GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(&last, row_ptr_.data() + n_dst_, sizeof(last), cudaMemcpyDeviceToHost,
                                      ctx.stream));
  ctx.synchronize();
  if (last != num_edges_)
    throw InputError(fmt::format("device graph: row_ptr[n_dst] = {} but col_idx has {} entries", last, num_edges_));
}

const Graph& DeviceGraph::host() const {
  if (host_ == nullptr) throw InternalError("this DeviceGraph was built on the device and has no host copy");
  return *host_;
}

const node_t* DeviceGraph::row_of_edge(GpuContext& ctx) {
  if (row_of_edge_.size() != num_edges_) {  // not built yet (nothing to build for E = 0)
    row_of_edge_ = DeviceBuffer<node_t>(ctx.allocator, num_edges_);
    expand_rows(ctx, n_dst_, row_ptr_.data(), row_of_edge_.data());
  }
  return row_of_edge_.data();
}

void DeviceGraph::declare_symmetric_pattern() {
  if (n_dst_ != n_src_)
    throw InputError(fmt::format("device graph: a symmetric pattern needs a square graph; got {} × {}", n_dst_, n_src_));
  symmetric_pattern_ = true;
}

DeviceGraph DeviceGraph::with_destination_self_loops(GpuContext& ctx) const {
  if (n_dst_ > n_src_)
    throw InputError(fmt::format("A + I in the block convention needs n_dst ≤ n_src; got {} × {}", n_dst_, n_src_));
  DeviceBuffer<offset_t> row_ptr(ctx.allocator, n_dst_ + 1);
  DeviceBuffer<node_t> col_idx(ctx.allocator, num_edges_ + n_dst_);
  append_self_loops(ctx, n_dst_, row_ptr_.data(), col_idx_.data(), row_ptr.data(), col_idx.data());
  DeviceGraph g(ctx, n_dst_, n_src_, std::move(row_ptr), std::move(col_idx));
  g.symmetric_pattern_ = symmetric_pattern_;
  return g;
}

void DeviceGraph::ensure_csc(GpuContext& ctx) {
  if (symmetric_pattern_) return;  // the CSC is the CSR
  if (col_ptr_.size() == n_src_ + 1) return;
  if (host_ == nullptr) {  // built on the device: sort the edge ids by column (edge_perm comes with it)
    DeviceCsc csc = build_csc(ctx, n_src_, num_edges_, col_idx_.data(), row_of_edge(ctx));
    col_ptr_ = std::move(csc.col_ptr);
    row_idx_ = std::move(csc.row_idx);
    edge_perm_ = std::move(csc.edge_perm);
    return;
  }
  col_ptr_ = upload_converted<offset_t>(ctx, host_->col_ptr());
  row_idx_ = upload_converted<node_t>(ctx, host_->row_idx());
}

const offset_t* DeviceGraph::col_ptr(GpuContext& ctx) {
  if (symmetric_pattern_) return row_ptr_.data();
  ensure_csc(ctx);
  return col_ptr_.data();
}
const node_t* DeviceGraph::row_idx(GpuContext& ctx) {
  if (symmetric_pattern_) return col_idx_.data();
  ensure_csc(ctx);
  return row_idx_.data();
}
const edge_t* DeviceGraph::edge_perm(GpuContext& ctx) {
  if (symmetric_pattern_)
    throw InternalError("edge_perm of a graph declared symmetric: its CSC aliases the CSR, so CSC positions are not "
                        "those of a column sort; build this graph without declare_symmetric_pattern()");
  if (edge_perm_.size() != num_edges_) {  // not built yet
    if (host_ == nullptr) {
      ensure_csc(ctx);  // the device CSC build produces edge_perm too
      return edge_perm_.data();
    }
    edge_perm_ = upload_converted<edge_t>(ctx, host_->edge_perm());
  }
  return edge_perm_.data();
}

const float* DeviceGraph::ones(GpuContext& ctx) {
  if (ones_.size() != num_edges_) {  // not built yet
    ones_ = DeviceBuffer<float>(ctx.allocator, num_edges_);
    fill(ctx, num_edges_, 1.0f, ones_.data());
  }
  return ones_.data();
}

const std::int32_t* DeviceGraph::cusparse_row_ptr(GpuContext& ctx) {
  if (!fits_cusparse()) throw InternalError("cuSPARSE offsets requested for a graph cuSPARSE cannot take");
  if (cusparse_row_ptr_.size() != n_dst_ + 1) {
    cusparse_row_ptr_ = DeviceBuffer<std::int32_t>(ctx.allocator, n_dst_ + 1);
    narrow_offsets(ctx, n_dst_ + 1, row_ptr_.data(), cusparse_row_ptr_.data());
  }
  return cusparse_row_ptr_.data();
}

const std::int32_t* DeviceGraph::cusparse_col_ptr(GpuContext& ctx) {
  if (!fits_cusparse()) throw InternalError("cuSPARSE offsets requested for a graph cuSPARSE cannot take");
  if (symmetric_pattern_) return cusparse_row_ptr(ctx);
  if (cusparse_col_ptr_.size() != n_src_ + 1) {
    cusparse_col_ptr_ = DeviceBuffer<std::int32_t>(ctx.allocator, n_src_ + 1);
    narrow_offsets(ctx, n_src_ + 1, col_ptr(ctx), cusparse_col_ptr_.data());
  }
  return cusparse_col_ptr_.data();
}

std::int64_t DeviceGraph::storage_bytes() const {
  return static_cast<std::int64_t>(row_ptr_.bytes() + col_idx_.bytes() + row_of_edge_.bytes() + col_ptr_.bytes() +
                                   row_idx_.bytes() + edge_perm_.bytes() + cusparse_row_ptr_.bytes() +
                                   cusparse_col_ptr_.bytes() + ones_.bytes());
}

}  // namespace gnncheck::gpu

#include "gpu/device_graph.h"

#include <limits>
#include <span>
#include <vector>

#include <fmt/format.h>

#include "oracle/error.h"
#include "oracle/graph.h"

namespace gnncheck::gpu {
namespace {

std::vector<dindex_t> narrow(std::span<const index_t> values) {
  return std::vector<dindex_t>(values.begin(), values.end());
}

}  // namespace

DeviceGraph::DeviceGraph(GpuContext& ctx, const Graph& graph)
    : host_(&graph), n_dst_(graph.n_dst()), n_src_(graph.n_src()), num_edges_(graph.num_edges()) {
  constexpr index_t limit = std::numeric_limits<dindex_t>::max();
  if (num_edges_ > limit || n_dst_ >= limit || n_src_ >= limit)
    throw InputError(fmt::format("the GPU reference stores graphs with 32-bit indices (below {} nodes and edges); "
                                 "got {}",
                                 limit, graph.summary()));
  row_ptr_ = DeviceBuffer<dindex_t>(ctx.allocator, n_dst_ + 1);
  col_idx_ = DeviceBuffer<dindex_t>(ctx.allocator, num_edges_);
  // The host vectors must outlive the asynchronous copies: synchronize before they go.
  const auto h_row_ptr = narrow(graph.row_ptr());
  const auto h_col_idx = narrow(graph.col_idx());
  row_ptr_.upload(h_row_ptr, ctx.stream);
  col_idx_.upload(h_col_idx, ctx.stream);
  ctx.synchronize();
}

const dindex_t* DeviceGraph::row_of_edge(GpuContext& ctx) {
  if (row_of_edge_.size() != num_edges_) {  // not built yet (nothing to build for E = 0)
    row_of_edge_ = DeviceBuffer<dindex_t>(ctx.allocator, num_edges_);
    const auto h = narrow(host_->row_of_edge());
    row_of_edge_.upload(h, ctx.stream);
    ctx.synchronize();
  }
  return row_of_edge_.data();
}

void DeviceGraph::ensure_csc(GpuContext& ctx) {
  if (col_ptr_.size() == n_src_ + 1) return;
  col_ptr_ = DeviceBuffer<dindex_t>(ctx.allocator, n_src_ + 1);
  row_idx_ = DeviceBuffer<dindex_t>(ctx.allocator, num_edges_);
  const auto h_col_ptr = narrow(host_->col_ptr());
  const auto h_row_idx = narrow(host_->row_idx());
  col_ptr_.upload(h_col_ptr, ctx.stream);
  row_idx_.upload(h_row_idx, ctx.stream);
  ctx.synchronize();
}

const dindex_t* DeviceGraph::col_ptr(GpuContext& ctx) {
  ensure_csc(ctx);
  return col_ptr_.data();
}
const dindex_t* DeviceGraph::row_idx(GpuContext& ctx) {
  ensure_csc(ctx);
  return row_idx_.data();
}
const dindex_t* DeviceGraph::edge_perm(GpuContext& ctx) {
  if (edge_perm_.size() != num_edges_) {  // not built yet
    edge_perm_ = DeviceBuffer<dindex_t>(ctx.allocator, num_edges_);
    const auto h = narrow(host_->edge_perm());
    edge_perm_.upload(h, ctx.stream);
    ctx.synchronize();
  }
  return edge_perm_.data();
}

const float* DeviceGraph::ones(GpuContext& ctx) {
  if (ones_.size() != num_edges_) {  // not built yet
    ones_ = DeviceBuffer<float>(ctx.allocator, num_edges_);
    const std::vector<float> h(static_cast<std::size_t>(num_edges_), 1.0f);
    ones_.upload(h, ctx.stream);
    ctx.synchronize();
  }
  return ones_.data();
}

std::int64_t DeviceGraph::storage_bytes() const {
  return static_cast<std::int64_t>(row_ptr_.bytes() + col_idx_.bytes() + row_of_edge_.bytes() + col_ptr_.bytes() +
                                   row_idx_.bytes() + edge_perm_.bytes() + ones_.bytes());
}

}  // namespace gnncheck::gpu

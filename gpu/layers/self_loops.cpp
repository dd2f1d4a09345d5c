#include "gpu/layers/self_loops.h"

#include <fmt/format.h>

#include "core/error.h"

namespace gnncheck::gpu {

Graph append_self_loops(const Graph& g) {
  if (g.n_dst() > g.n_src())
    throw InternalError(fmt::format("append_self_loops: {} destinations but only {} sources", g.n_dst(), g.n_src()));
  const auto old_offsets = g.row_ptr();
  const auto old_sources = g.col_idx();
  // Row i moves right by the i loops appended before it; its loop goes in the slot after its edges.
  std::vector<index_t> row_ptr(static_cast<size_t>(g.n_dst() + 1));
  std::vector<index_t> col_idx(static_cast<size_t>(g.num_edges() + g.n_dst()));
  for (index_t i = 0; i <= g.n_dst(); ++i) row_ptr[static_cast<size_t>(i)] = old_offsets[i] + i;
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t shift = i;
    for (index_t e = old_offsets[i]; e < old_offsets[i + 1]; ++e) col_idx[static_cast<size_t>(e + shift)] = old_sources[e];
    col_idx[static_cast<size_t>(row_ptr[static_cast<size_t>(i + 1)] - 1)] = i;
  }
  return Graph::from_csr(g.n_dst(), g.n_src(), std::move(row_ptr), std::move(col_idx));
}

}  // namespace gnncheck::gpu

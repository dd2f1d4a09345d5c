#include "oracle/layers/self_loops.h"

#include <fmt/format.h>

namespace gnncheck::oracle::layers {

void require_destinations_are_sources(const Graph& g, const std::string& layer) {
  if (g.n_dst() > g.n_src())
    throw InputError(fmt::format(
        "layer '{}' uses each destination's own features, so destinations must be the first n_dst sources "
        "(n_dst <= n_src); got {}",
        layer, g.summary()));
}

Graph with_destination_self_loops(const Graph& g) {
  require_destinations_are_sources(g, "self-loops");
  if (g.is_square()) return g.with_self_loops();
  std::vector<index_t> row_ptr(static_cast<size_t>(g.n_dst() + 1), 0);
  std::vector<index_t> col_idx;
  col_idx.reserve(static_cast<size_t>(g.num_edges() + g.n_dst()));
  const auto rp = g.row_ptr();
  const auto ci = g.col_idx();
  for (index_t i = 0; i < g.n_dst(); ++i) {
    col_idx.insert(col_idx.end(), ci.begin() + rp[i], ci.begin() + rp[i + 1]);
    col_idx.push_back(i);
    row_ptr[static_cast<size_t>(i + 1)] = static_cast<index_t>(col_idx.size());
  }
  return Graph::from_csr(g.n_dst(), g.n_src(), std::move(row_ptr), std::move(col_idx));
}

}  // namespace gnncheck::oracle::layers

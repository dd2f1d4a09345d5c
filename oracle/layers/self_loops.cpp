#include "oracle/layers/self_loops.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/parallel.h"

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
  // Row i moves up by the i loops before it; rows are copied in parallel (each writes its own range).
  std::vector<index_t> row_ptr(static_cast<size_t>(g.n_dst() + 1), 0);
  std::vector<index_t> col_idx(static_cast<size_t>(g.num_edges() + g.n_dst()));
  const auto rp = g.row_ptr();
  const auto ci = g.col_idx();
#pragma omp parallel for schedule(dynamic, 1024) if (worth_parallel(g.num_edges() + g.n_dst()))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    std::copy(ci.begin() + rp[i], ci.begin() + rp[i + 1], col_idx.begin() + rp[i] + i);
    col_idx[static_cast<size_t>(rp[i + 1] + i)] = i;
    row_ptr[static_cast<size_t>(i + 1)] = rp[i + 1] + i + 1;
  }
  return Graph::from_csr(g.n_dst(), g.n_src(), std::move(row_ptr), std::move(col_idx));
}

}  // namespace gnncheck::oracle::layers

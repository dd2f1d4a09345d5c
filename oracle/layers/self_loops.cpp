#include "oracle/layers/self_loops.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <mutex>
#include <vector>

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

namespace {

// Whether `looped` is with_destination_self_loops(g): g's rows, each with (i, i) appended.
bool is_destination_self_loops_of(const Graph& looped, const Graph& g) {
  if (looped.n_dst() != g.n_dst() || looped.n_src() != g.n_src() || looped.num_edges() != g.num_edges() + g.n_dst()) return false;
  const auto rp = g.row_ptr(), ci = g.col_idx(), lrp = looped.row_ptr(), lci = looped.col_idx();
  bool same = true;
#pragma omp parallel for schedule(dynamic, 1024) reduction(&& : same) if (worth_parallel(g.num_edges() + g.n_dst()))
  for (index_t i = 0; i < g.n_dst(); ++i)
    same = same && lrp[i + 1] == rp[i + 1] + i + 1 && lci[static_cast<size_t>(rp[i + 1] + i)] == i &&
           std::equal(ci.begin() + rp[i], ci.begin() + rp[i + 1], lci.begin() + rp[i] + i);
  return same;
}

// A + I graphs in use, by the address of the graph each was built from. The future holds a weak
// reference, so an A + I lives only as long as the evaluations that use it.
struct SharedSelfLoops {
  const Graph* source;
  std::shared_future<std::weak_ptr<const Graph>> built;
};
std::mutex shared_self_loops_mutex;
std::vector<SharedSelfLoops> shared_self_loops;

}  // namespace

std::shared_ptr<const Graph> shared_destination_self_loops(const Graph& g) {
  auto build = [&g] { return std::make_shared<const Graph>(with_destination_self_loops(g)); };
  if (g.num_edges() < kSharedSelfLoopsMinEdges) return build();
  std::promise<std::weak_ptr<const Graph>> building;
  {
    std::unique_lock lock(shared_self_loops_mutex);
    std::erase_if(shared_self_loops, [](const SharedSelfLoops& e) {
      return e.built.wait_for(std::chrono::seconds(0)) == std::future_status::ready && e.built.get().expired();
    });
    const auto it = std::find_if(shared_self_loops.begin(), shared_self_loops.end(), [&](const SharedSelfLoops& e) { return e.source == &g; });
    if (it != shared_self_loops.end()) {
      const auto built = it->built;
      lock.unlock();
      // Built by another caller, or being built (then wait for it); gone already, or built from
      // another graph that lived at this address: build one's own.
      const std::shared_ptr<const Graph> looped = built.get().lock();
      return looped && is_destination_self_loops_of(*looped, g) ? looped : build();
    }
    shared_self_loops.push_back({&g, building.get_future().share()});
  }
  std::shared_ptr<const Graph> looped;
  try {
    looped = build();
  } catch (...) {
    building.set_value({});  // a waiter builds its own, and meets the same error
    throw;
  }
  building.set_value(looped);
  return looped;
}

}  // namespace gnncheck::oracle::layers

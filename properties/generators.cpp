// arbitrary_graph(): graphs drawn from the fixtures' families in the fixed fractions of
// properties/README.md, and how they shrink. Cases on these graphs are drawn in case_generator.cpp.
#include "properties/generators.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "fixtures/generators.h"
#include "properties/draws.h"

namespace gnncheck::properties {

Graph to_graph(const GraphSpec& spec) { return Graph::from_edges(spec.n_dst, spec.n_src, spec.dst, spec.src); }

void showValue(const GraphSpec& spec, std::ostream& os) {
  os << fmt::format("{} graph {}×{}, {} edges:", spec.family, spec.n_dst, spec.n_src, spec.dst.size());
  for (size_t k = 0; k < spec.dst.size(); ++k) os << fmt::format(" {}<-{}", spec.dst[k], spec.src[k]);
}

namespace {

// A family of fixtures/generators.h with its size, the irregularities of its GraphOptions, and a
// seed; realize() builds it (deterministic on every platform, as the fixtures generators are).
struct GraphRecipe {
  std::string family;
  index_t n_dst = 0, n_src = 0;
  double average_degree = 0;
  bool symmetric = false;
  double duplicate_fraction = 0, self_loop_fraction = 0, empty_row_fraction = 0;
  index_t isolated_nodes = 0;
  bool last_column_edge = false;
  std::uint64_t seed = 0;
};

GraphSpec from_graph(const std::string& family, const Graph& g) {
  GraphSpec spec{family, g.n_dst(), g.n_src(), {}, {}};
  spec.dst.assign(g.row_of_edge().begin(), g.row_of_edge().end());
  spec.src.assign(g.col_idx().begin(), g.col_idx().end());
  return spec;
}

// The first n_dst rows and n_src columns of a square graph on max(n_dst, n_src) nodes: how the
// families that only make square graphs give a non-square block (a sampled subgraph).
Graph block_of(const Graph& square, index_t n_dst, index_t n_src) {
  std::vector<index_t> dst, src;
  for (index_t e = 0; e < square.num_edges(); ++e)
    if (square.row_of_edge()[e] < n_dst && square.col_idx()[e] < n_src) {
      dst.push_back(square.row_of_edge()[e]);
      src.push_back(square.col_idx()[e]);
    }
  return Graph::from_edges(n_dst, n_src, dst, src);
}

Graph square_family_graph(const GraphRecipe& r);

Graph family_graph(const GraphRecipe& r) {
  const bool direct = r.family == "empty" || r.family == "erdos_renyi" || r.family == "complete_bipartite";
  if (direct || r.n_dst == r.n_src) return square_family_graph(r);
  GraphRecipe square = r;
  square.n_dst = square.n_src = std::max(r.n_dst, r.n_src);
  return block_of(square_family_graph(square), r.n_dst, r.n_src);
}

Graph square_family_graph(const GraphRecipe& r) {
  const index_t n = r.n_dst;
  const auto edges_for = [&](index_t limit) {
    return std::clamp<index_t>(static_cast<index_t>(std::llround(r.average_degree * static_cast<double>(n))), 0, limit);
  };
  if (r.family == "empty" || n == 0) return Graph::from_csr(r.n_dst, r.n_src, std::vector<index_t>(r.n_dst + 1, 0), {});
  if (r.family == "erdos_renyi") {
    const index_t pairs = r.n_dst * r.n_src - (r.n_dst == r.n_src ? n : 0);
    return erdos_renyi_m(r.n_dst, r.n_src, edges_for(pairs / 2), r.seed);
  }
  if (r.family == "rmat") {
    int scale = 0;
    while ((index_t{2} << scale) <= n) ++scale;
    RmatParams params;
    params.scale = scale;
    params.edge_factor = std::max<index_t>(1, static_cast<index_t>(std::ceil(r.average_degree)));
    params.symmetrize = r.symmetric;
    params.simple = false;  // keep R-MAT's own duplicates and self-loops
    return rmat(params, r.seed);
  }
  if (r.family == "power_law") {
    const index_t per_node = std::clamp<index_t>(static_cast<index_t>(std::ceil(r.average_degree / 2)), 1, std::max<index_t>(1, n - 1));
    return power_law(n, per_node, r.seed, r.symmetric);
  }
  if (r.family == "skewed_directed") return skewed_directed(n, edges_for(n * (n - 1) / 8), r.seed);
  if (r.family == "star")
    return star(n, r.symmetric ? StarDirection::both : (r.seed % 2 ? StarDirection::inward : StarDirection::outward));
  if (r.family == "chain") return chain(n, !r.symmetric);
  if (r.family == "complete_bipartite") return complete_bipartite(r.n_dst, r.n_src);
  throw InternalError("graph generator: unknown family " + r.family);
}

GraphSpec realize(const GraphRecipe& r) {
  std::string family = r.family;
  Graph g;
  try {
    g = family_graph(r);
  } catch (const InputError&) {
    // Too small for the family (skewed_directed needs 2 nodes, …): an edgeless graph of that size,
    // named so in the counterexample.
    g = Graph::from_csr(r.n_dst, r.n_src, std::vector<index_t>(static_cast<size_t>(r.n_dst + 1), 0), {});
    family = r.family + " (too small: edgeless before irregularities)";
  }
  gnncheck::GraphOptions options;
  options.duplicate_fraction = g.num_edges() > 0 ? r.duplicate_fraction : 0.0;
  options.self_loop_fraction = g.is_square() && g.n_dst() > 0 ? r.self_loop_fraction : 0.0;
  options.empty_row_fraction = g.n_dst() > 0 ? r.empty_row_fraction : 0.0;
  options.isolated_nodes = g.is_square() && g.n_dst() > 0 ? r.isolated_nodes : 0;  // 0-node graphs stay empty
  if (options.any()) g = apply_graph_options(g, options, r.seed ^ 0x1f1f);
  GraphSpec spec = from_graph(family, g);
  if (r.last_column_edge && spec.n_dst > 0 && spec.n_src > 0) {
    spec.dst.push_back(static_cast<index_t>((r.seed >> 7) % static_cast<std::uint64_t>(spec.n_dst)));
    spec.src.push_back(spec.n_src - 1);
  }
  return spec;
}

GraphSpec without_nodes(const GraphSpec& s, const std::vector<bool>& drop_dst, const std::vector<bool>& drop_src) {
  auto relabel = [](const std::vector<bool>& drop) {
    std::vector<index_t> to(drop.size(), -1);
    index_t next = 0;
    for (size_t v = 0; v < drop.size(); ++v)
      if (!drop[v]) to[v] = next++;
    return std::pair{to, next};
  };
  const auto [dst_to, n_dst] = relabel(drop_dst);
  const auto [src_to, n_src] = relabel(drop_src);
  GraphSpec out{s.family, n_dst, n_src, {}, {}};
  for (size_t k = 0; k < s.dst.size(); ++k) {
    if (drop_dst[s.dst[k]] || drop_src[s.src[k]]) continue;
    out.dst.push_back(dst_to[s.dst[k]]);
    out.src.push_back(src_to[s.src[k]]);
  }
  return out;
}

GraphSpec without_edges(const GraphSpec& s, size_t begin, size_t end) {
  GraphSpec out = s;
  out.dst.erase(out.dst.begin() + begin, out.dst.begin() + end);
  out.src.erase(out.src.begin() + begin, out.src.begin() + end);
  return out;
}

}  // namespace

std::vector<GraphSpec> graph_shrinks(const GraphSpec& s, bool keep_square, bool dst_at_most_src) {
  std::vector<GraphSpec> candidates;
  const bool square = keep_square || s.n_dst == s.n_src;
  auto nodes_mask = [](index_t n, auto&& drop) {
    std::vector<bool> m(static_cast<size_t>(n));
    for (index_t v = 0; v < n; ++v) m[v] = drop(v);
    return m;
  };
  // Half the nodes (the upper labels), then single nodes.
  if (square && s.n_dst > 0) {
    const index_t keep = s.n_dst / 2;
    auto m = nodes_mask(s.n_dst, [&](index_t v) { return v >= keep; });
    candidates.push_back(without_nodes(s, m, m));
    if (s.n_dst <= 32)
      for (index_t v = 0; v < s.n_dst; ++v) {
        auto one = nodes_mask(s.n_dst, [&](index_t w) { return w == v; });
        candidates.push_back(without_nodes(s, one, one));
      }
  } else if (!square) {
    auto none_dst = nodes_mask(s.n_dst, [](index_t) { return false; });
    auto none_src = nodes_mask(s.n_src, [](index_t) { return false; });
    if (s.n_dst > 0) candidates.push_back(without_nodes(s, nodes_mask(s.n_dst, [&](index_t v) { return v >= s.n_dst / 2; }), none_src));
    if (s.n_src > 0) candidates.push_back(without_nodes(s, none_dst, nodes_mask(s.n_src, [&](index_t v) { return v >= s.n_src / 2; })));
    if (s.n_dst <= 32)
      for (index_t v = 0; v < s.n_dst; ++v)
        candidates.push_back(without_nodes(s, nodes_mask(s.n_dst, [&](index_t w) { return w == v; }), none_src));
    if (s.n_src <= 32)
      for (index_t v = 0; v < s.n_src; ++v)
        candidates.push_back(without_nodes(s, none_dst, nodes_mask(s.n_src, [&](index_t w) { return w == v; })));
  }
  // Half the edges, then single edges.
  const size_t e = s.dst.size();
  if (e >= 2) {
    candidates.push_back(without_edges(s, e / 2, e));
    candidates.push_back(without_edges(s, 0, e / 2));
  }
  if (e <= 64)
    for (size_t k = 0; k < e; ++k) candidates.push_back(without_edges(s, k, k + 1));
  // Keep only valid graphs (revalidated as the loader would), never the graph itself.
  std::vector<GraphSpec> valid;
  for (auto& c : candidates) {
    if (c.n_dst == s.n_dst && c.n_src == s.n_src && c.dst == s.dst) continue;
    if (keep_square && c.n_dst != c.n_src) continue;
    if (dst_at_most_src && c.n_dst > c.n_src) continue;
    try {
      (void)to_graph(c);
    } catch (const InputError&) {
      continue;
    }
    valid.push_back(std::move(c));
  }
  return valid;
}

rc::Gen<GraphSpec> arbitrary_graph(GraphOptions options) {
  const rc::Gen<GraphRecipe> recipes = rc::gen::withSize([options](int size) {
    return rc::gen::exec([options, size] {
      GraphRecipe r;
      // At least 3 nodes a side from the first case on (RapidCheck's size starts at 0), so that a
      // short run is not all single-node and empty graphs; shrinking still reaches 0 and 1 nodes.
      const index_t largest = std::max<index_t>(
          std::min<index_t>(3, options.max_nodes),
          std::min<index_t>(options.max_nodes, 1 + static_cast<index_t>(size) * options.max_nodes / 100));
      // RapidCheck's first case has size 0: there a square erdos_renyi, star or chain graph of at
      // least 3 nodes (at least 3 edges, no emptied rows), so that a run of a few cases
      // (`gnncheck check --cases 3`) never draws only edgeless graphs.
      const bool first = size == 0 && options.max_nodes >= 3;
      std::vector<std::string> names{"erdos_renyi", "star", "chain"};
      if (!first) {
        names.insert(names.begin() + 1, {"rmat", "power_law", "skewed_directed"});
        if (!options.square_only) names.push_back("complete_bipartite");
        names.push_back("empty");
      }
      r.family = names[*rc::gen::inRange<size_t>(0, names.size())];
      // Zero nodes only in the "empty" family (its graphs also have no edges).
      r.n_dst = *rc::gen::inRange<index_t>(first ? 3 : (r.family == "empty" ? 0 : 1), largest + 1);
      if (r.family == "complete_bipartite") r.n_dst = std::min<index_t>(r.n_dst, 8);
      r.n_src = r.n_dst;
      // The shape, in fixed fractions (README): square 1/2, n_dst < n_src 1/4, n_dst > n_src 1/4
      // (with dst_at_most_src: square 1/2, n_dst < n_src 1/2; square_only: square). The drawn size is
      // the larger side; the other is drawn below it. complete_bipartite is non-square except when
      // its size is 1, and at most 8 nodes a side to keep its edge count small.
      if (!options.square_only && !first) {
        const int shape = fixed_fraction_draw(4);
        const bool non_square = r.family == "complete_bipartite" || shape >= 2;
        const bool tall = !options.dst_at_most_src && (r.family == "complete_bipartite" ? shape % 2 == 1 : shape == 3);
        if (non_square && r.n_dst >= 2) {
          const index_t smaller = *rc::gen::inRange<index_t>(1, r.n_dst);
          (tall ? r.n_src : r.n_dst) = smaller;
        }
      }
      r.average_degree =
          *rc::gen::inRange(first ? 4 : 0, std::max(first ? 4 : 0, static_cast<int>(options.max_average_degree * 4)) + 1) /
          4.0;
      r.symmetric = *rc::gen::arbitrary<bool>();
      r.duplicate_fraction = *rc::gen::element(0.0, 0.1, 0.3);
      r.self_loop_fraction = *rc::gen::element(0.0, 0.2, 1.0);
      r.empty_row_fraction = first ? 0.0 : *rc::gen::element(0.0, 0.2);
      r.isolated_nodes = *rc::gen::inRange<index_t>(0, 3);
      // 1/4 of the graphs with a node get an edge from the highest source id, n_src − 1 (the last
      // column, which a kernel looping over n_dst or a rounded-down block never reaches).
      r.last_column_edge = r.n_dst > 0 && fixed_fraction_draw(4) == 3;  // shrinks toward none
      r.seed = *rc::gen::arbitrary<std::uint64_t>();
      return r;
    });
  });
  const bool keep_square = options.square_only, dst_at_most_src = options.dst_at_most_src;
  const index_t hub_edges = options.hub_edges;
  return rc::Gen<GraphSpec>([recipes, keep_square, dst_at_most_src, hub_edges](const rc::Random& random, int size) {
    GraphSpec g = realize(recipes(random, size).value());
    if (hub_edges > 0 && g.n_dst > 0 && g.n_src > 0) {
      g.dst.insert(g.dst.end(), static_cast<size_t>(hub_edges), index_t{0});
      g.src.insert(g.src.end(), static_cast<size_t>(hub_edges), g.n_src - 1);
      g.family += fmt::format(" + hub of {} edges", hub_edges);
    }
    return rc::shrinkable::shrinkRecur(g, [keep_square, dst_at_most_src](const GraphSpec& s) {
      return rc::seq::fromContainer(graph_shrinks(s, keep_square, dst_at_most_src));
    });
  });
}

}  // namespace gnncheck::properties

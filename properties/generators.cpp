#include "properties/generators.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/case_transforms.h"
#include "checks/kinks.h"
#include "fixtures/generators.h"
#include "core/error.h"
#include "core/splitmix64.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

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

// One of 0..n-1, uniformly at every RapidCheck size (inRange alone scales toward 0 at small sizes),
// shrinking toward 0: the draw behind each fixed fraction of the README.
int fixed_fraction_draw(int n) { return *rc::gen::resize(100, rc::gen::inRange(0, n)); }

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

std::string_view to_string(ValueStyle style) {
  switch (style) {
    case ValueStyle::small_integers: return "small_integers";
    case ValueStyle::uniform: return "uniform";
    case ValueStyle::with_zeros: return "with_zeros";
    case ValueStyle::large: return "large";
  }
  return "unknown";
}

ValueStyle parse_value_style(std::string_view name) {
  for (ValueStyle s : {ValueStyle::small_integers, ValueStyle::uniform, ValueStyle::with_zeros, ValueStyle::large})
    if (to_string(s) == name) return s;
  throw InputError(fmt::format("unknown value style '{}': expected small_integers, uniform, with_zeros or large", name));
}

void showValue(const CaseSpec& spec, std::ostream& os) {
  os << fmt::format("target {}, attributes {{", spec.target);
  bool first = true;
  for (const auto& [name, value] : spec.attributes.values()) {
    os << (first ? "" : ", ") << name << "=" << gnncheck::to_string(value);
    first = false;
  }
  os << "}";
  if (!spec.shape.empty()) os << " (shape: " << spec.shape << ")";
  os << fmt::format(", values {} (seed {}), ", to_string(spec.values), spec.value_seed);
  showValue(spec.graph, os);
}

namespace {

// gen::element/elementOf do not shrink in RapidCheck; an index from inRange shrinks toward 0, so
// choices shrink toward the first (simplest) entry.
template <class T>
T pick(const std::vector<T>& choices) {
  return choices[*rc::gen::inRange<size_t>(0, choices.size())];
}

// pick() at every RapidCheck size alike (inRange alone draws the first choices at small sizes): a
// drawn shape must reach its far choices — widths past 64 — in the first cases of a short run too.
template <class T>
T uniform_pick(const std::vector<T>& choices) {
  return choices[*rc::gen::resize(100, rc::gen::inRange<size_t>(0, choices.size()))];
}

// What a case of these attributes holds, roughly: node and edge rows times the widest row, plus a
// layer's widest weight matrix (the cost a drawn shape adds; CaseOptions::max_case_elements).
std::int64_t case_elements(const GraphSpec& g, const Attributes& a, const std::vector<std::string>& widths) {
  std::int64_t widest = 1;
  for (const auto& name : widths) widest = std::max(widest, a.get_int(name));
  const std::int64_t heads = a.has("heads") ? a.get_int("heads") : 1;
  const std::int64_t rows = g.n_dst + g.n_src + static_cast<std::int64_t>(g.dst.size());
  return rows * heads * widest + (widths.size() > 1 ? heads * widest * widest : 0);
}

// The shapes where kernels change path (properties/README.md, "Fixed fractions"), drawn into a case whose
// attributes are drawn already. `widths` are the case's width attributes a suite left open,
// `free_heads` whether heads is open too. Returns what was drawn, for the counterexample ("" when
// the case keeps its ordinary shape: half the cases, and a shape that would exceed the size limit).
std::string draw_shape(const GraphSpec& g, const CaseOptions& options, const std::vector<std::string>& widths,
                       bool free_heads, bool bias_open, Attributes& a) {
  if (widths.empty() && !free_heads) return "";
  const int kind = fixed_fraction_draw(4);  // 0, 1 ordinary; 2 a path width; 3 a dimension coincidence
  if (kind < 2 || (kind == 2 && widths.empty())) return "";
  Attributes drawn = a;
  std::string what;
  const auto set_widths = [&](std::int64_t w) {
    for (const auto& name : widths) drawn.set(name, w);
  };
  if (kind == 2) {
    // One width (the others keep theirs) on either side of a warp, a 64- or 128-column tile or a
    // 256-thread block; heads halved until the case fits.
    const std::string name = uniform_pick(widths);
    const auto fits = [&](std::int64_t w) {
      drawn = a;
      drawn.set(name, w);
      while (free_heads && drawn.get_int("heads") > 1 && case_elements(g, drawn, widths) > options.max_case_elements)
        drawn.set("heads", drawn.get_int("heads") / 2);
      return case_elements(g, drawn, widths) <= options.max_case_elements;
    };
    std::vector<std::int64_t> fitting;
    for (std::int64_t w : options.path_widths)
      if (fits(w)) fitting.push_back(w);
    if (fitting.empty()) return "";
    const std::int64_t w = uniform_pick(fitting);
    (void)fits(w);
    what = fmt::format("{}={} (a path boundary)", name, w);
  } else {
    // Dimensions equal where a layout mix-up keeps the right shape, or a layout read from the shape
    // goes wrong: every width = a node count (n_dst = n_src = width on a square graph), heads =
    // width, heads·width = a node count.
    // With heads: heads = width in half of them (a head axis told from extents needs it exactly),
    // heads·width = nodes and width = nodes in a quarter each. A target with heads and no width:
    // heads = a node count.
    std::vector<std::string> kinds;
    if (!widths.empty()) kinds.push_back("width = nodes");
    if (free_heads) kinds.insert(kinds.end(), {"heads = width", "heads = width", "heads·width = nodes"});
    if (widths.empty()) kinds = {"heads = nodes"};
    const std::string coincidence = uniform_pick(kinds);
    const bool dst_side = *rc::gen::resize(100, rc::gen::arbitrary<bool>());
    const std::int64_t n = dst_side ? g.n_dst : g.n_src;
    const std::string side = g.n_dst == g.n_src ? "n_dst = n_src" : (dst_side ? "n_dst" : "n_src");
    if (coincidence == "heads = nodes") {
      if (n < 2 || n > options.max_heads) return "";
      drawn.set("heads", n);
      what = fmt::format("heads = {} = {}", side, n);
    } else if (coincidence == "heads = width") {
      const std::int64_t h = *rc::gen::resize(100, rc::gen::inRange<std::int64_t>(2, options.max_heads + 1));
      drawn.set("heads", h);
      set_widths(h);
      what = fmt::format("heads = width = {}", h);
    } else {
      std::vector<std::int64_t> divisors;
      if (coincidence == "heads·width = nodes")
        for (std::int64_t h = 2; h <= std::min(options.max_heads, n); ++h)
          if (n % h == 0) divisors.push_back(h);
      if (n < 1) return "";
      if (divisors.empty()) {
        set_widths(n);
        what = fmt::format("width = {} = {}", side, n);
      } else {
        const std::int64_t h = uniform_pick(divisors);
        drawn.set("heads", h);
        set_widths(n / h);
        what = fmt::format("heads·width = {}·{} = {} = {}", h, n / h, side, n);
      }
    }
    // A layer's bias broadcast along the wrong axis keeps its shape here too.
    if (bias_open) drawn.set("bias", true);
    if (case_elements(g, drawn, widths) > options.max_case_elements) return "";
  }
  a = drawn;
  return what;
}

}  // namespace

rc::Gen<CaseSpec> arbitrary_case(const std::string& target, CaseOptions options) {
  const oracle::TargetSpec spec = oracle::find_target(target).spec;
  // Layers read each destination's own features (GIN, SAGE) or add self-loops (i, i): destination i
  // is source i, so their blocks have n_dst ≤ n_src (oracle/layers/self_loops.h).
  options.graph.square_only = options.graph.square_only || spec.needs_square_graph;
  options.graph.dst_at_most_src = options.graph.dst_at_most_src || spec.is_layer;
  std::vector<std::int64_t> widths;
  for (std::int64_t w : {1, 2, 3, 5, 7, 8, 16, 31, 33, 40, 64})
    if (w <= options.max_width) widths.push_back(w);
  if (options.value_styles.empty()) throw InputError("case generator: at least one value style is needed");
  const bool ties = oracle::find_target(target).kinks.ties;
  return rc::gen::mapcat(arbitrary_graph(options.graph), [spec, options, widths, ties](const GraphSpec& graph) {
    return rc::gen::exec([spec, options, widths, graph, ties] {
      CaseSpec c;
      c.graph = graph;
      c.target = spec.name;
      const auto open = [&](const std::string& name) { return !options.attribute_values.count(name); };
      const std::vector<std::string> width_names = oracle::width_attributes(spec);
      const auto is_width = [&](const std::string& name) {
        return std::find(width_names.begin(), width_names.end(), name) != width_names.end();
      };
      std::vector<std::string> open_widths;
      bool has_heads = false, has_bias = false;
      for (const auto& a : spec.attributes) {
        if (is_width(a.name) && open(a.name)) open_widths.push_back(a.name);
        has_heads = has_heads || a.name == "heads";
        has_bias = has_bias || a.name == "bias";
        if (const auto fixed = options.attribute_values.find(a.name); fixed != options.attribute_values.end()) {
          c.attributes.set(a.name, pick(fixed->second));
        } else if (a.name == "heads") {
          // 1 head in 1/4 of the cases, 2 up to max_heads in the rest.
          const bool one = options.max_heads < 2 || fixed_fraction_draw(4) == 0;
          c.attributes.set(a.name, one ? std::int64_t{1} : *rc::gen::inRange<std::int64_t>(2, options.max_heads + 1));
        } else if (is_width(a.name)) {
          c.attributes.set(a.name, pick(widths));
        } else if (a.name == "norm") {
          c.attributes.set(a.name, pick(std::vector<std::string>{"symmetric", "row_mean"}));
        } else if (a.name == "source_degree") {
          c.attributes.set(a.name, pick(std::vector<std::string>{"out", "in"}));
        } else if (a.name == "negative_slope") {  // PyG's default, a small and a large slope, no kink at all
          c.attributes.set(a.name, pick(std::vector<double>{0.2, 0.01, 0.5, 1.0}));
        } else if (a.name == "attn_dropout") {  // off in half the cases (the evaluation mode)
          c.attributes.set(a.name, pick(std::vector<double>{0.0, 0.0, 0.3, 0.6}));
        } else if (a.name == "relations") {  // one relation, and up to 4 (an empty one is drawn with the types)
          c.attributes.set(a.name, *rc::gen::inRange<std::int64_t>(1, 5));
        } else if (a.name == "bases") {  // R-GCN: one weight per relation, or 1–2 shared bases
          c.attributes.set(a.name, *rc::gen::inRange<std::int64_t>(0, 3));
        } else if (a.name == "root_weight") {
          c.attributes.set(a.name, *rc::gen::arbitrary<bool>());
        } else if (a.name == "dropout_seed") {
          c.attributes.set(a.name, *rc::gen::inRange<std::int64_t>(0, 1000));
        } else if (a.name == "self_loops" || a.name == "concat" || a.name == "bias") {
          c.attributes.set(a.name, *rc::gen::arbitrary<bool>());
        } else if (a.drawn && !a.choices.empty()) {
          c.attributes.set(a.name, pick(a.choices));
        }
      }
      const bool free_heads = has_heads && open("heads") && options.max_heads >= 2;
      c.shape = draw_shape(graph, options, open_widths, free_heads, has_bias && open("bias"), c.attributes);
      // A max or min ties where values repeat: small integers in at least 3/4 of its cases.
      std::vector<ValueStyle> styles = options.value_styles;
      if (ties && std::count(styles.begin(), styles.end(), ValueStyle::small_integers))
        styles.insert(styles.begin(), 3 * styles.size(), ValueStyle::small_integers);
      c.values = pick(styles);
      c.value_seed = *rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
      return c;
    });
  });
}

namespace {

// The types of a typed graph (an index tensor: each edge's relation): in 1/4 of the cases every row
// has one type (the relation drawn for all), in 1/4 the last relation is empty (no row of that type:
// its weight's gradient must be exactly 0), and otherwise uniform over [0, count).
Tensor typed_index_tensor(const std::vector<index_t>& shape, std::uint64_t seed, const std::string& name, std::int64_t count) {
  Tensor t = oracle::random_index_tensor(shape, seed, "input:" + name, count);
  switch (splitmix64(seed ^ 0x7f4a7c15ULL) % 4) {
    case 0: {
      const double one = static_cast<double>(splitmix64(seed) % static_cast<std::uint64_t>(count));
      for (double& v : t.values()) v = one;
      break;
    }
    case 1:
      if (count > 1)
        for (double& v : t.values()) v = std::fmod(v, static_cast<double>(count - 1));
      break;
    default: break;
  }
  return t;
}

}  // namespace

Case build_case(const CaseSpec& spec) {
  const oracle::TargetDef& def = oracle::find_target(spec.target);
  auto graph = std::make_shared<const Graph>(to_graph(spec.graph));
  oracle::RandomCaseOptions range;
  if (spec.values == ValueStyle::with_zeros) range.zero_fraction = 0.3;
  Case c;
  c.target = spec.target;
  c.attributes = oracle::with_defaults(def.spec, spec.attributes);
  c.graph = graph;
  // Every input the target has for these attributes (an optional one, like a disabled bias, has no
  // shape), with oracle::random_tensor's per-tensor streams.
  const auto shapes = def.input_shapes(*graph, c.attributes);
  for (const auto& slot : def.spec.inputs) {
    auto shape = shapes.find(slot.name);
    if (shape == shapes.end()) continue;
    TensorMap& into = slot.kind == oracle::TensorKind::parameter ? c.parameters : c.inputs;
    into[slot.name] = slot.is_index() ? typed_index_tensor(shape->second, spec.value_seed, slot.name,
                                                           c.attributes.get_int(slot.index_range))
                                      : oracle::random_tensor(shape->second, spec.value_seed, "input:" + slot.name, range);
  }
  for (const auto& [name, shape] : def.output_shapes(*graph, c.attributes))
    c.grad_outputs[name] = oracle::random_tensor(shape, spec.value_seed, "grad_output:" + name, range);
  if (spec.values == ValueStyle::small_integers) {
    oracle::round_to_small_integers(c);
  } else if (spec.values == ValueStyle::large) {
    for (auto& [name, t] : c.inputs)
      if (!checks::is_index_tensor(c, name))
        for (double& v : t.values()) v *= 1e3;
  }
  oracle::keep_divisors_off_zero(def, c);
  c.seed = spec.value_seed;
  // Off the kinks (see the header): the point itself, or up to 4 jittered ones. Ties of a max or
  // min stay: the checks decide there, and tie bugs hide there.
  const Case drawn = c;
  for (std::uint64_t attempt = 0; attempt < 4 && !def.kinks.ties; ++attempt) {
    const auto kink = checks::nearest_kink(c, Precision::float32);
    if (!kink || !kink->near) break;
    c = checks::jittered(drawn, spec.value_seed + 0x632be59bd9b4e019ull * (attempt + 1));
  }
  return c;
}

}  // namespace gnncheck::properties

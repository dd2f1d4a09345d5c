#include "gpu/tests/gpu_test_support.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "checks/tolerance.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::gpu::testing {

const char* to_string(GraphKind kind) {
  switch (kind) {
    case GraphKind::square_with_duplicates: return "square_with_duplicates";
    case GraphKind::non_square_wide: return "non_square_wide";
    case GraphKind::non_square_tall: return "non_square_tall";
    case GraphKind::hub_rows: return "hub_rows";
    case GraphKind::no_edges: return "no_edges";
    case GraphKind::tiny: return "tiny";
  }
  return "unknown";
}

namespace {

Graph random_edges(index_t n_dst, index_t n_src, index_t edges, std::mt19937_64& rng, double empty_row_fraction) {
  std::vector<index_t> dst, src;
  std::vector<index_t> rows;
  for (index_t i = 0; i < n_dst; ++i)
    if (std::uniform_real_distribution<double>(0, 1)(rng) >= empty_row_fraction) rows.push_back(i);
  if (rows.empty()) rows.push_back(0);
  for (index_t k = 0; k < edges; ++k) {
    dst.push_back(rows[rng() % rows.size()]);
    src.push_back(static_cast<index_t>(rng() % static_cast<std::uint64_t>(n_src)));
  }
  // Duplicates on purpose: repeat a few edges verbatim.
  for (index_t k = 0; k < edges / 10; ++k) {
    const std::size_t pick = rng() % dst.size();
    dst.push_back(dst[pick]);
    src.push_back(src[pick]);
  }
  return Graph::from_edges(n_dst, n_src, dst, src);
}

}  // namespace

Graph random_graph(GraphKind kind, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  switch (kind) {
    case GraphKind::square_with_duplicates: {
      const index_t n = 20 + static_cast<index_t>(rng() % 40);
      Graph g = random_edges(n, n, 4 * n, rng, 0.15);
      return g;
    }
    case GraphKind::non_square_wide: {
      const index_t n_dst = 10 + static_cast<index_t>(rng() % 30);
      return random_edges(n_dst, n_dst + 5 + static_cast<index_t>(rng() % 30), 5 * n_dst, rng, 0.1);
    }
    case GraphKind::non_square_tall: {
      const index_t n_src = 5 + static_cast<index_t>(rng() % 20);
      return random_edges(n_src + 10 + static_cast<index_t>(rng() % 30), n_src, 60, rng, 0.2);
    }
    case GraphKind::hub_rows: {
      const index_t n = 40;
      std::vector<index_t> dst, src;
      for (index_t hub = 0; hub < 3; ++hub)
        for (index_t k = 0; k < 300 + hub * 37; ++k) {
          dst.push_back(hub * 7);
          src.push_back(static_cast<index_t>(rng() % n));
        }
      for (index_t k = 0; k < 80; ++k) {
        dst.push_back(static_cast<index_t>(rng() % n));
        src.push_back(static_cast<index_t>(rng() % 3));  // hub sources too: long CSC columns
      }
      return Graph::from_edges(n, n, dst, src);
    }
    case GraphKind::no_edges: return Graph::from_csr(6, 6, std::vector<index_t>(7, 0), {});
    case GraphKind::tiny: return Graph::from_csr(1, 1, {0, 1}, {0});
  }
  return Graph();
}

std::map<std::string, Tensor> error_bounds(const Case& c, const Result& exact) {
  static const checks::ToleranceModel model;  // the check library's default factors, as `gnncheck run` uses
  return model.bounds(c, exact, Precision::float32).tensors;
}

Comparison compare(const Result& exact, const Result& got, const std::map<std::string, Tensor>& bounds) {
  Comparison result;
  if (!got.ok()) {
    result.problem = fmt::format("status {}: {}", gnncheck::to_string(got.status), got.message);
    return result;
  }
  auto check = [&](const TensorMap& want, const TensorMap& have, const std::string& prefix) -> std::string {
    for (const auto& [name, y] : want) {
      const std::string label = prefix + name;
      auto it = have.find(name);
      if (it == have.end()) return fmt::format("{} is missing", label);
      if (it->second.shape() != y.shape())
        return fmt::format("{}: shape {} instead of {}", label, it->second.shape(), y.shape());
      const Tensor& b = bounds.at(label);
      for (index_t i = 0; i < y.size(); ++i) {
        const double err = std::fabs(it->second[i] - y[i]);
        if (b[i] > 0) result.worst_ratio = std::max(result.worst_ratio, err / b[i]);
        if (!(err <= b[i]))
          return fmt::format("{}[{}] (row {}, column {}): got {:.9g}, oracle {:.17g}, error {:.3g} > bound {:.3g}",
                             label, i, i / std::max<index_t>(1, y.row_size()), i % std::max<index_t>(1, y.row_size()),
                             it->second[i], y[i], err, b[i]);
      }
    }
    if (have.size() != want.size())
      return fmt::format("{}: {} tensors where the oracle has {}", prefix, have.size(), want.size());
    return "";
  };
  result.problem = check(exact.outputs, got.outputs, "output ");
  if (result.problem.empty()) result.problem = check(exact.gradients, got.gradients, "gradient ");
  return result;
}

std::string describe(const Case& c) {
  std::string attrs;
  for (const auto& [name, value] : c.attributes.values()) attrs += fmt::format(" {}={}", name, gnncheck::to_string(value));
  return fmt::format("target {},{} on {}, seed {}", c.target, attrs, c.graph->summary(), c.seed);
}

}  // namespace gnncheck::gpu::testing

namespace gnncheck::gpu::testing {

Attributes random_attributes(const std::string& target, std::mt19937_64& rng) {
  const oracle::TargetDef& def = oracle::find_target(target);
  auto pick = [&](std::initializer_list<std::int64_t> values) {
    return *(values.begin() + static_cast<std::ptrdiff_t>(rng() % values.size()));
  };
  Attributes a;
  for (const auto& spec : def.spec.attributes) {
    const std::string& n = spec.name;
    if (n == "heads") a.set(n, pick({1, 1, 2, 3, 4, 8}));
    else if (n == "features") a.set(n, pick({1, 3, 4, 7, 16, 33}));
    else if (n == "in_features") a.set(n, pick({1, 5, 8, 13, 40}));
    else if (n == "out_features") a.set(n, pick({1, 3, 4, 7, 16, 33}));
    else if (n == "hidden_features") a.set(n, pick({2, 5, 16}));
    else if (n == "relations") a.set(n, pick({1, 2, 3, 7}));
    else if (n == "bases") a.set(n, pick({0, 0, 1, 2, 4}));  // 0: a weight per relation; more bases than relations too
    else if (n == "root_weight") a.set(n, rng() % 4 != 0);
    else if (n == "norm") a.set(n, std::string(rng() % 2 ? "symmetric" : "row_mean"));
    else if (n == "source_degree") a.set(n, std::string(rng() % 2 ? "out" : "in"));
    else if (n == "zero_degree") a.set(n, std::string(rng() % 2 ? "zero" : "one"));
    else if (n == "negative_slope") a.set(n, rng() % 3 == 0 ? 0.01 : 0.2);
    else if (n == "bias" || n == "self_loops" || n == "concat") a.set(n, rng() % 4 != 0);
    else if (n == "attn_dropout") a.set(n, rng() % 3 == 0 ? 0.3 : 0.0);
    else if (n == "dropout_seed") a.set(n, static_cast<std::int64_t>(rng() % 1000));
  }
  return a;
}

Case make_case(const std::string& target, std::shared_ptr<const Graph> graph, const Attributes& attributes,
               std::uint64_t seed) {
  const oracle::TargetDef& def = oracle::find_target(target);
  Attributes drawn = attributes;
  if (drawn.has("bias")) drawn.set("bias", true);
  Case c = oracle::make_random_case(def, graph, drawn, seed, {});
  c.attributes = attributes;
  const auto shapes = def.input_shapes(*graph, oracle::with_defaults(def.spec, attributes));
  for (auto* map : {&c.inputs, &c.parameters})
    std::erase_if(*map, [&](const auto& entry) { return shapes.count(entry.first) == 0; });
  return c;
}

bool graph_fits(const std::string& target, const Graph& g) {
  return !oracle::find_target(target).spec.is_layer || g.n_dst() <= g.n_src();
}

}  // namespace gnncheck::gpu::testing

namespace gnncheck::gpu::testing {

TargetTally check_target(System& system, const std::string& target, int cases_per_kind, std::uint64_t base_seed) {
  TargetTally tally;
  for (GraphKind kind : kAllKinds) {
    for (int i = 0; i < cases_per_kind; ++i) {
      const std::uint64_t seed = base_seed + 1000003ull * static_cast<std::uint64_t>(kind) + static_cast<std::uint64_t>(i);
      std::mt19937_64 rng(seed);
      auto graph = std::make_shared<const Graph>(random_graph(kind, seed));
      if (!graph_fits(target, *graph)) continue;
      const Attributes attrs = random_attributes(target, rng);
      const Case c = make_case(target, graph, attrs, seed);
      const Result exact = oracle::evaluate(c, Precision::float64);
      if (!exact.ok()) {
        ADD_FAILURE() << describe(c) << ": oracle: " << exact.message;
        continue;
      }
      const Result got = system.evaluate(c);
      const Comparison cmp = compare(exact, got, error_bounds(c, exact));
      EXPECT_EQ(cmp.problem, "") << system.name() << " on " << describe(c) << " (graph kind " << to_string(kind) << ")";
      tally.worst_ratio = std::max(tally.worst_ratio, cmp.worst_ratio);
      if (got.ok() && got.peak_bytes.has_value()) {
        EXPECT_GT(*got.peak_bytes, 0) << describe(c);
      }
      ++tally.cases;
    }
  }
  return tally;
}

}  // namespace gnncheck::gpu::testing

// The generators make valid graphs and cases of every shape, shrink to valid graphs, and a saved
// counterexample loads back bit-identical.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "oracle/cpu_systems.h"
#include "checks/checks.h"
#include "properties/driver.h"
#include "oracle/targets.h"
#include "properties/counterexample.h"
#include "properties/generators.h"

namespace gnncheck::properties {
namespace {

RC_GTEST_PROP(Generators, GraphsAndTheirShrinksAreValid, ()) {
  const bool square = *rc::gen::arbitrary<bool>();
  GraphOptions options;
  options.square_only = square;
  const GraphSpec spec = *arbitrary_graph(options);
  const Graph g = to_graph(spec);  // throws (fails the property) if invalid
  if (square) RC_ASSERT(g.is_square());
  for (const GraphSpec& smaller : graph_shrinks(spec, square)) {
    const Graph s = to_graph(smaller);
    RC_ASSERT(s.n_dst() + s.n_src() + s.num_edges() < g.n_dst() + g.n_src() + g.num_edges());
    if (square) RC_ASSERT(s.is_square());
  }
}

TEST(Generators, CoverEveryShapeOfDesignMd) {
  // Over a fixed seed's draws: empty graphs, non-square, duplicates, self-loops, empty rows,
  // isolated sources, symmetric and directed graphs, and every family all occur.
  std::set<std::string> families, seen;
  const rc::Gen<GraphSpec> gen = arbitrary_graph();
  for (int k = 0; k < 1000; ++k) {
    const GraphSpec spec = gen(rc::Random(k), 100).value();
    const Graph g = to_graph(spec);
    families.insert(spec.family.substr(0, spec.family.find(' ')));
    if (g.n_dst() == 0) seen.insert("0 nodes");
    if (!g.is_square()) seen.insert("non-square");
    if (g.num_edges() > 0 && g.is_square() && g.is_symmetric()) seen.insert("symmetric");
    if (g.num_edges() > 0 && !(g.is_square() && g.is_symmetric())) seen.insert("directed");
    std::set<std::pair<index_t, index_t>> edges;
    for (index_t e = 0; e < g.num_edges(); ++e) {
      if (!edges.insert({g.row_of_edge()[e], g.col_idx()[e]}).second) seen.insert("duplicates");
      if (g.row_of_edge()[e] == g.col_idx()[e]) seen.insert("self-loops");
    }
    for (index_t i = 0; i < g.n_dst(); ++i)
      if (g.in_degree(i) == 0 && g.num_edges() > 0) seen.insert("empty rows");
    for (index_t j = 0; j < g.n_src(); ++j)
      if (g.out_degree(j) == 0 && g.num_edges() > 0) seen.insert("isolated sources");
    index_t max_degree = 0;
    for (index_t i = 0; i < g.n_dst(); ++i) max_degree = std::max(max_degree, g.in_degree(i));
    if (g.n_dst() >= 8 && max_degree * 4 >= g.num_edges() && g.num_edges() >= 16) seen.insert("heavy-tailed");
  }
  EXPECT_EQ(families, (std::set<std::string>{"erdos_renyi", "rmat", "power_law", "skewed_directed", "star", "chain",
                                             "complete_bipartite", "empty"}));
  EXPECT_EQ(seen, (std::set<std::string>{"0 nodes", "non-square", "symmetric", "directed", "duplicates", "self-loops",
                                         "empty rows", "isolated sources", "heavy-tailed"}));
}

TEST(Generators, CasesOfEveryTargetEvaluateOnTheOracle) {
  for (const auto& def : oracle::all_targets()) {
    const rc::Gen<CaseSpec> gen = arbitrary_case(def.spec.name);
    std::set<std::string> styles;
    for (int k = 0; k < 60; ++k) {
      const CaseSpec spec = gen(rc::Random(k), 100).value();
      styles.insert(std::string(to_string(spec.values)));
      const Case c = build_case(spec);
      const Result r = oracle::evaluate(c);
      ASSERT_TRUE(r.ok()) << def.spec.name << ": " << r.message;
      if (spec.attributes.has("heads")) {
        const auto h = spec.attributes.get_int("heads");
        ASSERT_TRUE(h >= 1 && h <= 8);
      }
    }
    EXPECT_EQ(styles.size(), CaseOptions{}.value_styles.size()) << def.spec.name;
  }
}

// The fractions README.md documents, over a fixed seed's draws at RapidCheck's full size.
struct Shapes {
  int drawn = 0, square = 0, wide = 0, tall = 0, last_column = 0, wide_with_edge_beyond_n_dst = 0;
};

Shapes count_shapes(const GraphOptions& options, int draws) {
  Shapes s;
  const rc::Gen<GraphSpec> gen = arbitrary_graph(options);
  for (int k = 0; k < draws; ++k) {
    const Graph g = to_graph(gen(rc::Random(k), 100).value());
    ++s.drawn;
    if (g.n_dst() == g.n_src()) ++s.square;
    if (g.n_dst() < g.n_src()) ++s.wide;
    if (g.n_dst() > g.n_src()) ++s.tall;
    if (g.n_src() > 0 && g.out_degree(g.n_src() - 1) > 0) ++s.last_column;
    if (g.n_dst() < g.n_src()) {
      bool beyond = false;
      for (index_t j = g.n_dst(); j < g.n_src(); ++j) beyond = beyond || g.out_degree(j) > 0;
      s.wide_with_edge_beyond_n_dst += beyond ? 1 : 0;
    }
  }
  return s;
}

TEST(Generators, DrawShapesInTheirDocumentedFractions) {
  // Square 1/2, n_dst < n_src 1/4, n_dst > n_src 1/4 (complete_bipartite, 1/8 of the families, is
  // always non-square: 0.28 each way expected); single-node draws stay square.
  const Shapes both = count_shapes({}, 4000);
  EXPECT_NEAR(both.wide / 4000.0, 0.28, 0.05);
  EXPECT_NEAR(both.tall / 4000.0, 0.28, 0.05);
  EXPECT_NEAR(both.square / 4000.0, 0.44, 0.06);
  // An edge from the highest source id in at least the 1/4 that get one on purpose.
  EXPECT_GT(both.last_column / 4000.0, 0.25);
  // Most blocks with more sources than destinations have an edge into a column ≥ n_dst, where a
  // backward looping to n_dst never reaches.
  EXPECT_GT(both.wide_with_edge_beyond_n_dst, both.wide * 3 / 5);

  GraphOptions blocks;
  blocks.dst_at_most_src = true;  // the layers'
  const Shapes layer = count_shapes(blocks, 4000);
  EXPECT_EQ(layer.tall, 0);
  EXPECT_NEAR(layer.wide / 4000.0, 0.56, 0.06);

  GraphOptions square;
  square.square_only = true;
  EXPECT_EQ(count_shapes(square, 1000).square, 1000);
}

TEST(Generators, DrawSeveralHeads) {
  // Attention: heads > 1 in 3/4 of the cases, less the few a drawn shape sets to 1 (a coincidence
  // on a node count without a divisor, heads halved to fit a path width).
  const int draws = 2000;
  int several_heads = 0;
  const rc::Gen<CaseSpec> gat = arbitrary_case("gat");
  for (int k = 0; k < draws; ++k) several_heads += gat(rc::Random(k), 100).value().attributes.get_int("heads") > 1 ? 1 : 0;
  EXPECT_NEAR(several_heads / static_cast<double>(draws), 0.75, 0.05);
}

// The widths of a case (every attribute named like features).
std::vector<std::int64_t> widths_of(const CaseSpec& spec) {
  std::vector<std::int64_t> widths;
  for (const auto& [name, value] : spec.attributes.values())
    if (name.find("features") != std::string::npos) widths.push_back(spec.attributes.get_int(name));
  return widths;
}

TEST(Generators, DrawPathWidthsAndDimensionCoincidencesInTheirFractions) {
  // 1/4 of the cases one width on either side of 32, 64, 128 or 256; 1/4 a coincidence (less the
  // edgeless 0-node graphs, which have no node count to match). Each shape holds as its name says.
  // A target with heads and no width draws heads = a node count instead.
  const int draws = 2000;
  const CaseOptions defaults;
  for (const std::string target : {"spmm", "spmm_ve", "sddmm_dot", "gspmm", "gcn", "gat", "sage", "sddmm_add"}) {
    const rc::Gen<CaseSpec> gen = arbitrary_case(target);
    int path = 0, coincidence = 0;
    std::set<std::int64_t> path_widths_seen;
    std::set<std::string> coincidences_seen;
    for (int k = 0; k < draws; ++k) {
      const CaseSpec spec = gen(rc::Random(k), 100).value();
      const std::vector<std::int64_t> widths = widths_of(spec);
      const std::int64_t heads = spec.attributes.has("heads") ? spec.attributes.get_int("heads") : 1;
      const auto all = [&](std::int64_t w) { return std::all_of(widths.begin(), widths.end(), [&](auto x) { return x == w; }); };
      if (spec.shape.find("path boundary") != std::string::npos) {
        ++path;
        const bool one_is_path = std::any_of(widths.begin(), widths.end(), [&](std::int64_t w) {
          if (std::find(defaults.path_widths.begin(), defaults.path_widths.end(), w) == defaults.path_widths.end()) return false;
          path_widths_seen.insert(w);
          return true;
        });
        EXPECT_TRUE(one_is_path) << target << ": " << spec.shape;
      } else if (!spec.shape.empty()) {
        ++coincidence;
        coincidences_seen.insert(spec.shape.substr(0, spec.shape.find(" = ")));
        const bool nodes = all(spec.graph.n_dst) || all(spec.graph.n_src);
        const bool heads_times = all(spec.graph.n_dst / heads) || all(spec.graph.n_src / heads);
        const bool heads_nodes = heads == spec.graph.n_dst || heads == spec.graph.n_src;
        const bool holds = spec.shape.rfind("heads = width", 0) == 0   ? all(heads) && heads >= 2
                           : spec.shape.rfind("heads = n", 0) == 0     ? widths.empty() && heads_nodes && heads >= 2
                           : spec.shape.rfind("heads·width", 0) == 0   ? heads >= 2 && heads_times
                                                                       : nodes;
        EXPECT_TRUE(holds) << target << ": " << spec.shape << " with heads " << heads << ", " << spec.graph.n_dst << "×"
                           << spec.graph.n_src << " nodes, widths " << fmt::format("{}", fmt::join(widths, ","));
        if (spec.attributes.has("bias")) EXPECT_TRUE(spec.attributes.get_bool("bias")) << target << ": " << spec.shape;
      }
    }
    if (target == "sddmm_add") {  // heads and no width: heads = a node count of 2 to max_heads
      EXPECT_EQ(path, 0);
      EXPECT_GT(coincidence / static_cast<double>(draws), 0.1) << target;
      continue;
    }
    EXPECT_NEAR(path / static_cast<double>(draws), 0.25, 0.04) << target;
    EXPECT_NEAR(coincidence / static_cast<double>(draws), 0.25, 0.05) << target;
    EXPECT_EQ(path_widths_seen.size(), defaults.path_widths.size()) << target << ": every path width is drawn";
    const bool with_heads = target == "spmm_ve" || target == "sddmm_dot" || target == "gspmm" || target == "gat";
    EXPECT_EQ(coincidences_seen.size(), with_heads ? 3u : 1u) << target << ": " << fmt::format("{}", fmt::join(coincidences_seen, "; "));
  }
}

TEST(Generators, ASuitesPinnedWidthsAndHeadsKeepTheirValues) {
  CaseOptions pinned;
  pinned.attribute_values["heads"] = {std::int64_t{2}, std::int64_t{3}};
  pinned.attribute_values["features"] = {std::int64_t{4}};
  const rc::Gen<CaseSpec> gen = arbitrary_case("spmm_ve", pinned);
  for (int k = 0; k < 500; ++k) {
    const CaseSpec spec = gen(rc::Random(k), 100).value();
    EXPECT_EQ(spec.attributes.get_int("features"), 4);
    EXPECT_GE(spec.attributes.get_int("heads"), 2);
    EXPECT_EQ(spec.shape, "") << "no width left open to draw a shape into";
  }
}

TEST(Generators, HubEdgesMakeARowAndAColumnOfThatDegree) {
  GraphOptions options;
  options.hub_edges = 1001;
  const rc::Gen<GraphSpec> gen = arbitrary_graph(options);
  for (int k = 0; k < 50; ++k) {
    const Graph g = to_graph(gen(rc::Random(k), 100).value());
    if (g.n_dst() == 0) continue;
    EXPECT_GT(g.in_degree(0), 1000);
    EXPECT_GT(g.out_degree(g.n_src() - 1), 1000);
  }
}

// Records the edge count of every case it is given; answers as the oracle.
class EdgeCountingOracle final : public System {
 public:
  explicit EdgeCountingOracle(std::vector<index_t>& edges) : edges_(edges) {}
  std::string name() const override { return "edge_counting_oracle"; }
  bool supports(const std::string&) const override { return true; }
  Precision precision(const std::string&) const override { return Precision::float64; }
  Result evaluate(const Case& c) override {
    edges_.push_back(c.graph->num_edges());
    return oracle_->evaluate(c);
  }

 private:
  std::vector<index_t>& edges_;
  std::unique_ptr<System> oracle_ = make_oracle_system();
};

TEST(Generators, AThreeCaseRunNeverDrawsOnlyEdgelessGraphs) {
  // `gnncheck check --cases 3`: RapidCheck's first case has size 0, where the generator draws a
  // graph with edges; over every target and 20 seeds.
  for (const auto& def : oracle::all_targets())
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      std::vector<index_t> edges;
      EdgeCountingOracle system(edges);
      PropertyOptions options;
      options.cases = 3;
      options.seed = seed;
      (void)run_property(checks::CheckKind::differential, system, def.spec.name, options);
      EXPECT_TRUE(std::any_of(edges.begin(), edges.end(), [](index_t e) { return e > 0; }))
          << def.spec.name << ", seed " << seed;
    }
}

TEST(Counterexample, RoundTripsBitIdentical) {
  const rc::Gen<CaseSpec> gen = arbitrary_case("gat");
  const Case c = build_case(gen(rc::Random(3), 100).value());
  auto system = make_cpu_float32_system();
  checks::Verdict v = checks::differential(*system, c);
  const auto dir = std::filesystem::temp_directory_path() / "gnncheck-counterexample-roundtrip";
  std::filesystem::remove_all(dir);
  write_counterexample(dir, c, v, {7, "reproduce-string", "rerun-command"});
  const SavedCase saved = load_counterexample(dir);
  EXPECT_EQ(saved.c.target, c.target);
  EXPECT_EQ(saved.c.seed, c.seed);
  EXPECT_EQ(saved.c.attributes, c.attributes);
  EXPECT_EQ(*saved.c.graph, *c.graph);
  EXPECT_EQ(saved.c.inputs, c.inputs);
  EXPECT_EQ(saved.c.parameters, c.parameters);
  EXPECT_EQ(saved.c.grad_outputs, c.grad_outputs);
  EXPECT_EQ(saved.system, "cpu_float32");
  EXPECT_EQ(saved.check, checks::CheckKind::differential);
  EXPECT_EQ(saved.provenance.reproduce, "reproduce-string");
  EXPECT_EQ(saved.provenance.rapidcheck_seed, 7u);
  std::filesystem::remove_all(dir);
}

TEST(Counterexample, WithoutARecordedRerunItIsReRunByGnncheckRepro) {
  const rc::Gen<CaseSpec> gen = arbitrary_case("spmm");
  const Case c = build_case(gen(rc::Random(5), 10).value());
  auto system = make_cpu_float32_system();
  const checks::Verdict v = checks::differential(*system, c);
  const auto dir = std::filesystem::temp_directory_path() / "gnncheck-counterexample-repro";
  std::filesystem::remove_all(dir);
  write_counterexample(dir, c, v, {7, "reproduce-string", ""});
  EXPECT_EQ(load_counterexample(dir).provenance.rerun, "gnncheck repro " + dir.string());
  EXPECT_EQ(repro_command(dir), "gnncheck repro " + dir.string());
  std::filesystem::remove_all(dir);
}

TEST(Counterexample, ErrorsNameTheFileAndField) {
  const auto dir = std::filesystem::temp_directory_path() / "gnncheck-counterexample-bad";
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "case.json") << R"({"format": 1, "seed": 1})";
  }
  try {
    load_counterexample(dir);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("case.json: missing field 'target'"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gnncheck::properties

// The generators make valid graphs and cases of every shape, shrink to valid graphs, and a saved
// counterexample loads back bit-identical.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "oracle/cpu_systems.h"
#include "checks/checks.h"
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
  for (int k = 0; k < 400; ++k) {
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
    EXPECT_EQ(styles.size(), 4u) << def.spec.name;
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

// Every layer's backward against central finite differences of its own forward, for every input
// and parameter: the full Jacobian on small graphs (square with duplicates, a self-loop and an
// empty row; a non-square block), random directions vᵀJu on a larger random graph.
#include <gtest/gtest.h>

#include "oracle/gradcheck.h"
#include "oracle/layers/tests/layer_test_support.h"

namespace gnncheck::oracle::layer_tests {
namespace {

struct LayerVariant {
  std::string name;  // for the test's name
  std::string target;
  Attributes attributes;
};

std::ostream& operator<<(std::ostream& os, const LayerVariant& v) { return os << v.name; }

std::string describe(const GradcheckReport& r) {
  std::string out = r.failure.empty() ? "" : "evaluation failed: " + r.failure + "\n";
  for (const auto& a : r.inputs)
    out += fmt::format("  {} ({}, {} comparisons): worst relative error {:.3g} (bound {:.3g}) at {}: numerical {:.17g}, "
                       "analytical {:.17g}{}\n",
                       a.input, a.method, a.comparisons, a.worst_relative_error, a.bound, a.worst_location,
                       a.worst_numerical, a.worst_analytical, a.passed ? "" : "  <-- FAILED");
  return out;
}

// Small widths keep the full Jacobian cheap: 2·|input| forwards and |output| backwards.
const Attributes kSmall{{"in_features", std::int64_t{3}}, {"out_features", std::int64_t{2}}};

Attributes small(std::initializer_list<std::pair<const std::string, AttrValue>> extra) {
  Attributes a = kSmall;
  for (const auto& [k, v] : extra) a.set(k, v);
  return a;
}

std::vector<LayerVariant> variants() {
  return {
      {"gcn_symmetric", "gcn", small({})},
      {"gcn_row_mean", "gcn", small({{"norm", std::string("row_mean")}})},
      {"gcn_no_self_loops_no_bias", "gcn", small({{"self_loops", false}, {"bias", false}})},
      {"gcn_row_mean_no_self_loops", "gcn", small({{"self_loops", false}, {"norm", std::string("row_mean")}})},
      {"gcn_source_in_degree", "gcn", small({{"source_degree", std::string("in")}})},
      {"gcn_source_in_degree_no_self_loops", "gcn", small({{"source_degree", std::string("in")}, {"self_loops", false}})},
      {"gin", "gin", small({{"hidden_features", std::int64_t{3}}})},
      {"gin_no_bias", "gin", small({{"hidden_features", std::int64_t{2}}, {"bias", false}})},
      {"gine", "gine", small({{"hidden_features", std::int64_t{3}}})},
      {"gine_no_bias", "gine", small({{"hidden_features", std::int64_t{2}}, {"bias", false}})},
      {"gin_mean", "gin", small({{"aggr", std::string("mean")}})},
      {"gin_max", "gin", small({{"aggr", std::string("max")}})},
      {"gine_mean", "gine", small({{"aggr", std::string("mean")}})},
      {"gine_max", "gine", small({{"aggr", std::string("max")}})},
      {"gat_one_head", "gat", small({{"heads", std::int64_t{1}}})},
      {"gat_three_heads_concat", "gat", small({{"heads", std::int64_t{3}}})},
      {"gat_three_heads_mean", "gat", small({{"heads", std::int64_t{3}}, {"concat", false}})},
      {"gat_no_self_loops_no_bias", "gat", small({{"self_loops", false}, {"bias", false}})},
      {"gat_slope_0_01", "gat", small({{"negative_slope", 0.01}, {"heads", std::int64_t{2}}})},
      {"gat_slope_0_5", "gat", small({{"negative_slope", 0.5}, {"concat", false}})},
      {"gat_attention_dropout", "gat",
       small({{"attn_dropout", 0.4}, {"dropout_seed", std::int64_t{11}}, {"heads", std::int64_t{2}}})},
      {"gatv2_one_head", "gatv2", small({{"heads", std::int64_t{1}}})},
      {"gatv2_three_heads_mean", "gatv2", small({{"heads", std::int64_t{3}}, {"concat", false}})},
      {"gatv2_no_self_loops_no_bias", "gatv2", small({{"self_loops", false}, {"bias", false}})},
      {"gatv2_slope_0_5", "gatv2", small({{"negative_slope", 0.5}, {"heads", std::int64_t{2}}})},
      {"sage", "sage", small({})},
      {"sage_no_bias", "sage", small({{"bias", false}})},
      {"sage_max", "sage", small({{"aggr", std::string("max")}})},
      {"sage_max_pool", "sage", small({{"aggr", std::string("max")}, {"project", true}})},
      {"sage_mean_pool_no_bias", "sage", small({{"project", true}, {"bias", false}})},
      {"rgcn", "rgcn", small({})},
      {"rgcn_sum_one_relation", "rgcn", small({{"aggr", std::string("sum")}, {"relations", std::int64_t{1}}})},
      {"rgcn_bases_no_root_no_bias", "rgcn", small({{"bases", std::int64_t{2}}, {"root_weight", false}, {"bias", false}})},
      {"rgat", "rgat", small({})},
      {"rgat_three_heads_mean_no_bias", "rgat", small({{"heads", std::int64_t{3}}, {"concat", false}, {"bias", false}})},
      {"rgat_one_relation_one_head", "rgat", small({{"relations", std::int64_t{1}}, {"heads", std::int64_t{1}}})},
      {"rgat_slope_0_5", "rgat", small({{"negative_slope", 0.5}, {"relations", std::int64_t{2}}})},
      {"agnn", "agnn", Attributes{{"features", std::int64_t{3}}}},
      {"agnn_no_self_loops", "agnn", Attributes{{"features", std::int64_t{3}}, {"self_loops", false}}},
  };
}

class LayerGradcheck : public ::testing::TestWithParam<LayerVariant> {};

TEST_P(LayerGradcheck, FullJacobianOnSquareGraphWithDuplicatesSelfLoopAndEmptyRow) {
  const LayerVariant& v = GetParam();
  const Case c = layer_case(v.target, small_square_graph(), v.attributes, 101);
  const GradcheckReport r = check_full_jacobian(oracle_evaluator(), c, active_spec(c));
  EXPECT_EQ(r.inputs.size(), differentiable_inputs(active_spec(c)).size());  // an index tensor has no gradient
  EXPECT_TRUE(r.all_passed) << v.name << " on " << c.graph->summary() << " (seed 101):\n" << describe(r);
}

TEST_P(LayerGradcheck, FullJacobianOnNonSquareBlock) {
  const LayerVariant& v = GetParam();
  const Case c = layer_case(v.target, small_block_graph(), v.attributes, 202);
  const GradcheckReport r = check_full_jacobian(oracle_evaluator(), c, active_spec(c));
  EXPECT_TRUE(r.all_passed) << v.name << " on " << c.graph->summary() << " (seed 202):\n" << describe(r);
}

TEST_P(LayerGradcheck, RandomDirectionsOnLargerGraph) {
  const LayerVariant& v = GetParam();
  Attributes attrs = v.attributes;
  // Wider features than the small cases, so sums over many terms are exercised too.
  if (attrs.has("in_features")) attrs.set("in_features", std::int64_t{12});
  if (attrs.has("features")) attrs.set("features", std::int64_t{12});
  const Case c = layer_case(v.target, random_graph(400, 6, 7), attrs, 303);
  GradcheckOptions options;
  options.directions = 3;
  options.seed = 17;
  const GradcheckReport r = check_random_directions(oracle_evaluator(), c, active_spec(c), options);
  EXPECT_TRUE(r.all_passed) << v.name << " on " << c.graph->summary() << " (seed 303):\n" << describe(r);
}

INSTANTIATE_TEST_SUITE_P(Layers, LayerGradcheck, ::testing::ValuesIn(variants()),
                         [](const auto& info) { return info.param.name; });

// The check must be able to fail: a backward with its weight gradient scaled by 1.01 is caught.
TEST(LayerGradcheckSensitivity, CatchesASlightlyWrongWeightGradient) {
  const Case c = layer_case("gcn", small_square_graph(), kSmall, 5);
  const CaseEvaluator wrong = [](const Case& k) {
    Result r = evaluate(k, Precision::float64);
    if (r.gradients.count("weight"))
      for (auto& v : r.gradients["weight"].values()) v *= 1.01;
    return r;
  };
  const GradcheckReport r = check_full_jacobian(wrong, c, active_spec(c));
  EXPECT_FALSE(r.all_passed) << describe(r);
}

}  // namespace
}  // namespace gnncheck::oracle::layer_tests

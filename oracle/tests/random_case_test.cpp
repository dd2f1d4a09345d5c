// Seeded random cases: shaped by the catalogue, reproducible, portable, and with the requested
// value range and fraction of exact zeros.
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/random_case.h"

namespace gnncheck::oracle {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const Graph> graph() {
  const std::vector<index_t> dst = {0, 0, 0, 2, 2}, src = {2, 1, 2, 0, 2};
  return std::make_shared<const Graph>(Graph::from_edges(3, 4, dst, src));
}

TEST(RandomCase, FillsEveryInputAndOutputGradientWithCatalogueShapes) {
  const Case c = make_random_case(find_target("spmm_ve"), graph(), {{"heads", std::int64_t{2}}}, 5);
  EXPECT_EQ(c.target, "spmm_ve");
  EXPECT_EQ(c.seed, 5u);
  EXPECT_EQ(c.attributes.get_int("features"), 4);  // defaults filled in
  EXPECT_EQ(c.inputs.at("edge_values").shape(), (std::vector<index_t>{5, 2}));
  EXPECT_EQ(c.inputs.at("x").shape(), (std::vector<index_t>{4, 8}));
  EXPECT_EQ(c.grad_outputs.at("y").shape(), (std::vector<index_t>{3, 8}));
  EXPECT_TRUE(c.parameters.empty());
  EXPECT_TRUE(evaluate(c).ok());
}

TEST(RandomCase, SameSeedSameValuesOtherSeedOtherValues) {
  const TargetDef& def = find_target("sddmm_dot");
  const Case a = make_random_case(def, graph(), {}, 7), b = make_random_case(def, graph(), {}, 7);
  const Case other = make_random_case(def, graph(), {}, 8);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.grad_outputs, b.grad_outputs);
  EXPECT_NE(a.inputs.at("u"), other.inputs.at("u"));
  EXPECT_NE(a.inputs.at("u").values(), a.inputs.at("v").values());  // separate streams per tensor
}

// The values are fixed by the seed on every platform: these are the first draws for seed 1.
TEST(RandomCase, ValuesArePortable) {
  const Tensor t = random_tensor({3}, 1, "input:x");
  const Tensor again = random_tensor({3}, 1, "input:x");
  EXPECT_EQ(t, again);
  // A tensor's stream does not depend on its shape: a longer tensor starts with the same values.
  const Tensor longer = random_tensor({5}, 1, "input:x");
  for (index_t i = 0; i < 3; ++i) EXPECT_EQ(t[i], longer[i]);
}

TEST(RandomCase, RespectsRangeAndZeroFraction) {
  RandomCaseOptions options;
  options.min_value = 2.0;
  options.max_value = 3.0;
  options.zero_fraction = 0.5;
  const Tensor t = random_tensor({10'000}, 3, "input:x", options);
  index_t zeros = 0;
  for (double v : t.values()) {
    if (v == 0.0) ++zeros;
    else EXPECT_TRUE(v >= 2.0 && v < 3.0) << v;
  }
  EXPECT_NEAR(static_cast<double>(zeros) / 10'000, 0.5, 0.03);
  // Changing zero_fraction keeps the values that stay non-zero.
  options.zero_fraction = 0.0;
  const Tensor dense = random_tensor({10'000}, 3, "input:x", options);
  for (index_t i = 0; i < t.size(); ++i)
    if (t[i] != 0.0) { EXPECT_EQ(t[i], dense[i]); }
}

TEST(RandomCase, ForwardOnlyCaseHasNoOutputGradients) {
  RandomCaseOptions options;
  options.with_grad_outputs = false;
  EXPECT_TRUE(make_random_case(find_target("spmm"), graph(), {}, 1, options).grad_outputs.empty());
}

TEST(RandomCase, OptionalParameterSwitchedOffIsLeftOutAndTheCaseEvaluates) {
  int targets_with_bias = 0;
  for (const TargetDef& def : all_targets()) {
    const bool has_bias = std::any_of(def.spec.attributes.begin(), def.spec.attributes.end(),
                                      [](const AttributeSpec& a) { return a.name == "bias"; });
    if (!has_bias) continue;
    ++targets_with_bias;
    // The bias parameters are "bias" (gcn, gat, sage) or "b1" and "b2" (gin).
    const Case with = make_random_case(def, graph(), {{"bias", true}}, 1);
    const Case without = make_random_case(def, graph(), {{"bias", false}}, 1);
    EXPECT_LT(without.parameters.size(), with.parameters.size()) << def.spec.name;
    const Result r = evaluate(without);
    EXPECT_TRUE(r.ok()) << def.spec.name << ": " << r.message;
    for (const auto& [name, t] : with.parameters)
      if (!without.parameters.count(name)) { EXPECT_FALSE(r.gradients.count(name)) << def.spec.name << " " << name; }
  }
  EXPECT_GE(targets_with_bias, 4);  // gcn, gin, gat, sage at least
}

TEST(RandomCase, BadOptionsAndAttributesAreInputErrors) {
  RandomCaseOptions empty_range;
  empty_range.min_value = 1.0;
  empty_range.max_value = 1.0;
  EXPECT_THROW(make_random_case(find_target("spmm"), graph(), {}, 1, empty_range), InputError);
  RandomCaseOptions bad_zeros;
  bad_zeros.zero_fraction = 1.5;
  EXPECT_THROW(random_tensor({2}, 1, "x", bad_zeros), InputError);
  EXPECT_THROW(make_random_case(find_target("spmm"), nullptr, {}, 1), InputError);
  try {
    make_random_case(find_target("spmm"), graph(), {{"colour", std::string("red")}}, 1);
    FAIL() << "an unknown attribute was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("target 'spmm' has no attribute 'colour'"));
  }
}

}  // namespace
}  // namespace gnncheck::oracle

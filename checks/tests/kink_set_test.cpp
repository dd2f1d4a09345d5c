// Gradients within rounding of a layer's one-sided kinks (checks/kink_set.h): a correct
// implementation in a lower precision, whichever side its rounding puts each near unit on, passes
// the differential check and gets a verdict there; a gradient outside every mix of sides fails.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "checks/case_transforms.h"
#include "checks/checks.h"
#include "checks/kink_set.h"
#include "checks/kinks.h"
#include "fixtures/generators.h"
#include "oracle/kink_arguments.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::checks {
namespace kink_set_test {

using ::testing::HasSubstr;

// The one-sided kink units of c within p's rounding (checks/kinks.h's margin).
std::vector<oracle::KinkUnit> near_units(const Case& c, Precision p) {
  const oracle::KinkArguments k = oracle::kink_arguments(c);
  std::vector<oracle::KinkUnit> near;
  for (std::size_t n = 0; n < k.units.size(); ++n)
    if (k.units[n].site >= 0 && std::abs(k.offsets[n]) <= 2 * gamma(k.terms[n], unit_roundoff(p)) * k.abs_terms[n])
      near.push_back(k.units[n]);
  return near;
}

// The oracle with each near unit (at the declared precision p) on its other side with probability
// 1/2: what a correct implementation in p computes when its rounding puts those units across.
// `scale` multiplies every gradient afterwards: 1 is that correct system; 1.5 a wrong one.
class RandomSidesNearKinks final : public System {
 public:
  RandomSidesNearKinks(Precision p, double scale) : precision_(p), scale_(scale) {}
  std::string name() const override { return fmt::format("random_sides_{}", to_string(precision_)); }
  bool supports(const std::string&) const override { return true; }
  Precision precision(const std::string&) const override { return precision_; }
  Result evaluate(const Case& c) override {
    std::mt19937_64 coin(c.seed * 7919 + 17);
    oracle::layers::KinkFlips flips;
    for (const oracle::KinkUnit& unit : near_units(c, precision_))
      if (coin() % 2 == 0) flips.units[unit.site].push_back(unit.index);
    Result r = flips.empty() ? oracle::evaluate(c) : oracle::evaluate_with_flipped_kinks(c, flips);
    for (auto& [input, g] : r.gradients)
      for (double& v : g.values()) v *= scale_;
    return r;
  }

 private:
  Precision precision_;
  double scale_;
};

// A correct implementation in p: every input, parameter and output gradient rounded to p, then the
// oracle's code in float32. The rounding moves kink arguments within the margin across their kinks,
// as a half-precision kernel's own rounding does.
class RoundedInputs final : public System {
 public:
  explicit RoundedInputs(Precision p) : precision_(p) {}
  std::string name() const override { return fmt::format("rounded_to_{}", to_string(precision_)); }
  bool supports(const std::string&) const override { return true; }
  Precision precision(const std::string&) const override { return precision_; }
  Result evaluate(const Case& c) override {
    Case r = c;
    for (TensorMap* m : {&r.inputs, &r.parameters, &r.grad_outputs})
      for (auto& [name, t] : *m) t = rounded(t, precision_);
    return oracle::evaluate(r, Precision::float32);
  }

 private:
  Precision precision_;
};

struct LayerCase {
  std::string target;
  Attributes attributes;
};

// The layers whose one-sided kinks the set decides (GINE's two sites only where one of them is near).
std::vector<LayerCase> layers_with_one_sided_kinks() {
  return {{"gin", {}},
          {"gin", {{"aggr", std::string("mean")}}},
          {"gine", {}},
          {"gat", {}},
          {"gatv2", {}},
          {"rgat", {}},
          {"sage", {{"project", true}}}};
}

Case layer_case(const LayerCase& l, index_t nodes, std::uint64_t seed) {
  auto graph = std::make_shared<const Graph>(erdos_renyi_m(nodes, nodes, 2 * nodes, seed));
  return oracle::make_random_case(oracle::find_target(l.target), graph, l.attributes, seed);
}

bool decided_at_kinks(const Verdict& v) {
  for (const auto& tc : v.comparisons)
    if (tc.is_gradient && tc.reason.find("kink unit") != std::string::npos && !tc.inconclusive()) return true;
  return false;
}

TEST(KinkSet, EveryMixOfSidesAtTheNearUnitsPassesAndIsDecided) {
  for (const Precision p : {Precision::tf32, Precision::bfloat16, Precision::float16})
    for (const LayerCase& l : layers_with_one_sided_kinks()) {
      RandomSidesNearKinks system(p, 1.0);
      int with_near = 0, decided = 0;
      for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        const Case c = layer_case(l, 10, seed);
        const Verdict v = differential(system, c);
        EXPECT_NE(v.conclusion, Conclusion::fail) << l.target << " " << to_string(p) << " seed " << seed << ": " << v.message;
        if (near_units(c, p).empty()) continue;
        ++with_near;
        decided += decided_at_kinks(v);
      }
      // Every case with near units is decided there (GINE's x and edge_attr only where one of its
      // two sites is near, its other gradients always).
      EXPECT_EQ(decided, with_near) << l.target << " " << to_string(p);
      EXPECT_GT(decided, 0) << l.target << " " << to_string(p) << ": no case had near units to decide";
    }
}

// A gradient 1.5 times too large fails where kink units are near, with the decision in the message:
// before the set existed those comparisons were only inconclusive there. (At bfloat16 the bounds of
// these layers' gradients exceed the gradients themselves on such cases: nothing that small is
// detectable there, near a kink or not.)
TEST(KinkSet, AScaledGradientFailsWhereKinkUnitsAreNear) {
  for (const Precision p : {Precision::tf32, Precision::float16})
    for (const LayerCase& l : layers_with_one_sided_kinks()) {
      RandomSidesNearKinks wrong(p, 1.5);
      int decided = 0;
      for (std::uint64_t seed = 1; seed <= 6; ++seed) {
        const Case c = layer_case(l, 10, seed);
        if (near_units(c, p).empty()) continue;
        const Verdict v = differential(wrong, c);
        EXPECT_EQ(v.conclusion, Conclusion::fail) << l.target << " seed " << seed << ": " << v.detail;
        if (v.message.find("kink units within rounding is within the bounds (either one-sided derivative at each "
                           "unit, or any between)") != std::string::npos)
          ++decided;
      }
      EXPECT_GT(decided, 0) << l.target << " " << to_string(p);
    }
}

// The adjoint check where a kink stays within rounding at every jittered base point: it probes along
// directions none of the valid gradients differ along, under the unchanged bound
// (checks/adjoint_at_kinks.h). Every mix of sides passes and is decided there, in both half
// formats. A gradient 10 times too large fails there in float16 on most such cases (the bound, not
// the kinks, sets that factor: on 24-node layers it is 0.6–0.85 of a 1.5-fold error's effect in
// float16 and some 20 times it in bfloat16, near a kink or not).
bool adjoint_decided_at_kinks(const Verdict& v) {
  for (const auto& tc : v.comparisons)
    if (tc.reason.find("a kink within rounding leaves a set of valid gradients") != std::string::npos && !tc.inconclusive())
      return true;
  return false;
}

TEST(KinkSet, TheAdjointComparesWithEveryValidGradientWhereAKinkStaysNear) {
  for (const Precision p : {Precision::bfloat16, Precision::float16})
    for (const LayerCase& l : layers_with_one_sided_kinks()) {
      RandomSidesNearKinks correct(p, 1.0), wrong(p, 10.0);
      int decided = 0, caught = 0;
      for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        const Case c = layer_case(l, 24, seed);
        const Verdict v = adjoint(correct, c);
        EXPECT_NE(v.conclusion, Conclusion::fail) << l.target << " " << to_string(p) << " seed " << seed << ": " << v.message;
        if (!adjoint_decided_at_kinks(v)) continue;
        ++decided;
        if (p != Precision::float16) continue;
        const Verdict w = adjoint(wrong, c);
        caught += w.conclusion == Conclusion::fail && adjoint_decided_at_kinks(w);
      }
      EXPECT_GT(decided, 0) << l.target << " " << to_string(p) << ": no base point kept a kink within rounding";
      if (p == Precision::float16) { EXPECT_GE(4 * caught, 3 * decided) << l.target << ": " << caught << " of " << decided; }
    }
}

}  // namespace kink_set_test
}  // namespace gnncheck::checks

namespace gnncheck::checks::kink_set_test {

// How often differential reaches a verdict on every gradient, on layers of a few dozen nodes (24),
// for a correct implementation in TF32, bfloat16 and float16 (RoundedInputs), and how often it did
// before the set: only on cases without a kink unit within rounding. Prints the table recorded in
// docs/campaigns.md; fails on any false alarm, where no case of a layer the set decides gets a
// gradient decided at its kink units, or where the fraction decided is below 90 %.
// GNNCHECK_KINK_SET_CASES cases per (layer, precision) (default 25).
TEST(KinkSet, MostCasesOfAFewDozenNodesAreDecidedAtEveryHalfPrecision) {
  const char* env = std::getenv("GNNCHECK_KINK_SET_CASES");
  const int cases = env ? std::atoi(env) : 25;
  // Beyond the decided layers: kinks the set leaves inconclusive (checks/kink_set.h) — a tie of a max
  // inside a layer, AGNN's floor — measured for the record, held to no false alarm only.
  std::vector<LayerCase> layers = layers_with_one_sided_kinks();
  const std::size_t decided_layers = layers.size();
  layers.push_back({"gin", {{"aggr", std::string("max")}}});
  layers.push_back({"sage", {{"aggr", std::string("max")}}});
  layers.push_back({"sage", {{"aggr", std::string("max")}, {"project", true}}});
  layers.push_back({"agnn", {}});
  fmt::print("| layer | precision | cases | with a kink unit within rounding | every gradient decided, before | after | false alarms |\n");
  for (std::size_t li = 0; li < layers.size(); ++li)
    for (const Precision p : {Precision::tf32, Precision::bfloat16, Precision::float16}) {
      const LayerCase& l = layers[li];
      RoundedInputs system(p);
      int near = 0, before = 0, after = 0, failed = 0, at_kinks = 0;
      for (int seed = 1; seed <= cases; ++seed) {
        const Case c = layer_case(l, 24, static_cast<std::uint64_t>(seed));
        const Verdict v = differential(system, c);
        const std::optional<NearestKink> kink = nearest_kink(c, p);
        const bool has_near = kink && kink->near;
        near += has_near;
        before += !has_near;
        bool every = v.conclusion != Conclusion::inconclusive;
        for (const auto& tc : v.comparisons) every = every && !(tc.is_gradient && tc.inconclusive());
        after += every;
        at_kinks += decided_at_kinks(v);
        if (v.conclusion == Conclusion::fail) {
          ++failed;
          ADD_FAILURE() << l.target << " " << to_string(p) << " seed " << seed << ": " << v.message;
        }
      }
      std::string attrs;
      for (const auto& [name, value] : l.attributes.values()) attrs += fmt::format(" {}={}", name, to_plain_string(value));
      fmt::print("| {}{} | {} | {} | {} | {} % | {} % | {} |\n", l.target, attrs, to_string(p), cases, near,
                 100 * before / cases, 100 * after / cases, failed);
      if (li < decided_layers) { EXPECT_GT(at_kinks, 0) << l.target << attrs << " " << to_string(p); }
      // GINE's x and edge_attr stay inconclusive where both of its sites are near (kink_set.h).
      if (li < decided_layers && l.target != "gine") { EXPECT_GE(10 * after, 9 * cases) << l.target << attrs << " " << to_string(p); }
    }
}

}  // namespace gnncheck::checks::kink_set_test

// The tolerance model for a system that stores in one format and sums in another
// (checks/tolerance.md, "Storage and accumulation"): one format declared twice is the one-format
// model, float32 sums tighten the bound of long sums and keep the stored inputs' share, the range
// rule reads both formats, and a correct half-storage system passes where float16 sums are caught.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/replicas/half_precision.h"
#include "checks/case_transforms.h"
#include "checks/checks.h"
#include "checks/kinks.h"
#include "checks/stored_values.h"
#include "checks/tolerance.h"
#include "core/error.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::checks {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const Graph> small_graph() {
  const std::vector<index_t> dst{0, 0, 0, 1, 2, 2, 5, 5}, src{1, 2, 2, 0, 2, 1, 0, 1};
  return std::make_shared<const Graph>(Graph::from_edges(6, 6, dst, src));
}

// One destination with `edges` copies of one edge: a row (and a column) of many equal-sign terms.
std::shared_ptr<const Graph> parallel_edges(index_t edges) {
  const std::vector<index_t> dst(static_cast<size_t>(edges), 0), src(static_cast<size_t>(edges), 1);
  return std::make_shared<const Graph>(Graph::from_edges(2, 2, dst, src));
}

Case random_case(const std::string& target, std::shared_ptr<const Graph> g, Attributes attrs = {}, std::uint64_t seed = 7) {
  return oracle::make_random_case(oracle::find_target(target), std::move(g), attrs, seed);
}

void expect_same_bounds(const Bounds& a, const Bounds& b) {
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (const auto& [label, t] : a.tensors) EXPECT_EQ(t.values(), b.tensors.at(label).values()) << label;
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.no_bound, b.no_bound);
}

TEST(Accumulation, OneFormatDeclaredAsStorageAndAccumulationIsTheOneFormatModel) {
  const ToleranceModel model;
  for (const std::string target : {"spmm", "spmm_ve", "normalized_spmm", "gspmm", "edge_softmax", "gat", "gcn"}) {
    const Case c = random_case(target, small_graph());
    const Result exact = oracle::evaluate(c, Precision::float64);
    for (Precision p : {Precision::float16, Precision::bfloat16, Precision::float32})
      expect_same_bounds(model.bounds(c, exact, Formats(p, p)), model.bounds(c, exact, p));
  }
}

TEST(Accumulation, AnAccumulationCoarserThanTheStorageIsRefused) {
  const Case c = random_case("spmm", small_graph());
  const Result exact = oracle::evaluate(c, Precision::float64);
  EXPECT_THROW(ToleranceModel().bounds(c, exact, Formats(Precision::float32, Precision::float16)), InternalError);
  EXPECT_THROW(ToleranceModel().bounds(c, exact, Formats(Precision::bfloat16, Precision::float16)), InternalError);
  EXPECT_FALSE(accumulation_fits(Precision::float32, Precision::bfloat16));
  EXPECT_TRUE(accumulation_fits(Precision::float16, Precision::tf32));
  EXPECT_EQ(precision_text(Precision::float16, Precision::float32), "float16 (float32 accumulation)");
  EXPECT_EQ(precision_text(Precision::float16, Precision::float16), "float16");
}

TEST(Accumulation, Float32SumsTightenALongRowsBoundAndKeepTheStoredInputsShare) {
  // spmm on 1000 copies of one edge: y = 1000·x[1]. The float16 bound carries γ_1001(2^-11) ≈ 0.95
  // (capped past n·u = 1/2); float32 sums leave the stored input's and the result's roundings,
  // 2·γ_2(2^-11) ≈ 2·10^-3, plus 2·γ_1000(2^-24).
  const Case c = random_case("spmm", parallel_edges(1000), {{"features", std::int64_t{3}}});
  const Result exact = oracle::evaluate(c, Precision::float64);
  const Bounds half = ToleranceModel().bounds(c, exact, Precision::float16);
  const Bounds mixed = ToleranceModel().bounds(c, exact, Formats(Precision::float16, Precision::float32));
  const Tensor& y = exact.outputs.at("y");
  for (index_t f = 0; f < 3; ++f) {
    const double relative = mixed.tensors.at("output y").at(0, f) / std::abs(y.at(0, f));
    EXPECT_GT(relative, 2 * 2 * std::ldexp(1.0, -11));
    EXPECT_LT(relative, 2 * 3 * std::ldexp(1.0, -11));
    EXPECT_GT(half.tensors.at("output y").at(0, f), 100 * mixed.tensors.at("output y").at(0, f));
  }
  EXPECT_THAT(mixed.model, HasSubstr("u_s = 2^-11, u_a = 2^-24"));
  EXPECT_EQ(mixed.precision, Precision::float16);
  EXPECT_EQ(mixed.accumulation, Precision::float32);
}

TEST(Accumulation, TheHalfKernelPassesWithFloat32SumsAndIsCaughtWithFloat16Sums) {
  // The smallest revealing case of replica 31: a row of equal-sign terms long enough that float16
  // partial sums lose the terms (spacing 0.5 past 512).
  for (const std::string& target : half_kernel_targets()) {
    // Terms of one sign: spmm_ve's and sddmm_dot's edge values vary along the row, and a sum of
    // terms of both signs stays small, its float16 rounding within the bound.
    Case c = random_case(target, parallel_edges(1000), {{"features", std::int64_t{2}}});
    for (TensorMap* m : {&c.inputs, &c.grad_outputs})
      for (auto& [name, t] : *m)
        for (double& v : t.values()) v = std::abs(v);
    auto control = make_half_kernel_system();
    const Verdict right = differential(*control, c);
    EXPECT_EQ(right.conclusion, Conclusion::pass) << target << ": " << right.message;
    EXPECT_THAT(right.message + one_line(right), HasSubstr("float16 (float32 accumulation)"));
    const Result wrong_answer = half_sparse_kernel(c, Precision::float16);
    ASSERT_TRUE(wrong_answer.ok()) << wrong_answer.message;
    const Result exact = oracle::evaluate(c, Precision::float64);
    const Bounds b = ToleranceModel().bounds(c, exact, Formats(Precision::float16, Precision::float32));
    double worst = 0.0;
    for (const auto* m : {&wrong_answer.outputs, &wrong_answer.gradients})
      for (const auto& [name, t] : *m) {
        const std::string label = (m == &wrong_answer.outputs ? "output " : "gradient ") + name;
        const Tensor& e = m == &wrong_answer.outputs ? exact.outputs.at(name) : exact.gradients.at(name);
        for (index_t i = 0; i < t.size(); ++i) worst = std::max(worst, std::abs(t[i] - e[i]) / b.tensors.at(label)[i]);
      }
    EXPECT_GT(worst, 1.0) << target;
  }
}

TEST(Accumulation, AValueTheStorageFormatHoldsIsStoredAsItself) {
  const auto tensor = [](std::vector<double> v) {
    const index_t n = static_cast<index_t>(v.size());
    return Tensor({n}, std::move(v));
  };
  EXPECT_TRUE(held_exactly(tensor({1.5, -2.0, 0.0, 1024.0, 2049.0 - 1.0}), Precision::float16));
  EXPECT_FALSE(held_exactly(tensor({2049.0}), Precision::float16));   // 11 bits past the leading one
  EXPECT_FALSE(held_exactly(tensor({0.1}), Precision::float16));
  EXPECT_FALSE(held_exactly(tensor({65536.0}), Precision::float16));  // past its largest finite value
  EXPECT_TRUE(held_exactly(tensor({65536.0}), Precision::bfloat16));
  // Below the normal range the grid is the smallest subnormal's multiples, not 11 significant bits.
  EXPECT_TRUE(held_exactly(tensor({3 * std::ldexp(1.0, -24)}), Precision::float16));
  EXPECT_FALSE(held_exactly(tensor({3 * std::ldexp(1.0, -26)}), Precision::float16));
  EXPECT_FALSE(held_exactly(tensor({257.0}), Precision::bfloat16));
  EXPECT_TRUE(held_exactly(tensor({0.1}), Precision::float64));

  Case c = random_case("gat", small_graph());
  oracle::round_to_small_integers(c);
  const StoredValues held_values = stored_values(c, Formats(Precision::float16, Precision::float32));
  EXPECT_FALSE(held_values.moves);
  EXPECT_EQ(held_values.moving_tensors, 0.0);
  EXPECT_EQ(held_values.stored_u, 0.0);
  EXPECT_EQ(held_values.floor_format, Precision::float32);
  const StoredValues one_format = stored_values(c, Precision::float16);  // its roundings are the computation's
  EXPECT_TRUE(one_format.moves);
  EXPECT_EQ(one_format.floor_format, Precision::float16);
  const Result exact = oracle::evaluate(c, Precision::float64);
  const Bounds held = ToleranceModel().bounds(c, exact, Formats(Precision::float16, Precision::float32));
  EXPECT_THAT(held.model, HasSubstr("q = 0 stored tensors"));
  c.grad_outputs.begin()->second[0] += 0.1;  // an output gradient float16 does not hold
  const StoredValues moved = stored_values(c, Formats(Precision::float16, Precision::float32));
  EXPECT_TRUE(moved.moves);
  EXPECT_EQ(moved.moving_tensors, 1.0);
  EXPECT_EQ(moved.stored_u, std::ldexp(1.0, -11));
  EXPECT_EQ(moved.floor_format, Precision::float16);
  const Bounds stored = ToleranceModel().bounds(c, oracle::evaluate(c, Precision::float64),
                                                Formats(Precision::float16, Precision::float32));
  EXPECT_THAT(stored.model, HasSubstr("q = 1 stored tensors"));
  // Storing x moves y: with every value held its bound is what float32 sums and the result's
  // rounding leave, and no larger than with a value to store.
  const Tensor& a = held.tensors.at("output y");
  const Tensor& b = stored.tensors.at("output y");
  for (index_t i = 0; i < a.size(); ++i) EXPECT_LE(a[i], b[i]) << i;
}

// The common grid of the half formats (8 significant bits within float16's range): moving a case
// off its kinks keeps each of its values there and moves every one of them, so a case that every
// half format stores exactly still does after the move — and a two-format system's bound stays its
// sums' alone.
TEST(Accumulation, MovingAHeldValueOffItsKinkKeepsItOnEveryHalfGrid) {
  EXPECT_TRUE(held_by_every_half_format(1.5));
  EXPECT_TRUE(held_by_every_half_format(255.0));
  EXPECT_FALSE(held_by_every_half_format(257.0));            // float16 holds it, bfloat16 does not
  EXPECT_FALSE(held_by_every_half_format(3 * std::ldexp(1.0, -26)));  // bfloat16 holds it, float16 not
  EXPECT_FALSE(held_by_every_half_format(0.1));
  EXPECT_EQ(nearest_on_every_half_grid(1.0 + std::ldexp(1.0, -9), 7.0), 1.0);
  EXPECT_EQ(nearest_on_every_half_grid(std::ldexp(1.0, -16), 7.0), 0.0);
  EXPECT_EQ(nearest_on_every_half_grid(1e6, 7.0), 7.0);  // beyond float16's range: the fallback
  for (double v : {0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 1.5, 0.25, std::ldexp(1.0, -14)})
    for (double delta : {1e-6, -1e-6, 1e-3, -1e-3, 0.012, -0.012}) {
      const double moved = moved_on_every_half_grid(v, delta);
      EXPECT_NE(moved, v) << v << " by " << delta;
      EXPECT_TRUE(held_by_every_half_format(moved)) << v << " by " << delta << ": " << moved;
      EXPECT_GT((moved - v) * delta, 0.0) << v << " by " << delta;  // on delta's side
      EXPECT_LE(std::abs(moved - v), std::max(1.5 * std::abs(delta), std::ldexp(std::max(std::abs(v), 1.0), -7)))
          << v << " by " << delta;
    }
  EXPECT_EQ(moved_on_every_half_grid(65504.0, 1.0), 65504.0);  // the grid ends there

  Case c = random_case("gin", small_graph());
  oracle::round_to_small_integers(c);
  const Case moved = jittered(c, 7);
  for (const auto& [name, t] : c.inputs)
    for (index_t i = 0; i < t.size(); ++i) {
      EXPECT_NE(moved.inputs.at(name)[i], t[i]) << name << " " << i;
      EXPECT_TRUE(held_by_every_half_format(moved.inputs.at(name)[i])) << name << " " << i;
    }
  EXPECT_FALSE(stored_values(moved, Formats(Precision::bfloat16, Precision::float32)).moves);
  // Values off the grid move as before, by 1 % of their tensor's RMS.
  const Case uniform = random_case("gin", small_graph());
  const Case moved_uniform = jittered(uniform, 7);
  EXPECT_TRUE(stored_values(moved_uniform, Formats(Precision::bfloat16, Precision::float32)).moves);
}

TEST(Accumulation, ACorrectHalfStorageSystemPassesTheDifferentialCheckOnEveryTarget) {
  for (Precision storage : {Precision::float16, Precision::bfloat16, Precision::tf32}) {
    auto control = make_half_storage_system(storage);
    for (const auto& def : oracle::all_targets()) {
      for (std::uint64_t seed : {3, 4}) {
        const Case c = random_case(def.spec.name, small_graph(), {}, seed);
        const Verdict v = differential(*control, c);
        EXPECT_NE(v.conclusion, Conclusion::fail) << def.spec.name << " in " << to_string(storage) << ": " << v.message;
        EXPECT_NE(v.conclusion, Conclusion::error) << def.spec.name << ": " << v.message;
      }
    }
  }
}

TEST(Accumulation, TheRangeRuleHoldsSumsToTheAccumulationFormatAndValuesToTheStorageFormat) {
  // 1000 terms of 100 that cancel pairwise to 0 stay far inside float32's range: no overflow in
  // the sums, a result of 0 that float16 stores; all in float16, the partial sums may overflow.
  auto g = parallel_edges(1000);
  Case c = random_case("spmm_ve", g, {{"features", std::int64_t{1}}});
  for (index_t e = 0; e < g->num_edges(); ++e) c.inputs.at("edge_values")[e] = e % 2 ? -100.0 : 100.0;
  for (Tensor* t : {&c.inputs.at("x"), &c.grad_outputs.at("y")}) *t = Tensor(t->shape(), 1.0);
  const Result exact = oracle::evaluate(c, Precision::float64);
  EXPECT_THAT(ToleranceModel().bounds(c, exact, Precision::float16).no_bound, HasSubstr("beyond float16's range"));
  EXPECT_EQ(ToleranceModel().bounds(c, exact, Formats(Precision::float16, Precision::float32)).no_bound, "");
  // An input past 65504 is stored as ±∞ whatever the sums are computed in.
  c.inputs.at("x")[0] = 7e4;
  const Result large = oracle::evaluate(c, Precision::float64);
  EXPECT_THAT(ToleranceModel().bounds(c, large, Formats(Precision::float16, Precision::float32)).no_bound,
              HasSubstr("input x reaches 7e+04"));
}

// std's floor: storing a segment of equal values leaves its variance 0, so only the float32 sums can
// move it towards 10⁻⁵. The margin reads how far storing moves the argument (its stored terms),
// not Σ|terms| times float16's rounding, which put every such segment within reach of the floor.
TEST(Accumulation, StoringASegmentOfEqualValuesLeavesItsVarianceAtZero) {
  const std::vector<index_t> dst{0, 0}, src{0, 1};
  Case c = random_case("segment_aggregation", std::make_shared<const Graph>(Graph::from_edges(1, 2, dst, src)),
                       {{"aggr", std::string("std")}, {"features", std::int64_t{1}}});
  c.inputs.at("x") = Tensor({2, 1}, 1.0);
  const Formats mixed(Precision::float16, Precision::float32);
  const std::optional<NearestKink> k = nearest_kink(c, Precision::float32);
  CaseKinks kinks(c);
  const std::optional<NearestKink> stored = nearest_kink(kinks, mixed);
  ASSERT_TRUE(k && stored);
  EXPECT_FALSE(stored->near) << stored->description;
  const oracle::KinkArguments& args = kinks.arguments();
  EXPECT_LT(kink_margin(kinks, 0, mixed), kink_margin(args.terms[0], args.abs_terms[0], mixed) / 100);
  // In bfloat16 too: the second order of storing is 0 on equal values, not a share of mean(x²).
  EXPECT_FALSE(nearest_kink(kinks, Formats(Precision::bfloat16, Precision::float32))->near);
  // Values that differ, one of them not held by float16: storing them moves the variance, and the
  // margin says so.
  c.inputs.at("x").at(1, 0) = 1.0 + 0x1p-9 + 0x1p-20;
  CaseKinks spread(c);
  EXPECT_GT(kink_margin(spread, 0, mixed), std::abs(spread.arguments().offsets[0]));
}

// The same spread of values, each held by the storage format: storing moves nothing, so only the
// float32 sums can move the variance, and a variance of about 10⁻⁶ is clear of the floor. This is
// where a half-grid case jittered from equal values lands (docs/campaigns.md).
TEST(Accumulation, AVarianceOfHeldValuesMovesOnlyByTheSums) {
  const std::vector<index_t> dst{0, 0}, src{0, 1};
  Case c = random_case("segment_aggregation", std::make_shared<const Graph>(Graph::from_edges(1, 2, dst, src)),
                       {{"aggr", std::string("std")}, {"features", std::int64_t{1}}});
  c.inputs.at("x") = Tensor({2, 1}, 0.75);
  c.inputs.at("x").at(1, 0) = 0.75 + 0x1p-8;  // one step of bfloat16's grid apart; var = 2⁻¹⁸
  for (const Precision storage : {Precision::float16, Precision::bfloat16}) {
    CaseKinks held(c);
    const std::optional<NearestKink> k = nearest_kink(held, Formats(storage, Precision::float32));
    ASSERT_TRUE(k);
    EXPECT_FALSE(k->near) << k->description;
    EXPECT_LT(k->margin, 3e-6);
  }
  // One value off the storage format's grid: storing may move the variance by its first order.
  c.inputs.at("x").at(1, 0) = 0.75 + 0x1p-8 + 0x1p-20;
  CaseKinks moving(c);
  EXPECT_TRUE(nearest_kink(moving, Formats(Precision::bfloat16, Precision::float32))->near);
  // One format: the whole computation rounds in bfloat16, held inputs or not.
  CaseKinks one_format(c);
  EXPECT_TRUE(nearest_kink(one_format, Formats(Precision::bfloat16))->near);
}

TEST(Accumulation, AKinksMarginKeepsTheStoredFactorsRoundingAndSumsInTheAccumulationFormat) {
  const double n = 40.0, terms = 3.0;
  const double half = kink_margin(n, terms, Formats(Precision::float16));
  EXPECT_EQ(half, 2 * gamma(n, std::ldexp(1.0, -11)) * terms);
  const double mixed = kink_margin(n, terms, Formats(Precision::float16, Precision::float32));
  EXPECT_LT(mixed, half);
  EXPECT_GT(mixed, 2 * gamma(kKinkFactors, std::ldexp(1.0, -11)) * terms);
}

}  // namespace
}  // namespace gnncheck::checks

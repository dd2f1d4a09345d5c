// Hand-computed golden cases for every oracle op. Each expected number is written out so a reader
// can re-derive it; the comment above each test says what the case is for.
#include <algorithm>
#include <cmath>

#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/degree_norm.h"
#include "core/error.h"
#include "oracle/edge_softmax.h"
#include "oracle/eshuffle.h"
#include "oracle/sddmm.h"
#include "oracle/segment_mm.h"
#include "oracle/spmm.h"
#include "oracle/spmm_ve.h"
#include "oracle/targets.h"

namespace gnncheck::oracle {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::Pointwise;

// The workhorse graph: 3 destinations × 4 sources (non-square, A ≠ Aᵀ), with a duplicate edge
// (0 <- 2 twice), an empty row (destination 1) and an isolated source (3).
//   edge id:   0       1       2       3       4
//   (dst,src): (0,2)   (0,1)   (0,2)   (2,0)   (2,2)
//   in-degree  [3, 0, 2];  out-degree [1, 1, 3, 0];  edge_perm (CSC -> edge id) = [3, 1, 0, 2, 4]
Graph workhorse() {
  const std::vector<index_t> dst = {0, 0, 0, 2, 2};
  const std::vector<index_t> src = {2, 1, 2, 0, 2};
  return Graph::from_edges(3, 4, dst, src);
}

// A directed chain 0 <- 1 <- 2: A is strictly upper triangular, Aᵀ strictly lower.
Graph chain() {
  const std::vector<index_t> dst = {0, 1};
  const std::vector<index_t> src = {1, 2};
  return Graph::from_edges(3, 3, dst, src);
}

Tensor column(std::vector<double> values) {
  const index_t n = static_cast<index_t>(values.size());
  return Tensor({n, 1}, std::move(values));
}

// Sum of neighbors with values 1, 10, 100, 1000 so each output digit names the sources it summed;
// the duplicate edge counts twice and the empty row gives 0.
TEST(OpsGolden, SpmmForwardCountsDuplicatesAndLeavesEmptyRowZero) {
  const Tensor y = spmm_forward(workhorse(), column({1, 10, 100, 1000}));
  EXPECT_EQ(y.shape(), (std::vector<index_t>{3, 1}));
  EXPECT_THAT(y.values(), ElementsAre(210, 0, 101));  // 100+10+100, nothing, 1+100
}

// The backward is Aᵀ·grad_y: source 2 receives from both copies of (0,2) and from (2,2); the
// isolated source 3 gets nothing.
TEST(OpsGolden, SpmmBackwardIsTransposedProduct) {
  const Tensor gx = spmm_backward(workhorse(), column({1, 10, 100}));
  EXPECT_EQ(gx.shape(), (std::vector<index_t>{4, 1}));
  EXPECT_THAT(gx.values(), ElementsAre(100, 1, 102, 0));
  EXPECT_EQ(spmm_transposed_forward(workhorse(), column({1, 10, 100})), gx);
  EXPECT_EQ(spmm_transposed_backward(workhorse(), column({1, 10, 100, 1000})),
            spmm_forward(workhorse(), column({1, 10, 100, 1000})));
}

// The bug this project exists for: a backward that multiplies by A instead of Aᵀ. On a symmetric
// graph the two agree; on the chain they do not, so the expected numbers below reject it.
TEST(OpsGolden, SpmmBackwardUsingAInsteadOfATransposeIsRejected) {
  const Graph g = chain();
  const Tensor grad_y = column({1, 2, 3});
  const Tensor gx = spmm_backward(g, grad_y);
  EXPECT_THAT(gx.values(), ElementsAre(0, 1, 2));                   // Aᵀ·[1,2,3]
  EXPECT_THAT(spmm_forward(g, grad_y).values(), ElementsAre(2, 3, 0));  // A·[1,2,3]: the wrong answer
  EXPECT_NE(spmm_forward(g, grad_y), gx);
}

// Two heads with different signs (H = 2, C = 1), so mixing up heads changes every number.
TEST(OpsGolden, SpmmVeMultiHeadForwardAndBackward) {
  const Graph g = workhorse();
  const Tensor w({5, 2}, {1, -1, 2, -2, 3, -3, 4, -4, 5, -5});
  const Tensor x({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor y = spmm_ve_forward(g, w, x);
  // Row 0: 1·5 + 2·3 + 3·5 = 26 and −6 − 8 − 18 = −32; row 2: 4·1 + 5·5 = 29 and −4·2 − 5·6 = −38.
  EXPECT_THAT(y.values(), ElementsAre(26, -32, 0, 0, 29, -38));
  const Tensor gy({3, 2}, {1, 1, 0, 0, 2, -1});
  const auto grads = spmm_ve_backward(g, w, x, gy);
  // grad_w[e,h] = gy[row_e,h] · x[col_e,h].
  EXPECT_THAT(grads.grad_edge_values.values(), ElementsAre(5, 6, 3, 4, 5, 6, 2, -2, 10, -6));
  // grad_x[j,h] = Σ_{col_e = j} w[e,h] · gy[row_e,h]: column 2 sums 1·1 + 3·1 + 5·2 and −1 − 3 + 5.
  EXPECT_THAT(grads.grad_x.values(), ElementsAre(8, 4, 2, -2, 14, 1, 0, 0));
}

// The transposed edge-weighted product with one head given as an [E] edge tensor.
TEST(OpsGolden, SpmmVeTransposedForwardAndBackward) {
  const Graph g = workhorse();
  const Tensor w({5}, {1, 2, 3, 4, 5});
  const Tensor y = column({1, 2, 3});
  EXPECT_THAT(spmm_ve_transposed_forward(g, w, y).values(), ElementsAre(12, 2, 19, 0));  // 4·3; 2·1; 1+3+5·3
  const auto grads = spmm_ve_transposed_backward(g, w, y, column({1, 2, 3, 4}));
  EXPECT_THAT(grads.grad_edge_values.values(), ElementsAre(3, 2, 3, 3, 9));  // y[row_e] · gz[col_e]
  EXPECT_THAT(grads.grad_y.values(), ElementsAre(16, 0, 19));               // 1·3+2·2+3·3; -; 4·1+5·3
}

// Dot products per head (H = 2, C = 2): the heads read disjoint halves of each row.
TEST(OpsGolden, SddmmDotMultiHeadForwardAndBackward) {
  const Graph g = workhorse();
  const Tensor u({3, 4}, {1, 2, 3, 4, 0, 0, 0, 0, 1, 0, 0, 1});
  const Tensor v({4, 4}, {0, 1, 1, 0, 1, 1, 1, 1, 2, 1, 1, 2, 3, 1, 1, 3});
  EXPECT_THAT(sddmm_dot_forward(g, u, v, 2).values(), ElementsAre(4, 11, 3, 7, 4, 11, 0, 0, 2, 2));
  const Tensor ge({5, 2}, {1, 0, 0, 1, 1, 0, 1, 1, 0, 0});
  const auto grads = sddmm_dot_backward(g, u, v, 2, ge);
  EXPECT_THAT(grads.grad_u.values(), ElementsAre(4, 2, 1, 1, 0, 0, 0, 0, 0, 1, 1, 0));
  EXPECT_THAT(grads.grad_v.values(), ElementsAre(1, 0, 0, 1, 0, 0, 3, 4, 2, 4, 0, 0, 0, 0, 0, 0));
}

// GAT's logits a[dst] + b[src]; backward sums edge gradients per row (a) and per column (b).
TEST(OpsGolden, SddmmAddForwardAndBackward) {
  const Graph g = workhorse();
  EXPECT_THAT(sddmm_add_forward(g, column({1, 2, 3}), column({10, 20, 30, 40})).values(),
              ElementsAre(31, 21, 31, 13, 33));
  const auto grads = sddmm_add_backward(g, column({1, 2, 3, 4, 5}));
  EXPECT_THAT(grads.grad_u.values(), ElementsAre(6, 0, 9));
  EXPECT_THAT(grads.grad_v.values(), ElementsAre(4, 2, 9, 0));
}

// Row 0 has logits 0, ln 2, 0 (probabilities 1/4, 1/2, 1/4); row 2 has two logits of 1000, which
// overflow exp() without max subtraction. Head 1 repeats with logits shifted by −2000 (ln 2 − 2000
// is rounded to a multiple of 2^-42 ≈ 2.3e-13, hence the 1e-12 tolerance).
TEST(OpsGolden, EdgeSoftmaxIsStableForLargeLogitsAndPerHead) {
  const Graph g = workhorse();
  const double ln2 = std::log(2.0);
  const Tensor logits({5, 2}, {0, -2000, ln2, ln2 - 2000, 0, -2000, 1000, -1000, 1000, -1000});
  const Tensor alpha = edge_softmax_forward(g, logits);
  EXPECT_THAT(alpha.values(), Pointwise(DoubleNear(1e-12), std::vector<double>{0.25, 0.25, 0.5, 0.5, 0.25, 0.25,
                                                                                0.5, 0.5, 0.5, 0.5}));
  // grad_s = alpha · (grad_alpha − Σ alpha·grad_alpha): row 0 has Σ = 0.25, row 2 has Σ = 2.
  const Tensor ga({5, 2}, {1, 1, 0, 0, 0, 0, 1, 1, 3, 3});
  const Tensor gs = edge_softmax_backward(g, alpha, ga);
  EXPECT_THAT(gs.values(), Pointwise(DoubleNear(1e-12), std::vector<double>{0.1875, 0.1875, -0.125, -0.125, -0.0625,
                                                                             -0.0625, -0.5, -0.5, 0.5, 0.5}));
}

// Row 0 has the edges 0←1 (twice) and 0←2, logits 0.5, 0.25 and 1. Coalesced (torch.sparse.softmax)
// the duplicates are one entry of logit 0.75 whose alpha both carry: 1/(1 + e^0.25) and e^0.25/(1 +
// e^0.25); separate, three entries. Backward with grad_alpha 1, 2, 5: the entry's ḡ is 1 + 2 = 3,
// Σ α·ḡ = 3·α₁ + 5·α₂, and both duplicates get α₁·(3 − Σ).
TEST(OpsGolden, EdgeSoftmaxCoalescesDuplicateEdgesAsTorchSparseSoftmaxDoes) {
  const Graph g = Graph::from_edges(1, 3, std::vector<index_t>{0, 0, 0}, std::vector<index_t>{1, 1, 2});
  const Tensor logits({3, 1}, {0.5, 0.25, 1.0});
  const double a1 = 1.0 / (1.0 + std::exp(0.25)), a2 = 1.0 - a1;
  const Tensor alpha = edge_softmax_forward(g, logits, DuplicateEdges::coalesced);
  EXPECT_THAT(alpha.values(), Pointwise(DoubleNear(1e-15), std::vector<double>{a1, a1, a2}));
  const Tensor ga({3, 1}, {1.0, 2.0, 5.0});
  const double weighted = 3.0 * a1 + 5.0 * a2;
  EXPECT_THAT(edge_softmax_backward(g, alpha, ga, DuplicateEdges::coalesced).values(),
              Pointwise(DoubleNear(1e-15), std::vector<double>{a1 * (3.0 - weighted), a1 * (3.0 - weighted),
                                                                a2 * (5.0 - weighted)}));
  // Separate entries give another answer on the same row: the convention matters.
  const Tensor separate = edge_softmax_forward(g, logits);
  EXPECT_GT(std::abs(separate[0] - alpha[0]), 0.05);
  EXPECT_THAT(duplicate_leaders(g), ElementsAre(0, 0, 2));
  EXPECT_THROW(parse_duplicate_edges("merged"), InputError);
}

// eShuffle gathers whole rows into CSC order (edge_perm = [3, 1, 0, 2, 4]); the inverse undoes it,
// and each one's backward is the other.
TEST(OpsGolden, EshuffleMovesWholeRowsIntoCscOrder) {
  const Graph g = workhorse();
  const Tensor x({5, 2}, {10, 11, 20, 21, 30, 31, 40, 41, 50, 51});
  const Tensor shuffled = eshuffle_forward(g, x);
  EXPECT_THAT(shuffled.values(), ElementsAre(40, 41, 20, 21, 10, 11, 30, 31, 50, 51));
  EXPECT_EQ(eshuffle_inverse_forward(g, shuffled), x);
  EXPECT_EQ(eshuffle_backward(g, shuffled), x);
  EXPECT_EQ(eshuffle_inverse_backward(g, x), shuffled);
}

// In- and out-degrees differ on every edge of the workhorse, so swapping D_dst and D_src, or
// using the wrong power, changes these numbers.
TEST(OpsGolden, DegreeNormEdgeValues) {
  const Graph g = workhorse();
  EXPECT_THAT(degree_norm_edge_values<double>(g, DegreeNorm::symmetric).values(),
              Pointwise(DoubleNear(1e-16), std::vector<double>{1.0 / 3, 1 / std::sqrt(3.0), 1.0 / 3,
                                                               1 / std::sqrt(2.0), 1 / std::sqrt(6.0)}));
  EXPECT_THAT(degree_norm_edge_values<double>(g, DegreeNorm::row_mean).values(),
              Pointwise(DoubleNear(1e-16), std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3, 0.5, 0.5}));
}

// source_degree = in on the workhorse: source j's own in-degree [3, 0, 2] for j < 3, 0 for source 3.
// Edge (0,1): source 1 has in-degree 0 → 0; (2,2): 1/√(2·2); (0,2): 1/√(3·2); (2,0): 1/√(2·3).
TEST(OpsGolden, DegreeNormEdgeValuesWithSourceInDegree) {
  const Graph g = workhorse();
  EXPECT_THAT(degree_norm_edge_values<double>(g, DegreeNorm::symmetric, SourceDegree::in).values(),
              Pointwise(DoubleNear(1e-16), std::vector<double>{1 / std::sqrt(6.0), 0.0, 1 / std::sqrt(6.0),
                                                               1 / std::sqrt(6.0), 0.5}));
  // row_mean has no source factor: the convention changes nothing.
  EXPECT_EQ(degree_norm_edge_values<double>(g, DegreeNorm::row_mean, SourceDegree::in),
            degree_norm_edge_values<double>(g, DegreeNorm::row_mean, SourceDegree::out));
  // Backward Âᵀ·ḡ with those values: column 0 gets 100/√6 (row 2), column 2 gets 2/√6 + 100/2.
  EXPECT_THAT(normalized_spmm_backward(g, DegreeNorm::symmetric, column({1, 10, 100}), SourceDegree::in).values(),
              Pointwise(DoubleNear(1e-13), std::vector<double>{100 / std::sqrt(6.0), 0, 2 / std::sqrt(6.0) + 50, 0}));
}

// zero_degree = one (GNNAdvisor): source 1's in-degree 0 is taken as 1, so edge (0,1) gets
// 1/√(3·1) instead of 0; every other edge's source has a positive degree and keeps its value.
// Source 3 (j ≥ n_dst) has no edge here. With source_degree = out no source of an edge has degree 0.
TEST(OpsGolden, DegreeNormEdgeValuesWithAZeroSourceDegreeTakenAsOne) {
  const Graph g = workhorse();
  EXPECT_THAT(degree_norm_edge_values<double>(g, DegreeNorm::symmetric, SourceDegree::in, ZeroDegree::one).values(),
              Pointwise(DoubleNear(1e-16), std::vector<double>{1 / std::sqrt(6.0), 1 / std::sqrt(3.0), 1 / std::sqrt(6.0),
                                                               1 / std::sqrt(6.0), 0.5}));
  EXPECT_EQ(degree_norm_edge_values<double>(g, DegreeNorm::symmetric, SourceDegree::out, ZeroDegree::one),
            degree_norm_edge_values<double>(g, DegreeNorm::symmetric, SourceDegree::out, ZeroDegree::zero));
  EXPECT_THAT(normalized_spmm_backward(g, DegreeNorm::symmetric, column({1, 10, 100}), SourceDegree::in, ZeroDegree::one).values(),
              Pointwise(DoubleNear(1e-13),
                        std::vector<double>{100 / std::sqrt(6.0), 1 / std::sqrt(3.0), 2 / std::sqrt(6.0) + 50, 0}));
}

TEST(OpsGolden, NormalizedSpmmForwardAndBackward) {
  const Graph g = workhorse();
  const Tensor x = column({1, 10, 100, 1000});
  EXPECT_THAT(normalized_spmm_forward(g, DegreeNorm::symmetric, x).values(),
              Pointwise(DoubleNear(1e-13), std::vector<double>{200.0 / 3 + 10 / std::sqrt(3.0), 0,
                                                               1 / std::sqrt(2.0) + 100 / std::sqrt(6.0)}));
  EXPECT_THAT(normalized_spmm_forward(g, DegreeNorm::row_mean, x).values(),
              Pointwise(DoubleNear(1e-13), std::vector<double>{70, 0, 50.5}));
  // Row-mean backward Aᵀ·D_dst^-1·grad_y: column 2 gets 1/3 + 1/3 (row 0) + 100/2 (row 2).
  EXPECT_THAT(normalized_spmm_backward(g, DegreeNorm::row_mean, column({1, 10, 100})).values(),
              Pointwise(DoubleNear(1e-13), std::vector<double>{50, 1.0 / 3, 2.0 / 3 + 50, 0}));
  // Symmetric backward D_src^-½·Aᵀ·D_dst^-½·grad_y.
  EXPECT_THAT(normalized_spmm_backward(g, DegreeNorm::symmetric, column({1, 10, 100})).values(),
              Pointwise(DoubleNear(1e-13), std::vector<double>{100 / std::sqrt(2.0), 1 / std::sqrt(3.0),
                                                               2.0 / 3 + 100 / std::sqrt(6.0), 0}));
}

// The same golden numbers through the catalogue (names, shapes, attributes), in float64 and float32.
TEST(OpsGolden, CatalogueEvaluatesSpmmVeByName) {
  Case c;
  c.target = "spmm_ve";
  c.attributes = {{"heads", std::int64_t{2}}, {"features", std::int64_t{1}}};
  c.graph = std::make_shared<const Graph>(workhorse());
  c.inputs["edge_values"] = Tensor({5, 2}, {1, -1, 2, -2, 3, -3, 4, -4, 5, -5});
  c.inputs["x"] = Tensor({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  c.grad_outputs["y"] = Tensor({3, 2}, {1, 1, 0, 0, 2, -1});
  for (Precision p : {Precision::float64, Precision::float32}) {
    const Result r = evaluate(c, p);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_THAT(r.outputs.at("y").values(), ElementsAre(26, -32, 0, 0, 29, -38));
    EXPECT_THAT(r.gradients.at("edge_values").values(), ElementsAre(5, 6, 3, 4, 5, 6, 2, -2, 10, -6));
    EXPECT_THAT(r.gradients.at("x").values(), ElementsAre(8, 4, 2, -2, 14, 1, 0, 0));
  }
}

// gspmm by hand on 3 destinations and 2 sources, edges 0←0, 0←1, 2←1 (row 1 empty), u [2, 2], e one
// value per edge: mul with max (edge 1 wins both columns of row 0) and sub with mean.
TEST(OpsGolden, GspmmMulMaxAndSubMeanByHand) {
  const std::vector<index_t> dst = {0, 0, 2}, src = {0, 1, 1};
  auto g = std::make_shared<const Graph>(Graph::from_edges(3, 2, dst, src));
  Case c;
  c.target = "gspmm";
  c.graph = g;
  c.inputs["u"] = Tensor({2, 2}, {1, -2, 3, 4});
  c.inputs["e"] = Tensor({3, 1}, {2, 5, -1});
  c.grad_outputs["y"] = Tensor({3, 2}, {1, 2, 3, 4, 5, 6});
  c.attributes = {{"message", std::string("mul")}, {"reduce", std::string("max")}, {"features", std::int64_t{2}}};
  for (Precision p : {Precision::float64, Precision::float32}) {
    const Result r = evaluate(c, p);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_THAT(r.outputs.at("y").values(), ElementsAre(15, 20, 0, 0, -3, -4));
    EXPECT_THAT(r.gradients.at("u").values(), ElementsAre(0, 0, 0, 4));
    EXPECT_THAT(r.gradients.at("e").values(), ElementsAre(0, 11, 39));
  }
  c.attributes = {{"message", std::string("sub")}, {"reduce", std::string("mean")}, {"features", std::int64_t{2}},
                  {"e_broadcast", std::string("both")}};
  const Result r = evaluate(c);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_THAT(r.outputs.at("y").values(), ElementsAre(-1.5, -2.5, 0, 0, 4, 5));
  EXPECT_THAT(r.gradients.at("u").values(), ElementsAre(0.5, 1, 5.5, 7));
  EXPECT_THAT(r.gradients.at("e").values(), ElementsAre(-1.5, -1.5, -11));
  // copy_u reads no e; identity on the empty row.
  c.inputs.erase("e");
  c.attributes = {{"reduce", std::string("min")}, {"empty_rows", std::string("identity")}, {"features", std::int64_t{2}}};
  const Result m = evaluate(c);
  ASSERT_TRUE(m.ok()) << m.message;
  EXPECT_THAT(m.outputs.at("y").values(), ElementsAre(1, -2, INFINITY, INFINITY, 3, 4));
  EXPECT_EQ(m.gradients.count("e"), 0u);
}

// segment_reduce by hand: segments of lengths 3, 0 and 1 (rows 0, 1, 2 of edges 0←0, 0←1, 0←1, 2←0)
// over x [4, 2]; the max of segment 0's first column ties (rows 0 and 2): the first gets it all.
TEST(OpsGolden, SegmentReduceByHand) {
  const std::vector<index_t> dst = {0, 0, 0, 2}, src = {0, 1, 1, 0};
  auto g = std::make_shared<const Graph>(Graph::from_edges(3, 2, dst, src));
  Case c;
  c.target = "segment_reduce";
  c.graph = g;
  c.inputs["x"] = Tensor({4, 2}, {3, -1, 1, 4, 3, 2, -5, 6});
  c.grad_outputs["y"] = Tensor({3, 2}, {1, 2, 3, 4, 5, 6});
  c.attributes = {{"reduce", std::string("max")}, {"features", std::int64_t{2}}};
  for (Precision p : {Precision::float64, Precision::float32}) {
    const Result r = evaluate(c, p);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_THAT(r.outputs.at("y").values(), ElementsAre(3, 4, 0, 0, -5, 6));
    EXPECT_THAT(r.gradients.at("x").values(), ElementsAre(1, 0, 0, 2, 0, 0, 5, 6));
  }
  c.attributes = {{"reduce", std::string("mean")}, {"features", std::int64_t{2}}};
  const Result mean = evaluate(c);
  ASSERT_TRUE(mean.ok()) << mean.message;
  EXPECT_THAT(mean.outputs.at("y").values(), ElementsAre(7.0 / 3, 5.0 / 3, 0, 0, -5, 6));
  EXPECT_THAT(mean.gradients.at("x").values(), ElementsAre(1.0 / 3, 2.0 / 3, 1.0 / 3, 2.0 / 3, 1.0 / 3, 2.0 / 3, 5, 6));
  c.attributes = {{"reduce", std::string("min")}, {"empty_rows", std::string("identity")}, {"features", std::int64_t{2}}};
  const Result min = evaluate(c);
  ASSERT_TRUE(min.ok()) << min.message;
  EXPECT_THAT(min.outputs.at("y").values(), ElementsAre(1, -1, INFINITY, INFINITY, -5, 6));
}

// segment_aggregation by hand on segment_reduce's segments (lengths 3, 0 and 1) and x:
// var: 19/3 − (7/3)² = 8/9 and 7 − (5/3)² = 38/9, 0 on the
// empty and the single-row segment; grad (2/n)·(x − mean)·g. softmax at t = 0 is the mean, its x
// gradient g/n, and its t gradient Σ g·Σ α·x·(x − y) = Σ g·var = 1·8/9 + 2·38/9 = 84/9.
TEST(OpsGolden, SegmentAggregationByHand) {
  const std::vector<index_t> dst = {0, 0, 0, 2}, src = {0, 1, 1, 0};
  Case c;
  c.target = "segment_aggregation";
  c.graph = std::make_shared<const Graph>(Graph::from_edges(3, 2, dst, src));
  c.inputs["x"] = Tensor({4, 2}, {3, -1, 1, 4, 3, 2, -5, 6});
  c.grad_outputs["y"] = Tensor({3, 2}, {1, 2, 3, 4, 5, 6});
  const auto near = [](std::vector<double> v, double tol) {
    std::vector<::testing::Matcher<double>> m;
    for (double x : v) m.push_back(::testing::DoubleNear(x, tol));
    return ElementsAreArray(m);
  };
  for (Precision p : {Precision::float64, Precision::float32}) {
    const double tol = p == Precision::float64 ? 1e-14 : 1e-5;
    c.attributes = {{"aggr", std::string("var")}, {"features", std::int64_t{2}}};
    const Result var = evaluate(c, p);
    ASSERT_TRUE(var.ok()) << var.message;
    EXPECT_THAT(var.outputs.at("y").values(), near({8.0 / 9, 38.0 / 9, 0, 0, 0, 0}, tol));
    EXPECT_THAT(var.gradients.at("x").values(),
                near({4.0 / 9, -32.0 / 9, -8.0 / 9, 28.0 / 9, 4.0 / 9, 4.0 / 9, 0, 0}, tol));
    c.attributes = {{"aggr", std::string("softmax")}, {"features", std::int64_t{2}}};
    c.parameters["t"] = Tensor({1}, {0.0});
    const Result softmax = evaluate(c, p);
    c.parameters.clear();
    ASSERT_TRUE(softmax.ok()) << softmax.message;
    EXPECT_THAT(softmax.outputs.at("y").values(), near({7.0 / 3, 5.0 / 3, 0, 0, -5, 6}, tol));
    EXPECT_THAT(softmax.gradients.at("x").values(), near({1.0 / 3, 2.0 / 3, 1.0 / 3, 2.0 / 3, 1.0 / 3, 2.0 / 3, 5, 6}, tol));
    EXPECT_THAT(softmax.gradients.at("t").values(), near({84.0 / 9}, tol * 10));
  }
  // softmax without its temperature is refused by name.
  c.attributes = {{"aggr", std::string("softmax")}, {"features", std::int64_t{2}}};
  const Result missing = evaluate(c);
  EXPECT_EQ(missing.status, Status::error);
  EXPECT_THAT(missing.message, ::testing::HasSubstr("'t'"));
}

// std and mul by hand on the same segments: std = √var where var > 1e-5 (√(8/9) = 2√2/3, √(38/9)),
// 0 on the empty and the single-row segment, its gradient g·(x − mean)/(n·std); mul 3·1·3 = 9 and
// (−1)·4·2 = −8, 1 on the empty segment, its gradient g·Π of the others.
TEST(OpsGolden, SegmentAggregationStdAndMulByHand) {
  const std::vector<index_t> dst = {0, 0, 0, 2}, src = {0, 1, 1, 0};
  Case c;
  c.target = "segment_aggregation";
  c.graph = std::make_shared<const Graph>(Graph::from_edges(3, 2, dst, src));
  c.inputs["x"] = Tensor({4, 2}, {3, -1, 1, 4, 3, 2, -5, 6});
  c.grad_outputs["y"] = Tensor({3, 2}, {1, 2, 3, 4, 5, 6});
  const auto near = [](std::vector<double> v, double tol) {
    std::vector<::testing::Matcher<double>> m;
    for (double x : v) m.push_back(::testing::DoubleNear(x, tol));
    return ElementsAreArray(m);
  };
  const double r2 = std::sqrt(2.0), r38 = std::sqrt(38.0);
  for (Precision p : {Precision::float64, Precision::float32}) {
    const double tol = p == Precision::float64 ? 1e-14 : 1e-5;
    c.attributes = {{"aggr", std::string("std")}, {"features", std::int64_t{2}}};
    const Result sd = evaluate(c, p);
    ASSERT_TRUE(sd.ok()) << sd.message;
    EXPECT_THAT(sd.outputs.at("y").values(), near({2 * r2 / 3, r38 / 3, 0, 0, 0, 0}, tol));
    EXPECT_THAT(sd.gradients.at("x").values(), near({1 / (3 * r2), -16 / (3 * r38), -2 / (3 * r2), 14 / (3 * r38),
                                                     1 / (3 * r2), 2 / (3 * r38), 0, 0},
                                                    tol));
    c.attributes = {{"aggr", std::string("mul")}, {"features", std::int64_t{2}}};
    const Result mul = evaluate(c, p);
    ASSERT_TRUE(mul.ok()) << mul.message;
    EXPECT_THAT(mul.outputs.at("y").values(), ElementsAre(9, -8, 1, 1, -5, 6));
    EXPECT_THAT(mul.gradients.at("x").values(), ElementsAre(3, 16, 9, -4, 3, -8, 5, 6));
  }
}

// mul with zeros: one zero in column 0 (its gradient there is the product of the others, 2·3, and 0
// elsewhere), two in column 1 (0 everywhere); y/x[k] would give NaN, ±∞ or 0 instead, which the
// known-wrong variant reproduces.
TEST(OpsGolden, SegmentMulGradientIsExactWithZerosInTheSegment) {
  const std::vector<index_t> ends = {0, 0, 0};
  Case c;
  c.target = "segment_aggregation";
  c.graph = std::make_shared<const Graph>(Graph::from_edges(1, 1, ends, ends));
  c.inputs["x"] = Tensor({3, 2}, {0, 0, 2, 2, 3, 0});
  c.grad_outputs["y"] = Tensor({1, 2}, {1, 1});
  c.attributes = {{"aggr", std::string("mul")}, {"features", std::int64_t{2}}};
  for (Precision p : {Precision::float64, Precision::float32}) {
    const Result r = evaluate(c, p);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_THAT(r.outputs.at("y").values(), ElementsAre(0, 0));
    EXPECT_THAT(r.gradients.at("x").values(), ElementsAre(6, 0, 0, 0, 0, 0));
  }
  const TargetDef& def = find_target("segment_aggregation");
  const auto variant = std::find_if(def.wrong_variants.begin(), def.wrong_variants.end(),
                                    [](const WrongVariant& v) { return v.name == "mul_gradient_by_division"; });
  ASSERT_NE(variant, def.wrong_variants.end());
  const std::optional<Result> wrong = variant->evaluate(c, {});
  ASSERT_TRUE(wrong.has_value());
  EXPECT_TRUE(std::isnan(wrong->gradients.at("x")[0]));  // 0·1/0
  EXPECT_EQ(wrong->gradients.at("x")[2], 0.0);           // y = 0 where Π of the others is 0 too: agrees here
}

// std at PyG's floor: var = 2.5e-7 ≤ 1e-5 gives 0 and no gradient; var = 2.5e-5 gives 0.005 and
// the gradient ±g·0.005/(2·0.005) = ±0.5. The known-wrong variant without 1/(2·std) gives ±0.005.
TEST(OpsGolden, SegmentStdIsZeroAtOrBelowPygsVarianceFloor) {
  const std::vector<index_t> ends = {0, 0};
  Case c;
  c.target = "segment_aggregation";
  c.graph = std::make_shared<const Graph>(Graph::from_edges(1, 1, ends, ends));
  c.inputs["x"] = Tensor({2, 2}, {1, 1, 1.001, 1.01});
  c.grad_outputs["y"] = Tensor({1, 2}, {1, 1});
  c.attributes = {{"aggr", std::string("std")}, {"features", std::int64_t{2}}};
  const Result r = evaluate(c);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.outputs.at("y")[0], 0.0);
  EXPECT_NEAR(r.outputs.at("y")[1], 0.005, 1e-12);
  EXPECT_THAT(r.gradients.at("x").values(),
              ElementsAre(0, ::testing::DoubleNear(-0.5, 1e-9), 0, ::testing::DoubleNear(0.5, 1e-9)));
  const TargetDef& def = find_target("segment_aggregation");
  const auto variant = std::find_if(def.wrong_variants.begin(), def.wrong_variants.end(),
                                    [](const WrongVariant& v) { return v.name == "std_gradient_without_sqrt_factor"; });
  ASSERT_NE(variant, def.wrong_variants.end());
  const std::optional<Result> wrong = variant->evaluate(c, {});
  ASSERT_TRUE(wrong.has_value());
  EXPECT_NEAR(wrong->gradients.at("x")[3], 0.005, 1e-9);
  // The variance is a kink argument: 1e-5 away from it on column 0, 1.5e-5 on column 1.
  const KinkArguments k = kink_arguments(c);
  ASSERT_EQ(k.offsets.size(), 2u);
  EXPECT_NEAR(k.offsets[0], 2.5e-7 - 1e-5, 1e-12);
  EXPECT_NEAR(k.offsets[1], 2.5e-5 - 1e-5, 1e-12);
}

// gsddmm by hand on the graph of the gspmm case (edges 0←0, 0←1, 2←1): the attention score u·v, a
// division of an edge operand broadcast over both axes by a source operand, a difference of two
// source operands (the same side) and a copy of the destination operand.
TEST(OpsGolden, GsddmmDotDivSameSideAndCopyByHand) {
  const std::vector<index_t> dst = {0, 0, 2}, src = {0, 1, 1};
  Case c;
  c.target = "gsddmm";
  c.graph = std::make_shared<const Graph>(Graph::from_edges(3, 2, dst, src));
  c.attributes = {{"features", std::int64_t{2}}};  // op dot, lhs u, rhs v
  c.inputs["lhs_u"] = Tensor({2, 2}, {1, -2, 3, 4});
  c.inputs["rhs_v"] = Tensor({3, 2}, {2, 1, 5, 5, -1, 3});
  c.grad_outputs["out"] = Tensor({3, 1}, {1, 2, 3});
  for (Precision p : {Precision::float64, Precision::float32}) {
    const Result r = evaluate(c, p);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_THAT(r.outputs.at("out").values(), ElementsAre(0, 10, 9));
    EXPECT_THAT(r.gradients.at("lhs_u").values(), ElementsAre(2, 1, 1, 11));
    EXPECT_THAT(r.gradients.at("rhs_v").values(), ElementsAre(7, 6, 0, 0, 9, 12));  // row 1 is empty
  }
  // out[k, h] = lhs_e[k] / rhs_u[col_k, h]: heads 2 of 1 feature, lhs one value per edge.
  c.attributes = {{"op", std::string("div")}, {"lhs", std::string("e")}, {"rhs", std::string("u")},
                  {"lhs_broadcast", std::string("both")}, {"heads", std::int64_t{2}}, {"features", std::int64_t{1}}};
  c.inputs = {{"lhs_e", Tensor({3, 1}, {2, 6, -3})}, {"rhs_u", Tensor({2, 2}, {1, -2, 4, 0.5})}};
  c.grad_outputs["out"] = Tensor({3, 2}, {1, 2, 3, 4, 5, 6});
  for (Precision p : {Precision::float64, Precision::float32}) {
    const Result r = evaluate(c, p);
    ASSERT_TRUE(r.ok()) << r.message;
    EXPECT_THAT(r.outputs.at("out").values(), ElementsAre(2, -1, 1.5, 12, -0.75, -6));
    EXPECT_THAT(r.gradients.at("lhs_e").values(), ElementsAre(0, 8.75, 13.25));
    EXPECT_THAT(r.gradients.at("rhs_u").values(), ElementsAre(-2, -1, -0.1875, -24));
  }
  // lhs and rhs both on sources: two tensors.
  c.attributes = {{"op", std::string("sub")}, {"rhs", std::string("u")}, {"features", std::int64_t{2}}};
  c.inputs = {{"lhs_u", Tensor({2, 2}, {1, -2, 3, 4})}, {"rhs_u", Tensor({2, 2}, {0.5, 1, 2, 2})}};
  Result r = evaluate(c);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_THAT(r.outputs.at("out").values(), ElementsAre(0.5, -3, 1, 2, 1, 2));
  EXPECT_THAT(r.gradients.at("lhs_u").values(), ElementsAre(1, 2, 8, 10));
  EXPECT_THAT(r.gradients.at("rhs_u").values(), ElementsAre(-1, -2, -8, -10));
  // copy_rhs reads no lhs.
  c.attributes = {{"op", std::string("copy_rhs")}, {"features", std::int64_t{2}}};
  c.inputs = {{"rhs_v", Tensor({3, 2}, {2, 1, 5, 5, -1, 3})}};
  r = evaluate(c);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_THAT(r.outputs.at("out").values(), ElementsAre(2, 1, 2, 1, -1, 3));
  EXPECT_THAT(r.gradients.at("rhs_v").values(), ElementsAre(4, 6, 0, 0, 5, 6));
  EXPECT_EQ(r.gradients.size(), 1u);
}

// Fused attention on one row of two edges: logits (0, ln 3) give alpha (1/4, 3/4); x = (4, 8) gives
// y = 1 + 6 = 7; with grad_y = 1, grad_x = alpha and grad_logits = alpha·(x − 7) = (−3/4, 3/4).
TEST(OpsGolden, AttentionSoftmaxThenAggregationByHand) {
  Case c;
  c.target = "attention";
  c.graph = std::make_shared<const Graph>(Graph::from_edges(1, 2, std::vector<index_t>{0, 0}, std::vector<index_t>{0, 1}));
  c.attributes.set("features", std::int64_t{1});
  c.inputs["logits"] = Tensor({2, 1}, std::vector<double>{0.0, std::log(3.0)});
  c.inputs["x"] = Tensor({2, 1}, std::vector<double>{4.0, 8.0});
  c.grad_outputs["y"] = Tensor({1, 1}, std::vector<double>{1.0});
  const Result r = evaluate(c);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_NEAR(r.outputs.at("y")[0], 7.0, 1e-14);
  EXPECT_NEAR(r.gradients.at("x")[0], 0.25, 1e-15);
  EXPECT_NEAR(r.gradients.at("x")[1], 0.75, 1e-15);
  EXPECT_NEAR(r.gradients.at("logits")[0], -0.75, 1e-14);
  EXPECT_NEAR(r.gradients.at("logits")[1], 0.75, 1e-14);
}

// FusedMM on one row of two edges, one feature: scores u·v = (2·1, 2·3) = (2, 6); x = (4, 5) gives
// y = 8 + 30 = 38. With grad_y = 1: grad_x = scores, grad_s = x, grad_u = 4·1 + 5·3 = 19,
// grad_v = grad_s·u = (8, 10).
TEST(OpsGolden, SddmmSpmmFusedByHand) {
  Case c;
  c.target = "sddmm_spmm";
  c.graph = std::make_shared<const Graph>(Graph::from_edges(1, 2, std::vector<index_t>{0, 0}, std::vector<index_t>{0, 1}));
  c.attributes.set("features", std::int64_t{1});
  c.inputs["u"] = Tensor({1, 1}, std::vector<double>{2.0});
  c.inputs["v"] = Tensor({2, 1}, std::vector<double>{1.0, 3.0});
  c.inputs["x"] = Tensor({2, 1}, std::vector<double>{4.0, 5.0});
  c.grad_outputs["y"] = Tensor({1, 1}, std::vector<double>{1.0});
  const Result r = evaluate(c);
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_THAT(r.outputs.at("y").values(), ElementsAre(38));
  EXPECT_THAT(r.gradients.at("x").values(), ElementsAre(2, 6));
  EXPECT_THAT(r.gradients.at("u").values(), ElementsAre(19));
  EXPECT_THAT(r.gradients.at("v").values(), ElementsAre(8, 10));
}

// One matrix per segment: destination 0's three edges take weight[0], the empty segment 1 produces
// no rows and gets a zero weight gradient, destination 2's two edges take weight[2] (a swap).
//   x = [1 0; 0 1; 1 1; 2 0; 0 3], weight[0] = [1 2; 3 4], weight[1] = 100s, weight[2] = [0 1; 1 0]
TEST(OpsGolden, SegmentMmAppliesEachSegmentsMatrixAndLeavesAnEmptySegmentsGradientZero) {
  const Graph g = workhorse();
  const Tensor x({5, 2}, {1, 0, 0, 1, 1, 1, 2, 0, 0, 3});
  const Tensor w({3, 2, 2}, {1, 2, 3, 4, 100, 100, 100, 100, 0, 1, 1, 0});
  const Tensor y = segment_mm_forward(g, x, w);
  EXPECT_EQ(y.shape(), (std::vector<index_t>{5, 2}));
  EXPECT_THAT(y.values(), ElementsAre(1, 2, 3, 4, 4, 6, 0, 2, 3, 0));
  const Tensor grad_y({5, 2}, {1, 0, 0, 1, 1, 1, 1, 2, 0, 1});
  const auto grads = segment_mm_backward(g, x, w, grad_y);
  // grad_x[k] = grad_y[k] · weight[i]ᵀ: [1 0]·[1 3; 2 4] = [1 3], …, [1 2]·[0 1; 1 0] = [2 1].
  EXPECT_THAT(grads.grad_x.values(), ElementsAre(1, 3, 2, 4, 3, 7, 2, 1, 1, 0));
  // grad_weight[0] = [1 0]ᵀ[1 0] + [0 1]ᵀ[0 1] + [1 1]ᵀ[1 1]; [1] = 0; [2] = [2 0]ᵀ[1 2] + [0 3]ᵀ[0 1].
  EXPECT_EQ(grads.grad_w.shape(), (std::vector<index_t>{3, 2, 2}));
  EXPECT_THAT(grads.grad_w.values(), ElementsAre(2, 1, 1, 2, 0, 0, 0, 0, 2, 4, 0, 3));
}

// segment_mm's own wrong variants on the same case: the weight gradient one segment late, and
// grad_x from weight[i] untransposed ([1 0]·[1 2; 3 4] = [1 2] for the first row).
TEST(OpsGolden, SegmentMmWrongVariantsShiftTheWeightGradientAndSkipTheTranspose) {
  Case c;
  c.target = "segment_mm";
  c.graph = std::make_shared<const Graph>(workhorse());
  c.attributes.set("in_features", std::int64_t{2});
  c.attributes.set("out_features", std::int64_t{2});
  c.inputs["x"] = Tensor({5, 2}, {1, 0, 0, 1, 1, 1, 2, 0, 0, 3});
  c.inputs["weight"] = Tensor({3, 2, 2}, {1, 2, 3, 4, 100, 100, 100, 100, 0, 1, 1, 0});
  c.grad_outputs["y"] = Tensor({5, 2}, {1, 0, 0, 1, 1, 1, 1, 2, 0, 1});
  std::map<std::string, Result> answers;
  for (const auto& v : find_target("segment_mm").wrong_variants)
    if (auto r = v.evaluate(c, {})) answers.emplace(v.name, std::move(*r));
  ASSERT_TRUE(answers.count("weight_gradient_to_next_segment"));
  EXPECT_THAT(answers.at("weight_gradient_to_next_segment").gradients.at("weight").values(),
              ElementsAre(0, 0, 0, 0, 2, 1, 1, 2, 0, 0, 0, 0));
  ASSERT_TRUE(answers.count("weight_not_transposed_in_backward"));
  EXPECT_THAT(answers.at("weight_not_transposed_in_backward").gradients.at("x").values(),
              ElementsAre(1, 2, 3, 4, 4, 6, 2, 1, 1, 0));
}

// Every op target is registered once, with unique names and a shape for every declared slot.
TEST(OpsGolden, CatalogueListsEveryOp) {
  std::vector<std::string> names;
  for (const auto& def : op_targets()) names.push_back(def.spec.name);
  EXPECT_THAT(names, ElementsAreArray({"spmm", "spmm_transposed", "spmm_ve", "spmm_ve_transposed", "sddmm_dot",
                                       "sddmm_add", "edge_softmax", "eshuffle", "eshuffle_inverse",
                                       "normalized_spmm", "gspmm", "gsddmm", "attention", "sddmm_spmm",
                                       "segment_reduce", "segment_aggregation", "segment_mm", "gather_mm",
                                       "typed_linear"}));
  const Graph g = workhorse();
  for (const auto& def : op_targets()) {
    const Attributes attrs = with_defaults(def.spec, {});
    // Every input has a shape under the defaults or under some value of one enumerated attribute
    // (gspmm's e appears with a message that reads it, gsddmm's lhs_e with lhs = e).
    std::set<std::string> shaped;
    for (const auto& [name, shape] : def.input_shapes(g, attrs)) shaped.insert(name);
    for (const auto& a : def.spec.attributes)
      for (const AttrValue& value : a.choices) {
        Attributes varied = attrs;
        varied.set(a.name, value);
        for (const auto& [name, shape] : def.input_shapes(g, varied)) shaped.insert(name);
      }
    for (const auto& slot : def.spec.inputs) EXPECT_TRUE(shaped.count(slot.name)) << def.spec.name << " " << slot.name;
    const auto out = def.output_shapes(g, attrs);
    for (const auto& slot : def.spec.outputs) EXPECT_TRUE(out.count(slot.name)) << def.spec.name << " " << slot.name;
  }
}

}  // namespace
}  // namespace gnncheck::oracle

// Wrong shapes and attributes give an InputError that names the op, the argument and what was
// expected — both through the op functions and through the catalogue (as Status::error).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/degree_norm.h"
#include "oracle/edge_softmax.h"
#include "oracle/eshuffle.h"
#include "oracle/gsddmm.h"
#include "oracle/gspmm.h"
#include "oracle/random_case.h"
#include "oracle/sddmm.h"
#include "oracle/segment_mm.h"
#include "oracle/spmm.h"
#include "oracle/spmm_ve.h"
#include "oracle/tests/input_error.h"

namespace gnncheck::oracle {
namespace {

using ::testing::HasSubstr;

// 3 destinations × 4 sources, 5 edges.
Graph graph() {
  const std::vector<index_t> dst = {0, 0, 0, 2, 2}, src = {2, 1, 2, 0, 2};
  return Graph::from_edges(3, 4, dst, src);
}

TEST(OpsBadInput, WrongRowCountsNameTheOpAndArgument) {
  const Graph g = graph();
  const Tensor src_nodes({4, 2}), dst_nodes({3, 2}), edges({5, 1}), wrong({7, 2});
  EXPECT_THAT(input_error_of([&] { spmm_forward(g, dst_nodes); }), HasSubstr("spmm: input x (one row per source node): expected 4 rows"));
  EXPECT_THAT(input_error_of([&] { spmm_backward(g, src_nodes); }), HasSubstr("spmm backward: grad_y"));
  EXPECT_THAT(input_error_of([&] { spmm_transposed_forward(g, src_nodes); }), HasSubstr("spmm_transposed: input y"));
  EXPECT_THAT(input_error_of([&] { spmm_transposed_backward(g, dst_nodes); }), HasSubstr("grad_z"));
  EXPECT_THAT(input_error_of([&] { spmm_ve_forward(g, wrong, src_nodes); }), HasSubstr("spmm_ve: edge_values (one row per edge): expected 5 rows"));
  EXPECT_THAT(input_error_of([&] { spmm_ve_forward(g, edges, wrong); }), HasSubstr("spmm_ve: input x"));
  EXPECT_THAT(input_error_of([&] { spmm_ve_backward(g, edges, src_nodes, src_nodes); }), HasSubstr("grad_y (shaped like the output y): expected shape [3, 2]"));
  EXPECT_THAT(input_error_of([&] { spmm_ve_transposed_forward(g, edges, src_nodes); }), HasSubstr("spmm_ve_transposed: input y"));
  EXPECT_THAT(input_error_of([&] { sddmm_dot_forward(g, src_nodes, src_nodes, 1); }), HasSubstr("sddmm_dot: input u"));
  EXPECT_THAT(input_error_of([&] { sddmm_dot_backward(g, dst_nodes, src_nodes, 1, Tensor({5, 2})); }), HasSubstr("grad_e"));
  EXPECT_THAT(input_error_of([&] { sddmm_add_forward(g, dst_nodes, dst_nodes); }), HasSubstr("sddmm_add: input b"));
  EXPECT_THAT(input_error_of([&] { sddmm_add_backward(g, wrong); }), HasSubstr("sddmm_add backward: grad_e"));
  EXPECT_THAT(input_error_of([&] { edge_softmax_forward(g, wrong); }), HasSubstr("edge_softmax: logits"));
  EXPECT_THAT(input_error_of([&] { edge_softmax_backward(g, edges, Tensor({5, 2})); }), HasSubstr("grad_alpha (shaped like alpha)"));
  EXPECT_THAT(input_error_of([&] { eshuffle_forward(g, wrong); }), HasSubstr("eshuffle: input x"));
  EXPECT_THAT(input_error_of([&] { eshuffle_inverse_backward(g, wrong); }), HasSubstr("eshuffle_inverse backward"));
  EXPECT_THAT(input_error_of([&] { normalized_spmm_forward(g, DegreeNorm::row_mean, dst_nodes); }), HasSubstr("normalized_spmm (row_mean): input x"));
  EXPECT_THAT(input_error_of([&] { normalized_spmm_backward(g, DegreeNorm::symmetric, src_nodes); }), HasSubstr("grad_y"));
}

// segment_mm: x one row per edge, weight one [in, out] matrix per destination with x's width,
// grad_y shaped like y.
TEST(OpsBadInput, SegmentMmNamesTheTensorWhoseShapeIsWrong) {
  const Graph g = graph();
  const Tensor x({5, 2}), w({3, 2, 4});
  EXPECT_THAT(input_error_of([&] { segment_mm_forward(g, Tensor({4, 2}), w); }),
              HasSubstr("segment_mm: input x (one row per edge): expected 5 rows"));
  EXPECT_THAT(input_error_of([&] { segment_mm_forward(g, Tensor({5, 2, 1}), w); }),
              HasSubstr("segment_mm: input x must be [E, in_features]"));
  EXPECT_THAT(input_error_of([&] { segment_mm_forward(g, x, Tensor({3, 8})); }),
              HasSubstr("segment_mm: input w must be [n_dst, in_features, out_features]"));
  EXPECT_THAT(input_error_of([&] { segment_mm_forward(g, x, Tensor({4, 2, 4})); }),
              HasSubstr("segment_mm: input w (one matrix per segment, i.e. per destination): expected 3 rows"));
  EXPECT_THAT(input_error_of([&] { segment_mm_forward(g, x, Tensor({3, 3, 4})); }),
              HasSubstr("segment_mm: x has 2 features per row but w's matrices have 3 rows"));
  EXPECT_THAT(input_error_of([&] { segment_mm_backward(g, x, w, Tensor({5, 2})); }),
              HasSubstr("segment_mm backward: grad_y (one row of out_features per edge): expected shape [5, 4]"));
  EXPECT_THAT(input_error_of([&] { segment_mm_backward(g, x, Tensor({3, 2}), Tensor({5, 4})); }),
              HasSubstr("segment_mm backward: input w must be"));
}

TEST(OpsBadInput, HeadsThatDoNotDivideTheWidth) {
  const Graph g = graph();
  EXPECT_THAT(input_error_of([&] { spmm_ve_forward(g, Tensor({5, 3}), Tensor({4, 4})); }),
              HasSubstr("spmm_ve: input x has 4 values per row, which the 3 heads of edge_values do not divide"));
  EXPECT_THAT(input_error_of([&] { spmm_ve_transposed_backward(g, Tensor({5, 2}), Tensor({3, 3}), Tensor({4, 3})); }),
              HasSubstr("which the 2 heads of edge_values do not divide"));
  EXPECT_THAT(input_error_of([&] { sddmm_dot_forward(g, Tensor({3, 5}), Tensor({4, 5}), 2); }),
              HasSubstr("sddmm_dot: u and v have 5 values per row, which 2 heads do not divide"));
  EXPECT_THAT(input_error_of([&] { sddmm_dot_forward(g, Tensor({3, 4}), Tensor({4, 4}), 0); }),
              HasSubstr("heads must be at least 1, got 0"));
  EXPECT_THAT(input_error_of([&] { sddmm_dot_forward(g, Tensor({3, 4}), Tensor({4, 2}), 1); }),
              HasSubstr("u has 4 values per row but v has 2"));
  EXPECT_THAT(input_error_of([&] { sddmm_add_forward(g, Tensor({3, 2}), Tensor({4, 1})); }),
              HasSubstr("a has 2 heads per row but b has 1"));
}

TEST(OpsBadInput, UnknownNormalization) {
  EXPECT_THAT(input_error_of([] { parse_degree_norm("column"); }),
              HasSubstr("unknown degree normalization 'column': expected symmetric or row_mean"));
  EXPECT_THAT(input_error_of([] { parse_source_degree("both"); }),
              HasSubstr("unknown source degree 'both': expected out or in"));
}

TEST(OpsBadInput, CatalogueReportsBadAttributesAndShapesAsErrors) {
  const auto g = std::make_shared<const Graph>(graph());
  Case c = make_random_case(find_target("spmm_ve"), g, {{"heads", std::int64_t{2}}}, 1);
  c.attributes.set("heads", std::int64_t{0});
  Result r = evaluate(c);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("target 'spmm_ve': attribute 'heads' must be at least 1, got 0"));

  c = make_random_case(find_target("spmm_ve"), g, {{"heads", std::int64_t{2}}}, 1);
  c.inputs["x"] = Tensor({4, 7});
  r = evaluate(c);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("target 'spmm_ve', input 'x': expected shape [4, 8], got [4, 7]"));

  c = make_random_case(find_target("normalized_spmm"), g, {}, 1);
  c.attributes.set("norm", std::string("column"));
  r = evaluate(c);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("unknown degree normalization 'column'"));

  c = make_random_case(find_target("sddmm_dot"), g, {}, 1);
  c.attributes.set("features", std::string("four"));
  r = evaluate(c);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("attribute 'features': expected an integer"));

  c = make_random_case(find_target("spmm"), g, {}, 1);
  c.grad_outputs["y"] = Tensor({4, 4});
  r = evaluate(c);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("gradient of output 'y': expected shape [3, 4]"));
}

// gspmm's attributes name the accepted values; an operand the message reads must be there, with
// the width its broadcast gives.
TEST(OpsBadInput, GspmmNamesTheAttributeAndTheOperand) {
  const auto g = std::make_shared<const Graph>(graph());
  Case c = make_random_case(find_target("gspmm"), g, {{"message", std::string("mul")}}, 1);
  c.attributes.set("reduce", std::string("median"));
  Result r = evaluate(c);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("attribute 'reduce' is 'median'; expected one of sum, mean, max, min"));

  c = make_random_case(find_target("gspmm"), g, {{"message", std::string("mul")}}, 1);
  c.attributes.set("e_broadcast", std::string("none"));
  r = evaluate(c);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("target 'gspmm', input 'e': expected shape"));

  const GspmmConfig config = gspmm_config(with_defaults(find_target("gspmm").spec, {{"message", std::string("add")}}));
  const Tensor u({g->n_src(), 4});
  EXPECT_THAT(input_error_of([&] { gspmm_forward<double>(*g, config, &u, nullptr); }),
              HasSubstr("gspmm: message add reads input e, which is missing"));
  const Tensor narrow({g->num_edges(), 3});
  EXPECT_THAT(input_error_of([&] { gspmm_forward<double>(*g, config, &u, &narrow); }),
              HasSubstr("gspmm: input e has 3 values per row; e_broadcast = features with heads = 1 and features = 4 needs 1"));
}

// gsddmm's attributes name the accepted values; an operand its op reads must be there, with the rows
// of its side and the width of its broadcast, and the output gradient one value per head for dot.
TEST(OpsBadInput, GsddmmNamesTheAttributeAndTheOperand) {
  const auto g = std::make_shared<const Graph>(graph());
  // The message of evaluating a default case with one attribute changed.
  const auto error_with = [&](const char* name, const AttrValue& value) {
    Case c = make_random_case(find_target("gsddmm"), g, {}, 1);
    c.attributes.set(name, value);
    const Result r = evaluate(c);
    return r.status == Status::error ? r.message : std::string("(no error)");
  };
  EXPECT_THAT(error_with("op", std::string("max")),
              HasSubstr("target 'gsddmm': attribute 'op' is 'max'; expected one of add, sub, mul, div, dot, copy_lhs, copy_rhs"));
  EXPECT_THAT(error_with("rhs", std::string("w")), HasSubstr("target 'gsddmm': attribute 'rhs' is 'w'; expected one of u, v, e"));
  EXPECT_THAT(error_with("heads", std::int64_t{0}), HasSubstr("target 'gsddmm': attribute 'heads' must be at least 1, got 0"));
  // The case still carries lhs_u.
  EXPECT_THAT(error_with("lhs", std::string("e")), HasSubstr("target 'gsddmm': input 'lhs_e' is missing"));

  const GsddmmConfig dot = gsddmm_config(with_defaults(find_target("gsddmm").spec, {}));
  const Tensor lhs_u({g->n_src(), 4});
  EXPECT_THAT(input_error_of([&] { gsddmm_forward<double>(*g, dot, &lhs_u, nullptr); }),
              HasSubstr("gsddmm: op dot reads input rhs_v, which is missing"));
  const Tensor narrow({g->n_dst(), 3}), too_few_rows({g->n_src(), 4});
  EXPECT_THAT(input_error_of([&] { gsddmm_forward<double>(*g, dot, &lhs_u, &narrow); }),
              HasSubstr("gsddmm: input rhs_v has 3 values per row; rhs_broadcast = none with heads = 1 and features = "
                        "4 needs 4"));
  EXPECT_THAT(input_error_of([&] { gsddmm_forward<double>(*g, dot, &lhs_u, &too_few_rows); }),
              HasSubstr("gsddmm: input rhs_v (one row per destination node): expected 3 rows"));
  const Tensor rhs_v({g->n_dst(), 4}), per_feature({g->num_edges(), 4});
  EXPECT_THAT(input_error_of([&] { gsddmm_backward<double>(*g, dot, &lhs_u, &rhs_v, per_feature); }),
              HasSubstr("gsddmm backward: grad_out has 4 values per row, expected 1 (heads with heads = 1 and features = 4)"));
}

// validate_case is the one validation the oracle, the GPU systems and the adapter protocol share;
// its messages name the target and what is wrong.
TEST(ValidateCase, RefusesANonSquareGraphForATargetThatNeedsOneNamingIt) {
  TargetDef square_spmm = find_target("spmm");
  square_spmm.spec.name = "square_spmm";
  square_spmm.spec.needs_square_graph = true;
  const auto g = std::make_shared<const Graph>(graph());
  Case c = make_random_case(find_target("spmm"), g, {}, 1);
  c.target = "square_spmm";
  EXPECT_THAT(input_error_of([&] { validate_case(square_spmm, c); }),
              HasSubstr("target 'square_spmm' needs a square graph; got " + g->summary()));
  c.target = "spmm";
  EXPECT_NO_THROW(validate_case(find_target("spmm"), c));
}

TEST(ValidateCase, NamesAMissingInputAMissingOutputGradientAndAMissingGraph) {
  const auto g = std::make_shared<const Graph>(graph());
  Case c = make_random_case(find_target("spmm_ve"), g, {{"heads", std::int64_t{2}}}, 1);
  const Attributes filled = validate_case(find_target("spmm_ve"), c);
  EXPECT_EQ(filled.get_int("heads"), 2);
  EXPECT_EQ(filled.get_int("features"), 4);  // defaults filled in

  Case missing = c;
  missing.inputs.erase("edge_values");
  EXPECT_THAT(input_error_of([&] { validate_case(find_target("spmm_ve"), missing); }),
              HasSubstr("target 'spmm_ve': input 'edge_values' is missing"));
  missing = c;
  missing.grad_outputs.clear();
  missing.grad_outputs["z"] = Tensor({3, 8});
  EXPECT_THAT(input_error_of([&] { validate_case(find_target("spmm_ve"), missing); }),
              HasSubstr("target 'spmm_ve': gradient of output 'y' is missing"));
  missing = c;
  missing.graph = nullptr;
  EXPECT_THAT(input_error_of([&] { validate_case(find_target("spmm_ve"), missing); }), HasSubstr("case has no graph"));
}

TEST(ValidateCase, FindTargetIsOneLookupThatStillNamesTheKnownTargets) {
  EXPECT_EQ(&find_target("gat"), &find_target("gat"));
  EXPECT_EQ(find_target("sage").spec.name, "sage");
  EXPECT_THAT(input_error_of([] { find_target("gcnn"); }), HasSubstr("unknown target 'gcnn'; known targets: spmm, "));
}

}  // namespace
}  // namespace gnncheck::oracle

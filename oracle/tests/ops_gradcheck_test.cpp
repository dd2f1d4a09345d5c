// The oracle's backward of every op and every differentiable input agrees with central finite
// differences: the full Jacobian on small graphs (non-square, duplicate edges, empty row, directed
// with a self-loop, multi-head), and random directions vᵀJu on a graph with more than 100,000 edges.
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "platform/process_heap.h"
#include "oracle/gradcheck.h"
#include "oracle/random_case.h"
#include "oracle/selfcheck.h"

namespace gnncheck::oracle {
namespace {

Result oracle_f64(const Case& c) { return evaluate(c, Precision::float64); }

// Default attributes, two heads where the op has heads, the other normalization and the other
// source-degree convention. `every_pair`: gsddmm's every op on every pair of sides (small graphs);
// otherwise each op once, on pairs that still give each operand every side (the large graph).
std::vector<Attributes> variants(const TargetSpec& spec, bool every_pair = true) {
  std::vector<Attributes> out = {Attributes{}};
  for (const auto& a : spec.attributes) {
    if (a.name == "heads") out.push_back({{"heads", std::int64_t{2}}});
    if (a.name == "norm") out.push_back({{"norm", std::string("row_mean")}});
    if (a.name == "source_degree") out.push_back({{"source_degree", std::string("in")}});
    // gspmm: each message through each reduction (continuous values: no ties) on small graphs, each
    // message and each reduction once on the large one; and a broadcast of each operand.
    if (a.name == "message") {
      const std::vector<const char*> messages = {"copy_u", "copy_e", "add", "sub", "mul", "div"};
      const std::vector<const char*> reductions = {"sum", "mean", "max", "min"};
      for (std::size_t m = 0; m < messages.size(); ++m)
        for (std::size_t r = 0; r < reductions.size(); ++r)
          if (every_pair || r == m % reductions.size())
            out.push_back({{"message", std::string(messages[m])}, {"reduce", std::string(reductions[r])},
                           {"heads", std::int64_t{2}}});
    }
    // segment_aggregation: the softmax and std (the default is var), and on small graphs mul (a large
    // graph's hub multiplies hundreds of values in (−1, 1): its product and gradients underflow to 0).
    if (a.name == "aggr") {
      out.push_back({{"aggr", std::string("softmax")}});
      out.push_back({{"aggr", std::string("std")}});
      if (every_pair) out.push_back({{"aggr", std::string("mul")}});
    }
    // segment_mm: one-wide rows, and square matrices (where weight and its transpose have one shape).
    if (a.name == "out_features") {
      out.push_back({{"in_features", std::int64_t{1}}, {"out_features", std::int64_t{1}}});
      out.push_back({{"in_features", std::int64_t{3}}, {"out_features", std::int64_t{3}}});
    }
    if (a.name == "u_broadcast")
      for (const char* u : {"features", "heads", "both"})
        out.push_back({{"message", std::string("div")}, {"u_broadcast", std::string(u)}, {"e_broadcast", std::string("none")},
                       {"heads", std::int64_t{2}}});
    // gsddmm: each op on each pair of sides (the same side twice included), and each broadcast of
    // each operand through a quotient, an inner product and a difference.
    const auto gsddmm = [&](const AttrValue& op, const char* lhs, const char* rhs) {
      out.push_back({{"op", op}, {"lhs", std::string(lhs)}, {"rhs", std::string(rhs)}, {"heads", std::int64_t{2}}});
    };
    if (a.name == "op" && every_pair)
      for (const AttrValue& op : a.choices)
        for (const char* lhs : {"u", "v", "e"})
          for (const char* rhs : {"u", "v", "e"}) gsddmm(op, lhs, rhs);
    if (a.name == "op" && !every_pair) {
      const std::vector<std::pair<const char*, const char*>> sides = {{"u", "v"}, {"v", "e"}, {"e", "u"}, {"u", "u"},
                                                                      {"v", "v"}, {"e", "e"}, {"e", "v"}};
      for (std::size_t k = 0; k < a.choices.size(); ++k) {
        const auto& [lhs, rhs] = sides[k % sides.size()];
        gsddmm(a.choices[k], lhs, rhs);
      }
    }
    // Each broadcast of each operand through each of the three ops on small graphs; on the large one
    // each broadcast once, the ops taken in turn.
    if (a.name == "lhs_broadcast" || a.name == "rhs_broadcast") {
      const std::vector<const char*> broadcasts = {"features", "heads", "both"};
      const std::vector<const char*> ops = {"div", "dot", "sub"};
      for (std::size_t b = 0; b < broadcasts.size(); ++b)
        for (std::size_t o = 0; o < ops.size(); ++o)
          if (every_pair || o == b)
            out.push_back({{"op", std::string(ops[o])}, {a.name, std::string(broadcasts[b])}, {"lhs", std::string("e")},
                           {"rhs", std::string("u")}, {"heads", std::int64_t{2}}});
    }
  }
  return out;
}

std::string describe(const GradcheckReport& r) {
  std::string s = r.failure;
  for (const auto& a : r.inputs)
    s += fmt::format("\n  {}: {} worst {:.3e} (bound {:.3e}) at {}: numerical {} analytical {}", a.input, a.method,
                     a.worst_relative_error, a.bound, a.worst_location, a.worst_numerical, a.worst_analytical);
  return s;
}

TEST(OpsGradcheck, FullJacobianOnSmallGraphsForEveryOpAndInput) {
  for (const TargetDef& def : op_targets()) {
    for (const NamedGraph& graph : selfcheck_small_graphs()) {
      for (const Attributes& attrs : variants(def.spec)) {
        const Case c = make_random_case(def, graph.graph, attrs, /*seed=*/11);
        const GradcheckReport r = check_full_jacobian(oracle_f64, c, def.spec);
        EXPECT_TRUE(r.all_passed) << def.spec.name << " on " << graph.name << describe(r);
        std::size_t present = 0;  // an input the attributes switch off (gspmm's e with copy_u) has no gradient
        for (const std::string& input : differentiable_inputs(def.spec))
          present += c.inputs.count(input) + c.parameters.count(input);
        EXPECT_EQ(r.inputs.size(), present) << def.spec.name;
        for (const auto& input : r.inputs) EXPECT_GT(input.comparisons, 0) << def.spec.name << " " << input.input;
      }
    }
  }
}

TEST(OpsGradcheck, RandomDirectionsOnGraphWithOver100kEdges) {
  retain_freed_memory_in_process();  // hundreds of evaluations on the large graph
  const auto large = std::make_shared<const Graph>(make_skewed_graph(25'000, 30'000, 110'000, /*seed=*/5));
  ASSERT_GE(large->num_edges(), 100'000);
  GradcheckOptions options;
  options.directions = 2;
  for (const TargetDef& def : op_targets()) {
    for (const Attributes& attrs : variants(def.spec, /*every_pair=*/false)) {
      const Case c = make_random_case(def, large, attrs, /*seed=*/12);
      const GradcheckReport r = check_random_directions(oracle_f64, c, def.spec, options);
      EXPECT_TRUE(r.all_passed) << def.spec.name << describe(r);
      for (const auto& input : r.inputs) EXPECT_EQ(input.comparisons, 2) << def.spec.name << " " << input.input;
    }
  }
}

}  // namespace
}  // namespace gnncheck::oracle

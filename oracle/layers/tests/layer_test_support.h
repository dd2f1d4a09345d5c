// gnncheck/oracle/layers/tests/layer_test_support.h — graphs and cases shared by the layer tests.
//
// The small graphs hold every structure a layer must handle exactly: duplicate edges, a self-loop
// already in A, an empty row, an isolated source, and a non-square block (n_dst < n_src).
// layer_case() fills every tensor input_shapes() asks for (so a disabled bias is left out) and
// active_spec() is the spec restricted to those inputs, which is what the gradient check walks.
//
//   auto g = small_square_graph();
//   Case c = layer_case("gcn", g, {{"bias", false}}, /*seed=*/3);
//   GradcheckReport r = check_full_jacobian(oracle_evaluator(), c, active_spec(c));
#pragma once

#include <memory>

#include "core/case.h"
#include "oracle/gradcheck.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::oracle::layer_tests {

// 5 × 5: row 0 has a duplicate edge (0 ← 1 twice) and a self-loop, row 3 is empty, source 3 has no
// out-edges, and in- and out-degrees differ (the graph is directed).
inline std::shared_ptr<const Graph> small_square_graph() {
  const std::vector<index_t> dst{0, 0, 0, 0, 1, 1, 2, 4, 4};
  const std::vector<index_t> src{1, 1, 0, 2, 2, 4, 0, 1, 0};
  return std::make_shared<const Graph>(Graph::from_edges(5, 5, dst, src));
}

// A 3 × 6 block: destinations are the first 3 sources; row 1 is empty, row 2 has a duplicate.
inline std::shared_ptr<const Graph> small_block_graph() {
  const std::vector<index_t> dst{0, 0, 0, 2, 2, 2};
  const std::vector<index_t> src{3, 4, 1, 5, 5, 0};
  return std::make_shared<const Graph>(Graph::from_edges(3, 6, dst, src));
}

// A random directed graph with n nodes and about n · avg_degree edges (duplicates possible).
inline std::shared_ptr<const Graph> random_graph(index_t n, index_t avg_degree, std::uint64_t seed) {
  const Tensor picks = random_tensor({n * avg_degree, 2}, seed, "edges", {0.0, 1.0});
  std::vector<index_t> dst, src;
  for (index_t e = 0; e < picks.rows(); ++e) {
    dst.push_back(static_cast<index_t>(picks.at(e, 0) * static_cast<double>(n)));
    src.push_back(static_cast<index_t>(picks.at(e, 1) * static_cast<double>(n)));
  }
  return std::make_shared<const Graph>(Graph::from_edges(n, n, dst, src));
}

// Every tensor the target's input_shapes() lists for these attributes, random in [-1, 1), plus a
// random gradient of every output.
inline Case layer_case(const std::string& target, std::shared_ptr<const Graph> graph, const Attributes& attrs,
                       std::uint64_t seed) {
  const TargetDef& def = find_target(target);
  Case c;
  c.target = target;
  c.attributes = with_defaults(def.spec, attrs);
  c.graph = graph;
  c.seed = seed;
  for (const auto& [name, shape] : def.input_shapes(*graph, c.attributes)) {
    const TensorSlot& slot = *find_slot(def.spec, name);
    (slot.kind == TensorKind::parameter ? c.parameters : c.inputs)[name] =
        slot.is_index() ? random_index_tensor(shape, seed, "input:" + name, c.attributes.get_int(slot.index_range))
                        : random_tensor(shape, seed, "input:" + name);
  }
  for (const auto& [name, shape] : def.output_shapes(*graph, c.attributes))
    c.grad_outputs[name] = random_tensor(shape, seed, "grad_output:" + name);
  return c;
}

// The target's spec restricted to the inputs present in the case.
inline TargetSpec active_spec(const Case& c) {
  TargetSpec spec = entry_of(c).spec;
  std::erase_if(spec.inputs, [&](const TensorSlot& slot) {
    return c.inputs.count(slot.name) == 0 && c.parameters.count(slot.name) == 0;
  });
  return spec;
}

inline CaseEvaluator oracle_evaluator() {
  return [](const Case& c) { return evaluate(c, Precision::float64); };
}

}  // namespace gnncheck::oracle::layer_tests

// Every op gives bit-identical outputs and gradients with 1, 2 and 3 OpenMP threads, in float64
// and float32: each output row is summed by one thread in a fixed order, with no atomics.
#include <omp.h>

#include <gtest/gtest.h>

#include "oracle/random_case.h"
#include "oracle/selfcheck.h"

namespace gnncheck::oracle {
namespace {

Attributes two_heads_where_possible(const TargetSpec& spec) {
  for (const auto& a : spec.attributes)
    if (a.name == "heads") return {{"heads", std::int64_t{2}}};
  return {};
}

TEST(OpsDeterminism, BitIdenticalForOneTwoAndThreeThreads) {
  // Large enough that every loop runs in parallel (E · width ≥ kParallelMinWork), skewed so
  // that rows differ in length and threads finish in varying order.
  const auto g = std::make_shared<const Graph>(make_skewed_graph(6'000, 5'000, 60'000, /*seed=*/9));
  const int saved_threads = omp_get_max_threads();
  for (const TargetDef& def : op_targets()) {
    const Case c = make_random_case(def, g, two_heads_where_possible(def.spec), /*seed=*/21);
    for (Precision precision : {Precision::float64, Precision::float32}) {
      omp_set_num_threads(1);
      const Result reference = evaluate(c, precision);
      ASSERT_TRUE(reference.ok()) << def.spec.name << ": " << reference.message;
      for (int threads : {2, 3}) {
        omp_set_num_threads(threads);
        const Result r = evaluate(c, precision);
        ASSERT_TRUE(r.ok()) << r.message;
        EXPECT_EQ(r.outputs, reference.outputs) << def.spec.name << " " << to_string(precision) << " " << threads;
        EXPECT_EQ(r.gradients, reference.gradients) << def.spec.name << " " << to_string(precision) << " " << threads;
      }
    }
  }
  omp_set_num_threads(saved_threads);
}

}  // namespace
}  // namespace gnncheck::oracle

// The scipy adapter (real third-party kernels: scipy.sparse) passes the differential check against
// the oracle on every target it declares, on graphs with the awkward features (non-square,
// duplicate edges, self-loops, empty rows, isolated nodes), several widths and heads, forward only
// and with gradients — zero false alarms.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/process_system.h"
#include "adapters/replicas/replicas.h"
#include "adapters/tests/adapter_test_support.h"
#include "checks/checks.h"

namespace gnncheck {
namespace {

std::unique_ptr<System> scipy_adapter() {
  return make_process_system(
      std::vector<std::string>{testing::python(), (testing::source_dir() / "adapters/python/scipy_adapter.py").string()});
}

// A larger random graph: 40 × 30, 200 edges drawn with replacement (so duplicates occur).
std::shared_ptr<const Graph> random_graph(std::uint64_t seed) {
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  const auto next = [&state](index_t n) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return static_cast<index_t>(state % static_cast<std::uint64_t>(n));
  };
  std::vector<index_t> dst, src;
  for (int k = 0; k < 200; ++k) {
    dst.push_back(next(40));
    src.push_back(next(30));
  }
  return std::make_shared<const Graph>(Graph::from_edges(40, 30, dst, src));
}

TEST(ScipyAdapter, DeclaresItsTargetsInFloat64) {
  auto scipy = scipy_adapter();
  ASSERT_TRUE(scipy->availability().available) << scipy->availability().reason;
  EXPECT_EQ(scipy->name(), "scipy");
  for (const char* target : {"spmm", "spmm_transposed", "sddmm_dot"}) {
    EXPECT_TRUE(scipy->supports(target)) << target;
    EXPECT_EQ(scipy->precision(target), Precision::float64);
  }
  EXPECT_FALSE(scipy->supports("edge_softmax"));
}

TEST(ScipyAdapter, PassesTheDifferentialCheckEverywhere) {
  auto scipy = scipy_adapter();
  ASSERT_TRUE(scipy->availability().available) << scipy->availability().reason;
  const std::vector<std::shared_ptr<const Graph>> graphs = {
      testing::asymmetric_graph(), testing::bipartite_graph(), random_graph(1), random_graph(2),
      std::make_shared<const Graph>(Graph::from_csr(3, 2, {0, 0, 0, 0}, {}))};  // no edges at all
  int verdicts = 0;
  std::uint64_t seed = 1000;
  for (const auto& g : graphs) {
    for (const char* target : {"spmm", "spmm_transposed", "sddmm_dot"}) {
      for (std::int64_t features : {1, 5, 33}) {
        for (std::int64_t heads : {1, 3}) {
          if (std::string(target) != "sddmm_dot" && heads > 1) continue;  // only sddmm has heads
          for (bool with_gradients : {true, false}) {
            Attributes attrs{{"features", features}};
            if (heads > 1) attrs.set("heads", heads);
            const Case c = testing::random_case(target, g, attrs, seed++, with_gradients);
            const checks::Verdict v = checks::differential(*scipy, c);
            // A graph without edges leaves sddmm_dot's forward nothing to compare: not applicable.
            EXPECT_TRUE(v.passed() || v.conclusion == checks::Conclusion::not_applicable) << checks::failure_message(v);
            ++verdicts;
          }
        }
      }
    }
  }
  EXPECT_EQ(verdicts, 5 * (2 * 3 * 2 + 3 * 2 * 2));
}

// The same differential check does flag a wrong system behind the same process boundary: the bug
// replica of TC-GNN is caught on this adapter's targets, so the zero above is not a blind check.
TEST(ScipyAdapter, TheSameCheckCatchesAWrongBackward) {
  auto wrong = make_replica("tcgnn_backward_uses_A", scipy_adapter());
  const Case c = testing::random_case("spmm", testing::asymmetric_graph(), {{"features", std::int64_t{4}}}, 5);
  const checks::Verdict v = checks::differential(*wrong, c);
  EXPECT_FALSE(v.passed());
  EXPECT_EQ(v.tensor, "gradient x");
}

}  // namespace
}  // namespace gnncheck

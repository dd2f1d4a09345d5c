// Every bug replica, on every target it injects its bug into, is caught by the check its catalogue
// entry names — and the correct systems it wraps pass that same check on the same case, so the
// catch is the bug's doing and not a false alarm.
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/cpu_systems.h"
#include "oracle/random_case.h"
#include "adapters/replicas/replicas.h"
#include "adapters/tests/adapter_test_support.h"
#include "checks/checks.h"
#include "fixtures/generators.h"

namespace gnncheck {
namespace {

// Targets exercised for the replicas that apply to every target (leak, width tail).
const std::vector<std::string> kGenericTargets = {"spmm", "spmm_ve", "edge_softmax", "gcn", "gat"};

struct Trial {
  std::string replica;
  std::string target;
  checks::CheckKind check;
  std::string graph = "revealing";  // revealing (asymmetric 5×5), wide, tall or hub
};

// Blocks of 5 destinations and 8 sources and the other way round, with edges into the columns
// and out of the rows that a square graph would not have.
std::shared_ptr<const Graph> block_graph(bool tall) {
  const std::vector<index_t> a = {0, 0, 1, 2, 3, 4, 4, 1}, b = {5, 1, 7, 0, 6, 2, 3, 4};
  return std::make_shared<const Graph>(tall ? Graph::from_edges(8, 5, b, a) : Graph::from_edges(5, 8, a, b));
}

// The revealing case's attributes on the trial's graph.
Case case_for(const Trial& t) {
  Case c = testing::revealing_case(t.target, 7);
  if (t.replica == "tf32_edge_value_grad") {  // within TF32's bound at 33 features per head (catalogue)
    Attributes narrower = c.attributes;
    narrower.set("features", std::int64_t{8});
    return testing::random_case(t.target, c.graph, narrower, 7);
  }
  const ReplicaInfo info = find_replica(t.replica);
  // gspmm's: a message and reduction, maybe ties; the shape bugs': a width, heads, a square matrix.
  if (!info.shows_with.values().empty() || info.needs_tied_values || info.shape != ReplicaInfo::Shape::any) {
    const Attributes attributes = revealing_attributes(info, oracle::find_target(t.target).spec, *c.graph, c.attributes);
    c = testing::random_case(t.target, c.graph, attributes, 7);
    if (info.needs_tied_values) oracle::round_to_small_integers(c);
  }
  if (t.graph != "revealing") {
    std::shared_ptr<const Graph> g = t.graph == "hub" ? std::make_shared<const Graph>(parallel_edges(1002))
                                                      : block_graph(t.graph == "tall");
    c = testing::random_case(t.target, g, c.attributes, 7);
  }
  reveal_values(info, c);
  return c;
}

std::vector<Trial> all_trials() {
  std::vector<Trial> trials;
  for (const ReplicaInfo& info : replica_catalogue()) {
    const bool generic = info.number == 9 || info.number == 10;
    for (const std::string& target : info.targets) {
      if (generic && std::find(kGenericTargets.begin(), kGenericTargets.end(), target) == kGenericTargets.end()) continue;
      const checks::CheckKind check = checks::parse_check_kind(info.expected_check);
      if (info.hub_degree > 0) {
        trials.push_back({info.name, target, check, "hub"});
      } else if (info.name == "backward_assumes_square") {  // rectangular graphs only, both ways
        trials.push_back({info.name, target, check, "wide"});
        trials.push_back({info.name, target, check, "tall"});
      } else {
        trials.push_back({info.name, target, check});
      }
    }
  }
  return trials;
}

class ReplicaDetection : public ::testing::TestWithParam<Trial> {};

TEST_P(ReplicaDetection, ExpectedCheckCatchesTheReplicaAndPassesTheCorrectSystems) {
  const Trial& t = GetParam();
  const Case c = case_for(t);
  for (auto make_base : {make_oracle_system, make_cpu_float32_system}) {
    auto correct = make_base();
    const checks::Verdict ok = checks::run_check(t.check, *correct, c);
    EXPECT_TRUE(ok.passed() || ok.conclusion == checks::Conclusion::not_applicable) << "false alarm on " << correct->name() << ": " << checks::failure_message(ok);
    auto replica = make_replica(t.replica, make_base());
    const checks::Verdict caught = checks::run_check(t.check, *replica, c);
    EXPECT_TRUE(caught.conclusion != checks::Conclusion::not_applicable) << caught.detail;
    EXPECT_EQ(caught.conclusion, checks::Conclusion::fail) << t.replica << " on " << t.target << " over " << correct->name()
                                << " was not caught by " << checks::to_string(t.check) << ": " << checks::one_line(caught);
  }
}

INSTANTIATE_TEST_SUITE_P(AllReplicas, ReplicaDetection, ::testing::ValuesIn(all_trials()),
                         [](const ::testing::TestParamInfo<Trial>& info) {
                           return info.param.replica + "_" + info.param.target +
                                  (info.param.graph == "revealing" ? "" : "_" + info.param.graph);
                         });

}  // namespace
}  // namespace gnncheck

// Every bug replica, on every target it injects its bug into, is caught by the check its catalogue
// entry names — and the correct systems it wraps pass that same check on the same case, so the
// catch is the bug's doing and not a false alarm.
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/cpu_systems.h"
#include "adapters/replicas/replicas.h"
#include "adapters/tests/adapter_test_support.h"
#include "checks/checks.h"

namespace gnncheck {
namespace {

// Targets exercised for the replicas that apply to every target (leak, width tail).
const std::vector<std::string> kGenericTargets = {"spmm", "spmm_ve", "edge_softmax", "gcn", "gat"};

struct Trial {
  std::string replica;
  std::string target;
  checks::CheckKind check;
};

std::vector<Trial> all_trials() {
  std::vector<Trial> trials;
  for (const ReplicaInfo& info : replica_catalogue()) {
    const bool generic = info.number == 9 || info.number == 10;
    for (const std::string& target : info.targets) {
      if (generic && std::find(kGenericTargets.begin(), kGenericTargets.end(), target) == kGenericTargets.end()) continue;
      trials.push_back({info.name, target, checks::parse_check_kind(info.expected_check)});
    }
  }
  return trials;
}

class ReplicaDetection : public ::testing::TestWithParam<Trial> {};

TEST_P(ReplicaDetection, ExpectedCheckCatchesTheReplicaAndPassesTheCorrectSystems) {
  const Trial& t = GetParam();
  const Case c = testing::revealing_case(t.target, 7);
  for (auto make_base : {make_oracle_system, make_cpu_float32_system}) {
    auto correct = make_base();
    const checks::Verdict ok = checks::run_check(t.check, *correct, c);
    EXPECT_TRUE(ok.passed() || ok.conclusion == checks::Conclusion::not_applicable) << "false alarm on " << correct->name() << ": " << checks::failure_message(ok);
    auto replica = make_replica(t.replica, make_base());
    const checks::Verdict caught = checks::run_check(t.check, *replica, c);
    EXPECT_TRUE(caught.conclusion != checks::Conclusion::not_applicable) << caught.detail;
    EXPECT_FALSE(caught.passed()) << t.replica << " on " << t.target << " over " << correct->name()
                                << " was not caught by " << checks::to_string(t.check) << ": " << checks::one_line(caught);
  }
}

INSTANTIATE_TEST_SUITE_P(AllReplicas, ReplicaDetection, ::testing::ValuesIn(all_trials()),
                         [](const ::testing::TestParamInfo<Trial>& info) {
                           return info.param.replica + "_" + info.param.target;
                         });

}  // namespace
}  // namespace gnncheck

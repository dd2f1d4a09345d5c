// Every GPU replica, on every target it replaces a kernel of, is caught on the device by the check
// its catalogue entry names, and the correct `gpu` system passes the same check on the same case
// (so the catch is the buggy kernel's doing). Needs a CUDA device; skips with the reason otherwise.
#include <gtest/gtest.h>

#include "adapters/replicas/gpu/gpu_replicas.h"
#include "adapters/tests/adapter_test_support.h"
#include "checks/checks.h"
#include "gpu/context.h"
#include "gpu/gpu_systems.h"

namespace gnncheck {
namespace {

struct Trial {
  std::string replica;
  std::string target;
  checks::CheckKind check;
};

std::vector<Trial> all_trials() {
  std::vector<Trial> trials;
  for (const GpuReplicaInfo& info : gpu_replica_catalogue())
    for (const std::string& target : info.targets)
      trials.push_back({info.name, target, checks::parse_check_kind(info.expected_check)});
  return trials;
}

class GpuReplicaDetection : public ::testing::TestWithParam<Trial> {};

TEST_P(GpuReplicaDetection, ExpectedCheckCatchesTheKernelAndPassesTheReference) {
  if (!gpu::probe_device().available) GTEST_SKIP() << "skipped: no CUDA device";
  const Trial& t = GetParam();
  const Case c = testing::revealing_case(t.target, 7);
  auto reference = make_gpu_system();
  const checks::Verdict ok = checks::run_check(t.check, *reference, c);
  EXPECT_TRUE(ok.passed() || ok.conclusion == checks::Conclusion::not_applicable) << "false alarm on gpu: " << checks::failure_message(ok);
  auto replica = make_gpu_replica(t.replica);
  ASSERT_TRUE(replica->supports(t.target));
  const checks::Verdict caught = checks::run_check(t.check, *replica, c);
  EXPECT_TRUE(caught.conclusion != checks::Conclusion::not_applicable) << caught.detail;
  EXPECT_FALSE(caught.passed()) << t.replica << " on " << t.target << " was not caught by "
                              << checks::to_string(t.check) << ": " << checks::one_line(caught);
}

INSTANTIATE_TEST_SUITE_P(AllGpuReplicas, GpuReplicaDetection, ::testing::ValuesIn(all_trials()),
                         [](const ::testing::TestParamInfo<Trial>& info) {
                           std::string name = info.param.replica + "_" + info.param.target;
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

// Where a bug cannot show, the replica computes what the reference computes: its kernels are
// otherwise correct (a width that is a multiple of 32, a symmetric graph for the A-for-Aᵀ bugs).
TEST(GpuReplicas, AgreeWithTheReferenceWhereTheBugCannotShow) {
  if (!gpu::probe_device().available) GTEST_SKIP() << "skipped: no CUDA device";
  const std::vector<index_t> dst = {0, 1, 1, 2, 2}, src = {1, 0, 2, 1, 2};  // A = Aᵀ, one self-loop
  auto symmetric = std::make_shared<const Graph>(Graph::from_edges(3, 3, dst, src));
  Attributes width64;
  width64.set("features", std::int64_t{64});
  const Case wide = testing::random_case("spmm", testing::asymmetric_graph(), width64, 3);
  const Case sym = testing::random_case("spmm", symmetric, width64, 3);
  auto reference = make_gpu_system();
  for (const auto& [replica, c] : {std::pair{"gpu-replica-10", wide}, std::pair{"gpu-replica-1", sym}}) {
    const Result want = reference->evaluate(c);
    const Result got = make_gpu_replica(replica)->evaluate(c);
    ASSERT_TRUE(got.ok()) << replica << ": " << got.message;
    EXPECT_LT(testing::max_abs_difference(got.outputs, want.outputs), 1e-4) << replica;
    EXPECT_LT(testing::max_abs_difference(got.gradients, want.gradients), 1e-4) << replica;
  }
}

}  // namespace
}  // namespace gnncheck

// Every check of the check library (checks/checks.h) on the `gpu` and `cusparse` systems: for each
// target they claim, on a square graph with duplicates and empty rows and on a non-square block,
// differential, adjoint, op-order, the three metamorphic checks, both state checks, numerics
// (large logits) and resources (no device-memory growth across evaluations) must pass. The
// gradient check applies to float64 systems only and reports itself not applicable here.
#include <cstdio>

#include <gtest/gtest.h>

#include "checks/checks.h"
#include "gpu/gpu_systems.h"
#include "gpu/tests/gpu_test_support.h"
#include "oracle/targets.h"

namespace gnncheck::gpu::testing {
namespace {

void check_every_target(System& system, std::uint64_t base_seed) {
  for (const auto& def : oracle::all_targets()) {
    const std::string& target = def.spec.name;
    if (!system.supports(target)) continue;
    for (GraphKind kind : {GraphKind::square_with_duplicates, GraphKind::non_square_wide}) {
      const std::uint64_t seed = base_seed + static_cast<std::uint64_t>(kind);
      std::mt19937_64 rng(seed);
      auto graph = std::make_shared<const Graph>(random_graph(kind, seed));
      const Case c = make_case(target, graph, random_attributes(target, rng), seed);
      for (checks::CheckKind check : checks::all_check_kinds()) {
        const checks::Verdict v = checks::run_check(check, system, c);
        std::printf("%s\n", checks::one_line(v).c_str());
        EXPECT_TRUE(v.passed) << checks::failure_message(v) << "\n" << v.detail << "\ncase: " << describe(c);
      }
    }
  }
}

TEST(GpuChecksTest, GpuSystemPassesEveryCheck) {
  GNNCHECK_GPU_TEST_REQUIRES_DEVICE();
  auto gpu = make_gpu_system();
  check_every_target(*gpu, 300);
}

TEST(GpuChecksTest, CusparseSystemPassesEveryCheck) {
  GNNCHECK_GPU_TEST_REQUIRES_DEVICE();
  auto cusparse = make_cusparse_system();
  check_every_target(*cusparse, 400);
}

}  // namespace
}  // namespace gnncheck::gpu::testing

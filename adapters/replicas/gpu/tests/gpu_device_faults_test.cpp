// The replicas whose fault changes no answer (device_fault_replicas.h), on the device:
//   - gpu-replica-leak fails `resources` through gnncheck's own device measurement, while what it
//     reports itself (the accounting allocator's live and peak bytes) stays flat; the reference passes;
//   - gpu-replica-racy passes every check, and `gnncheck run --sanitize racecheck` catches it in its
//     own kernel (when compute-sanitizer is installed; the test says so when it is not).
// Needs a CUDA device; skips with the reason otherwise.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <gtest/gtest.h>

#include "adapters/replicas/gpu/device_fault_replicas.h"
#include "adapters/sanitizer.h"
#include "adapters/tests/adapter_test_support.h"
#include "checks/checks.h"
#include "gpu/context.h"
#include "gpu/gpu_systems.h"

namespace gnncheck {
namespace {

TEST(GpuLeakReplica, ResourcesCatchesItThroughTheDeviceMeasurement) {
  if (!gpu::probe_device().available) GTEST_SKIP() << "skipped: no CUDA device";
  const Case c = testing::revealing_case("spmm", 3);
  auto reference = make_gpu_system();
  const checks::Verdict ok = checks::resources(*reference, c);
  EXPECT_TRUE(ok.passed()) << "false alarm on gpu: " << checks::failure_message(ok) << "\n" << ok.tolerance_model;
  auto leak = make_gpu_device_fault_replica("gpu-replica-leak");
  const checks::Verdict caught = checks::resources(*leak, c);
  ASSERT_EQ(caught.conclusion, checks::Conclusion::fail) << checks::one_line(caught);
  bool device_disagrees = false, reported_agree = true;
  for (const auto& tc : caught.comparisons) {
    const bool device = tc.tensor.find("measured by gnncheck") != std::string::npos;
    if (device) device_disagrees = tc.disagrees();
    else reported_agree = reported_agree && tc.agrees();
  }
  EXPECT_TRUE(device_disagrees) << checks::failure_message(caught);
  EXPECT_TRUE(reported_agree) << "the leak is outside the allocator: what the system reports must stay flat";
  // 4 MiB per evaluation over the evaluations after warm-up.
  EXPECT_GE(caught.metric, 3.0 * static_cast<double>(kLeakReplicaBytesPerEvaluation));
  std::cout << checks::one_line(caught) << "\n" << caught.tolerance_model << "\n";
}

TEST(GpuRacyReplica, PassesEveryCheck) {
  if (!gpu::probe_device().available) GTEST_SKIP() << "skipped: no CUDA device";
  auto racy = make_gpu_device_fault_replica("gpu-replica-racy");
  for (std::uint64_t seed : {1, 2, 3, 4, 5}) {
    const Case c = testing::revealing_case("spmm", seed);
    for (checks::CheckKind kind : checks::all_check_kinds()) {
      if (kind == checks::CheckKind::gradient) continue;  // finite differences need float64
      const checks::Verdict v = checks::run_check(kind, *racy, c);
      EXPECT_TRUE(v.passed() || v.conclusion == checks::Conclusion::not_applicable)
          << checks::to_string(kind) << " seed " << seed << ": " << checks::failure_message(v);
    }
  }
}

// Runs `command`, returning its exit code and its output.
int run_command(const std::string& command, std::string& output) {
  const std::string log = std::filesystem::temp_directory_path() / ("gnncheck-sanitize-test-" + std::to_string(::getpid()));
  const int rc = std::system((command + " >" + log + " 2>&1").c_str());
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  output = text.str();
  std::filesystem::remove(log);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(GpuRacyReplica, RacecheckCatchesItAndPassesTheReference) {
  if (!gpu::probe_device().available) GTEST_SKIP() << "skipped: no CUDA device";
  try {
    sanitizer::find_program();
  } catch (const InputError& e) {
    GTEST_SKIP() << "skipped: " << e.what();
  }
  const std::filesystem::path report = std::filesystem::temp_directory_path() / "gnncheck-racy-report";
  const std::string base = std::string(GNNCHECK_EXE) + " run " + GNNCHECK_TEST_SOURCE_DIR +
                           "/suites/gpu_replicas.yaml --entry racy-reduction-sanitized --progress plain --jobs 2 --report " +
                           report.string();
  std::string out;
  // The entry expects the replica to pass every check; named with --expect caught, racecheck must catch it.
  EXPECT_EQ(run_command(base + " --system gpu-replica-racy --expect caught --sanitize racecheck", out), 0) << out;
  EXPECT_NE(out.find("sanitize_racecheck"), std::string::npos) << out;
  std::string reference_out;
  EXPECT_EQ(run_command(std::string(GNNCHECK_EXE) + " run " + GNNCHECK_TEST_SOURCE_DIR +
                            "/suites/gpu_replicas.yaml --entry racy-reduction-sanitized --system gpu --progress plain --jobs 2 "
                            "--sanitize racecheck --report " + report.string(),
                        reference_out),
            0)
      << reference_out;
  std::filesystem::remove_all(report);
}

}  // namespace
}  // namespace gnncheck

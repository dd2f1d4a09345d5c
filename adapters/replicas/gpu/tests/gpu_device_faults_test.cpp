// The replicas whose fault changes no answer (device_fault_replicas.h), on the device:
//   - gpu-replica-leak fails `resources` through gnncheck's own device measurement, while what it
//     reports itself (the accounting allocator's live and peak bytes) stays flat; the reference passes;
//   - gpu-replica-curand-leak (a cuRAND generator per call, never destroyed) fails it the same way at
//     the default settings; the test first measures what one XORWOW and one Philox generator hold on
//     the device, prints it, and requires XORWOW's to be at least the leak the check always sees;
//   - gpu-replica-racy passes every check, and `gnncheck run --sanitize racecheck` catches it in its
//     own kernel (when compute-sanitizer is installed; the test says so when it is not).
// Needs a CUDA device; skips with the reason otherwise.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include <curand.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "adapters/replicas/gpu/device_fault_replicas.h"
#include "adapters/sanitizer.h"
#include "adapters/tests/adapter_test_support.h"
#include "checks/checks.h"
#include "checks/resources.h"
#include "platform/device_memory.h"
#include "gpu/context.h"
#include "gpu/gpu_systems.h"

namespace gnncheck {
namespace {

// The leak is outside the system's allocator: the device memory gnncheck measures grew past its
// bound, what the system reports about itself stayed flat.
void expect_caught_by_the_device_series_alone(const checks::Verdict& caught) {
  bool device_disagrees = false, reported_agree = true;
  for (const auto& tc : caught.comparisons) {
    const bool device = tc.tensor.find("measured by gnncheck") != std::string::npos;
    if (device) device_disagrees = tc.disagrees();
    else reported_agree = reported_agree && tc.agrees();
  }
  EXPECT_TRUE(device_disagrees) << checks::failure_message(caught);
  EXPECT_TRUE(reported_agree) << "what the system reports must stay flat: " << checks::failure_message(caught);
}

TEST(GpuLeakReplica, ResourcesCatchesItThroughTheDeviceMeasurement) {
  if (!gpu::probe_device().available) GTEST_SKIP() << "skipped: no CUDA device";
  const Case c = testing::revealing_case("spmm", 3);
  auto reference = make_gpu_system();
  const checks::Verdict ok = checks::resources(*reference, c);
  EXPECT_TRUE(ok.passed()) << "false alarm on gpu: " << checks::failure_message(ok) << "\n" << ok.tolerance_model;
  auto leak = make_gpu_device_fault_replica("gpu-replica-leak");
  const checks::Verdict caught = checks::resources(*leak, c);
  ASSERT_EQ(caught.conclusion, checks::Conclusion::fail) << checks::one_line(caught);
  expect_caught_by_the_device_series_alone(caught);
  // 4 MiB per evaluation over the evaluations after warm-up.
  EXPECT_GE(caught.metric, 3.0 * static_cast<double>(kLeakReplicaBytesPerEvaluation));
  std::cout << checks::one_line(caught) << "\n" << caught.tolerance_model << "\n";
}

// This process's device memory: NVML's per-process figure, else the device's memory in use.
std::int64_t own_device_bytes(std::string* source) {
  cudaDeviceSynchronize();
  if (const auto mine = device_memory::process_memory(getpid())) {
    *source = mine->source;
    return mine->bytes;
  }
  std::size_t free = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  *source = "cudaMemGetInfo (the whole device)";
  return static_cast<std::int64_t>(total - free);
}

// Device bytes one generator of `type` holds once it has generated numbers: `count` of them live
// at once, measured around their creation (so the 2 MiB pages blur it by under 2 MiB / count).
double generator_device_bytes(curandRngType_t type, int count, std::string* source) {
  float* out = nullptr;
  EXPECT_EQ(cudaMalloc(&out, 1024 * sizeof(float)), cudaSuccess);
  {  // one generator first, so that cuRAND's own module and tables are loaded before the measurement
    curandGenerator_t g = nullptr;
    EXPECT_EQ(curandCreateGenerator(&g, type), CURAND_STATUS_SUCCESS);
    EXPECT_EQ(curandGenerateUniform(g, out, 1024), CURAND_STATUS_SUCCESS);
    EXPECT_EQ(curandDestroyGenerator(g), CURAND_STATUS_SUCCESS);
  }
  const std::int64_t before = own_device_bytes(source);
  std::vector<curandGenerator_t> generators(static_cast<std::size_t>(count));
  for (curandGenerator_t& g : generators) {
    EXPECT_EQ(curandCreateGenerator(&g, type), CURAND_STATUS_SUCCESS);
    EXPECT_EQ(curandGenerateUniform(g, out, 1024), CURAND_STATUS_SUCCESS);
  }
  const std::int64_t with = own_device_bytes(source);
  for (curandGenerator_t g : generators) EXPECT_EQ(curandDestroyGenerator(g), CURAND_STATUS_SUCCESS);
  const std::int64_t after = own_device_bytes(source);
  std::cout << fmt::format("{} cuRAND generators of type {}: {} bytes more device memory while they live ({:.0f} "
                           "bytes each), {} bytes more than before once destroyed ({})\n",
                           count, static_cast<int>(type), with - before, static_cast<double>(with - before) / count,
                           after - before, *source);
  cudaFree(out);
  return static_cast<double>(with - before) / count;
}

TEST(GpuCurandLeakReplica, OneGeneratorHoldsMoreThanTheDetectableLeakAndResourcesCatchesIt) {
  if (!gpu::probe_device().available) GTEST_SKIP() << "skipped: no CUDA device";
  std::string source;
  const double xorwow = generator_device_bytes(CURAND_RNG_PSEUDO_XORWOW, 128, &source);
  generator_device_bytes(CURAND_RNG_PSEUDO_PHILOX4_32_10, 128, &source);
  const checks::CheckOptions defaults;
  const checks::PageGrowthCriterion criterion{defaults.resource_device_evaluations, defaults.resource_warmup,
                                              device_memory::kDriverPageBytes};
  // The replica's premise: what it leaks per call is within what the default resources check always sees.
  EXPECT_GE(xorwow, static_cast<double>(criterion.detectable_leak_bytes()));

  const Case c = testing::revealing_case("spmm", 3);
  auto leak = make_gpu_device_fault_replica("gpu-replica-curand-leak");
  const checks::Verdict caught = checks::resources(*leak, c);
  ASSERT_EQ(caught.conclusion, checks::Conclusion::fail) << checks::one_line(caught) << "\n" << caught.tolerance_model;
  expect_caught_by_the_device_series_alone(caught);
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

// gnncheck's own device-memory readings (core/device_memory.h). Runs everywhere: without the NVIDIA
// driver every reading says why it measured nothing; with it, this test's process (which never loads
// the CUDA driver) holds no device memory.
#include "core/device_memory.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace gnncheck::device_memory {
namespace {

TEST(DeviceMemory, NoDriverGivesAReasonNeverAFigure) {
  std::string why;
  const auto devices = device_count(&why);
  if (nvml_problem()) {
    EXPECT_FALSE(devices.has_value());
    EXPECT_NE(why.find("NVML"), std::string::npos) << why;
    EXPECT_FALSE(process_memory(getpid()).has_value());
    EXPECT_FALSE(device_used().has_value());
  } else {
    ASSERT_TRUE(devices.has_value());
    EXPECT_GT(*devices, 0u);
    ASSERT_TRUE(device_used().has_value());
    EXPECT_GT(device_used()->bytes, 0);
  }
}

// This test never creates a CUDA context (loading NVML may map the CUDA driver library, which is
// not a context): whatever is read for it is 0 bytes, or nothing where the driver cannot tell.
TEST(DeviceMemory, AProcessWithoutAContextNeverReadsAsHoldingDeviceMemory) {
  if (nvml_problem()) GTEST_SKIP() << "no NVML here: " << *nvml_problem();
  if (const auto mine = process_memory(getpid())) {
    EXPECT_EQ(mine->bytes, 0) << mine->source;
    EXPECT_NE(mine->source.find("no"), std::string::npos) << mine->source;
  }
  if (const auto group = process_group_memory(getpgrp())) EXPECT_EQ(group->bytes, 0) << group->source;
}

TEST(DeviceMemory, RetainedCounterAddsEachEvaluationsGrowthAndRestartsOnANewSource) {
  RetainedCounter counter;
  EXPECT_FALSE(counter.total().has_value());
  counter.add({1000, "device"}, {1000 + kDriverPageBytes, "device"});
  counter.add({5000, "device"}, {5000, "device"});  // what happened between evaluations is not counted
  ASSERT_TRUE(counter.total().has_value());
  EXPECT_EQ(counter.total()->bytes, kDriverPageBytes);
  const std::string first_source = counter.total()->source;
  counter.add({0, "process"}, {10, "process"});
  EXPECT_EQ(counter.total()->bytes, 10);
  EXPECT_NE(counter.total()->source, first_source);
}

}  // namespace
}  // namespace gnncheck::device_memory

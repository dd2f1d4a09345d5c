// gnncheck's own device-memory readings (platform/device_memory.h). Runs everywhere: without the NVIDIA
// driver every reading says why it measured nothing; with it, this test's process (which never loads
// the CUDA driver) holds no device memory.
#include "platform/device_memory.h"

#include <unistd.h>

#include <mutex>
#include <thread>

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

TEST(DeviceMemory, TheDeviceLockCountsOnlyTheHoldsOfThreadsThatDidNotHoldItAlready) {
  DeviceLock& lock = in_process_device_lock();
  std::unique_lock outer(lock);
  const std::uint64_t held = lock.holds();
  { std::lock_guard nested(lock); }  // the same thread again: still one hold
  EXPECT_EQ(lock.holds(), held);
  outer.unlock();
  std::thread([&] { std::lock_guard other(lock); }).join();
  outer.lock();
  EXPECT_GT(lock.holds(), held);  // another thread held it in between
}

// A process whose device memory the test scripts: `held` bytes, each evaluation leaving `leak`
// more, and `between` more added by "another thread" after each evaluation.
struct ScriptedProcess {
  std::int64_t held = 100 * kDriverPageBytes;
  std::int64_t leak = 0, between = 0;
  bool whole_device = false;
  int readings = 0;
  std::optional<Reading> read() {
    ++readings;
    return Reading{held, whole_device ? "device" : "process", whole_device};
  }
  void evaluate() { held += leak; }
  void run(RetainedMeter& meter, MemoryFigures figures) {
    meter.run(figures, [&] { return read(); }, [&] { evaluate(); });
    held += between;
  }
};

TEST(DeviceMemory, AMeterHeldAcrossASeriesReadsOnlyTheReadEvaluationsAndMissesNoLeak) {
  ScriptedProcess p;
  p.leak = 4096;
  RetainedMeter meter;
  std::unique_lock series(in_process_device_lock());  // the resources check holds it across its series
  p.run(meter, MemoryFigures::read);                   // the anchor: read before and after
  EXPECT_EQ(p.readings, 2);
  for (int k = 0; k < 49; ++k) p.run(meter, MemoryFigures::counted);
  EXPECT_EQ(p.readings, 2);  // counted evaluations read nothing
  p.run(meter, MemoryFigures::read);
  EXPECT_EQ(p.readings, 3);  // one reading: after, against the anchor
  ASSERT_TRUE(meter.total());
  EXPECT_EQ(meter.total()->bytes, 51 * 4096);  // every evaluation's leak, the counted ones' included
}

TEST(DeviceMemory, AMeterNotHeldAcrossMeasuresAroundEachEvaluationAndCountsNoOtherThread) {
  ScriptedProcess p;
  p.leak = 4096;
  p.between = 1 << 20;  // what other threads allocate between evaluations is never this system's
  RetainedMeter meter;
  for (int k = 0; k < 10; ++k) p.run(meter, k == 9 ? MemoryFigures::read : MemoryFigures::counted);
  EXPECT_EQ(p.readings, 20);
  ASSERT_TRUE(meter.total());
  EXPECT_EQ(meter.total()->bytes, 10 * 4096);
}

TEST(DeviceMemory, AMeterReadsAroundEachEvaluationWhenEveryProcessCountsInTheReading) {
  ScriptedProcess p;
  p.whole_device = true;  // other processes' work between evaluations would show: never skip
  p.leak = 4096;
  RetainedMeter meter;
  std::unique_lock series(in_process_device_lock());
  for (int k = 0; k < 5; ++k) p.run(meter, MemoryFigures::counted);
  EXPECT_EQ(p.readings, 10);
  EXPECT_EQ(meter.total()->bytes, 5 * 4096);
  EXPECT_TRUE(meter.total()->whole_device);
}

TEST(DeviceMemory, AnUnreadEvaluationIsNeverMeasuredAndEndsTheSeries) {
  ScriptedProcess p;
  p.leak = 4096;
  RetainedMeter meter;
  std::unique_lock series(in_process_device_lock());
  p.run(meter, MemoryFigures::read);
  p.run(meter, MemoryFigures::unread);  // another check's evaluation: no reading
  EXPECT_EQ(p.readings, 2);
  p.run(meter, MemoryFigures::counted);  // the series starts afresh: read around it
  EXPECT_EQ(p.readings, 4);
  EXPECT_EQ(meter.total()->bytes, 2 * 4096);  // the unread evaluation's leak is not a series' figure
}

}  // namespace
}  // namespace gnncheck::device_memory

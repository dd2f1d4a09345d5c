// The scale-only GPU replicas' catalogue, checked without a device: unique names apart from the
// other GPU replicas, one target each that the reference has and the device-resident scale path
// runs, a catch command that names the replica and expects it caught, and an unknown name reported
// with the known ones.
#include <set>

#include <gtest/gtest.h>

#include "adapters/replicas/gpu/gpu_replicas.h"
#include "adapters/replicas/gpu/gpu_scale_replicas.h"
#include "gpu/gpu_systems.h"
#include "gpu/gpu_targets.h"
#include "core/error.h"

namespace gnncheck {
namespace {

TEST(GpuScaleReplicaCatalogue, EntriesAreDistinctAndRunOnTheDevicePath) {
  std::set<std::string> names;
  for (const auto& info : gpu_replica_catalogue()) names.insert(info.name);
  const auto reference = make_gpu_system();
  const auto catalogue = gpu_scale_replica_catalogue();
  ASSERT_EQ(catalogue.size(), 3u);
  for (const auto& info : catalogue) {
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate name " << info.name;
    EXPECT_TRUE(reference->supports(info.target)) << info.target;
    EXPECT_TRUE(gpu::device_resident_targets().count(info.target)) << info.target;
    EXPECT_NE(info.catch_command.find("--system " + info.name + " --target " + info.target), std::string::npos) << info.catch_command;
    EXPECT_NE(info.catch_command.find("--expect caught"), std::string::npos) << info.catch_command;
    const auto replica = make_gpu_scale_replica(info.name);
    EXPECT_EQ(replica->name(), info.name);
    EXPECT_TRUE(replica->supports(info.target));
    EXPECT_NE(gpu::device_targets_of(*replica), nullptr);
  }
}

TEST(GpuScaleReplicaCatalogue, UnknownNameListsTheKnownOnes) {
  try {
    make_gpu_scale_replica("nope");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu_scale_race_on_hubs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gnncheck

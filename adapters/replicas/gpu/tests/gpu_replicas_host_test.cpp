// The GPU replica catalogue, checked without a device: names, the CPU replica each reproduces, the
// targets each evaluates, the checks named, and how an unknown name or a missing device is reported.
#include <set>

#include <gtest/gtest.h>

#include "adapters/replicas/gpu/gpu_replicas.h"
#include "adapters/replicas/replicas.h"
#include "checks/checks.h"
#include "gpu/context.h"
#include "gpu/gpu_systems.h"
#include "core/error.h"

namespace gnncheck {
namespace {

TEST(GpuReplicaCatalogue, EachEntryReproducesACpuReplicaOnTargetsTheReferenceHas) {
  const auto catalogue = gpu_replica_catalogue();
  ASSERT_EQ(catalogue.size(), 5u);
  std::set<std::string> names;
  auto reference = make_gpu_system();
  for (const GpuReplicaInfo& info : catalogue) {
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate name " << info.name;
    EXPECT_EQ(info.name, "gpu-replica-" + std::to_string(info.number));
    const ReplicaInfo cpu = find_replica(replica_catalogue().at(info.number - 1).name);
    EXPECT_EQ(cpu.number, info.number);
    EXPECT_EQ(cpu.expected_check, info.expected_check) << info.name;
    EXPECT_NO_THROW(checks::parse_check_kind(info.expected_check));
    auto replica = make_gpu_replica(info.name);
    EXPECT_EQ(replica->name(), info.name);
    for (const std::string& target : info.targets) {
      EXPECT_TRUE(replica->supports(target)) << info.name << " " << target;
      EXPECT_TRUE(reference->supports(target)) << target;
    }
    EXPECT_FALSE(replica->supports("gcn")) << info.name << " injects no bug into layers";
  }
}

TEST(GpuReplicaCatalogue, UnknownNameAndMissingDeviceAreReported) {
  try {
    make_gpu_replica("gpu-replica-99");
    FAIL() << "no error for an unknown name";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu-replica-99"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("gpu-replica-1"), std::string::npos);
  }
  auto replica = make_gpu_replica("gpu-replica-8");
  if (!gpu::probe_device().available) {
    EXPECT_FALSE(replica->availability().available);
    EXPECT_FALSE(replica->availability().reason.empty());
  }
}

}  // namespace
}  // namespace gnncheck

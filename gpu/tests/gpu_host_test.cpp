// The GPU systems' behaviour that needs no device, run everywhere (label cpu): availability and
// the "no CUDA device" answer, the targets each system claims, and the control for the bounds the
// GPU tests use (the oracle's own code in float32 must pass them); the GPU layers' own A + I against
// the oracle's.
#include <gtest/gtest.h>

#include "core/error.h"
#include "gpu/layers/self_loops.h"
#include "oracle/layers/self_loops.h"

#include "oracle/cpu_systems.h"
#include "gpu/gpu_systems.h"
#include "gpu/gpu_targets.h"
#include "gpu/tests/gpu_test_support.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::gpu::testing {
namespace {

// The same graph as the oracle's A + I, edge for edge, on square graphs and blocks (n_dst < n_src),
// with empty rows, duplicate edges, existing self-loops and an edgeless graph.
TEST(GpuSelfLoops, AppendSelfLoopsMatchesTheOracle) {
  const std::vector<Graph> graphs = {
      Graph::from_edges(4, 4, std::vector<index_t>{0, 0, 2, 3, 3}, std::vector<index_t>{1, 1, 2, 0, 3}),
      Graph::from_edges(3, 5, std::vector<index_t>{0, 2, 2}, std::vector<index_t>{4, 0, 2}),
      Graph::from_edges(2, 2, std::vector<index_t>{}, std::vector<index_t>{}),
      Graph::from_edges(1, 1, std::vector<index_t>{0}, std::vector<index_t>{0}),
  };
  for (const Graph& g : graphs) {
    const Graph ours = append_self_loops(g), oracles = oracle::layers::with_destination_self_loops(g);
    SCOPED_TRACE(g.summary());
    EXPECT_EQ(ours.n_dst(), oracles.n_dst());
    EXPECT_EQ(ours.n_src(), oracles.n_src());
    EXPECT_EQ(std::vector<index_t>(ours.row_ptr().begin(), ours.row_ptr().end()),
              std::vector<index_t>(oracles.row_ptr().begin(), oracles.row_ptr().end()));
    EXPECT_EQ(std::vector<index_t>(ours.col_idx().begin(), ours.col_idx().end()),
              std::vector<index_t>(oracles.col_idx().begin(), oracles.col_idx().end()));
  }
  EXPECT_THROW(append_self_loops(Graph::from_edges(3, 2, std::vector<index_t>{}, std::vector<index_t>{})), InternalError);
}

TEST(GpuSystemsAvailability, ReportsTheDeviceStateAndNeverCrashes) {
  auto gpu = make_gpu_system();
  auto cusparse = make_cusparse_system();
  const bool device = probe_device().available;
  EXPECT_EQ(gpu->availability().available, device);
  EXPECT_EQ(cusparse->availability().available, device);
  if (!device) {
    EXPECT_NE(gpu->availability().reason.find("no CUDA device"), std::string::npos) << gpu->availability().reason;
    // Evaluating without a device is an answer (unsupported, with the reason), not a crash.
    auto g = std::make_shared<const Graph>(random_graph(GraphKind::tiny, 1));
    const Case c = oracle::make_random_case(oracle::find_target("spmm"), g, {}, 1, {});
    const Result r = gpu->evaluate(c);
    EXPECT_EQ(r.status, Status::unsupported);
    EXPECT_NE(r.message.find("no CUDA device"), std::string::npos) << r.message;
  }
  EXPECT_EQ(gpu->name(), "gpu");
  EXPECT_EQ(cusparse->name(), "cusparse");
  EXPECT_EQ(gpu->precision("spmm"), Precision::float32);
}

TEST(GpuSystemsAvailability, ClaimsTheRightTargets) {
  auto gpu = make_gpu_system();
  auto cusparse = make_cusparse_system();
  // The GPU reference implements every target of the catalogue: a new target comes with its kernels.
  for (const auto& def : oracle::all_targets()) EXPECT_TRUE(gpu->supports(def.spec.name)) << def.spec.name;
  for (const char* op : {"spmm", "spmm_transposed", "spmm_ve", "spmm_ve_transposed", "sddmm_dot"})
    EXPECT_TRUE(cusparse->supports(op)) << op;
  for (const char* op : {"edge_softmax", "sddmm_add", "gcn", "normalized_spmm"}) EXPECT_FALSE(cusparse->supports(op)) << op;
  EXPECT_FALSE(gpu->supports("no_such_target"));
}

// The half-precision cuSPARSE systems declare the format they store in and float32 sums on every
// target, the Aᵀ products included (computed over the CSC, not by cuSPARSE's opA = TRANSPOSE, whose
// half-precision sums were measured coarser: gpu/README.md), and only the targets cuSPARSE computes
// in that format: bfloat16 has no SDDMM, so no target that needs one.
TEST(GpuSystemsAvailability, TheHalfPrecisionCusparseSystemsDeclareStorageAndFloat32Sums) {
  auto f16 = make_cusparse_float16_system();
  auto bf16 = make_cusparse_bfloat16_system();
  EXPECT_EQ(f16->name(), "cusparse_float16");
  EXPECT_EQ(bf16->name(), "cusparse_bfloat16");
  EXPECT_EQ(f16->availability().available, probe_device().available);
  for (const char* op : {"spmm", "spmm_transposed", "spmm_ve", "spmm_ve_transposed", "sddmm_dot"}) {
    EXPECT_TRUE(f16->supports(op)) << op;
    EXPECT_EQ(f16->precision(op), Precision::float16);
    EXPECT_EQ(f16->accumulation(op), Precision::float32);
  }
  for (const char* op : {"spmm", "spmm_transposed"}) {
    EXPECT_TRUE(bf16->supports(op)) << op;
    EXPECT_EQ(bf16->precision(op), Precision::bfloat16);
    EXPECT_EQ(bf16->accumulation(op), Precision::float32);
  }
  for (const char* op : {"spmm_ve", "spmm_ve_transposed", "sddmm_dot"}) EXPECT_FALSE(bf16->supports(op)) << op;
  for (const char* op : {"edge_softmax", "gcn"}) EXPECT_FALSE(f16->supports(op)) << op;
}

// The GPU reference stored in a coarser format: every target of `gpu`, the format declared with
// float32 sums, no device-resident path (its kernels alone compute float32: the rounding is in
// evaluate()), and only the formats coarser than float32.
TEST(GpuSystemsAvailability, TheStoredGpuReferenceDeclaresItsFormatOnEveryTarget) {
  for (Precision storage : {Precision::float16, Precision::bfloat16, Precision::tf32}) {
    auto stored = make_gpu_stored_system(storage);
    SCOPED_TRACE(stored->name());
    EXPECT_EQ(stored->name(), gpu_stored_system_name(storage));
    EXPECT_EQ(stored->availability().available, probe_device().available);
    for (const auto& def : oracle::all_targets()) {
      EXPECT_TRUE(stored->supports(def.spec.name)) << def.spec.name;
      EXPECT_EQ(stored->precision(def.spec.name), storage);
      EXPECT_EQ(stored->accumulation(def.spec.name), Precision::float32);
    }
    EXPECT_EQ(device_targets_of(*stored), nullptr);
  }
  EXPECT_EQ(gpu_stored_system_name(Precision::bfloat16), "gpu_bfloat16_float32_sums");
  EXPECT_NE(device_targets_of(*make_gpu_system()), nullptr);
  EXPECT_THROW(make_gpu_stored_system(Precision::float32), InternalError);
  EXPECT_THROW(make_gpu_stored_system(Precision::float64), InternalError);
}

// The control for the bounds: the oracle's own code in float32 (a correct float32 implementation
// with other summation orders than the GPU's) passes the same comparison. Runs without a device.
TEST(GpuBoundsControl, CpuFloat32MatchesTheOracleUnderTheSameBounds) {
  auto cpu = make_cpu_float32_system();
  auto gpu = make_gpu_system();
  for (const auto& def : oracle::all_targets()) {
    if (!gpu->supports(def.spec.name)) continue;
    SCOPED_TRACE(def.spec.name);
    EXPECT_GT(check_target(*cpu, def.spec.name, 2, 7000).cases, 0);
  }
}

}  // namespace
}  // namespace gnncheck::gpu::testing

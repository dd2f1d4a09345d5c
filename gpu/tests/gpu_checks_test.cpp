// Every check of the check library (checks/checks.h) on the `gpu` and `cusparse` systems, and on
// `gpu` stored in float16, bfloat16 and TF32 (gpu_<format>_float32_sums): for each
// target they claim, on a square graph with duplicates and empty rows and on a non-square block,
// differential, adjoint, op-order, the three metamorphic checks, both state checks, numerics
// (large logits) and resources (no device-memory growth across evaluations) must pass wherever
// the oracle's own code in float32 passes them on the same case. The gradient check applies to
// float64 systems only and reports itself not applicable here.
#include <cstdio>

#include <gtest/gtest.h>

#include "adapters/replicas/half_precision.h"
#include "oracle/cpu_systems.h"
#include "oracle/random_case.h"
#include "checks/checks.h"
#include "gpu/gpu_systems.h"
#include "gpu/tests/gpu_test_support.h"
#include "oracle/targets.h"

namespace gnncheck::gpu::testing {
namespace {

// Runs every check on every target `system` claims. With `control` (the oracle's code in float32),
// each check runs on the control first: where the control fails too, the check itself cannot
// hold on that case (e.g. a relabeling that breaks the layers' destinations-are-the-first-sources
// convention), and the GPU verdict is printed but not required to pass.
// `inconclusive_allowed`: a verdict of inconclusive is no failure (a half format's rounding may
// reach a kink or a softmax row on this system's case where it did not on the control's).
// `only`: these checks instead of every one. Returns how many required verdicts passed and how many
// were inconclusive.
struct RequiredVerdicts {
  int passed = 0;
  int inconclusive = 0;
};
RequiredVerdicts check_every_target(System& system, std::uint64_t base_seed, System* control = nullptr,
                                    bool inconclusive_allowed = false, const std::vector<checks::CheckKind>& only = {}) {
  RequiredVerdicts counts;
  for (const auto& def : oracle::all_targets()) {
    const std::string& target = def.spec.name;
    if (!system.supports(target)) continue;
    for (GraphKind kind : {GraphKind::square_with_duplicates, GraphKind::non_square_wide}) {
      const std::uint64_t seed = base_seed + static_cast<std::uint64_t>(kind);
      std::mt19937_64 rng(seed);
      auto graph = std::make_shared<const Graph>(random_graph(kind, seed));
      const Case c = make_case(target, graph, random_attributes(target, rng), seed);
      for (checks::CheckKind check : only.empty() ? checks::all_check_kinds() : only) {
        const bool control_passes = control == nullptr || [&] {
          const checks::Verdict r = checks::run_check(check, *control, c);
          return r.passed() || r.conclusion == checks::Conclusion::not_applicable;
        }();
        const checks::Verdict v = checks::run_check(check, system, c);
        std::printf("%s%s\n", control_passes ? "" : "[control fails too: not required] ", checks::one_line(v).c_str());
        const bool allowed = v.passed() || v.conclusion == checks::Conclusion::not_applicable ||
                             (inconclusive_allowed && v.conclusion == checks::Conclusion::inconclusive);
        if (!control_passes) continue;
        EXPECT_TRUE(allowed) << checks::failure_message(v) << "\n" << v.detail << "\ncase: " << describe(c);
        counts.passed += v.passed();
        counts.inconclusive += v.conclusion == checks::Conclusion::inconclusive;
      }
    }
  }
  return counts;
}

TEST(GpuChecksTest, GpuSystemPassesEveryCheck) {
  GNNCHECK_GPU_TEST_REQUIRES_DEVICE();
  auto gpu = make_gpu_system();
  auto control = make_cpu_float32_system();
  check_every_target(*gpu, 300, control.get());
}

// Both source-degree conventions (oracle/degree_norm.h) on graphs whose in- and out-degrees differ,
// non-square both ways and with hub rows: the convention reaches the kernels (the two answers
// differ) and each passes differential, adjoint and op_order against the oracle.
TEST(GpuChecksTest, BothSourceDegreeConventionsPassOnGraphsWhoseDegreesDiffer) {
  GNNCHECK_GPU_TEST_REQUIRES_DEVICE();
  auto gpu = make_gpu_system();
  for (const std::string target : {"normalized_spmm", "gcn"}) {
    for (GraphKind kind : {GraphKind::square_with_duplicates, GraphKind::non_square_wide, GraphKind::non_square_tall,
                           GraphKind::hub_rows}) {
      const std::uint64_t seed = 500 + static_cast<std::uint64_t>(kind);
      auto graph = std::make_shared<const Graph>(random_graph(kind, seed));
      for (const bool self_loops : {true, false}) {
        Attributes out{{"source_degree", std::string("out")}};
        if (target == "gcn") out.set("self_loops", self_loops);
        else if (self_loops) continue;
        if (target == "gcn" && self_loops && !graph_fits(target, *graph)) continue;
        Attributes in = out;
        in.set("source_degree", std::string("in"));
        const Case c_out = make_case(target, graph, out, seed), c_in = make_case(target, graph, in, seed);
        const Result y_out = gpu->evaluate(c_out), y_in = gpu->evaluate(c_in);
        ASSERT_TRUE(y_out.ok() && y_in.ok()) << y_out.message << y_in.message << "\ncase: " << describe(c_in);
        if (graph->num_edges() > 0) { EXPECT_NE(y_out.outputs.at("y"), y_in.outputs.at("y")) << describe(c_in); }
        for (const Case* c : {&c_out, &c_in})
          for (checks::CheckKind check : {checks::CheckKind::differential, checks::CheckKind::adjoint, checks::CheckKind::op_order}) {
            const checks::Verdict v = checks::run_check(check, *gpu, *c);
            std::printf("%s\n", checks::one_line(v).c_str());
            EXPECT_TRUE(v.passed()) << checks::failure_message(v) << "\n" << v.detail << "\ncase: " << describe(*c);
          }
      }
    }
  }
}

// The GPU reference stored in each coarser format, under that declaration (float32 sums): every
// check whose bounds read the format, on every target, required where the CPU control stored the
// same way passes it. An inconclusive case (a kink or a softmax row within the format's rounding)
// is no failure. The state and resources checks are left to `gpu`: storing at the boundary adds
// no state and no device memory to its kernels.
TEST(GpuChecksTest, TheStoredGpuReferencePassesEveryCheckInEachFormat) {
  GNNCHECK_GPU_TEST_REQUIRES_DEVICE();
  std::uint64_t seed = 500;
  for (Precision storage : {Precision::float16, Precision::bfloat16, Precision::tf32}) {
    auto stored = make_gpu_stored_system(storage);
    auto control = make_half_storage_system(storage);
    SCOPED_TRACE(stored->name());
    const RequiredVerdicts counts =
        check_every_target(*stored, seed += 10, control.get(), /*inconclusive_allowed=*/true,
                           {checks::CheckKind::differential, checks::CheckKind::adjoint, checks::CheckKind::op_order,
                            checks::CheckKind::metamorphic_relabel, checks::CheckKind::metamorphic_edge_order,
                            checks::CheckKind::metamorphic_linearity, checks::CheckKind::numerics});
    // Inconclusive is allowed case by case, never as the rule: no green from verdicts that decide nothing.
    EXPECT_GT(counts.passed, counts.inconclusive) << counts.passed << " passed, " << counts.inconclusive << " inconclusive";
  }
}

// What makes it a stored system: every value it returns is one of its format, and it computes on
// stored inputs (its answer differs from the float32 reference's where an input is not of the format).
TEST(GpuChecksTest, TheStoredGpuReferenceReturnsValuesOfItsFormatFromStoredInputs) {
  GNNCHECK_GPU_TEST_REQUIRES_DEVICE();
  auto gpu = make_gpu_system();
  auto g = std::make_shared<const Graph>(random_graph(GraphKind::square_with_duplicates, 61));
  const Case c = oracle::make_random_case(oracle::find_target("gat"), g, {}, 61, {});
  const Result plain = gpu->evaluate(c);
  ASSERT_TRUE(plain.ok()) << plain.message;
  for (Precision storage : {Precision::float16, Precision::bfloat16, Precision::tf32}) {
    auto stored = make_gpu_stored_system(storage);
    SCOPED_TRACE(stored->name());
    const Result r = stored->evaluate(c);
    ASSERT_TRUE(r.ok()) << r.message;
    bool differs = false;
    for (const auto& [answer, float32_answer] : {std::pair{&r.outputs, &plain.outputs}, std::pair{&r.gradients, &plain.gradients}})
      for (const auto& [name, t] : *answer) {
        EXPECT_EQ(rounded(t, storage).values(), t.values()) << name << " holds a value outside " << to_string(storage);
        differs = differs || t.values() != float32_answer->at(name).values();
      }
    EXPECT_TRUE(differs) << "the answer is the float32 reference's: the inputs were not stored";
  }
}

TEST(GpuChecksTest, CusparseSystemPassesEveryCheck) {
  GNNCHECK_GPU_TEST_REQUIRES_DEVICE();
  auto cusparse = make_cusparse_system();
  auto control = make_cpu_float32_system();
  check_every_target(*cusparse, 400, control.get());
}

}  // namespace
}  // namespace gnncheck::gpu::testing

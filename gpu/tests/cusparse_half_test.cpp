// The half-precision cuSPARSE systems (`cusparse_float16`, `cusparse_bfloat16`: tensors stored in
// the format, sums in float32, Aᵀ products as non-transposed SpMMs over the CSC) against the
// tolerance model of their declaration (checks/tolerance.md, "Storage and accumulation"):
// differential and adjoint pass on every target they declare over a few hundred seeded cases per
// (target, check) — every one declares float32 sums, since no product uses cuSPARSE's opA =
// TRANSPOSE, whose half-precision sums were measured coarser (gpu/README.md); the coarse
// declaration (accumulation = the storage format) passes too, being only wider; and a planted
// fault — the same system with spmm's sums rounded to the storage format after each addition —
// fails under the declaration the systems make, where the coarse one would let it pass. spmm
// keeps float32 sums in both formats, so the fault is planted in both.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "checks/checks.h"
#include "gpu/gpu_systems.h"
#include "gpu/gpu_targets.h"
#include "gpu/tests/gpu_test_support.h"
#include "gpu/tests/storage_sums_kernels.cuh"
#include "oracle/targets.h"

namespace gnncheck::gpu::testing {
namespace {

// Cases per graph kind (six kinds): GNNCHECK_GPU_CASES_PER_KIND, default 50 (300 per target and check).
int cases_per_kind() {
  const char* env = std::getenv("GNNCHECK_GPU_CASES_PER_KIND");
  return env ? std::max(1, std::atoi(env)) : 50;
}

struct Tally {
  int passed = 0, failed = 0, other = 0;  // other: unsupported (a CSR cuSPARSE refuses), beyond the range, n/a
};

// Runs `check` on `cases` seeded cases per graph kind of every target `system` declares; every
// failure and error is reported with its case.
std::map<std::string, Tally> run_checks(System& system, checks::CheckKind check, int cases, std::uint64_t base_seed) {
  std::map<std::string, Tally> tallies;
  for (const auto& def : oracle::all_targets()) {
    const std::string& target = def.spec.name;
    if (!system.supports(target)) continue;
    Tally& tally = tallies[target];
    for (GraphKind kind : kAllKinds)
      for (int i = 0; i < cases; ++i) {
        const std::uint64_t seed = base_seed + 1000003ull * static_cast<std::uint64_t>(kind) + static_cast<std::uint64_t>(i);
        std::mt19937_64 rng(seed);
        auto graph = std::make_shared<const Graph>(random_graph(kind, seed));
        const Case c = make_case(target, graph, random_attributes(target, rng), seed);
        const checks::Verdict v = checks::run_check(check, system, c);
        if (v.passed()) ++tally.passed;
        else if (v.conclusion == checks::Conclusion::fail || v.conclusion == checks::Conclusion::error) {
          ++tally.failed;
          ADD_FAILURE() << system.name() << ": " << checks::failure_message(v) << "\n" << v.detail << "\ncase: " << describe(c);
        } else ++tally.other;
      }
    std::printf("%s %s %s: %d pass, %d fail, %d neither (unsupported, beyond the range, n/a)\n", system.name().c_str(),
                target.c_str(), std::string(checks::to_string(check)).c_str(), tally.passed, tally.failed, tally.other);
  }
  return tallies;
}

void expect_pass(System& system, int cases, std::uint64_t base_seed) {
  for (checks::CheckKind check : {checks::CheckKind::differential, checks::CheckKind::adjoint})
    for (const auto& [target, tally] : run_checks(system, check, cases, base_seed)) {
      EXPECT_EQ(tally.failed, 0) << system.name() << " " << target;
      // Most cases are decided: the graphs with more entries than rows × cols are the ones refused.
      EXPECT_GT(tally.passed, tally.other) << system.name() << " " << target;
    }
}

class CusparseHalfTest : public ::testing::TestWithParam<StorageFormat> {
 protected:
  void SetUp() override { GNNCHECK_GPU_TEST_REQUIRES_DEVICE(); }
  StorageFormat format() const { return GetParam(); }
  Precision storage() const { return format() == StorageFormat::float16 ? Precision::float16 : Precision::bfloat16; }
  std::unique_ptr<System> declared_system() const {
    return format() == StorageFormat::float16 ? make_cusparse_float16_system() : make_cusparse_bfloat16_system();
  }
};

TEST_P(CusparseHalfTest, EveryDeclaredTargetPassesDifferentialAndAdjoint) {
  auto system = declared_system();
  for (const auto& def : oracle::all_targets()) {
    if (!system->supports(def.spec.name)) continue;
    EXPECT_EQ(system->precision(def.spec.name), storage()) << def.spec.name;
    EXPECT_EQ(system->accumulation(def.spec.name), Precision::float32) << def.spec.name;
  }
  expect_pass(*system, cases_per_kind(), 41000);
}

// Declaring the sums in the storage format is a coarser model (γ_k in u_s): a correct system passes it too.
TEST_P(CusparseHalfTest, TheCoarseDeclarationPassesToo) {
  auto coarse = make_gpu_system_from_targets(declared_system()->name() + "_coarse", cusparse_op_targets(format()),
                                             storage(), storage());
  expect_pass(*coarse, std::max(1, cases_per_kind() / 5), 42000);
}

// One destination summing 4096 distinct sources of x ≡ 1: the exact sum is 4096 (stored exactly);
// a sum kept in float16 stops at 2048 (2048 + 1 rounds back to 2048), in bfloat16 at 256.
Case long_row_of_ones() {
  const index_t sources = 4096;
  std::vector<index_t> dst(sources, 0), src(sources);
  for (index_t j = 0; j < sources; ++j) src[j] = j;
  auto graph = std::make_shared<const Graph>(Graph::from_edges(1, sources, dst, src));
  Case c = make_case("spmm", graph, {}, 43);
  c.inputs["x"] = Tensor(c.inputs.at("x").shape(), 1.0);
  return c;
}

// The declared system with spmm's forward summing in the storage format (its backward unchanged).
std::map<std::string, GpuTargetFn> targets_summing_spmm_in_storage(StorageFormat format) {
  auto targets = cusparse_op_targets(format);
  GpuTargetFn correct = targets.at("spmm");
  targets["spmm"] = [correct, format](TargetRun& run) {
    correct(run);
    const DeviceTensor& x = run.input("x");
    spmm_summing_in_storage(run.ctx, run.graph(), format, x.data(), x.row_size(), run.outputs.at("y").data());
  };
  return targets;
}

// Each of the three verdicts is printed: where a run's log is cut, the last line says which one
// was reached. The planted two follow from the bounds' arithmetic (float32 sums: a bound of at most
// 66 against an error of 2048 or 3840; the coarse bound, γ capped at 1: 2·4096), so a failure here
// that is not theirs is the correct system's own answer on a row of 4096 terms.
TEST_P(CusparseHalfTest, SumsInTheStorageFormatFailUnderTheDeclaredAccumulation) {
  const Case c = long_row_of_ones();
  auto correct = declared_system();
  const checks::Verdict right = checks::run_check(checks::CheckKind::differential, *correct, c);
  std::printf("%s\n", checks::one_line(right).c_str());
  EXPECT_TRUE(right.passed()) << checks::failure_message(right) << "\n" << right.detail;

  auto planted = make_gpu_system_from_targets("planted_storage_sums", targets_summing_spmm_in_storage(format()),
                                              storage(), Precision::float32);
  const checks::Verdict caught = checks::run_check(checks::CheckKind::differential, *planted, c);
  std::printf("%s\n", checks::one_line(caught).c_str());
  EXPECT_EQ(caught.conclusion, checks::Conclusion::fail) << caught.detail;

  // What the declaration buys: under the coarse one the same fault is within γ_4096(u_s) (capped at 1).
  auto planted_coarse = make_gpu_system_from_targets("planted_storage_sums_coarse",
                                                     targets_summing_spmm_in_storage(format()), storage(), storage());
  const checks::Verdict missed = checks::run_check(checks::CheckKind::differential, *planted_coarse, c);
  std::printf("%s\n", checks::one_line(missed).c_str());
  EXPECT_TRUE(missed.passed()) << missed.detail;
}

// One source read by 4096 destinations, the transposed product's input ≡ 1: Aᵀ sums 4096 ones into
// one value, the shape of the measured failures of cuSPARSE's opA = TRANSPOSE in half (many terms
// into one output). Through the CSC that is one row of 4096 float32 terms, exactly 4096; partial
// sums kept in the format would stop at 2048 (float16) or 256 (bfloat16).
Case long_column_of_ones(const std::string& target) {
  const index_t destinations = 4096;
  std::vector<index_t> dst(destinations), src(destinations, 0);
  for (index_t i = 0; i < destinations; ++i) dst[i] = i;
  auto graph = std::make_shared<const Graph>(Graph::from_edges(destinations, 1, dst, src));
  Case c = make_case(target, graph, {}, 44);
  if (target == "spmm") c.grad_outputs["y"] = Tensor(c.grad_outputs.at("y").shape(), 1.0);
  else c.inputs["y"] = Tensor(c.inputs.at("y").shape(), 1.0);
  return c;
}

TEST_P(CusparseHalfTest, TheTransposedProductsKeepFloat32SumsOnALongColumn) {
  auto system = declared_system();
  for (const std::string target : {"spmm", "spmm_transposed"}) {
    const checks::Verdict v = checks::run_check(checks::CheckKind::differential, *system, long_column_of_ones(target));
    std::printf("%s\n", checks::one_line(v).c_str());
    EXPECT_TRUE(v.passed()) << target << ": " << checks::failure_message(v) << "\n" << v.detail;
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, CusparseHalfTest, ::testing::Values(StorageFormat::float16, StorageFormat::bfloat16),
                         [](const ::testing::TestParamInfo<StorageFormat>& info) {
                           return std::string(info.param == StorageFormat::float16 ? "float16" : "bfloat16");
                         });

}  // namespace
}  // namespace gnncheck::gpu::testing

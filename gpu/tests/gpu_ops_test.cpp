// The GPU systems against the float64 oracle: every op and layer they claim, forward and every
// gradient, on seeded graphs of every awkward kind (non-square both ways, duplicates, self-loops,
// empty rows, hub rows longer than a warp, no edges) with heads 1–8 and odd feature widths.
// Each failure prints the case (target, attributes, graph, seed) so it can be re-run.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "oracle/cpu_systems.h"
#include "gpu/device_graph.h"
#include "gpu/device_tensor.h"
#include "gpu/gpu_systems.h"
#include "gpu/spmm.cuh"
#include "gpu/spmm_ve.cuh"
#include "gpu/tests/gpu_test_support.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::gpu::testing {
namespace {

// Random cases per graph kind and target: GNNCHECK_GPU_CASES_PER_KIND (default 4; the recorded
// H200 run uses 334, i.e. 2,004 cases per target over the six graph kinds).
int cases_per_kind() {
  const char* env = std::getenv("GNNCHECK_GPU_CASES_PER_KIND");
  return env ? std::max(1, std::atoi(env)) : 4;
}

class GpuSystemsTest : public ::testing::Test {
 protected:
  void SetUp() override { GNNCHECK_GPU_TEST_REQUIRES_DEVICE(); }
};

TEST_F(GpuSystemsTest, EveryGpuTargetMatchesTheOracle) {
  auto gpu = make_gpu_system();
  for (const auto& def : oracle::all_targets()) {
    if (!gpu->supports(def.spec.name)) continue;
    SCOPED_TRACE(def.spec.name);
    const TargetTally t = check_target(*gpu, def.spec.name, cases_per_kind(), 7000);
    EXPECT_GT(t.cases, 0);
    std::printf("gpu %-20s %5d cases, worst error %.3f of its bound\n", def.spec.name.c_str(), t.cases, t.worst_ratio);
  }
}

TEST_F(GpuSystemsTest, EveryCusparseTargetMatchesTheOracle) {
  auto cusparse = make_cusparse_system();
  for (const auto& def : oracle::all_targets()) {
    if (!cusparse->supports(def.spec.name)) continue;
    SCOPED_TRACE(def.spec.name);
    const TargetTally t = check_target(*cusparse, def.spec.name, cases_per_kind(), 9000);
    EXPECT_GT(t.cases, 0);
    std::printf("cusparse %-20s %5d cases, worst error %.3f of its bound\n", def.spec.name.c_str(), t.cases,
                t.worst_ratio);
  }
}

// cuSPARSE refuses a CSR with more entries than rows × cols (only duplicates make that possible):
// the `cusparse` system says so (unsupported); the `gpu` system computes it with its own kernels.
TEST_F(GpuSystemsTest, DuplicateEntriesBeyondTheDenseSizeAreHandled) {
  auto g = std::make_shared<const Graph>(Graph::from_csr(1, 2, {0, 5}, {0, 0, 1, 0, 1}));
  for (const char* target : {"spmm", "spmm_transposed", "spmm_ve", "spmm_ve_transposed", "sddmm_dot"}) {
    const Case c = make_case(target, g, {}, 11);
    const Result exact = oracle::evaluate(c, Precision::float64);
    ASSERT_TRUE(exact.ok()) << exact.message;
    EXPECT_EQ(compare(exact, make_gpu_system()->evaluate(c), error_bounds(c, exact)).problem, "") << target;
    const Result refused = make_cusparse_system()->evaluate(c);
    EXPECT_EQ(refused.status, Status::unsupported) << target;
    EXPECT_NE(refused.message.find("cuSPARSE refuses"), std::string::npos) << refused.message;
  }
}

// gather_mm's awkward relations: one relation only (a plain matmul), a relation no edge has (its
// weight gradient must be exactly 0, not left over), more relations than edges, and no edges at all.
TEST_F(GpuSystemsTest, GatherMmMatchesTheOracleWithAnEmptyRelationAndWithOneRelation) {
  auto gpu = make_gpu_system();
  struct Setup {
    std::int64_t relations;
    std::int64_t unused;  // the relation no edge gets; -1: none left out
    GraphKind kind;
  };
  for (const Setup s : {Setup{1, -1, GraphKind::square_with_duplicates}, Setup{1, -1, GraphKind::tiny},
                        Setup{4, 2, GraphKind::hub_rows}, Setup{3, 0, GraphKind::non_square_wide},
                        Setup{5, 4, GraphKind::tiny}, Setup{3, -1, GraphKind::no_edges}}) {
    const std::uint64_t seed = 8100 + static_cast<std::uint64_t>(s.relations) * 10 + static_cast<std::uint64_t>(s.kind);
    auto graph = std::make_shared<const Graph>(random_graph(s.kind, seed));
    Case c = make_case("gather_mm", graph, {{"relations", s.relations}, {"in_features", std::int64_t{13}},
                                            {"out_features", std::int64_t{7}}},
                       seed);
    // Edge k's relation walks the relations in turn, skipping the unused one.
    Tensor& types = c.inputs.at("edge_type");
    std::vector<double> used;
    for (std::int64_t r = 0; r < s.relations; ++r)
      if (r != s.unused) used.push_back(static_cast<double>(r));
    for (index_t k = 0; k < types.size(); ++k) types[k] = used[static_cast<std::size_t>(k) % used.size()];
    SCOPED_TRACE(describe(c));
    const Result exact = oracle::evaluate(c, Precision::float64);
    ASSERT_TRUE(exact.ok()) << exact.message;
    const Result got = gpu->evaluate(c);
    EXPECT_EQ(compare(exact, got, error_bounds(c, exact)).problem, "");
    if (!got.ok()) continue;
    std::vector<index_t> edges_of(static_cast<std::size_t>(s.relations), 0);
    for (index_t k = 0; k < types.size(); ++k) ++edges_of[static_cast<std::size_t>(types[k])];
    if (s.unused >= 0) {
      ASSERT_EQ(edges_of[static_cast<std::size_t>(s.unused)], 0);
    }
    const Tensor& grad_w = got.gradients.at("weight");
    const index_t per_relation = grad_w.size() / s.relations;
    for (std::int64_t r = 0; r < s.relations; ++r) {
      if (edges_of[static_cast<std::size_t>(r)] != 0) continue;
      for (index_t i = r * per_relation; i < (r + 1) * per_relation; ++i)
        ASSERT_EQ(grad_w[i], 0.0) << "relation " << r << " has no edge; its weight gradient must be 0";
    }
  }
}

// R-GCN's awkward settings beyond the random sweep: aggr sum and mean, one relation, a relation no
// edge has (its weight gradient must be exactly 0), bases (fewer and more than the relations), no
// root or bias, a block (n_dst < n_src), hub rows and no edges; and two evaluations bit-identical.
TEST_F(GpuSystemsTest, RgcnMatchesTheOracleAcrossAggregationsBasesAndEmptyRelations) {
  auto gpu = make_gpu_system();
  struct Setup {
    std::int64_t relations;
    std::int64_t bases;
    const char* aggr;
    bool root_weight;
    bool bias;
    std::int64_t unused;  // the relation no edge gets; -1: none left out
    GraphKind kind;
  };
  for (const Setup s : {Setup{1, 0, "mean", true, true, -1, GraphKind::square_with_duplicates},
                        Setup{3, 0, "sum", true, false, 1, GraphKind::hub_rows},
                        Setup{3, 0, "mean", true, true, 2, GraphKind::hub_rows},
                        Setup{4, 2, "mean", false, true, 0, GraphKind::non_square_wide},
                        Setup{2, 5, "sum", true, true, -1, GraphKind::square_with_duplicates},
                        Setup{7, 3, "mean", true, false, 6, GraphKind::square_with_duplicates},
                        Setup{5, 0, "mean", true, true, 4, GraphKind::tiny},
                        Setup{3, 1, "sum", true, true, -1, GraphKind::no_edges}}) {
    const std::uint64_t seed = 8300 + static_cast<std::uint64_t>(s.relations) * 10 + static_cast<std::uint64_t>(s.kind);
    auto graph = std::make_shared<const Graph>(random_graph(s.kind, seed));
    Case c = make_case("rgcn", graph,
                       {{"relations", s.relations}, {"bases", s.bases}, {"aggr", std::string(s.aggr)},
                        {"root_weight", s.root_weight}, {"bias", s.bias}, {"in_features", std::int64_t{13}},
                        {"out_features", std::int64_t{7}}},
                       seed);
    // The drawn relations, with the unused one moved to the next.
    Tensor& types = c.inputs.at("edge_type");
    for (index_t k = 0; k < types.size(); ++k)
      if (types[k] == static_cast<double>(s.unused)) types[k] = static_cast<double>((s.unused + 1) % s.relations);
    SCOPED_TRACE(describe(c));
    const Result exact = oracle::evaluate(c, Precision::float64);
    ASSERT_TRUE(exact.ok()) << exact.message;
    const Result got = gpu->evaluate(c);
    EXPECT_EQ(compare(exact, got, error_bounds(c, exact)).problem, "");
    if (!got.ok()) continue;
    const Result again = gpu->evaluate(c);
    ASSERT_TRUE(again.ok()) << again.message;
    for (const auto& [name, t] : got.outputs) EXPECT_EQ(t.values(), again.outputs.at(name).values()) << "output " << name;
    for (const auto& [name, t] : got.gradients)
      EXPECT_EQ(t.values(), again.gradients.at(name).values()) << "gradient " << name;
    if (s.unused < 0 || s.bases > 0) continue;
    const Tensor& grad_w = got.gradients.at("weight");
    const index_t per_relation = grad_w.size() / s.relations;
    for (index_t i = s.unused * per_relation; i < (s.unused + 1) * per_relation; ++i)
      ASSERT_EQ(grad_w[i], 0.0) << "relation " << s.unused << " has no edge; its weight gradient must be 0";
  }
}

// RGAT's settings beyond the random sweep: heads concatenated and averaged, one relation, a relation
// no edge has (its weight gradient must be exactly 0), a block (n_dst < n_src), hub rows (long
// softmax rows), one edge and no edges; and two evaluations bit-identical.
TEST_F(GpuSystemsTest, RgatMatchesTheOracleAcrossHeadsRelationsAndRowLengths) {
  auto gpu = make_gpu_system();
  struct Setup {
    std::int64_t relations;
    std::int64_t heads;
    bool concat;
    bool bias;
    std::int64_t unused;  // the relation no edge gets; -1: none left out
    GraphKind kind;
  };
  for (const Setup s : {Setup{1, 1, true, true, -1, GraphKind::square_with_duplicates},
                        Setup{3, 2, true, true, 1, GraphKind::hub_rows},
                        Setup{3, 3, false, true, 2, GraphKind::hub_rows},
                        Setup{4, 2, false, false, 0, GraphKind::non_square_wide},
                        Setup{7, 4, true, false, 6, GraphKind::square_with_duplicates},
                        Setup{2, 1, true, true, -1, GraphKind::tiny},
                        Setup{3, 2, true, true, -1, GraphKind::no_edges}}) {
    const std::uint64_t seed = 8400 + static_cast<std::uint64_t>(s.relations) * 10 + static_cast<std::uint64_t>(s.kind);
    auto graph = std::make_shared<const Graph>(random_graph(s.kind, seed));
    Case c = make_case("rgat", graph,
                       {{"relations", s.relations}, {"heads", s.heads}, {"concat", s.concat}, {"bias", s.bias},
                        {"in_features", std::int64_t{13}}, {"out_features", std::int64_t{7}}},
                       seed);
    Tensor& types = c.inputs.at("edge_type");
    for (index_t k = 0; k < types.size(); ++k)
      if (types[k] == static_cast<double>(s.unused)) types[k] = static_cast<double>((s.unused + 1) % s.relations);
    SCOPED_TRACE(describe(c));
    const Result exact = oracle::evaluate(c, Precision::float64);
    ASSERT_TRUE(exact.ok()) << exact.message;
    const Result got = gpu->evaluate(c);
    EXPECT_EQ(compare(exact, got, error_bounds(c, exact)).problem, "");
    if (!got.ok()) continue;
    const Result again = gpu->evaluate(c);
    ASSERT_TRUE(again.ok()) << again.message;
    for (const auto& [name, t] : got.outputs) EXPECT_EQ(t.values(), again.outputs.at(name).values()) << "output " << name;
    for (const auto& [name, t] : got.gradients)
      EXPECT_EQ(t.values(), again.gradients.at(name).values()) << "gradient " << name;
    if (s.unused < 0) continue;
    const Tensor& grad_w = got.gradients.at("weight");
    const index_t per_relation = grad_w.size() / s.relations;
    for (index_t i = s.unused * per_relation; i < (s.unused + 1) * per_relation; ++i)
      ASSERT_EQ(grad_w[i], 0.0) << "relation " << s.unused << " has no edge; its weight gradient must be 0";
  }
}

TEST_F(GpuSystemsTest, BadCasesAreErrorsThatNameTheProblem) {
  auto gpu = make_gpu_system();
  auto g = std::make_shared<const Graph>(random_graph(GraphKind::square_with_duplicates, 3));
  Case c = oracle::make_random_case(oracle::find_target("spmm_ve"), g, {{"heads", std::int64_t{2}}}, 3, {});
  c.inputs["x"] = Tensor({g->n_src() + 1, 8});
  Result r = gpu->evaluate(c);
  EXPECT_EQ(r.status, Status::error);
  EXPECT_NE(r.message.find("'x'"), std::string::npos) << r.message;

  c.target = "no_such_target";
  r = gpu->evaluate(c);
  EXPECT_EQ(r.status, Status::unsupported);
}

TEST_F(GpuSystemsTest, MemoryIsReturnedAfterEveryEvaluation) {
  auto gpu = make_gpu_system();
  auto g = std::make_shared<const Graph>(random_graph(GraphKind::hub_rows, 5));
  const Case c = oracle::make_random_case(oracle::find_target("gat"), g, {{"heads", std::int64_t{3}}}, 5, {});
  const Result first = gpu->evaluate(c);
  ASSERT_TRUE(first.ok()) << first.message;
  const auto held = gpu->live_bytes();
  ASSERT_TRUE(held.has_value());
  for (int i = 0; i < 3; ++i) {
    const Result again = gpu->evaluate(c);
    ASSERT_TRUE(again.ok()) << again.message;
    EXPECT_EQ(gpu->live_bytes(), held) << "device memory grew across evaluations";
    EXPECT_EQ(again.peak_bytes, first.peak_bytes);
  }
  // Peak covers at least the inputs, outputs and gradients in float32, and stays within a small
  // multiple of them plus the fixed cuBLAS workspace and the graph's arrays.
  std::int64_t tensor_bytes = 0;
  for (const auto* map : {&c.inputs, &c.parameters, &c.grad_outputs, &first.outputs, &first.gradients})
    for (const auto& [name, t] : *map) tensor_bytes += 4 * t.size();
  EXPECT_GE(*first.peak_bytes, tensor_bytes);
  // GAT on A + I: E' edges; CSR (8-byte offsets, 4-byte columns), cuSPARSE's 32-bit offsets, COO
  // rows, CSC and the 8-byte edge_perm (20(V+1) + 20E' bytes, gpu/device_graph.h) and at most
  // eight live [E', H] edge tensors (logits, scores, alpha, their gradients, a transient copy).
  const std::int64_t edges = g->num_edges() + g->n_dst(), heads = 3;
  const std::int64_t graph_bytes = 8 * (g->n_dst() + 1) + 4 * (g->n_dst() + 1) + 8 * (g->n_src() + 1) + 20 * edges;
  const std::int64_t edge_tensor_bytes = 4 * 8 * edges * heads;
  EXPECT_LE(*first.peak_bytes, *held + 8 * tensor_bytes + graph_bytes + edge_tensor_bytes);
}

}  // namespace
}  // namespace gnncheck::gpu::testing

// The three ways to compute Aᵀ products (native transposed cuSPARSE, cuSPARSE on a materialized
// CSC, the fused eShuffle+SpMMve kernel) all match the oracle, weighted and unweighted, 1–8 heads.
namespace gnncheck::gpu::testing {
namespace {

class TransposeMethodsTest : public ::testing::TestWithParam<TransposeMethod> {
 protected:
  void SetUp() override { GNNCHECK_GPU_TEST_REQUIRES_DEVICE(); }
};

TEST_P(TransposeMethodsTest, WeightedAndUnweightedTransposesMatchTheOracle) {
  const TransposeMethod method = GetParam();
  GpuContext ctx;
  for (GraphKind kind : kAllKinds) {
    for (std::int64_t heads : {1, 3, 8}) {
      const std::uint64_t seed = 500 + static_cast<std::uint64_t>(kind) * 10 + static_cast<std::uint64_t>(heads);
      auto graph = std::make_shared<const Graph>(random_graph(kind, seed));
      const std::int64_t channels = 5;
      const Case c = oracle::make_random_case(oracle::find_target("spmm_ve_transposed"), graph,
                                              {{"heads", heads}, {"features", channels}}, seed, {});
      const Result exact = oracle::evaluate(c, Precision::float64);
      ASSERT_TRUE(exact.ok()) << exact.message;
      DeviceGraph g(ctx, *graph);
      const DeviceTensor w = DeviceTensor::upload(ctx, c.inputs.at("edge_values"));
      const DeviceTensor y = DeviceTensor::upload(ctx, c.inputs.at("y"));
      DeviceTensor z(ctx, {graph->n_src(), heads * channels});
      spmm_ve_transposed_forward(ctx, g, w.data(), heads, y.data(), channels, z.data(), method);
      Result got;
      got.outputs["z"] = z.download(ctx);
      Result exact_forward;
      exact_forward.outputs = exact.outputs;
      EXPECT_EQ(compare(exact_forward, got, error_bounds(c, exact)).problem, "")
          << to_string(method) << " on " << describe(c);

      // Unweighted: Aᵀ·Y for the full [n_dst, H·C] row.
      const Case u = oracle::make_random_case(oracle::find_target("spmm_transposed"), graph,
                                              {{"features", heads * channels}}, seed, {});
      const Result exact_u = oracle::evaluate(u, Precision::float64);
      const DeviceTensor yu = DeviceTensor::upload(ctx, u.inputs.at("y"));
      DeviceTensor zu(ctx, {graph->n_src(), heads * channels});
      spmm_transposed_forward(ctx, g, yu.data(), heads * channels, zu.data(), method);
      Result got_u;
      got_u.outputs["z"] = zu.download(ctx);
      Result exact_u_forward;
      exact_u_forward.outputs = exact_u.outputs;
      EXPECT_EQ(compare(exact_u_forward, got_u, error_bounds(u, exact_u)).problem, "")
          << to_string(method) << " on " << describe(u);
    }
  }
  EXPECT_GT(ctx.allocator.peak_bytes(), 0);
}

INSTANTIATE_TEST_SUITE_P(AllMethods, TransposeMethodsTest,
                         ::testing::Values(TransposeMethod::native_cusparse, TransposeMethod::materialized_csc,
                                           TransposeMethod::fused_csc_kernel),
                         [](const auto& info) { return std::string(to_string(info.param)); });

TEST(DeviceAllocatorTest, CountsCurrentAndPeakBytesAndFreesOnDestruction) {
  GNNCHECK_GPU_TEST_REQUIRES_DEVICE();
  DeviceAllocator alloc;
  {
    DeviceBuffer<float> a(alloc, 1000);
    EXPECT_EQ(alloc.current_bytes(), 4000);
    {
      DeviceBuffer<double> b(alloc, 10);
      EXPECT_EQ(alloc.current_bytes(), 4080);
    }
    EXPECT_EQ(alloc.current_bytes(), 4000);
    DeviceBuffer<float> moved = std::move(a);
    EXPECT_EQ(alloc.current_bytes(), 4000);  // a move transfers, never copies or frees
    DeviceBuffer<float> empty(alloc, 0);
    EXPECT_EQ(empty.data(), nullptr);
  }
  EXPECT_EQ(alloc.current_bytes(), 0);
  EXPECT_EQ(alloc.peak_bytes(), 4080);
  alloc.reset_peak();
  EXPECT_EQ(alloc.peak_bytes(), 0);
}

TEST(DeviceAllocatorTest, OutOfMemoryIsAnErrorThatSaysHowMuchWasHeld) {
  GNNCHECK_GPU_TEST_REQUIRES_DEVICE();
  DeviceAllocator alloc;
  try {
    DeviceBuffer<float> huge(alloc, std::int64_t{1} << 50);  // 4 PiB
    FAIL() << "a 4 PiB allocation succeeded";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("held 0 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(alloc.current_bytes(), 0);
}

}  // namespace
}  // namespace gnncheck::gpu::testing

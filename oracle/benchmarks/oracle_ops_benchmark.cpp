// Oracle sparse ops on a 1M-edge power-law graph with 64 features, side by side with Eigen's
// sparse × dense product on the same matrix, in the same run and with the same thread count.
//
//   build-*/oracle/oracle_ops_benchmark                      # 2 threads (the goal's setting)
//   OMP_NUM_THREADS=1 build-*/oracle/oracle_ops_benchmark    # any other count
//
// Graph: fixtures' preferential-attachment power_law(62,500 nodes, 8 edges per node, symmetrized):
// ~1M edges, in- and out-degrees with a power-law tail. Every benchmark reads the same graph.
// The oracle's functions return a new tensor (allocation included in the time; freed memory is
// kept in the process as the selfcheck does); Eigen writes into a preallocated result (its best case).
// Times: wall-clock ("Time") and the CPU time of the whole process, all threads ("CPU"); on a
// shared machine the CPU time is the steadier figure of the work done.
#include <omp.h>

#include <cstdlib>
#include <memory>

#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <benchmark/benchmark.h>

#include "fixtures/generators.h"
#include "platform/process_heap.h"
#include "oracle/edge_softmax.h"
#include "oracle/random_case.h"
#include "oracle/sddmm.h"
#include "oracle/selfcheck.h"
#include "oracle/spmm.h"
#include "oracle/spmm_ve.h"

namespace gnncheck::oracle {
namespace {

constexpr index_t kNodes = 62'500;
constexpr index_t kEdgesPerNode = 8;
constexpr index_t kFeatures = 64;

using EigenSparse = Eigen::SparseMatrix<double, Eigen::RowMajor, std::int64_t>;
using EigenRowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using EigenColMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;

struct Problem {
  Graph graph;
  Tensor x;            // [n_src, 64]
  Tensor u;            // [n_dst, 64]
  Tensor edge_values;  // [E, 1]
  Tensor logits;       // [E, 1]
  EigenSparse matrix;  // the same A with every value 1 (duplicates summed by Eigen)
  EigenSparse weighted;  // the same A with edge_values
};

const Problem& problem() {
  static const Problem p = [] {
    Problem q;
    q.graph = power_law(kNodes, kEdgesPerNode, /*seed=*/1, /*symmetrize=*/true);
    const Graph& g = q.graph;
    q.x = random_tensor({g.n_src(), kFeatures}, 1, "x");
    q.u = random_tensor({g.n_dst(), kFeatures}, 1, "u");
    q.edge_values = random_tensor({g.num_edges(), 1}, 1, "edge_values");
    q.logits = random_tensor({g.num_edges(), 1}, 1, "logits");
    // Eigen's CSR of the same edges (duplicates, if any, are summed into one entry).
    auto build = [&g](const double* values) {
      EigenSparse m(g.n_dst(), g.n_src());
      std::vector<Eigen::Triplet<double, std::int64_t>> triplets;
      triplets.reserve(static_cast<size_t>(g.num_edges()));
      for (index_t e = 0; e < g.num_edges(); ++e)
        triplets.emplace_back(g.row_of_edge()[e], g.col_idx()[e], values ? values[e] : 1.0);
      m.setFromTriplets(triplets.begin(), triplets.end());
      m.makeCompressed();
      return m;
    };
    q.matrix = build(nullptr);
    q.weighted = build(q.edge_values.data());
    return q;
  }();
  return p;
}

void set_counters(benchmark::State& state) {
  const Graph& g = problem().graph;
  state.counters["edges"] = static_cast<double>(g.num_edges());
  state.counters["threads"] = omp_get_max_threads();
  state.SetItemsProcessed(state.iterations() * g.num_edges());  // edges per second
}

void BM_OracleSpmm(benchmark::State& state) {
  const Problem& p = problem();
  for (auto _ : state) benchmark::DoNotOptimize(spmm_forward(p.graph, p.x));
  set_counters(state);
}

void BM_OracleSpmmVe(benchmark::State& state) {
  const Problem& p = problem();
  for (auto _ : state) benchmark::DoNotOptimize(spmm_ve_forward(p.graph, p.edge_values, p.x));
  set_counters(state);
}

void BM_OracleSpmmBackward(benchmark::State& state) {
  const Problem& p = problem();
  for (auto _ : state) benchmark::DoNotOptimize(spmm_backward(p.graph, p.u));
  set_counters(state);
}

void BM_EigenSpmmRowMajorDense(benchmark::State& state) {
  const Problem& p = problem();
  const auto x = Eigen::Map<const EigenRowMajor>(p.x.data(), p.x.rows(), p.x.row_size());
  EigenRowMajor y(p.graph.n_dst(), kFeatures);
  for (auto _ : state) {
    y.noalias() = p.matrix * x;
    benchmark::DoNotOptimize(y.data());
  }
  set_counters(state);
}

void BM_EigenSpmmColMajorDense(benchmark::State& state) {
  const Problem& p = problem();
  const EigenColMajor x = Eigen::Map<const EigenRowMajor>(p.x.data(), p.x.rows(), p.x.row_size());
  EigenColMajor y(p.graph.n_dst(), kFeatures);
  for (auto _ : state) {
    y.noalias() = p.matrix * x;
    benchmark::DoNotOptimize(y.data());
  }
  set_counters(state);
}

void BM_EigenSpmmWeightedRowMajorDense(benchmark::State& state) {
  const Problem& p = problem();
  const auto x = Eigen::Map<const EigenRowMajor>(p.x.data(), p.x.rows(), p.x.row_size());
  EigenRowMajor y(p.graph.n_dst(), kFeatures);
  for (auto _ : state) {
    y.noalias() = p.weighted * x;
    benchmark::DoNotOptimize(y.data());
  }
  set_counters(state);
}

void BM_OracleSddmmDot(benchmark::State& state) {
  const Problem& p = problem();
  for (auto _ : state) benchmark::DoNotOptimize(sddmm_dot_forward(p.graph, p.u, p.x, 1));
  set_counters(state);
}

void BM_OracleEdgeSoftmax(benchmark::State& state) {
  const Problem& p = problem();
  for (auto _ : state) benchmark::DoNotOptimize(edge_softmax_forward(p.graph, p.logits));
  set_counters(state);
}

BENCHMARK(BM_OracleSpmm)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_EigenSpmmRowMajorDense)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_EigenSpmmColMajorDense)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_OracleSpmmVe)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_EigenSpmmWeightedRowMajorDense)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_OracleSpmmBackward)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_OracleSddmmDot)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();
BENCHMARK(BM_OracleEdgeSoftmax)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->UseRealTime();

}  // namespace
}  // namespace gnncheck::oracle

int main(int argc, char** argv) {
  // 2 threads unless OMP_NUM_THREADS says otherwise; Eigen uses the same count.
  if (std::getenv("OMP_NUM_THREADS") == nullptr) omp_set_num_threads(2);
  Eigen::setNbThreads(omp_get_max_threads());
  gnncheck::retain_freed_memory_in_process();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("graph", gnncheck::oracle::problem().graph.summary());
  benchmark::AddCustomContext("features", "64");
  benchmark::AddCustomContext("threads (oracle and Eigen)", std::to_string(omp_get_max_threads()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// The device-resident scale check (scale/device_scale_check.h) on small Kronecker graphs: the graph
// generated on the device is the host's `kronecker:` graph, array for array; sampling on the device's
// offsets picks the host's rows, row for row, and numbers the neighbourhood's sources as the host
// does; the `gpu` system
// passes every target the path runs (both norms, GCN and GAT with and without self-loops); the
// scale-only replicas pass where their bugs cannot fire (this is what makes them scale-only; that
// they are caught at scale 25–27 is measured by scale/benchmarks/gpu_scale_benchmark.sh). Skips,
// saying so, without a CUDA device.
#include <gtest/gtest.h>

#include <random>
#include <span>
#include <vector>

#include "adapters/replicas/gpu/gpu_scale_replicas.h"
#include "gpu/context.h"
#include "gpu/gpu_systems.h"
#include "gpu/gpu_targets.h"
#include "gpu/kronecker.cuh"
#include "fixtures/generators.h"
#include "scale/device_scale_check.h"
#include "scale/device_scale_kernels.cuh"
#include "scale/graph_spec.h"
#include "scale/neighbourhood.h"
#include "scale/row_sampling.h"

namespace gnncheck::scale {
namespace {

#define SKIP_WITHOUT_DEVICE()                                                    \
  do {                                                                           \
    const gpu::DeviceStatus status = gpu::probe_device();                        \
    if (!status.available) GTEST_SKIP() << "skipped: " << status.reason;         \
  } while (0)

ScaleOptions options(const std::string& target, Attributes attrs = {}, index_t rows = 100, double magnitude = 1.0) {
  ScaleOptions o;
  o.target = &supported_target(target);
  o.attributes = std::move(attrs);
  o.rows = rows;
  o.seed = 3;
  o.input_magnitude = magnitude;
  o.graph_description = "kronecker:12";
  o.rerun_command = "(test)";
  return o;
}

TEST(DeviceScale, TheDeviceGraphIsTheHostKroneckerGraph) {
  SKIP_WITHOUT_DEVICE();
  gpu::GpuContext ctx;
  for (int s : {5, 12}) {
    const gpu::KroneckerGraph k = gpu::generate_kronecker(ctx, {.scale = s, .seed = 7});
    const Graph host = build_graph(parse_graph_spec("kronecker:" + std::to_string(s)), 7);
    const auto row_ptr = k.row_ptr.download(ctx.stream);
    const auto col_idx = k.col_idx.download(ctx.stream);
    ASSERT_EQ(static_cast<index_t>(col_idx.size()), host.num_edges()) << "scale " << s;
    EXPECT_TRUE(std::equal(row_ptr.begin(), row_ptr.end(), host.row_ptr().begin())) << "scale " << s;
    EXPECT_TRUE(std::equal(col_idx.begin(), col_idx.end(), host.col_idx().begin())) << "scale " << s;
  }
}

// Sampling asks the device's offsets what it asks the host's, and gets the same answers: every
// question on its own (the largest rows with their ties, the listings, the row of each edge), and
// whole samples — every stratum, the 2^31 stratum under a lowered limit, the fallbacks that list
// candidates — row for row, stratum for stratum.
TEST(DeviceScale, SamplingOnTheDeviceIsSamplingOnTheHost) {
  SKIP_WITHOUT_DEVICE();
  gpu::GpuContext ctx;
  std::vector<std::pair<std::string, Graph>> graphs;
  graphs.emplace_back("kronecker:12", build_graph(parse_graph_spec("kronecker:12"), 3));
  graphs.emplace_back("rmat 15, ties and empty rows",
                      apply_graph_options(rmat({.scale = 15, .edge_factor = 4}, 8), {.duplicate_fraction = 0.1, .empty_row_fraction = 0.3}, 8));
  std::vector<index_t> dst, src;  // rows past the middle mostly empty; no row of the first half empty
  for (index_t i = 0; i < 3000; ++i)
    if (i < 1500 || i % 97 == 3)
      for (index_t q = 0; q < 1 + i % 5; ++q) dst.push_back(i), src.push_back(q);
  graphs.emplace_back("sparse tail", Graph::from_edges(3000, 3000, dst, src));
  for (const auto& [name, g] : graphs) {
    const auto row_ptr = g.row_ptr();
    gpu::DeviceBuffer<gpu::offset_t> d_row_ptr(ctx.allocator, static_cast<std::int64_t>(row_ptr.size()));
    d_row_ptr.upload(row_ptr.data(), static_cast<std::int64_t>(row_ptr.size()), ctx.stream);
    const std::vector<gpu::node_t> narrow_cols(g.col_idx().begin(), g.col_idx().end());
    gpu::DeviceBuffer<gpu::node_t> d_col_idx(ctx.allocator, std::max<std::int64_t>(1, g.num_edges()));
    d_col_idx.upload(narrow_cols.data(), g.num_edges(), ctx.stream);
    ctx.synchronize();
    const HostGraphRows host(g);
    const DeviceGraphRows device(ctx, d_row_ptr.data(), d_col_idx.data(), g.n_dst(), g.n_src());
    const index_t n = g.n_dst();
    ASSERT_EQ(device.edges(), g.num_edges()) << name;
    for (index_t count : {index_t{1}, index_t{5}, index_t{100}, index_t{1000}, n, n + 1})
      EXPECT_EQ(device.largest_rows(count), host.largest_rows(count)) << name << ", " << count << " largest rows";
    for (RowFilter f : {RowFilter::empty, RowFilter::nonempty}) {
      EXPECT_EQ(device.rows_where(0, n, f), host.rows_where(0, n, f)) << name;
      EXPECT_EQ(device.rows_where(n / 3, n / 2, f), host.rows_where(n / 3, n / 2, f)) << name;
    }
    std::vector<index_t> some_rows = {n - 1, 0, 7, 7, n / 2};
    const auto de = device.extents(some_rows), he = host.extents(some_rows);
    for (size_t i = 0; i < some_rows.size(); ++i) {
      EXPECT_EQ(de[i].begin, he[i].begin) << name << ", row " << some_rows[i];
      EXPECT_EQ(de[i].end, he[i].end) << name << ", row " << some_rows[i];
    }
    for (index_t e : {index_t{0}, g.num_edges() / 3, g.num_edges() / 2, g.num_edges() - 1})
      EXPECT_EQ(device.row_holding_edge(e), host.row_holding_edge(e)) << name << ", edge " << e;
    std::vector<index_t> hub_order;
    for (const RowDegree& r : host.largest_rows(std::min<index_t>(n, 700))) hub_order.push_back(r.row);
    hub_order.push_back(n - 1);
    EXPECT_EQ(device.sources_read_together(hub_order), host.sources_read_together(hub_order)) << name;
    for (index_t k : {index_t{1}, index_t{40}, index_t{400}, index_t{2000}, n})
      for (index_t limit : {index_t{1} << 31, g.num_edges() / 2, row_ptr[static_cast<size_t>(n / 2)]})
        for (index_t budget : {index_t{0}, g.num_edges() / 20, kDefaultHubEdgeBudget}) {
          const SamplingOptions o{.rows = k,
                                  .seed = static_cast<std::uint64_t>(k + 1),
                                  .edge_offset_limit = limit,
                                  .hub_edge_budget = budget,
                                  .hub_source_budget = budget == 0 ? kDefaultHubSourceBudget : g.n_src() / 8};
          const auto on_device = sample_rows(device, o), on_host = sample_rows(host, o);
          ASSERT_EQ(on_device.size(), on_host.size()) << name << ", K " << k;
          for (size_t i = 0; i < on_host.size(); ++i) {
            ASSERT_EQ(on_device[i].row, on_host[i].row) << name << ", K " << k << ", limit " << limit << ", budget " << budget;
            ASSERT_EQ(on_device[i].stratum, on_host[i].stratum) << name << ", row " << on_host[i].row;
            ASSERT_EQ(on_device[i].in_degree, on_host[i].in_degree) << name << ", row " << on_host[i].row;
            ASSERT_EQ(on_device[i].first_edge, on_host[i].first_edge) << name << ", row " << on_host[i].row;
          }
        }
  }
}

// The device's first-use numbering of the neighbourhood's sources is the host's, entry for entry.
TEST(DeviceScale, FirstUseNumberingOnTheDeviceIsTheHosts) {
  SKIP_WITHOUT_DEVICE();
  gpu::GpuContext ctx;
  const index_t n_src = 5000;
  std::mt19937_64 rng(11);
  std::vector<index_t> first = {17, 3, 4999}, entries(200000);
  for (auto& e : entries) e = static_cast<index_t>(rng() % (rng() % 2 ? 50 : n_src));  // many repeats
  for (const bool with_first : {true, false}) {
    const std::span<const index_t> f = with_first ? std::span<const index_t>(first) : std::span<const index_t>();
    const FirstUseNumbering host = number_by_first_use(f, entries, n_src);
    const device::FirstUse on_device = device::number_by_first_use(ctx, f.data(), static_cast<std::int64_t>(f.size()), entries.data(),
                                                                   static_cast<std::int64_t>(entries.size()), n_src);
    ASSERT_TRUE(on_device.in_range);
    EXPECT_EQ(on_device.sources, host.sources) << (with_first ? "with" : "without") << " first ids";
    EXPECT_EQ(on_device.local, host.local) << (with_first ? "with" : "without") << " first ids";
  }
  entries[123] = n_src;
  EXPECT_FALSE(device::number_by_first_use(ctx, first.data(), 3, entries.data(), static_cast<std::int64_t>(entries.size()), n_src).in_range);
}

TEST(DeviceScale, TheGpuSystemPassesEveryDeviceResidentTarget) {
  SKIP_WITHOUT_DEVICE();
  const auto gpu_system = make_gpu_system();
  const auto* targets = gpu::device_targets_of(*gpu_system);
  ASSERT_NE(targets, nullptr);
  std::vector<std::pair<std::string, Attributes>> cases = {
      {"spmm", {}}, {"spmm_ve", {{"heads", std::int64_t{2}}}}, {"sddmm_dot", {}}, {"sddmm_add", {}}, {"edge_softmax", {}},
      {"normalized_spmm", {{"norm", std::string("symmetric")}}}, {"normalized_spmm", {{"norm", std::string("row_mean")}}},
      {"gcn", {}}, {"gcn", {{"norm", std::string("row_mean")}, {"self_loops", false}}}, {"gcn", {{"bias", false}}},
      {"gat", {}}, {"gat", {{"heads", std::int64_t{2}}, {"concat", false}}}, {"gat", {{"self_loops", false}}}};
  for (const auto& [target, attrs] : cases) {
    const ScaleResult r = run_device_scale_check("gpu", *targets, 12, options(target, attrs));
    EXPECT_EQ(r.outcome, reports::Outcome::pass) << target << "\n" << summary_text(r);
    EXPECT_GT(r.compared_elements, 0) << target;
    EXPECT_GT(r.device_peak_bytes, 0) << target;
  }
  // All rows of a graph this small: every element is compared, none is zero-checked.
  const ScaleResult all = run_device_scale_check("gpu", *targets, 8, options("gcn", {}, 1000));
  EXPECT_EQ(all.outcome, reports::Outcome::pass) << summary_text(all);
  EXPECT_EQ(all.rows.size(), 256u);
}

TEST(DeviceScale, ScaleReplicasPassWhereTheirBugsCannotFire) {
  SKIP_WITHOUT_DEVICE();
  // Kronecker scale 14: 2^31 edges are far, and no row comes near 10^4 edges.
  const Graph host = build_graph(parse_graph_spec("kronecker:14"), 3);
  index_t max_degree = 0;
  for (index_t i = 0; i < host.n_dst(); ++i) max_degree = std::max(max_degree, host.in_degree(i));
  ASSERT_LT(max_degree, softmax_long_row_degree);
  for (const auto& info : gpu_scale_replica_catalogue()) {
    const auto replica = make_gpu_scale_replica(info.name);
    const auto* targets = gpu::device_targets_of(*replica);
    ASSERT_NE(targets, nullptr);
    for (double magnitude : {1.0, 84.0}) {
      ScaleOptions o = options(info.target, {}, 1000, magnitude);
      o.graph_description = "kronecker:14";
      const ScaleResult r = run_device_scale_check(info.name, *targets, 14, o);
      EXPECT_EQ(r.outcome, reports::Outcome::pass) << info.name << " at magnitude " << magnitude << "\n" << summary_text(r);
    }
  }
}

TEST(DeviceScale, TargetsOffTheDevicePathAreRefusedByName) {
  const auto gpu_system = make_gpu_system();
  const auto* targets = gpu::device_targets_of(*gpu_system);
  ASSERT_NE(targets, nullptr);
  try {
    run_device_scale_check("gpu", *targets, 10, options("gin"));
    FAIL() << "gin ran on the device path";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--target gin"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gnncheck::scale

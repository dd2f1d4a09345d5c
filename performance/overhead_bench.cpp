// gnncheck_gpu_overhead_bench — framework overhead of the GPU reference where it matters most
// (issue 8, the paper's method): per training iteration, wall time with a device barrier at its
// end against GPU-busy time (CUDA events around every op region) and the idle share, on
//   * a Cora-shaped graph (2,708 nodes, 10,556 directed edges, 1,433 features, 7 classes; random,
//     generated like the Reddit-shaped one), two-layer GCN and GAT-1, full-graph;
//   * sampled mini-batches of the Reddit-shaped graph (fixtures/neighbor_sampler.h: batch 256,
//     fanouts 10,10,10), three-layer GCN and GAT-1 over the three bipartite blocks.
// It writes the Cora-shaped data (the Reddit file format) and every batch's blocks (.npy) to
// --blocks-dir, so performance/pyg_overhead_bench.py measures PyG on the same graphs and blocks.
//
//   gnncheck_gpu_overhead_bench --blocks-dir /tmp/blocks --json overhead.json
#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fixtures/neighbor_sampler.h"
#include "fixtures/npy.h"
#include "performance/reddit_graph.h"
#include "performance/reddit_models.h"

namespace perf = gnncheck::perf;
namespace gpu = gnncheck::gpu;
using gnncheck::index_t;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

const std::vector<std::pair<std::string, perf::ModelSpec>> models = {{"gcn", {perf::ModelKind::gcn, 16, 1}},
                                                                     {"gat1", {perf::ModelKind::gat, 16, 1}}};

// `iterations` instrumented training steps after `warmup` plain ones; per-iteration records.
nlohmann::json measure(gpu::GpuContext& ctx, perf::Model& model, int warmup, int iterations) {
  perf::OpTimeline plain(ctx.stream, false), events(ctx.stream, true);
  for (int i = 0; i < warmup; ++i) {
    plain.begin_iteration();
    model.train_step(plain);
    plain.end_iteration();
  }
  nlohmann::json its = nlohmann::json::array();
  for (int i = 0; i < iterations; ++i) {
    events.begin_iteration();
    model.train_step(events);
    const perf::IterationTiming t = events.end_iteration();
    its.push_back({{"wall_ms", t.wall_ms}, {"busy_ms", t.busy_ms}, {"idle_share", t.idle_share()}});
  }
  return its;
}

nlohmann::json summarize(const std::string& setting, const std::string& model, index_t edges, const nlohmann::json& its) {
  double wall = 0, busy = 0;
  for (const auto& it : its) {
    wall += it["wall_ms"].get<double>();
    busy += it["busy_ms"].get<double>();
  }
  const double n = static_cast<double>(its.size());
  fmt::print("{:<26} {:<5} {:>9} edges  wall {:>8.3f} ms  GPU-busy {:>8.3f} ms  idle {:>5.1f}%\n", setting, model, edges,
             wall / n, busy / n, 100.0 * (1.0 - busy / wall));
  std::fflush(stdout);
  return {{"setting", setting}, {"model", model}, {"edges", edges}, {"mean_wall_ms", wall / n},
          {"mean_busy_ms", busy / n}, {"idle_share", 1.0 - busy / wall}, {"iterations", its}};
}

gnncheck::TensorI64 as_tensor(std::span<const index_t> v) {
  return gnncheck::TensorI64({static_cast<index_t>(v.size())}, std::vector<std::int64_t>(v.begin(), v.end()));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Framework overhead of the GPU reference on Cora-shaped data and sampled mini-batches"};
  std::string blocks_dir, json_path;
  int batches = 5, warmup = 2, iterations = 5;
  std::uint64_t seed = 1;
  perf::RedditShape reddit;
  app.add_option("--blocks-dir", blocks_dir, "write the Cora-shaped data and the sampled blocks here");
  app.add_option("--json", json_path);
  app.add_option("--batches", batches, "mini-batches measured")->check(CLI::PositiveNumber);
  app.add_option("--iterations", iterations, "instrumented iterations per setting")->check(CLI::PositiveNumber);
  app.add_option("--nodes", reddit.nodes, "nodes of the Reddit-shaped graph");
  app.add_option("--edges", reddit.directed_edges, "directed edges of the Reddit-shaped graph");
  app.add_option("--seed", seed);
  CLI11_PARSE(app, argc, argv);
  try {
    nlohmann::json results = nlohmann::json::array();
    if (!blocks_dir.empty()) std::filesystem::create_directories(blocks_dir);

    // Data first (written without a device), then the measurements.
    perf::RedditShape cora_shape{.nodes = 2708, .directed_edges = 10556, .features = 1433, .classes = 7,
                                 .train_fraction = 0.66, .self_loops = true};
    const perf::RedditData cora = perf::make_reddit_shaped(cora_shape, seed);
    if (!blocks_dir.empty()) perf::write_reddit_file(blocks_dir + "/cora.bin", cora);
    auto t = std::chrono::steady_clock::now();
    const perf::RedditData data = perf::make_reddit_shaped(reddit, seed);
    fmt::print("Reddit-shaped graph: {} nodes, {} edges ({:.1f} s)\n", data.graph.n_dst(), data.graph.num_edges(),
               seconds_since(t));
    std::vector<index_t> train_nodes;
    for (index_t i = 0; i < data.graph.n_dst(); ++i)
      if (data.train_mask[i]) train_nodes.push_back(i);
    const gnncheck::NeighborSampler sampler(
        data.graph, {.fanouts = {10, 10, 10}, .batch_size = 256, .seed = seed, .candidates = train_nodes});
    std::vector<gnncheck::SampledBatch> sampled;
    for (int b = 0; b < batches; ++b) {
      t = std::chrono::steady_clock::now();
      sampled.push_back(sampler.sample(b));
      const auto& s = sampled.back();
      fmt::print("batch {}: blocks {} / {} / {} edges ({} in all), {} input nodes; sampled in {:.1f} ms\n", b,
                 s.blocks[0].num_edges(), s.blocks[1].num_edges(), s.blocks[2].num_edges(), s.total_edges(),
                 s.input_nodes.size(), 1000 * seconds_since(t));
      if (!blocks_dir.empty()) {
        for (size_t l = 0; l < s.blocks.size(); ++l) {
          const std::string stem = fmt::format("{}/batch{}_block{}", blocks_dir, b, l);
          gnncheck::write_npy(stem + "_row_ptr.npy", as_tensor(s.blocks[l].row_ptr()));
          gnncheck::write_npy(stem + "_col_idx.npy", as_tensor(s.blocks[l].col_idx()));
        }
        gnncheck::write_npy(fmt::format("{}/batch{}_input_nodes.npy", blocks_dir, b), as_tensor(s.input_nodes));
      }
    }
    std::fflush(stdout);
    const auto status = gpu::probe_device();
    if (!status.available) {
      fmt::print(stderr, "gnncheck_gpu_overhead_bench: {}\n", status.reason);
      return 2;
    }

    gpu::GpuContext ctx;
    // Cora-shaped, full graph.
    {
      const perf::TrainingInputs in(ctx, cora.features, cora_shape.features, cora.labels, cora.train_mask,
                                    cora_shape.classes);
      for (const auto& [key, spec] : models) {
        gpu::DeviceGraph g(ctx, cora.graph);  // A + I
        perf::prepare_graph(ctx, g, spec.kind);
        auto model = perf::make_model(ctx, spec, {&g, &g}, in, 7);
        results.push_back(summarize("Cora-shaped, full graph", key, g.num_edges(), measure(ctx, *model, warmup, iterations)));
      }
    }
    // Sampled mini-batches: features of each batch's input nodes, labels of its seeds.
    for (const auto& [key, spec] : models) {
      nlohmann::json its = nlohmann::json::array();
      index_t edges = 0;
      for (const gnncheck::SampledBatch& s : sampled) {
        std::vector<float> x(s.input_nodes.size() * static_cast<size_t>(reddit.features));
        for (size_t i = 0; i < s.input_nodes.size(); ++i)
          std::copy_n(data.features.begin() + s.input_nodes[i] * reddit.features, reddit.features,
                      x.begin() + static_cast<std::ptrdiff_t>(i) * reddit.features);
        std::vector<std::int32_t> labels;
        for (index_t v : s.output_nodes) labels.push_back(data.labels[v]);
        const perf::TrainingInputs in(ctx, x, reddit.features, labels, std::vector<std::uint8_t>(labels.size(), 1),
                                      reddit.classes);
        std::vector<std::unique_ptr<gpu::DeviceGraph>> blocks;
        std::vector<gpu::DeviceGraph*> layers;
        for (const gnncheck::Graph& b : s.blocks) {
          blocks.push_back(std::make_unique<gpu::DeviceGraph>(ctx, b));
          perf::prepare_graph(ctx, *blocks.back(), spec.kind);
          layers.push_back(blocks.back().get());
        }
        auto model = perf::make_model(ctx, spec, layers, in, 7);
        for (const auto& it : measure(ctx, *model, warmup, iterations)) its.push_back(it);
        edges += s.total_edges();
      }
      results.push_back(summarize("sampled blocks (256; 10,10,10)", key, edges / static_cast<index_t>(sampled.size()), its));
    }
    if (!json_path.empty()) std::ofstream(json_path) << nlohmann::json{{"settings", results}}.dump(1) << "\n";
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gnncheck_gpu_overhead_bench: {}\n", e.what());
    return 1;
  }
}

// gnncheck_gpu_reddit_bench — trains the paper's two-layer models (GCN hidden 16, GIN hidden 64,
// GAT 1 and 3 heads hidden 16) full-graph on the deterministic Reddit-shaped graph through the GPU
// reference's ops, and prints per model: epoch time (device barrier after each epoch, after
// warm-up), the accounting allocator's peak split into graph / activations / saved for backward /
// parameters / workspace, and the framework overhead (wall vs GPU-busy time per iteration, CUDA
// events around every op region). It first writes the graph, features and labels to a file that
// performance/pyg_reddit_bench.py reads, so PyTorch Geometric trains on exactly the same data.
//
//   gnncheck_gpu_reddit_bench --data /tmp/reddit.bin --json ours.json
//   gnncheck_gpu_reddit_bench --nodes 2000 --edges 40000 --models gcn,gat1   # a quick small run
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "performance/reddit_graph.h"
#include "performance/reddit_models.h"
#include "gpu/cuda_check.h"
#include "core/error.h"

namespace perf = gnncheck::perf;
namespace gpu = gnncheck::gpu;
using gnncheck::index_t;

namespace {

double gib(std::int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

struct ModelChoice {
  std::string key;
  perf::ModelSpec spec;
};

std::vector<ModelChoice> parse_models(const std::string& list) {
  const std::vector<ModelChoice> known = {{"gcn", {perf::ModelKind::gcn, 16, 1}},
                                          {"gin", {perf::ModelKind::gin, 64, 1}},
                                          {"gat1", {perf::ModelKind::gat, 16, 1}},
                                          {"gat3", {perf::ModelKind::gat, 16, 3}}};
  std::vector<ModelChoice> chosen;
  std::stringstream in(list);
  for (std::string key; std::getline(in, key, ',');) {
    const auto it = std::find_if(known.begin(), known.end(), [&](const ModelChoice& m) { return m.key == key; });
    if (it == known.end())
      throw gnncheck::InputError(fmt::format("--models: unknown model '{}'; expected a comma-separated list of gcn, "
                                             "gin, gat1, gat3",
                                             key));
    chosen.push_back(*it);
  }
  return chosen;
}

nlohmann::json split_json(const gpu::MemorySplit& split) {
  nlohmann::json j;
  for (int c = 0; c < gpu::memory_category_count; ++c)
    j[std::string(gpu::to_string(static_cast<gpu::MemoryCategory>(c)))] = split[c];
  return j;
}

double mean(const std::vector<double>& v) { return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }

// One model: graph on the device, warm-up, timed epochs, overhead epochs. Returns its JSON record.
// `host` is A + I: GCN and GAT aggregate over it, and so does GIN with ε = 0 ((1 + ε)·x_i + Σ_j x_j).
nlohmann::json run_model(gpu::GpuContext& ctx, const ModelChoice& choice, const gnncheck::Graph& host,
                         const perf::TrainingInputs& inputs, int warmup, int epochs,
                         int overhead_epochs) {
  nlohmann::json r{{"model", choice.key}, {"name", choice.spec.name()}};
  r["edges"] = host.num_edges();
  ctx.allocator.reset_peak();
  try {
    std::optional<gpu::DeviceGraph> graph;
    {
      gpu::MemoryCategoryScope tag(ctx.allocator, gpu::MemoryCategory::graph);
      graph.emplace(ctx, host);
    }
    perf::prepare_graph(ctx, *graph, choice.spec.kind);
    r["graph_bytes"] = graph->storage_bytes();
    auto model = perf::make_model(ctx, choice.spec, {&*graph, &*graph}, inputs, /*seed=*/7);
    // Setup (graph upload and views, model buffers) is reported apart from training: PyG's figure
    // is its training peak too.
    r["setup_peak_bytes"] = ctx.allocator.peak_bytes();
    r["setup_peak_split_bytes"] = split_json(ctx.allocator.peak_split());
    perf::OpTimeline plain_timeline(ctx.stream, false), events(ctx.stream, true);
    gpu::MemoryCategoryScope tag(ctx.allocator, gpu::MemoryCategory::workspace);  // ops' own temporaries
    std::vector<double> losses;
    for (int e = 0; e < warmup; ++e) {
      plain_timeline.begin_iteration();
      model->train_step(plain_timeline);
      plain_timeline.end_iteration();
      losses.push_back(model->loss());
    }
    // Per iteration: the peak of that epoch alone (reset before it) and what is held after it —
    // equal peaks and held bytes across epochs mean memory does not grow.
    std::vector<double> epoch_ms, epoch_peak, epoch_held;
    std::int64_t training_peak = 0;
    gpu::MemorySplit training_split{};
    for (int e = 0; e < epochs; ++e) {
      ctx.allocator.reset_peak();
      plain_timeline.begin_iteration();
      model->train_step(plain_timeline);
      epoch_ms.push_back(plain_timeline.end_iteration().wall_ms);
      epoch_peak.push_back(gib(ctx.allocator.peak_bytes()));
      epoch_held.push_back(gib(ctx.allocator.current_bytes()));
      if (ctx.allocator.peak_bytes() > training_peak) {
        training_peak = ctx.allocator.peak_bytes();
        training_split = ctx.allocator.peak_split();
      }
      losses.push_back(model->loss());
    }
    r["peak_bytes"] = training_peak;
    r["peak_gib"] = gib(training_peak);
    r["peak_split_bytes"] = split_json(training_split);
    nlohmann::json overhead = nlohmann::json::array();
    nlohmann::json busy_by_op = nlohmann::json::object();
    std::vector<double> idle;
    for (int e = 0; e < overhead_epochs; ++e) {
      events.begin_iteration();
      model->train_step(events);
      const perf::IterationTiming t = events.end_iteration();
      overhead.push_back({{"wall_ms", t.wall_ms}, {"busy_ms", t.busy_ms}, {"idle_share", t.idle_share()}});
      idle.push_back(t.idle_share());
      for (const auto& [op, ms] : t.busy_by_op) busy_by_op[op] = busy_by_op.value(op, 0.0) + ms / overhead_epochs;
    }
    r["status"] = "ok";
    r["epoch_ms"] = epoch_ms;
    r["mean_epoch_ms"] = mean(epoch_ms);
    r["min_epoch_ms"] = *std::min_element(epoch_ms.begin(), epoch_ms.end());
    r["epoch_peak_gib"] = epoch_peak;
    r["held_after_epoch_gib"] = epoch_held;
    r["losses"] = losses;
    r["overhead"] = overhead;
    r["mean_idle_share"] = mean(idle);
    r["busy_ms_by_op"] = busy_by_op;
  } catch (const gpu::CudaError& e) {
    // Out of memory is a result: the message says how much the reference held then.
    r["status"] = "error";
    r["error"] = e.what();
  }
  return r;
}

void print_table(const nlohmann::json& results) {
  fmt::print("\n{:<18} {:>11} {:>10} {:>9} | {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} | {:>7} {:>9}\n", "model",
             "edges", "ms/epoch", "peak GiB", "graph", "activ.", "saved", "params", "wkspace", "untagged", "idle %",
             "final loss");
  for (const auto& r : results) {
    if (r["status"] != "ok") {
      fmt::print("{:<18} {:>11} {}\n", r["name"].get<std::string>(), r["edges"].get<index_t>(),
                 r.value("error", std::string("failed")));
      continue;
    }
    const auto& s = r["peak_split_bytes"];
    auto part = [&](const char* c) { return gib(s[c].get<std::int64_t>()); };
    fmt::print("{:<18} {:>11} {:>10.2f} {:>9.3f} | {:>8.3f} {:>8.3f} {:>8.3f} {:>8.4f} {:>8.3f} {:>8.4f} | {:>7.2f} {:>9.4f}\n",
               r["name"].get<std::string>(), r["edges"].get<index_t>(), r["mean_epoch_ms"].get<double>(),
               r["peak_gib"].get<double>(), part("graph"), part("activations"), part("saved_for_backward"),
               part("parameters"), part("workspace"), part("untagged"), 100.0 * r["mean_idle_share"].get<double>(),
               r["losses"].back().get<double>());
  }
  fmt::print("(training peak over the timed epochs, split in GiB at the moment of the peak; idle % = 1 − GPU-busy/wall "
             "per iteration; untagged = the cuBLAS workspace of the context)\n\n");
  fmt::print("{:<18} {:>10} {:>11}   GPU-busy ms per op kind (events around each op region)\n", "model", "setup GiB",
             "held GiB");
  for (const auto& r : results) {
    if (r["status"] != "ok") continue;
    std::string ops;
    for (const auto& [op, ms] : r["busy_ms_by_op"].items()) ops += fmt::format("{} {:.2f}  ", op, ms.get<double>());
    fmt::print("{:<18} {:>10.3f} {:>11.3f}   {}\n", r["name"].get<std::string>(),
               gib(r["setup_peak_bytes"].get<std::int64_t>()), r["held_after_epoch_gib"].back().get<double>(), ops);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Trains GCN/GIN/GAT full-graph on the Reddit-shaped graph with the GPU reference"};
  perf::RedditShape shape;
  std::uint64_t seed = 1;
  std::string data_path, json_path, model_list = "gcn,gin,gat1,gat3";
  int warmup = 2, epochs = 5, overhead_epochs = 3;
  app.add_option("--nodes", shape.nodes, "nodes of the generated graph");
  app.add_option("--edges", shape.directed_edges, "directed edges (even; both directions of each pair)");
  app.add_option("--features", shape.features, "feature width");
  app.add_option("--classes", shape.classes, "classes");
  app.add_option("--seed", seed, "seed of the graph, features and labels");
  app.add_option("--data", data_path, "write the graph, features and labels here for pyg_reddit_bench.py");
  app.add_option("--json", json_path, "write the results here (JSON)");
  app.add_option("--models", model_list, "comma-separated: gcn, gin, gat1, gat3");
  app.add_option("--warmup", warmup, "untimed epochs first")->check(CLI::NonNegativeNumber);
  app.add_option("--epochs", epochs, "timed epochs")->check(CLI::PositiveNumber);
  app.add_option("--overhead-epochs", overhead_epochs, "epochs with CUDA events around every op")->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);

  try {
    const std::vector<ModelChoice> models = parse_models(model_list);
    auto start = std::chrono::steady_clock::now();
    shape.self_loops = true;  // A + I, one host graph for every model
    perf::RedditData data = perf::make_reddit_shaped(shape, seed);
    const double generate_s = seconds_since(start);
    fmt::print("Reddit-shaped graph: {} nodes, {} directed edges ({} with the self-loops), {} features, {} classes, "
               "{} training nodes, seed {}; generated in {:.2f} s\n",
               data.graph.n_dst(), shape.directed_edges, data.graph.num_edges(), shape.features, shape.classes,
               std::count(data.train_mask.begin(), data.train_mask.end(), std::uint8_t{1}), seed, generate_s);
    double write_s = 0;
    if (!data_path.empty()) {
      start = std::chrono::steady_clock::now();
      perf::write_reddit_file(data_path, data);
      write_s = seconds_since(start);
      fmt::print("wrote {} in {:.2f} s\n", data_path, write_s);
    }
    std::fflush(stdout);
    // The data file is written first, so that it can be made (and the PyG side run) without a device here.
    const auto status = gpu::probe_device();
    if (!status.available) {
      fmt::print(stderr, "gnncheck_gpu_reddit_bench: {}\n", status.reason);
      return 2;
    }

    gpu::GpuContext ctx;
    cudaDeviceProp prop{};
    GNNCHECK_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const perf::TrainingInputs inputs(ctx, data.features, shape.features, data.labels, data.train_mask, shape.classes);
    nlohmann::json results = nlohmann::json::array();
    for (const ModelChoice& m : models) {
      start = std::chrono::steady_clock::now();
      results.push_back(run_model(ctx, m, data.graph, inputs, warmup, epochs, overhead_epochs));
      results.back()["total_s"] = seconds_since(start);
      fmt::print("{}: {} ({:.1f} s)\n", m.spec.name(), results.back()["status"].get<std::string>(),
                 results.back()["total_s"].get<double>());
      std::fflush(stdout);
    }
    print_table(results);
    if (!json_path.empty()) {
      nlohmann::json out{{"device", prop.name},
                         {"nodes", data.graph.n_dst()},
                         {"edges", shape.directed_edges},
                         {"edges_with_self_loops", data.graph.num_edges()},
                         {"features", shape.features},
                         {"classes", shape.classes},
                         {"seed", seed},
                         {"warmup", warmup},
                         {"epochs", epochs},
                         {"generate_s", generate_s},
                         {"write_s", write_s},
                         {"models", results}};
      std::ofstream(json_path) << out.dump(1) << "\n";
    }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "gnncheck_gpu_reddit_bench: {}\n", e.what());
    return 1;
  }
}

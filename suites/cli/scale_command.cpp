#include "suites/cli/scale_command.h"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "oracle/targets.h"
#include "reports/writers.h"
#include "scale/graph_spec.h"
#include "scale/neighbourhood.h"
#include "scale/scale_check.h"
#include "scale/scale_entry.h"
#include "suites/cli/command_support.h"
#include "suites/runner.h"
#include "suites/scale_command_line.h"
#include "suites/scale_where_system_runs.h"

namespace gnncheck::suites {

CLI::App* add_scale_command(CLI::App& app, ScaleCommandArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "scale", "Check one system on a big graph against the exact oracle on sampled rows (supported targets: " +
                   fmt::format("{}", fmt::join(scale::supported_targets(), ", ")) + ")");
  cmd->add_option("--system", args.system, "A registered system (see `gnncheck list systems`)");
  cmd->add_option("--adapter", args.adapter, "An external adapter command instead (adapters/PROTOCOL.md)");
  cmd->add_option("--plugin", args.plugin, "A C plugin library (.so) instead");
  cmd->add_option("--target", args.target, "The op or layer to check (see the list above)")->required();
  cmd->add_option("--graph", args.graph, "kronecker:SCALE | rmat:SCALE[,EDGE_FACTOR] | FILE (.mtx or edge list)")->required();
  cmd->add_option("--rows", args.rows, "K: destination rows to verify (stratified; see scale/README.md)")->capture_default_str();
  cmd->add_option("--hub-edges", args.hub_edges, "Edge budget of the highest in-degree rows together (see scale/README.md)")
      ->capture_default_str();
  cmd->add_option("--hub-sources", args.hub_sources,
                  "Budget of the distinct sources the highest in-degree rows read together (see scale/README.md)")
      ->capture_default_str();
  cmd->add_option("--seed", args.seed, "Seed of the graph, the inputs and the sampled rows")->check(kSeedValue)->capture_default_str();
  cmd->add_option("--magnitude", args.magnitude, "Inputs uniform in [-M, M) (1e3: large attention logits, where softmax overflows)")
      ->capture_default_str();
  cmd->add_option("--features", args.features, "Input feature width: C per node row (per head) of an op, in_features of a layer");
  cmd->add_option("--hidden-features", args.hidden_features, "Hidden width of a layer that has one (gin)");
  cmd->add_option("--out-features", args.out_features, "Output width of a layer (channels per head for gat)");
  cmd->add_option("--heads", args.heads, "Attention heads H (targets with heads)");
  cmd->add_option("--norm", args.norm, "normalized_spmm and gcn: symmetric or row_mean");
  cmd->add_option("--expect", args.expect, "pass (a correct system) or caught (a planted bug must fail)")
      ->check(CLI::IsMember({"pass", "caught"}))
      ->capture_default_str();
  cmd->add_option("--report", args.report, "Also write report.json, junit.xml, summary.md and index.html to this directory");
  cmd->add_option("--oracle-evaluations", args.oracle_evaluations,
                  fmt::format("Oracle evaluations run side by side for the bounds: more is faster on many cores and "
                              "holds more memory; the values are the same (default: half the hardware threads, at "
                              "least 3; here {}; see scale/README.md)",
                              scale::default_oracle_evaluations()));
  return cmd;
}

int run_scale_command(const ScaleCommandArgs& args, SystemRegistry& registry) {
  const int named = !args.system.empty() + !args.adapter.empty() + !args.plugin.empty();
  if (named != 1) throw InputError("gnncheck scale: name exactly one system with --system, --adapter or --plugin");
  scale::supported_target(args.target);
  if (args.rows < 1) throw InputError(fmt::format("--rows must be at least 1, got {}", args.rows));
  if (!(args.magnitude > 0.0) || !std::isfinite(args.magnitude))
    throw InputError(fmt::format("--magnitude must be a positive finite number, got {}", args.magnitude));
  if (args.oracle_evaluations && *args.oracle_evaluations < 1)
    throw InputError(fmt::format("--oracle-evaluations must be at least 1, got {}", *args.oracle_evaluations));
  const Attributes attrs = scale::target_attributes(
      args.target, {.features = args.features, .hidden_features = args.hidden_features, .out_features = args.out_features,
                    .heads = args.heads, .norm = args.norm},
      scale::OptionSpelling::command_line);
  const scale::GraphSpec spec = scale::parse_graph_spec(args.graph);

  std::string name = args.system;
  if (!args.adapter.empty()) name = registry.add_adapter(args.adapter);
  if (!args.plugin.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(args.plugin, ec)) throw InputError(fmt::format("--plugin {}: no such file", args.plugin));
    name = registry.add_plugin(std::filesystem::absolute(args.plugin).lexically_normal().string());
  }
  const SystemEntry& entry = registry.find(name);
  if (!entry.availability.available || (!entry.make && !entry.instance))
    throw InputError(fmt::format("system '{}' is not available here: {}", name, entry.availability.reason));
  std::shared_ptr<System> system = entry.instance;
  if (!system) system = entry.make();

  auto text = [](const auto& v) { return v ? std::optional<std::string>(fmt::format("{}", *v)) : std::nullopt; };
  const std::string rerun = scale_command_line({.system_flag = entry.command_line_flag, .target = args.target, .graph = args.graph,
                                                .rows = args.rows, .seed = args.seed, .hub_edges = args.hub_edges,
                                                .hub_sources = args.hub_sources,
                                                .magnitude = args.magnitude, .features = text(args.features),
                                                .hidden_features = text(args.hidden_features), .out_features = text(args.out_features),
                                                .heads = text(args.heads), .norm = args.norm, .expect_caught = args.expect == "caught"});

  scale::ScaleOptions options;
  options.target = &scale::supported_target(args.target);
  options.attributes = attrs;
  options.rows = args.rows;
  options.hub_edge_budget = args.hub_edges;
  options.hub_source_budget = args.hub_sources;
  options.seed = args.seed;
  options.input_magnitude = args.magnitude;
  options.graph_description = args.graph;
  options.rerun_command = rerun;
  if (args.oracle_evaluations) options.tolerance.concurrent_evaluations = *args.oracle_evaluations;

  const std::string started = reports::utc_timestamp();
  const auto t0 = std::chrono::steady_clock::now();
  if (graph_lives_on_device(*system, spec, *options.target))
    fmt::print("graph {}: generated on the device (gpu/kronecker.cuh), held there CSR only\n", args.graph);
  const ScaleRun run = run_scale_where_system_runs(*system, spec, options);
  if (!run.graph_on_device) fmt::print("graph {}: {} ({:.2f} s)\n", args.graph, run.host_graph_summary, run.graph_seconds);
  const scale::ScaleResult& result = run.result;
  const double graph_seconds = run.graph_seconds;
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << scale::summary_text(result);
  fmt::print("  total {:.2f} s (graph {:.2f} s)\n", total, graph_seconds);
  // What --oracle-evaluations trades against: the process's largest resident set so far.
  if (rusage usage{}; getrusage(RUSAGE_SELF, &usage) == 0)
    fmt::print("  host memory: peak {:.2f} GiB resident\n", static_cast<double>(usage.ru_maxrss) / (1 << 20));

  const reports::Expectation expectation = reports::parse_expectation(args.expect);
  // A check that compared nothing caught nothing.
  const bool held = reports::expectation_held(expectation, result.outcome) && !result.nothing_compared;
  if (!args.report.empty()) {
    reports::RunReport run;
    run.gnncheck_version = GNNCHECK_VERSION;
    run.suite_name = "scale";
    run.suite_path = "(command line)";
    run.seed = args.seed;
    run.started_utc = started;
    run.seconds = total;
    run.systems.push_back({entry.name, system_kind_name(entry.kind), entry.availability.available, entry.availability.reason, entry.bug});
    reports::ResultRecord rec = scale::to_result_record(result);
    rec.expectation = expectation;
    rec.expectation_held = held;
    run.results.push_back(std::move(rec));
    reports::write_all(run, args.report);
    scale::write_sampled_rows(result, std::filesystem::path(args.report) / "scale_rows.json");
    fmt::print("  report: {} (sampled rows and their strata: scale_rows.json)\n",
               (std::filesystem::path(args.report) / "report.json").string());
  }
  fmt::print("{}\n", held ? "expectation held" : "expectation NOT held");
  return held ? 0 : 1;
}

}  // namespace gnncheck::suites

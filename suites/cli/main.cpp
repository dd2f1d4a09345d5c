// gnncheck — the command line tool: run suites, list what can run here, check one target ad hoc,
// re-run a saved counterexample, verify the oracle itself.
//
// Exit codes: 0 every expectation held; 1 some expectation did not hold; 2 usage or input error
// (a bad flag, an unreadable or invalid suite, an unknown system or target); 3 internal error.
#include <unistd.h>

#include <exception>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "adapters/interrupt.h"
#include "adapters/process_system.h"
#include "adapters/sanitizer.h"
#include "adapters/system_server.h"
#include "checks/checks.h"
#include "oracle/error.h"
#include "oracle/selfcheck.h"
#include "oracle/targets.h"
#include "properties/counterexample.h"
#include "reports/writers.h"
#include "suites/cli/final_table.h"
#include "suites/cli/list_command.h"
#include "suites/cli/progress.h"
#include "suites/cli/scale_command.h"
#include "suites/cli/skeleton_command.h"
#include "suites/runner.h"
#include "suites/suite.h"
#include "suites/system_registry.h"

namespace {

using namespace gnncheck;

constexpr int kExitOk = 0;
constexpr int kExitUnmet = 1;
constexpr int kExitUsage = 2;
constexpr int kExitInternal = 3;
constexpr int kExitInterrupted = 130;  // 128 + SIGINT, as shells report it
constexpr int kExitTerminated = 143;   // 128 + SIGTERM

// Systems named on the command line: --system NAME, --adapter CMD, --plugin SO (any number of each).
struct SystemFlags {
  std::vector<std::string> names, adapters, plugins;
  std::optional<double> case_timeout_s, startup_timeout_s;

  void add_to(CLI::App* app) {
    app->add_option("--system", names, "A system to test by name (see `gnncheck list systems`); repeatable");
    app->add_option("--adapter", adapters, "An external adapter command to test (adapters/PROTOCOL.md); repeatable");
    app->add_option("--plugin", plugins, "A C plugin library (.so, gnncheck/plugin.h) to test; repeatable");
    app->add_option("--case-timeout", case_timeout_s, "Seconds an adapter or plugin may take for one case (default 60)")
        ->check(CLI::PositiveNumber);
    app->add_option("--startup-timeout", startup_timeout_s,
                    "Seconds an adapter or plugin may take to start and say hello (default 120; not charged to any time budget)")
        ->check(CLI::PositiveNumber);
  }
  bool empty() const { return names.empty() && adapters.empty() && plugins.empty(); }

  // The limits for adapters and plugins: these flags over the suite's keys.
  suites::ProcessLimits limits(const suites::Suite* suite = nullptr) const {
    suites::ProcessLimits l;
    if (suite) {
      l.case_timeout_s = suite->case_timeout_seconds;
      l.startup_timeout_s = suite->startup_timeout_seconds;
    }
    if (case_timeout_s) l.case_timeout_s = case_timeout_s;
    if (startup_timeout_s) l.startup_timeout_s = startup_timeout_s;
    return l;
  }

  // Registers adapters and plugins and returns every system named, in flag order per kind; `flags`
  // receives how to name each on a command line again (for re-run lines).
  std::vector<std::string> resolve(suites::SystemRegistry& registry, std::vector<std::string>* flags = nullptr) const {
    std::vector<std::string> out;
    for (const auto& n : names) out.push_back(registry.find(n).name);
    for (const auto& a : adapters) {
      if (auto problem = adapter_command_problem(a)) throw InputError(fmt::format("--adapter {}: {}", a, *problem));
      out.push_back(registry.add_adapter(a));
    }
    for (const auto& p : plugins) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(p, ec)) throw InputError(fmt::format("--plugin {}: no such file", p));
      out.push_back(registry.add_plugin(std::filesystem::absolute(p).lexically_normal().string()));
    }
    if (flags)
      for (const auto& name : out) flags->push_back(registry.find(name).command_line_flag);
    return out;
  }
};

std::filesystem::path executable_dir(const char* argv0) {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) self = std::filesystem::absolute(argv0);
  return self.parent_path();
}

void register_suite_systems(const suites::Suite& suite, suites::SystemRegistry& registry) {
  for (const auto& d : suite.systems) {
    try {
      if (!d.adapter.empty()) {
        // A suite's adapter starts in the suite file's folder: its relative paths are relative to it,
        // as a plugin's path is.
        registry.add_adapter(d.adapter, d.name, std::filesystem::path(suite.path).parent_path());
      } else if (!d.plugin.empty()) {
        registry.add_plugin(std::filesystem::absolute(d.plugin).lexically_normal().string(), d.name);  // resolved and checked by load_suite
      } else {
        registry.find(d.name);  // a built-in system, listed to mark it required
      }
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: systems: {}", d.location.where(), e.what()));
    }
  }
}

int finish_run(const reports::RunReport& run, const std::filesystem::path& report_dir) {
  if (!report_dir.empty()) reports::write_all(run, report_dir);
  suites::print_final_table(std::cout, run, report_dir);
  if (run.interrupted_by == "SIGINT") return kExitInterrupted;
  if (run.interrupted_by == "SIGTERM") return kExitTerminated;
  return run.all_expectations_held() ? kExitOk : kExitUnmet;
}

reports::RunReport run_with_progress(const suites::Suite& suite, const suites::SystemRegistry& registry,
                                     const suites::RunOptions& options, const std::string& progress_mode) {
  const bool interactive = progress_mode == "terminal" || (progress_mode == "auto" && isatty(STDOUT_FILENO));
  auto progress = suites::make_progress(std::cout, interactive);
  reports::RunReport run = suites::run_suite(suite, registry, options, progress.get());
  progress.reset();  // clears the status line before the table
  run.gnncheck_version = GNNCHECK_VERSION;
  return run;
}

// The system a counterexample was recorded for, registered again from DIR/system.json when it was
// an adapter or a plugin (the command or library it records), so `gnncheck repro DIR` needs nothing else.
std::string recorded_system(const std::filesystem::path& dir, const std::string& name, suites::SystemRegistry& registry) {
  const auto file = dir / "system.json";
  std::ifstream in(file);
  if (!in) {
    if (registry.contains(name)) return name;
    throw InputError(fmt::format("{}: missing, and the case was recorded for system '{}', which is not built in: name it with "
                                 "--plugin SO, --adapter CMD or --system NAME",
                                 file.string(), name));
  }
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("kind") || !j["kind"].is_string())
    throw InputError(fmt::format("{}: not a system record (expected an object with 'name' and 'kind')", file.string()));
  const std::string kind = j["kind"];
  if (kind == "adapter" && j.contains("adapter") && j["adapter"].is_string()) return registry.add_adapter(j["adapter"], name);
  if (kind == "plugin" && j.contains("plugin") && j["plugin"].is_string()) return registry.add_plugin(j["plugin"], name);
  return registry.find(name).name;
}

}  // namespace

int main(int argc, char** argv) {
  gnncheck::install_interrupt_handlers();  // SIGINT/SIGTERM kill every adapter process group (adapters/interrupt.h)
  CLI::App app{"gnncheck " GNNCHECK_VERSION
               " — correctness suite for GNN sparse kernels and layers.\n"
               "Exit codes: 0 every expectation held; 1 some did not (a failure, an error, or something not tested);\n"
               "2 usage or input error; 3 internal error; 130/143 interrupted by SIGINT/SIGTERM (report written so far)."};
  app.set_version_flag("--version", std::string("gnncheck ") + GNNCHECK_VERSION);
  app.require_subcommand(1);

  // gnncheck run
  std::string run_suite_name = "default";
  SystemFlags run_systems;
  std::optional<std::uint64_t> run_seed;
  // Tasks are independent (each has its own seed and, in process, its own system instance).
  int run_jobs = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
  std::string run_report = "gnncheck-report";
  std::vector<std::string> run_entries;
  std::string run_progress = "auto";
  std::string run_expect = "pass";
  std::vector<std::string> run_targets;
  CLI::App* run = app.add_subcommand("run", "Run a suite and write its report (exit 0 when every expectation held)");
  run->add_option("suite", run_suite_name, "A suite file, or the name of a shipped suite (default, ci, full, gpu, accuracy)")
      ->capture_default_str();
  run_systems.add_to(run);
  run->add_option("--seed", run_seed, "Replace the suite's seed (every random choice derives from it)");
  run->add_option("--jobs,-j", run_jobs, "Tasks to run in parallel (default: the number of cores, at most 8)")->check(CLI::Range(1, 256))->capture_default_str();
  run->add_option("--report", run_report, "Directory for report.json, junit.xml, summary.md, index.html and cases/ "
                                          "(an empty string writes no report)")
      ->capture_default_str();
  run->add_option("--entry", run_entries, "Run only this entry of the suite; repeatable");
  run->add_option("--target", run_targets, "Run only this target (op or layer) in every entry; repeatable");
  run->add_option("--expect", run_expect,
                  "What the systems named here must do: pass (a correct system), or caught (a planted bug: exit 0 only when "
                  "some check of every entry catches it)")
      ->check(CLI::IsMember({"pass", "caught"}))
      ->capture_default_str();
  run->add_option("--progress", run_progress, "Progress display: auto (a live line on a terminal), terminal, plain")
      ->check(CLI::IsMember({"auto", "terminal", "plain"}))
      ->capture_default_str();
  std::string run_sanitize;
  run->add_option("--sanitize", run_sanitize,
                  "Run every GPU system under NVIDIA compute-sanitizer with this tool and fail on its findings in the "
                  "systems' own kernels (adapters/PROTOCOL.md §7)")
      ->check(CLI::IsMember({"memcheck", "racecheck", "initcheck"}));

  // gnncheck serve-system NAME (not listed): a built-in system served over the adapter protocol, the
  // process `--sanitize` starts under compute-sanitizer.
  std::string serve_name;
  CLI::App* serve = app.add_subcommand("serve-system", "Serve a built-in system over the adapter protocol (used by --sanitize)");
  serve->group("");
  serve->add_option("name", serve_name, "The built-in system")->required();

  // gnncheck list
  std::string list_section;
  CLI::App* list = app.add_subcommand("list", "List ops, layers, systems (with availability and why not), replicas, checks and graph families");
  list->add_option("section", list_section,
                   "Only this section (targets, ops, layers, systems, replicas, checks, graphs), or one target's tensors, "
                   "shapes and attributes (e.g. `gnncheck list gat`)");
  bool list_markdown = false;
  list->add_flag("--markdown", list_markdown, "Every target as Markdown (formula, conventions, tensors): adapters/PROTOCOL.md §10");

  // gnncheck check
  SystemFlags check_systems;
  std::string check_target;
  std::vector<std::string> check_checks;
  std::string check_graphs = "small";
  std::int64_t check_cases = 20;
  std::uint64_t check_seed = 1;
  std::string check_report;
  CLI::App* check = app.add_subcommand("check", "Check one target of one system ad hoc (all checks unless --check)");
  check_systems.add_to(check);
  check->add_option("--target", check_target, "The op or layer to check (see `gnncheck list targets`)")->required();
  check->add_option("--check", check_checks, "A check to run (see `gnncheck list checks`); repeatable; default: all but selfcheck");
  check->add_option("--graphs", check_graphs, "A built-in graph family (see `gnncheck list graphs`)")->capture_default_str();
  check->add_option("--cases", check_cases, "Cases per check")->check(CLI::PositiveNumber)->capture_default_str();
  check->add_option("--seed", check_seed, "Seed of the cases")->capture_default_str();
  check->add_option("--report", check_report, "Also write a report (and failing cases) to this directory");

  // gnncheck repro
  std::string repro_dir;
  SystemFlags repro_systems;
  CLI::App* repro = app.add_subcommand("repro", "Re-run one saved counterexample (exit 0 when it passes now, 1 when it still fails)");
  repro->add_option("case_dir", repro_dir, "A counterexample directory (DIR/cases/<name> of a report)")->required();
  repro_systems.add_to(repro);

  // gnncheck selfcheck
  std::uint64_t selfcheck_seed = 1;
  bool selfcheck_quick = false;
  std::vector<std::string> selfcheck_targets;
  CLI::App* selfcheck = app.add_subcommand("selfcheck", "Verify the oracle's backward of every op and layer against finite differences");
  selfcheck->add_option("--seed", selfcheck_seed, "Seed of the cases and directions")->capture_default_str();
  selfcheck->add_flag("--quick", selfcheck_quick, "Skip the random-direction check on the large (>100k-edge) graph");
  selfcheck->add_option("--target", selfcheck_targets, "Only this target; repeatable");

  // gnncheck entries
  std::vector<std::string> entries_suites;
  std::string entries_ctest_file;
  CLI::App* entries = app.add_subcommand("entries", "List the entries of suites (with --ctest-file: write them as ctest tests)");
  entries->add_option("suites", entries_suites, "Suite files or names")->required();
  entries->add_option("--ctest-file", entries_ctest_file,
                      "Write one add_test() per entry into this file (for a build system's TEST_INCLUDE_FILES)");

  // gnncheck report
  std::string report_dir_arg;
  CLI::App* report = app.add_subcommand("report", "Rewrite junit.xml, summary.md and index.html of a report directory from its report.json");
  report->add_option("report_dir", report_dir_arg, "A directory written by `gnncheck run --report`")->required();

  // gnncheck scale
  suites::ScaleCommandArgs scale_args;
  CLI::App* scale = suites::add_scale_command(app, scale_args);
  suites::SkeletonCommandArgs skeleton_args;
  CLI::App* skeleton = suites::add_skeleton_command(app, skeleton_args);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }

  try {
    auto registry = suites::SystemRegistry::with_builtins();

    if (scale->parsed()) return suites::run_scale_command(scale_args, registry);
    if (skeleton->parsed()) return suites::run_skeleton_command(skeleton_args, executable_dir(argv[0]));

    if (serve->parsed()) {
      const auto& entry = registry.find(serve_name);
      if (!entry.make || entry.instance) throw InputError(fmt::format("serve-system {}: not a built-in system", serve_name));
      auto system = entry.make();
      return serve_system(*system, serve_name);
    }

    if (list->parsed()) {
      if (list_markdown) suites::print_targets_markdown(std::cout, list_section);
      else suites::print_list(std::cout, registry, list_section);
      return kExitOk;
    }

    if (entries->parsed()) {
      std::string ctest;
      const std::string self = (executable_dir(argv[0]) / "gnncheck").string();
      for (const auto& name : entries_suites) {
        const auto path = suites::resolve_suite(name, executable_dir(argv[0]));
        const suites::Suite suite = suites::load_suite(path);
        if (entries_ctest_file.empty()) fmt::print("{} ({}): {}\n", suite.name, path.string(), suite.description);
        for (const auto& e : suite.entries) {
          const auto labels = suites::entry_labels(suite, e);
          if (entries_ctest_file.empty()) {
            fmt::print("  {:<20} systems {}; checks {}; graphs {}; {} cases; expect {}; labels {}\n", e.name, fmt::join(e.systems, ","),
                       fmt::join(e.checks, ","), e.graphs, e.cases, reports::to_string(e.expect), fmt::join(labels, ","));
            continue;
          }
          const std::string test = fmt::format("gnncheck.{}.{}", suite.name, e.name);
          ctest += fmt::format("add_test([=[{}]=] [=[{}]=] run [=[{}]=] --entry [=[{}]=] --progress plain --report [=[{}]=])\n", test, self,
                               path.string(), e.name, (std::filesystem::path(entries_ctest_file).parent_path() / "reports" / test).string());
          ctest += fmt::format("set_tests_properties([=[{}]=] PROPERTIES LABELS [=[{}]=] TIMEOUT {}", test, fmt::join(labels, ";"),
                               std::find(labels.begin(), labels.end(), "slow") != labels.end() ? 3000 : 600);
          if (std::find(labels.begin(), labels.end(), "gpu") != labels.end())
            ctest += " SKIP_REGULAR_EXPRESSION [=[is not available here]=]";
          ctest += ")\n";
        }
      }
      if (!entries_ctest_file.empty()) {
        std::ofstream out(entries_ctest_file);
        out << "# Written by `gnncheck entries --ctest-file`: one ctest test per suite entry.\n" << ctest;
        if (!out) throw InputError(fmt::format("{}: cannot write", entries_ctest_file));
      }
      return kExitOk;
    }

    if (report->parsed()) {
      const reports::RunReport saved = reports::read_json_report(std::filesystem::path(report_dir_arg) / "report.json");
      reports::write_all(saved, report_dir_arg);
      suites::print_final_table(std::cout, saved, report_dir_arg);
      return saved.all_expectations_held() ? kExitOk : kExitUnmet;
    }

    if (selfcheck->parsed()) {
      oracle::SelfcheckOptions options;
      options.seed = selfcheck_seed;
      options.include_large = !selfcheck_quick;
      options.targets = selfcheck_targets;
      options.out = &std::cout;
      const auto report = oracle::run_selfcheck(options);
      fmt::print("{} — {:.1f} s\n", report.all_passed ? "selfcheck: the oracle agrees with finite differences everywhere"
                                                      : "selfcheck: FAILED (see the lines marked above)",
                 report.seconds);
      return report.all_passed ? kExitOk : kExitUnmet;
    }

    if (run->parsed()) {
      const auto path = suites::resolve_suite(run_suite_name, executable_dir(argv[0]));
      const suites::Suite suite = suites::load_suite(path);
      for (const auto& target : run_targets) oracle::find_target(target);  // an unknown name is a usage error
      if (run_expect == "caught" && run_systems.empty())
        throw InputError("--expect caught: name the system with the planted bug (--system, --adapter or --plugin)");
      registry.set_process_limits(run_systems.limits(&suite));
      if (!run_sanitize.empty()) {
        const auto program = sanitizer::find_program();
        sanitizer::require_device();
        const auto log_root = std::filesystem::absolute(run_report.empty() ? std::filesystem::temp_directory_path() / "gnncheck-sanitizer"
                                                                           : std::filesystem::path(run_report) / "sanitizer");
        registry.sanitize({run_sanitize, program, log_root, executable_dir(argv[0]) / "gnncheck"});
      }
      register_suite_systems(suite, registry);
      suites::RunOptions options;
      options.seed = run_seed;
      options.jobs = run_jobs;
      options.report_dir = run_report;
      options.override_systems = run_systems.resolve(registry, &options.override_system_flags);
      options.override_expectation = reports::parse_expectation(run_expect);
      options.only_entries = run_entries;
      options.only_targets = run_targets;
      options.suite_argument = run_suite_name;
      options.stop_requested = stop_requested;
      const auto report = run_with_progress(suite, registry, options, run_progress);
      return finish_run(report, run_report);
    }

    if (check->parsed()) {
      if (check_systems.empty()) throw InputError("gnncheck check: name the system with --system, --adapter or --plugin");
      registry.set_process_limits(check_systems.limits());
      suites::Suite suite;
      suite.name = "check";
      suite.path = "(command line)";
      suite.seed = check_seed;
      suite.graphs = suites::builtin_graph_families();
      if (!suite.graphs.count(check_graphs))
        throw InputError(fmt::format("--graphs {}: not a built-in graph family (see `gnncheck list graphs`)", check_graphs));
      suites::Entry entry;
      entry.name = "check";
      suites::RunOptions options;
      entry.systems = check_systems.resolve(registry, &options.override_system_flags);
      options.override_systems = entry.systems;
      entry.targets = {{check_target, {}, {"command line", 0}}};
      entry.checks = check_checks;
      if (entry.checks.empty())
        for (auto kind : checks::all_check_kinds()) entry.checks.emplace_back(checks::to_string(kind));
      entry.graphs = check_graphs;
      entry.cases = check_cases;
      entry.location = {"command line", 0};
      suite.entries.push_back(entry);
      options.report_dir = check_report;
      options.suite_argument = "check";
      options.stop_requested = stop_requested;
      auto report = run_with_progress(suite, registry, options, "auto");
      // An ad-hoc check has no suite file to re-run; point at the same command instead.
      for (auto& r : report.results)
        if (r.counterexample.empty())
          r.repro = fmt::format("gnncheck check {} --target {} --check {} --graphs {} --cases {} --seed {}",
                                registry.find(r.system).command_line_flag, r.target, r.check, check_graphs, check_cases,
                                check_seed);
      return finish_run(report, check_report);
    }

    if (repro->parsed()) {
      const properties::SavedCase saved = properties::load_counterexample(repro_dir);
      registry.set_process_limits(repro_systems.limits());
      std::vector<std::string> names = repro_systems.resolve(registry);
      if (names.empty()) names.push_back(recorded_system(repro_dir, saved.system, registry));
      fmt::print("Case: target {} on {}, seed {}; recorded failure of {} on '{}':\n  {}\n", saved.c.target,
                 saved.c.graph->summary(), saved.c.seed, checks::to_string(saved.check), saved.system, saved.verdict_message);
      bool all_pass = true;
      for (const auto& name : names) {
        const auto& entry = registry.find(name);
        if (!entry.make || !entry.availability.available)
          throw InputError(fmt::format("system '{}' is not available here: {}", name, entry.availability.reason));
        auto sys = entry.make();
        const checks::Verdict v = checks::run_check(saved.check, *sys, saved.c);
        fmt::print("\n{}\n", checks::one_line(v));
        if (!v.passed()) fmt::print("{}\n", checks::failure_message(v));
        all_pass = all_pass && v.passed();
      }
      fmt::print("\n{}\n", all_pass ? "The case passes now." : "The case still fails.");
      return all_pass ? kExitOk : kExitUnmet;
    }
  } catch (const InputError& e) {
    std::cerr << "gnncheck: error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "gnncheck: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return kExitOk;
}

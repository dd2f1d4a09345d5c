#include "suites/cli/repro_command.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "adapters/replicas/replicas.h"
#include "checks/checks.h"
#include "checks/diagnosis.h"
#include "core/error.h"
#include "properties/counterexample.h"

namespace gnncheck::suites {
namespace {

// The system a counterexample was recorded for, registered again from DIR/system.json when it was
// an adapter or a plugin (the command or library it records), so `gnncheck repro DIR` needs nothing else.
std::string recorded_system(const std::filesystem::path& dir, const std::string& name, SystemRegistry& registry) {
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
  const std::optional<SystemKind> kind = system_kind_named(j["kind"]);
  // A Python callable checked in process (the Python package): nothing outside that process can call it.
  if (kind == SystemKind::python)
    throw InputError(fmt::format("{}: system '{}' is a Python callable checked in process (gnncheck.check); the command "
                                 "cannot call it. Re-run it with: {}",
                                 file.string(), name, j.contains("rerun") && j["rerun"].is_string() ? j["rerun"].get<std::string>()
                                                                                                   : std::string("gnncheck.repro(DIR, <the callable>)")));
  // The time limits it ran under, where the command line sets none: the case waits as long as in its run.
  ProcessLimits limits = registry.process_limits();
  const auto recorded_seconds = [&](const char* key, std::optional<double>& into) {
    if (into || !j.contains(key)) return;
    if (!j[key].is_number() || !(j[key].get<double>() > 0))
      throw InputError(fmt::format("{}: '{}' must be a number of seconds above 0", file.string(), key));
    into = j[key].get<double>();
  };
  recorded_seconds("case_timeout_s", limits.case_timeout_s);
  recorded_seconds("startup_timeout_s", limits.startup_timeout_s);
  registry.set_process_limits(limits);
  if (kind == SystemKind::adapter && j.contains("adapter") && j["adapter"].is_string()) return registry.add_adapter(j["adapter"], name);
  if (kind == SystemKind::plugin && j.contains("plugin") && j["plugin"].is_string()) return registry.add_plugin(j["plugin"], name);
  return registry.find(name).name;
}

}  // namespace

CLI::App* add_repro_command(CLI::App& app, ReproCommandArgs& args) {
  CLI::App* repro = app.add_subcommand("repro", "Re-run one saved counterexample (exit 0 when it passes now, 1 when it still fails)");
  repro->add_option("case_dir", args.case_dir, "A counterexample directory (DIR/cases/<name> of a report)")->required();
  args.systems.add_to(repro);
  return repro;
}

int run_repro_command(const ReproCommandArgs& args, SystemRegistry& registry) {
  const properties::SavedCase saved = properties::load_counterexample(args.case_dir);
  registry.set_process_limits(args.systems.limits());
  std::vector<std::string> names = args.systems.resolve(registry);
  if (names.empty()) names.push_back(recorded_system(args.case_dir, saved.system, registry));
  fmt::print("Case: target {} on {}, seed {}; recorded failure of {} on '{}':\n  {}\n", saved.c.target,
             saved.c.graph->summary(), saved.c.seed, checks::to_string(saved.check), saved.system, saved.verdict_message);
  bool all_pass = true, any_fail = false;
  for (const auto& name : names) {
    const auto& entry = registry.find(name);
    if (!entry.make || !entry.availability.available)
      throw InputError(fmt::format("system '{}' is not available here: {}", name, entry.availability.reason));
    auto sys = entry.make();
    const checks::Verdict v = checks::run_check(saved.check, *sys, saved.c);
    fmt::print("\n{}\n", checks::one_line(v));
    if (!v.passed()) fmt::print("{}\n", checks::failure_message(v));
    if (v.conclusion == checks::Conclusion::fail)  // what the system computed instead (checks/diagnosis.h)
      if (const auto d = checks::diagnose_failure(saved.check, *sys, saved.c, replica_variants(saved.c.target), {}))
        fmt::print("{}\n", d->text);
    all_pass = all_pass && v.passed();
    // An error (the system crashed, timed out or answered wrongly) fails closed, as in the run.
    any_fail = any_fail || v.conclusion == checks::Conclusion::fail || v.conclusion == checks::Conclusion::error;
  }
  fmt::print("\n{}\n", all_pass   ? "The case passes now."
                        : any_fail ? "The case still fails."
                                   : "The case no longer fails, but reaches no verdict now (the lines above say why).");
  return all_pass ? kExitOk : kExitUnmet;
}

}  // namespace gnncheck::suites

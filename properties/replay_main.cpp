// gnncheck-replay — re-runs a saved counterexample (properties/counterexample.h).
//
//   gnncheck-replay cases/tcgnn_backward_uses_A-spmm-adjoint-42             # the recorded system and check
//   gnncheck-replay cases/… --system cpu_float32                             # a correct system on the same case
//   gnncheck-replay cases/… --system tcgnn_backward_uses_A --base oracle    # a replica around the oracle
//   gnncheck-replay cases/… --check differential
//
// Systems: oracle, cpu_float32, and every bug replica (wrapping --base, cpu_float32 by default).
// Exit code: 0 the check passed, 1 it did not (fail, error, inconclusive, not applicable), 2 the directory or a flag is invalid.
#include <iostream>

#include <CLI/CLI.hpp>

#include "oracle/cpu_systems.h"
#include "adapters/replicas/replicas.h"
#include "checks/checks.h"
#include "core/error.h"
#include "properties/counterexample.h"

namespace {

std::unique_ptr<gnncheck::System> make_base(const std::string& name) {
  if (name == "oracle") return gnncheck::make_oracle_system();
  if (name == "cpu_float32") return gnncheck::make_cpu_float32_system();
  throw gnncheck::InputError("--base: expected oracle or cpu_float32, got '" + name + "'");
}

std::unique_ptr<gnncheck::System> make_system(const std::string& name, const std::string& base) {
  if (name == "oracle" || name == "cpu_float32") return make_base(name);
  return gnncheck::make_replica(name, make_base(base));  // InputError lists the known replicas
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Re-run a saved gnncheck counterexample and print the verdict"};
  std::string dir, system_name, base = "cpu_float32", check_name;
  app.add_option("directory", dir, "counterexample directory (holds case.json)")->required();
  app.add_option("--system", system_name, "system to run (default: the one recorded in case.json)");
  app.add_option("--base", base, "system a replica wraps: cpu_float32 (default) or oracle");
  app.add_option("--check", check_name, "check to run (default: the one recorded in case.json)");
  CLI11_PARSE(app, argc, argv);
  try {
    const gnncheck::properties::SavedCase saved = gnncheck::properties::load_counterexample(dir);
    auto system = make_system(system_name.empty() ? saved.system : system_name, base);
    const auto check = check_name.empty() ? saved.check : gnncheck::checks::parse_check_kind(check_name);
    gnncheck::checks::CheckOptions options;
    options.rerun_command = gnncheck::properties::replay_command(dir);
    const gnncheck::checks::Verdict v = gnncheck::checks::run_check(check, *system, saved.c, options);
    std::cout << gnncheck::checks::one_line(v) << "\n";
    if (!v.passed()) std::cout << v.message << "\n";
    return v.passed() ? 0 : 1;
  } catch (const gnncheck::InputError& e) {
    std::cerr << "gnncheck-replay: " << e.what() << "\n";
    return 2;
  }
}

#include "suites/cli/selfcheck_command.h"

#include <iostream>

#include <fmt/format.h>

#include "oracle/selfcheck.h"
#include "suites/cli/command_support.h"

namespace gnncheck::suites {

CLI::App* add_selfcheck_command(CLI::App& app, SelfcheckCommandArgs& args) {
  CLI::App* selfcheck = app.add_subcommand("selfcheck", "Verify the oracle's backward of every op and layer against finite differences");
  selfcheck->add_option("--seed", args.seed, "Seed of the cases and directions")->check(kSeedValue)->capture_default_str();
  selfcheck->add_flag("--quick", args.quick, "Skip the random-direction check on the large (>100k-edge) graph");
  selfcheck->add_option("--target", args.targets, "Only this target; repeatable");
  return selfcheck;
}

int run_selfcheck_command(const SelfcheckCommandArgs& args) {
  oracle::SelfcheckOptions options;
  options.seed = args.seed;
  options.include_large = !args.quick;
  options.targets = args.targets;
  options.out = &std::cout;
  const auto report = oracle::run_selfcheck(options);
  fmt::print("{} — {:.1f} s\n", report.all_passed ? "selfcheck: the oracle agrees with finite differences everywhere"
                                                  : "selfcheck: FAILED (see the lines marked above)",
             report.seconds);
  return report.all_passed ? kExitOk : kExitUnmet;
}

}  // namespace gnncheck::suites

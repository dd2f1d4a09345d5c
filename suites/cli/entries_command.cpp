#include "suites/cli/entries_command.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "reports/run_report.h"
#include "suites/cli/command_support.h"
#include "suites/planner.h"
#include "suites/suite.h"

namespace gnncheck::suites {

CLI::App* add_entries_command(CLI::App& app, EntriesCommandArgs& args) {
  CLI::App* entries = app.add_subcommand("entries", "List the entries of suites (with --ctest-file: write them as ctest tests)");
  entries->add_option("suites", args.suites, "Suite files or names")->required();
  entries->add_option("--ctest-file", args.ctest_file,
                      "Write one add_test() per entry into this file (for a build system's TEST_INCLUDE_FILES)");
  return entries;
}

int run_entries_command(const EntriesCommandArgs& args, const std::filesystem::path& executable_dir) {
  std::string ctest;
  const std::string self = (executable_dir / "gnncheck").string();
  const SystemRegistry systems = SystemRegistry::with_builtins();
  for (const auto& name : args.suites) {
    const auto path = resolve_suite(name, executable_dir);
    const Suite suite = load_suite(path);
    if (args.ctest_file.empty()) fmt::print("{} ({}): {}\n", suite.name, path.string(), suite.description);
    for (const auto& e : suite.entries) {
      const auto labels = entry_labels(suite, e, systems);
      if (args.ctest_file.empty()) {
        fmt::print("  {:<20} systems {}; checks {}; graphs {}; {} cases; expect {}; labels {}\n", e.name, fmt::join(e.systems, ","),
                   fmt::join(e.checks, ","), e.graphs, e.cases, reports::to_string(e.expect), fmt::join(labels, ","));
        continue;
      }
      const std::string test = fmt::format("gnncheck.{}.{}", suite.name, e.name);
      ctest += fmt::format("add_test([=[{}]=] [=[{}]=] run [=[{}]=] --entry [=[{}]=] --progress plain --report [=[{}]=])\n", test, self,
                           path.string(), e.name, (std::filesystem::path(args.ctest_file).parent_path() / "reports" / test).string());
      ctest += fmt::format("set_tests_properties([=[{}]=] PROPERTIES LABELS [=[{}]=] TIMEOUT {}", test, fmt::join(labels, ";"),
                           std::find(labels.begin(), labels.end(), "slow") != labels.end() ? 3000 : 600);
      if (std::find(labels.begin(), labels.end(), "gpu") != labels.end())
        ctest += " SKIP_REGULAR_EXPRESSION [=[is not available here]=]";
      ctest += ")\n";
    }
  }
  if (!args.ctest_file.empty()) {
    std::ofstream out(args.ctest_file);
    out << "# Written by `gnncheck entries --ctest-file`: one ctest test per suite entry.\n" << ctest;
    if (!out) throw InputError(fmt::format("{}: cannot write", args.ctest_file));
  }
  return kExitOk;
}

}  // namespace gnncheck::suites

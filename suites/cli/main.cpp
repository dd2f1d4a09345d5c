// gnncheck — the command line tool: run suites, list what can run here, check one target ad hoc,
// re-run a saved counterexample, verify the oracle itself.
//
// Exit codes: 0 every expectation held; 1 some expectation did not hold; 2 usage or input error
// (a bad flag, an unreadable or invalid suite, an unknown system or target).
#include <exception>
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "oracle/error.h"
#include "suites/cli/list_command.h"
#include "suites/system_registry.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;

}  // namespace

int main(int argc, char** argv) {
  using namespace gnncheck;
  CLI::App app{"gnncheck " GNNCHECK_VERSION
               " — correctness suite for GNN sparse kernels and layers.\n"
               "Exit codes: 0 every expectation held, 1 some did not, 2 usage or input error."};
  app.set_version_flag("--version", std::string("gnncheck ") + GNNCHECK_VERSION);
  app.require_subcommand(1);

  std::string list_section;
  CLI::App* list = app.add_subcommand("list", "List ops, layers, systems (with availability and why not) and replicas");
  list->add_option("section", list_section, "Only this section: targets, ops, layers, systems, replicas");

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
    auto systems = suites::SystemRegistry::with_builtins();
    if (list->parsed()) {
      suites::print_list(std::cout, systems, list_section);
      return kExitOk;
    }
  } catch (const InputError& e) {
    std::cerr << "gnncheck: error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "gnncheck: internal error: " << e.what() << "\n";
    return 3;
  }
  return kExitOk;
}

// gnncheck-mutation-score: runs every bug replica through the check its catalogue names, as a
// RapidCheck property over random cases, and prints the mutation-score table (replica, target, check,
// cases until caught, shrink steps, size of the shrunk counterexample) as Markdown.
//
//   gnncheck-mutation-score [--cases N] [--seed S] [--base oracle|cpu_float32] [--output FILE]
//
// Exit code 0 when every replica was caught, 1 when one escaped, 2 on bad usage. The table in
// adapters/replicas/README.md is this program's output.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "adapters/cpu_systems.h"
#include "adapters/replicas/replicas.h"
#include "properties/driver.h"

namespace gnncheck {
namespace {

struct Options {
  int cases = 200;
  std::uint64_t seed = 1;
  std::string base = "cpu_float32";
  std::string output;
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "gnncheck-mutation-score: " << problem
            << "\nusage: gnncheck-mutation-score [--cases N] [--seed S] [--base oracle|cpu_float32] [--output FILE]\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    const auto value = [&]() -> std::string {
      if (k + 1 >= argc) usage(fmt::format("{} needs a value", arg));
      return argv[++k];
    };
    try {
      if (arg == "--cases") o.cases = std::stoi(value());
      else if (arg == "--seed") o.seed = std::stoull(value());
      else if (arg == "--base") o.base = value();
      else if (arg == "--output") o.output = value();
      else usage(fmt::format("unknown option '{}'", arg));
    } catch (const std::logic_error&) {
      usage(fmt::format("{}: expected a number", arg));
    }
  }
  if (o.cases < 1) usage("--cases must be at least 1");
  if (o.base != "oracle" && o.base != "cpu_float32") usage(fmt::format("unknown base system '{}'", o.base));
  return o;
}

// The target a replica is scored on: its first (ops come before layers in the catalogue).
std::string scored_target(const ReplicaInfo& info) { return info.targets.front(); }

std::string describe_case(const properties::CaseSpec& spec) {
  const Case c = properties::build_case(spec);
  std::string attrs;
  for (const auto& [name, value] : c.attributes.values()) attrs += fmt::format(" {}={}", name, to_string(value));
  return fmt::format("{}×{}, {} edges;{}", c.graph->n_dst(), c.graph->n_src(), c.graph->num_edges(), attrs);
}

}  // namespace
}  // namespace gnncheck

int main(int argc, char** argv) {
  using namespace gnncheck;
  const Options options = parse(argc, argv);
  std::ostringstream table;
  table << "| # | replica | target | check | caught | cases until caught | shrinks | shrunk counterexample |\n"
        << "|---|---|---|---|---|---|---|---|\n";
  int caught = 0, total = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const ReplicaInfo& info : replica_catalogue()) {
    ++total;
    auto replica = make_replica(info.name, options.base == "oracle" ? make_oracle_system() : make_cpu_float32_system());
    const std::string target = scored_target(info);
    properties::PropertyOptions property;
    property.cases = options.cases;
    property.seed = options.seed;
    const properties::PropertyOutcome outcome =
        properties::run_property(checks::parse_check_kind(info.expected_check), *replica, target, property);
    const bool was_caught = !outcome.passed && outcome.failure.has_value();
    caught += was_caught ? 1 : 0;
    table << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", info.number, info.name, target,
                         info.expected_check, was_caught ? "yes" : (outcome.gave_up ? "gave up" : "**NO**"),
                         was_caught ? std::to_string(outcome.cases_passed + 1) : fmt::format("> {}", options.cases),
                         was_caught ? std::to_string(outcome.shrinks) : "–",
                         outcome.minimal ? describe_case(*outcome.minimal) : "–");
    std::cerr << fmt::format("{:2} {:38} {:18} {}\n", info.number, info.name, target,
                             was_caught ? fmt::format("caught after {} cases", outcome.cases_passed + 1) : "NOT caught");
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  table << fmt::format("\nMutation score: {}/{} caught (base system {}, up to {} cases each, seed {}, {:.1f} s).\n",
                       caught, total, options.base, options.cases, options.seed, seconds);
  if (options.output.empty()) {
    std::cout << table.str();
  } else {
    std::ofstream out(options.output);
    out << table.str();
    if (!out) {
      std::cerr << "gnncheck-mutation-score: cannot write " << options.output << "\n";
      return 2;
    }
  }
  return caught == total ? 0 : 1;
}

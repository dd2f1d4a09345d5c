// gnncheck-mutation-score: runs every bug replica through the check its catalogue names, as a
// RapidCheck property over random cases, and prints the mutation-score table (replica, target, check,
// cases until caught, shrink steps, size of the shrunk counterexample) as Markdown.
//
//   gnncheck-mutation-score [--cases N] [--seed S] [--base oracle|cpu_float32] [--all-targets]
//                           [--gpu] [--output FILE]
//
// By default each CPU replica is scored on its first target (an op). --all-targets scores every
// target a replica injects its bug into (layers included; the leak and width replicas, which apply
// to every target, stay on their first). --gpu scores the GPU replicas (adapters/replicas/gpu/,
// kernels with the bug, every target of each) instead; it needs a CUDA build and a device.
// Exit code 0 when every replica was caught, 1 when one escaped, 2 on bad usage. The tables in
// docs/replicas.md are this program's output.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <iostream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "oracle/cpu_systems.h"
#include "adapters/replicas/replicas.h"
#include "platform/process_heap.h"
#include "properties/driver.h"
#ifdef GNNCHECK_MUTATION_SCORE_HAVE_CUDA
#include "adapters/replicas/gpu/gpu_replicas.h"
#endif

namespace gnncheck {
namespace {

struct Options {
  int cases = 200;
  std::uint64_t seed = 1;
  std::string base = "cpu_float32";
  bool all_targets = false;
  bool gpu = false;
  std::string output;
};

constexpr const char* kUsage =
    "usage: gnncheck-mutation-score [--cases N] [--seed S] [--base oracle|cpu_float32] [--all-targets] [--gpu]\n"
    "                               [--output FILE]\n";

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "gnncheck-mutation-score: " << problem << "\n" << kUsage;
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
    if (arg == "--all-targets") {
      o.all_targets = true;
      continue;
    }
    if (arg == "--gpu") {
      o.gpu = true;
      continue;
    }
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
#ifndef GNNCHECK_MUTATION_SCORE_HAVE_CUDA
  if (o.gpu) usage("--gpu needs a build with CUDA (GNNCHECK_CUDA=ON); this one has none");
#endif
  return o;
}

// One row of the table: a replica on one target through one check.
struct Trial {
  int number;
  std::string replica;
  std::string target;
  std::string check;
  std::function<std::unique_ptr<System>()> make;
  index_t hub_edges = 0;  // graphs with a hub of this many edges (replicas whose bug lives there)
};

// The CPU replicas: each on its first target (ops come before layers in the catalogue), or on every
// target with --all-targets (except the leak and width replicas, which apply to every target alike).
// A replica whose bug lives on hub rows gets graphs with a hub of more edges than that.
std::vector<Trial> cpu_trials(const Options& o) {
  std::vector<Trial> trials;
  for (const ReplicaInfo& info : replica_catalogue()) {
    const bool generic = info.number == 9 || info.number == 10;
    const std::vector<std::string> targets =
        o.all_targets && !generic ? info.targets : std::vector<std::string>{info.targets.front()};
    for (const std::string& target : targets)
      trials.push_back({info.number, info.name, target, info.expected_check, [name = info.name, base = o.base] {
                          return make_replica(name, base == "oracle" ? make_oracle_system() : make_cpu_float32_system());
                        }, info.hub_degree > 0 ? info.hub_degree + 1 : 0});
  }
  return trials;
}

#ifdef GNNCHECK_MUTATION_SCORE_HAVE_CUDA
std::vector<Trial> gpu_trials() {
  std::vector<Trial> trials;
  for (const GpuReplicaInfo& info : gpu_replica_catalogue())
    for (const std::string& target : info.targets)
      trials.push_back({info.number, info.name, target, info.expected_check, [name = info.name] { return make_gpu_replica(name); }});
  return trials;
}
#endif

std::string describe_case(const properties::CaseSpec& spec) {
  const Case c = properties::build_case(spec);
  std::string attrs;
  for (const auto& [name, value] : c.attributes.values()) attrs += fmt::format(" {}={}", name, to_string(value));
  return fmt::format("{}×{}, {} edges;{}", c.graph->n_dst(), c.graph->n_src(), c.graph->num_edges(), attrs);
}

}  // namespace
}  // namespace gnncheck

int main(int argc, char** argv) {
  gnncheck::retain_freed_memory_in_process();  // many evaluations of large tensors (platform/process_heap.h)
  using namespace gnncheck;
  const Options options = parse(argc, argv);
  std::vector<Trial> trials;
#ifdef GNNCHECK_MUTATION_SCORE_HAVE_CUDA
  if (options.gpu) trials = gpu_trials();
#endif
  if (!options.gpu) trials = cpu_trials(options);
  std::ostringstream table;
  table << "| # | replica | target | check | caught | cases until caught | shrinks | shrunk counterexample |\n"
        << "|---|---|---|---|---|---|---|---|\n";
  int caught = 0, total = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const Trial& trial : trials) {
    ++total;
    auto replica = trial.make();
    const Availability here = replica->availability();
    if (!here.available) {
      std::cerr << "gnncheck-mutation-score: " << trial.replica << " cannot run here: " << here.reason << "\n";
      return 2;
    }
    properties::PropertyOptions property;
    property.cases = options.cases;
    property.seed = options.seed;
    property.case_options.graph.hub_edges = trial.hub_edges;
    const properties::PropertyOutcome outcome =
        properties::run_property(checks::parse_check_kind(trial.check), *replica, trial.target, property);
    const bool was_caught = !outcome.passed() && outcome.failure.has_value();
    caught += was_caught ? 1 : 0;
    table << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", trial.number, trial.replica, trial.target,
                         trial.check, was_caught ? "yes" : (outcome.gave_up ? "gave up" : "**NO**"),
                         was_caught ? std::to_string(outcome.cases_passed + 1) : fmt::format("> {}", options.cases),
                         was_caught ? std::to_string(outcome.shrinks) : "–",
                         outcome.minimal ? describe_case(*outcome.minimal) : "–");
    std::cerr << fmt::format("{:2} {:38} {:18} {}\n", trial.number, trial.replica, trial.target,
                             was_caught ? fmt::format("caught after {} cases", outcome.cases_passed + 1) : "NOT caught");
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  table << fmt::format("\nMutation score: {}/{} {} caught ({}, up to {} cases each, seed {}, {:.1f} s).\n", caught,
                       total, options.all_targets || options.gpu ? "replica × target pairs" : "replicas",
                       options.gpu ? "GPU replicas" : "base system " + options.base, options.cases, options.seed, seconds);
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

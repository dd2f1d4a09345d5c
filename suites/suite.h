// gnncheck/suites/suite.h — a suite file (YAML) parsed into plain structs; the schema is suites/SCHEMA.md.
//
// A suite names the systems to test, the graph families to draw cases from and a list of entries:
// each entry runs some checks on some targets for some systems, on cases drawn from one graph
// family, and states what it expects (`pass` for a correct system, `caught` for a bug replica).
// Parsing is strict: an unknown key, a wrong type, a missing required key or a value out of range
// is an InputError that names the file, the line and the key, e.g.
//   "suites/ci.yaml:14: entries[2].cases: expected a positive integer, got 'many'".
//
//   gnncheck::suites::Suite s = gnncheck::suites::load_suite("suites/default.yaml");
//   for (const auto& e : s.entries) fmt::print("{}: {} checks\n", e.name, e.checks.size());
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/case.h"
#include "reports/run_report.h"

namespace gnncheck::suites {

// Where a value came from, for messages about it after parsing ("suites/ci.yaml:14").
struct SourceLocation {
  std::string file;
  int line = 0;  // 1-based; 0 when the value did not come from a file (e.g. a command-line flag)
  std::string where() const;  // "file:line" or "command line"
};

// An inclusive integer range; a single number n in the file is {n, n}.
struct IntRange {
  std::int64_t min = 0;
  std::int64_t max = 0;
};

// A family of graphs cases are drawn from (SCHEMA.md, "graphs"):
//   random      RapidCheck's graph generator (properties/generators.h): uniform, heavy-tailed, star,
//               chain, bipartite and empty graphs with duplicates and self-loops; a failing case is
//               shrunk to a minimal one. Keys: max_nodes, max_avg_degree, square_only.
//   dataset     a dataset from ../shared/datasets by `name` (cora, citeseer), for accuracy gates.
//   csbm        the contextual stochastic block model of fixtures/generators.h, `params` as CsbmParams.
//   file        a MatrixMarket (.mtx) or edge-list file at `path` (relative to the suite file).
//   scale       one big graph (`graph`: a scale/graph_spec.h spec) checked by the `scale` check on
//               `rows` sampled rows (scale/scale_check.h): one result per (system, target), no case loop.
//   anything else is a family of fixtures::make_graph (erdos_renyi, rmat, power_law,
//               skewed_directed, star, chain, complete_bipartite, builtin, …) built from `params`
//               with a fresh seed per case; these graphs are fixed per case and are not shrunk.
// The largest random graphs a suite may ask for (larger values are refused when the suite is read).
inline constexpr std::int64_t kMaxRandomNodes = std::int64_t{1} << 16;  // per side
inline constexpr double kMaxRandomAvgDegree = 256.0;

struct GraphFamily {
  // Where its graphs come from: the five families of their own, or one of fixtures::make_graph's generators.
  enum class Kind { random, dataset, csbm, file, scale, generator };
  std::string name;    // the key it is defined under in `graphs:`
  std::string family;  // as the suite names it: random, dataset, csbm, file, scale or a generator's name
  std::int64_t max_nodes = 12;       // random
  double max_avg_degree = 4.0;       // random
  bool square_only = false;          // random
  std::map<std::string, AttrValue> params;  // fixtures families and csbm
  std::string dataset;               // dataset: its name
  std::string path;                  // file: where it is (resolved against the suite's folder)
  std::optional<std::int64_t> max_dimension;  // file (.mtx): MatrixMarketOptions::max_dimension
  std::optional<std::int64_t> num_nodes;      // file (edge list): EdgeListOptions::num_nodes
  // scale: the graph spec (a file resolved against the suite's folder), as `gnncheck scale` takes them.
  std::string scale_graph;
  std::int64_t scale_rows = 1000;
  std::optional<std::int64_t> scale_hub_edges;    // unset: scale::kDefaultHubEdgeBudget
  std::optional<std::int64_t> scale_hub_sources;  // unset: scale::kDefaultHubSourceBudget
  double scale_magnitude = 1.0;
  SourceLocation location;
  Kind kind() const;
  bool shrinks() const { return kind() == Kind::random; }
};

// One value or a set of values an attribute takes across the cases of an entry.
struct AttributeChoice {
  std::string name;
  std::vector<AttrValue> values;  // a case picks one (seeded); integer ranges are expanded here
};

struct TargetChoice {
  std::string name;  // a target name, or "ops" / "layers" / "all" for every such target
  std::vector<AttributeChoice> attributes;
  SourceLocation location;
  // "all", "ops" or "layers": the name stands for every such catalogue target.
  bool is_selector() const { return name == "all" || name == "ops" || name == "layers"; }
};

// A system named by a suite: built-in (by name), an external adapter command, or a C plugin.
struct SystemDecl {
  std::string name;
  std::string adapter;  // command line of an external adapter process (kind "adapter")
  std::string plugin;   // path of a plugin .so (kind "plugin")
  // Unset: required in entries that expect `pass`, optional in entries that expect `caught`. A
  // required system that cannot run here, or answers nothing, is `not tested` and fails the run; an
  // optional one is a visible skip.
  std::optional<bool> required;
  SourceLocation location;
};

// A tolerance override: the bound a check uses is multiplied by `factor`. A reason is mandatory
// and is printed with every verdict it affected.
struct ToleranceOverride {
  double factor = 1.0;
  std::string reason;
};

struct Entry {
  std::string name;  // unique in the suite; the ctest test is named <suite>.<entry>
  std::string description;
  std::vector<std::string> systems;  // system names, or "replicas" for every replica
  std::vector<TargetChoice> targets;
  std::vector<std::string> checks;
  std::string graphs;                 // key into Suite::graphs
  std::int64_t cases = 0;             // cases per property; 0 = the suite's cases_per_property
  reports::Expectation expect = reports::Expectation::pass;
  std::optional<ToleranceOverride> tolerance;
  std::map<std::string, AttrValue> options;  // check options (epochs, …), validated by the check
  std::vector<std::string> labels;    // extra ctest labels
  SourceLocation location;
};

struct Suite {
  std::string name;
  std::string description;
  std::string path;
  std::uint64_t seed = 1;
  std::int64_t cases_per_property = 20;
  double time_budget_seconds = 0.0;  // 0: unlimited; otherwise the run stops starting new cases
  // Limits for the suite's adapter and plugin processes (PROTOCOL.md §5); unset: the defaults.
  std::optional<double> case_timeout_seconds;
  std::optional<double> startup_timeout_seconds;
  std::vector<SystemDecl> systems;   // extra systems (adapters, plugins) and required flags
  std::map<std::string, GraphFamily> graphs;
  std::vector<Entry> entries;
};

// Reads and validates a suite file. Throws InputError (file:line: key: what was expected).
Suite load_suite(const std::filesystem::path& path);
// The same from text; `file_name` is used in messages.
Suite parse_suite(const std::string& yaml_text, const std::string& file_name);

// Finds a suite given as a path or a bare name ("ci" → ci.yaml) in: the current directory, the
// directory named by $GNNCHECK_SUITES_DIR, the installed share/gnncheck/suites next to the
// executable, and the source tree's suites/. Throws InputError listing where it looked.
std::filesystem::path resolve_suite(const std::string& name_or_path, const std::filesystem::path& executable_dir);

// The graph families every suite may use without defining them (`tiny`, `small`, `medium`, `skewed`,
// `rmat`, `cora`, `citeseer`, `csbm`); a suite's own `graphs:` may override them.
std::map<std::string, GraphFamily> builtin_graph_families();

}  // namespace gnncheck::suites

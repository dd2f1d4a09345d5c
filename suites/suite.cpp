#include "suites/suite.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "adapters/process_system.h"
#include "fixtures/generators.h"
#include "core/error.h"
#include "scale/graph_spec.h"
#include "suites/yaml_field.h"

namespace gnncheck::suites {

std::string SourceLocation::where() const {
  if (line == 0) return file.empty() ? std::string("command line") : file;
  return fmt::format("{}:{}", file, line);
}

GraphFamily::Kind GraphFamily::kind() const {
  if (family == "random") return Kind::random;
  if (family == "dataset") return Kind::dataset;
  if (family == "csbm") return Kind::csbm;
  if (family == "file") return Kind::file;
  if (family == "scale") return Kind::scale;
  return Kind::generator;
}

namespace {


// A scale family: one big graph as `gnncheck scale --graph` names it, and the check's sampling options.
GraphFamily parse_scale_family(GraphFamily g, const YamlField& f, const std::map<std::string, YamlField>& m,
                               const std::filesystem::path& suite_dir) {
  for (const auto& [key, field] : m)
    if (key != "family" && key != "graph" && key != "rows" && key != "hub_edges" && key != "hub_sources" && key != "magnitude")
      field.fail(fmt::format("'{}' does not apply to family scale; expected graph, rows, hub_edges, hub_sources, magnitude", key));
  if (!m.count("graph")) f.fail("family 'scale' needs 'graph' (kronecker:SCALE, rmat:SCALE[,EDGE_FACTOR] or a .mtx / edge-list file)");
  const YamlField& graph = m.at("graph");
  g.scale_graph = graph.nonempty_string();
  if (g.scale_graph.find(':') == std::string::npos) {  // a file: relative to the suite file, as every path in a suite
    const std::filesystem::path p = g.scale_graph;
    g.scale_graph = (p.is_relative() ? suite_dir / p : p).lexically_normal().string();
  }
  try {
    scale::parse_graph_spec(g.scale_graph);
  } catch (const InputError& e) {
    graph.fail(fmt::format("{} (a relative file is relative to the suite file's folder)", e.what()));
  }
  if (m.count("rows")) g.scale_rows = m.at("rows").positive_integer();
  if (m.count("hub_edges")) g.scale_hub_edges = m.at("hub_edges").positive_integer();
  if (m.count("hub_sources")) g.scale_hub_sources = m.at("hub_sources").positive_integer();
  if (m.count("magnitude")) {
    g.scale_magnitude = m.at("magnitude").real();
    if (!(g.scale_magnitude > 0) || !std::isfinite(g.scale_magnitude))
      m.at("magnitude").fail(fmt::format("expected a positive finite number, got {}", m.at("magnitude").describe()));
  }
  return g;
}

GraphFamily parse_graph_family(const std::string& name, const YamlField& f, const std::filesystem::path& suite_dir) {
  auto m = f.mapping({"family", "max_nodes", "max_avg_degree", "square_only", "params", "name", "path", "max_dimension",
                      "num_nodes", "graph", "rows", "hub_edges", "hub_sources", "magnitude"});
  GraphFamily g;
  g.name = name;
  g.location = f.location();
  if (!m.count("family")) f.fail("missing required key 'family' (random, dataset, csbm, file, scale, or a generator family)");
  g.family = m.at("family").nonempty_string();
  using Kind = GraphFamily::Kind;
  if (g.kind() == Kind::scale) return parse_scale_family(std::move(g), f, m, suite_dir);
  for (const char* key : {"graph", "rows", "hub_edges", "hub_sources", "magnitude"})
    if (m.count(key)) m.at(key).fail(fmt::format("'{}' applies to family scale only, not '{}'", key, g.family));
  if (g.kind() == Kind::generator) {
    std::vector<std::string> generators;
    bool known = false;
    for (const auto& info : graph_families()) {
      generators.push_back(info.name);
      known = known || info.name == g.family;
    }
    if (!known)
      m.at("family").fail(fmt::format("unknown graph family '{}'; expected random, dataset, csbm, file, scale or one of the generators {}",
                                      g.family, fmt::join(generators, ", ")));
  }
  auto only_for = [&](const std::string& key, bool allowed, const std::string& families) {
    if (m.count(key) && !allowed) m.at(key).fail(fmt::format("'{}' applies to family {} only, not '{}'", key, families, g.family));
  };
  only_for("max_nodes", g.kind() == Kind::random, "random");
  only_for("max_avg_degree", g.kind() == Kind::random, "random");
  only_for("square_only", g.kind() == Kind::random, "random");
  only_for("name", g.kind() == Kind::dataset, "dataset");
  only_for("path", g.kind() == Kind::file, "file");
  only_for("params", g.kind() == Kind::csbm || g.kind() == Kind::generator, "csbm and the generator families");
  // Random graphs are for counterexamples that shrink: a claim of 10^15 nodes is refused here, before
  // any case allocates a graph of that size (2^16 nodes × degree 256 is already 16 million edges).
  if (m.count("max_nodes")) {
    g.max_nodes = m.at("max_nodes").positive_integer();
    if (g.max_nodes > kMaxRandomNodes)
      m.at("max_nodes").fail(fmt::format("{} nodes per side is absurd for a random graph; expected at most {} (use a "
                                         "generator family such as erdos_renyi or rmat for large graphs)",
                                         g.max_nodes, kMaxRandomNodes));
  }
  if (m.count("max_avg_degree")) {
    g.max_avg_degree = m.at("max_avg_degree").real();
    if (!(g.max_avg_degree > 0)) m.at("max_avg_degree").fail("expected a positive average degree");
    if (g.max_avg_degree > kMaxRandomAvgDegree)
      m.at("max_avg_degree").fail(fmt::format("expected an average degree of at most {}", kMaxRandomAvgDegree));
  }
  if (m.count("square_only")) g.square_only = m.at("square_only").boolean();
  if (m.count("params"))
    for (const auto& [key, value] : m.at("params").named_mapping("generator parameters")) g.params[key] = value.attr_value();
  if (g.kind() == Kind::csbm || g.kind() == Kind::generator) {
    // Unknown parameter names are refused now, not when the first case is drawn.
    Attributes params;
    for (const auto& [k, v] : g.params) params.set(k, v);
    try {
      if (g.kind() == Kind::csbm) csbm_params_from(params);
      else check_graph_parameters(g.family, params);
    } catch (const InputError& e) {
      (m.count("params") ? m.at("params") : f).fail(e.what());
    }
  }
  if (g.kind() == Kind::dataset) {
    if (!m.count("name")) f.fail("family 'dataset' needs 'name' (cora, citeseer, …)");
    g.dataset = m.at("name").nonempty_string();
  }
  if (g.kind() == Kind::file) {
    if (!m.count("path")) f.fail("family 'file' needs 'path' (a .mtx or edge-list file)");
    std::filesystem::path p = m.at("path").nonempty_string();
    g.path = (p.is_relative() ? suite_dir / p : p).lexically_normal().string();
    // A graph with more isolated nodes than its file justifies (fixtures/matrix_market.h,
    // fixtures/edge_list.h) is loaded by saying so: the loaders' own options, by their names.
    const bool mtx = p.extension() == ".mtx";
    if (m.count("max_dimension")) {
      if (!mtx) m.at("max_dimension").fail("'max_dimension' applies to a MatrixMarket (.mtx) file; an edge list takes 'num_nodes'");
      g.max_dimension = m.at("max_dimension").positive_integer();
    }
    if (m.count("num_nodes")) {
      if (mtx) m.at("num_nodes").fail("'num_nodes' applies to an edge-list file; a MatrixMarket (.mtx) file takes 'max_dimension'");
      g.num_nodes = m.at("num_nodes").positive_integer();
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(g.path, ec))
      m.at("path").fail(fmt::format("no such file: {} (a relative path is relative to the suite file's folder)", g.path));
  } else {
    for (const char* key : {"max_dimension", "num_nodes"})
      if (m.count(key)) m.at(key).fail(fmt::format("'{}' applies to family file only, not '{}'", key, g.family));
  }
  return g;
}

TargetChoice parse_target(const YamlField& f) {
  TargetChoice t;
  t.location = f.location();
  if (f.is_scalar()) {
    t.name = f.nonempty_string();
    return t;
  }
  auto m = f.mapping({"name", "attributes"});
  if (!m.count("name")) f.fail("missing required key 'name' (the target)");
  t.name = m.at("name").nonempty_string();
  if (m.count("attributes")) {
    for (const auto& [attr, value] : m.at("attributes").named_mapping("attribute values")) {
      AttributeChoice choice;
      choice.name = attr;
      if (value.is_map()) {
        IntRange r = value.int_range();
        if (r.max - r.min > 64) value.fail("an attribute range may span at most 65 values; list the values instead");
        for (std::int64_t v = r.min; v <= r.max; ++v) choice.values.emplace_back(v);
      } else {
        for (const auto& item : value.list_or_one()) choice.values.push_back(item.attr_value());
        if (choice.values.empty()) value.fail("expected at least one value");
      }
      t.attributes.push_back(std::move(choice));
    }
  }
  return t;
}

SystemDecl parse_system(const YamlField& f, const std::filesystem::path& suite_dir) {
  SystemDecl s;
  s.location = f.location();
  auto m = f.mapping({"name", "adapter", "plugin", "required"});
  if (!m.count("name")) f.fail("missing required key 'name'");
  s.name = m.at("name").nonempty_string();
  if (m.count("adapter")) s.adapter = m.at("adapter").nonempty_string();
  if (m.count("plugin")) s.plugin = m.at("plugin").nonempty_string();
  if (!s.adapter.empty() && !s.plugin.empty()) f.fail("a system is either an 'adapter' command or a 'plugin', not both");
  if (!s.plugin.empty()) {
    std::filesystem::path lib = s.plugin;
    if (lib.is_relative()) lib = suite_dir / lib;
    s.plugin = lib.lexically_normal().string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(s.plugin, ec))
      m.at("plugin").fail(fmt::format("no such file: {} (a relative path is relative to the suite file's folder)", s.plugin));
  }
  if (!s.adapter.empty()) {
    if (auto problem = adapter_command_problem(s.adapter, suite_dir)) m.at("adapter").fail(*problem);
  }
  if (m.count("required")) s.required = m.at("required").boolean();
  return s;
}

Entry parse_entry(const YamlField& f) {
  auto m = f.mapping({"name", "description", "systems", "targets", "checks", "graphs", "cases", "expect", "tolerance",
                      "options", "labels"});
  Entry e;
  e.location = f.location();
  for (const char* key : {"name", "systems", "checks"})
    if (!m.count(key)) f.fail(fmt::format("missing required key '{}'", key));
  e.name = m.at("name").nonempty_string();
  if (e.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != std::string::npos)
    m.at("name").fail(fmt::format("entry names may use letters, digits, '_' and '-' only (it names a ctest test), got '{}'", e.name));
  if (m.count("description")) e.description = m.at("description").string();
  for (const auto& s : m.at("systems").list_or_one()) e.systems.push_back(s.nonempty_string());
  if (e.systems.empty()) m.at("systems").fail("expected at least one system");
  if (m.count("targets"))
    for (const auto& t : m.at("targets").list_or_one()) e.targets.push_back(parse_target(t));
  else
    e.targets.push_back({"all", {}, e.location});
  for (const auto& c : m.at("checks").list_or_one()) e.checks.push_back(c.nonempty_string());
  if (e.checks.empty()) m.at("checks").fail("expected at least one check");
  e.graphs = m.count("graphs") ? m.at("graphs").nonempty_string() : "small";
  if (m.count("cases")) e.cases = m.at("cases").positive_integer();
  if (m.count("expect")) {
    const std::string ex = m.at("expect").string();
    if (ex != "pass" && ex != "caught") m.at("expect").fail(fmt::format("expected 'pass' or 'caught', got '{}'", ex));
    e.expect = reports::parse_expectation(ex);
  }
  if (m.count("tolerance")) {
    const YamlField& tf = m.at("tolerance");
    auto t = tf.mapping({"factor", "reason"});
    if (!t.count("factor")) tf.fail("missing required key 'factor' (the bound is multiplied by it)");
    if (!t.count("reason")) tf.fail("missing required key 'reason': a tolerance override must say why it is justified");
    ToleranceOverride o{t.at("factor").real(), t.at("reason").nonempty_string()};
    if (!(o.factor > 0)) t.at("factor").fail(fmt::format("expected a positive factor, got {}", o.factor));
    e.tolerance = o;
  }
  if (m.count("options"))
    for (const auto& [key, value] : m.at("options").named_mapping("check options")) e.options[key] = value.attr_value();
  if (m.count("labels"))
    for (const auto& l : m.at("labels").list_or_one()) e.labels.push_back(l.nonempty_string());
  return e;
}

}  // namespace

std::map<std::string, GraphFamily> builtin_graph_families() {
  std::map<std::string, GraphFamily> g;
  auto add = [&](const std::string& name, const std::string& family) -> GraphFamily& {
    GraphFamily f;
    f.name = name;
    f.family = family;
    f.location = {"built-in graph families", 0};
    return g[name] = f;
  };
  // Shrinking random graphs of every shape, small enough that counterexamples read at a glance.
  add("tiny", "random").max_nodes = 6;
  add("small", "random").max_nodes = 16;
  GraphFamily& medium = add("medium", "random");
  medium.max_nodes = 200;
  medium.max_avg_degree = 12;
  // In- and out-degrees that differ for almost every node, plus duplicates and empty rows.
  add("skewed", "skewed_directed").params = {{"n", std::int64_t{48}},
                                             {"edges", std::int64_t{200}},
                                             {"duplicate_fraction", 0.05},
                                             {"empty_row_fraction", 0.05}};
  add("rmat", "rmat").params = {{"scale", std::int64_t{12}}, {"edge_factor", std::int64_t{8}}};
  add("cora", "dataset").dataset = "cora";
  add("citeseer", "dataset").dataset = "citeseer";
  add("csbm", "csbm");
  return g;
}

Suite parse_suite(const std::string& yaml_text, const std::string& file_name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw InputError(fmt::format("{}:{}: not valid YAML: {}", file_name, e.mark.line + 1, e.msg));
  }
  YamlField top(root, "", &file_name);
  if (!root.IsMap()) throw InputError(fmt::format("{}: expected a mapping at the top level (name, seed, entries, …)", file_name));
  auto m = top.mapping({"name", "description", "seed", "cases_per_property", "time_budget_s", "case_timeout_s", "startup_timeout_s",
                        "systems", "graphs", "entries"});
  Suite s;
  s.path = file_name;
  if (!m.count("name")) top.fail("missing required key 'name'");
  if (!m.count("entries")) top.fail("missing required key 'entries'");
  s.name = m.at("name").nonempty_string();
  if (m.count("description")) s.description = m.at("description").string();
  if (m.count("seed")) s.seed = m.at("seed").unsigned_integer();
  if (m.count("cases_per_property")) s.cases_per_property = m.at("cases_per_property").positive_integer();
  if (m.count("time_budget_s")) {
    s.time_budget_seconds = m.at("time_budget_s").real();
    if (s.time_budget_seconds < 0) m.at("time_budget_s").fail("expected a non-negative number of seconds (0 = no limit)");
  }
  for (const auto& [key, target] : {std::pair{"case_timeout_s", &s.case_timeout_seconds}, std::pair{"startup_timeout_s", &s.startup_timeout_seconds}})
    if (m.count(key)) {
      *target = m.at(key).real();
      if (!(**target > 0)) m.at(key).fail("expected a positive number of seconds");
    }
  if (m.count("systems"))
    for (const auto& f : m.at("systems").list()) s.systems.push_back(parse_system(f, std::filesystem::path(file_name).parent_path()));
  s.graphs = builtin_graph_families();
  if (m.count("graphs"))
    for (const auto& [name, f] : m.at("graphs").named_mapping("graph families"))
      s.graphs[name] = parse_graph_family(name, f, std::filesystem::path(file_name).parent_path());

  std::set<std::string> names;
  for (const auto& f : m.at("entries").list()) {
    Entry e = parse_entry(f);
    if (!names.insert(e.name).second) f.fail(fmt::format("entry name '{}' is used twice", e.name));
    if (!s.graphs.count(e.graphs)) {
      std::vector<std::string> known;
      for (const auto& [k, v] : s.graphs) known.push_back(k);
      throw InputError(fmt::format("{}: graphs: unknown graph family '{}'; defined: {}", e.location.where(), e.graphs,
                                   fmt::join(known, ", ")));
    }
    if (e.cases == 0) e.cases = s.cases_per_property;
    s.entries.push_back(std::move(e));
  }
  if (s.entries.empty()) m.at("entries").fail("expected at least one entry");
  return s;
}

Suite load_suite(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open the suite file", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  return parse_suite(text.str(), path.string());
}

std::filesystem::path resolve_suite(const std::string& name_or_path, const std::filesystem::path& executable_dir) {
  namespace fs = std::filesystem;
  if (name_or_path.empty())
    throw InputError("suite: an empty name; expected a suite file or the name of a shipped suite (default, ci, full, gpu, accuracy)");
  std::error_code ec;
  // A bare name ("ci") is a shipped suite first: a folder or file called `gpu` in the current
  // directory does not shadow suites/gpu.yaml. Anything else is a path, and must be a file.
  const bool looks_like_path = name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".yaml") ||
                               name_or_path.ends_with(".yml");
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("GNNCHECK_SUITES_DIR")) dirs.emplace_back(env);
  dirs.push_back(executable_dir / ".." / "share" / "gnncheck" / "suites");
  dirs.emplace_back(GNNCHECK_SOURCE_SUITES_DIR);
  std::vector<std::string> tried;
  if (!looks_like_path) {
    for (const auto& dir : dirs) {
      fs::path candidate = dir / (name_or_path + ".yaml");
      if (fs::is_regular_file(candidate, ec)) return fs::weakly_canonical(candidate);
      tried.push_back(fs::weakly_canonical(candidate).string());
    }
  }
  if (fs::is_regular_file(name_or_path, ec)) return name_or_path;
  if (fs::is_directory(name_or_path, ec))
    throw InputError(fmt::format("suite '{}': {} is a directory, not a suite file{}", name_or_path, fs::absolute(name_or_path).string(),
                                 looks_like_path ? "" : fmt::format(" (and no shipped suite has that name; looked for: {})",
                                                                    fmt::join(tried, ", "))));
  tried.insert(tried.begin(), fs::absolute(name_or_path).string());
  throw InputError(fmt::format("suite '{}' not found; looked for: {}", name_or_path, fmt::join(tried, ", ")));
}

}  // namespace gnncheck::suites

#include "suites/family_case_source.h"

#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "core/error.h"
#include "core/splitmix64.h"
#include "fixtures/dataset.h"
#include "fixtures/edge_list.h"
#include "fixtures/generators.h"
#include "fixtures/matrix_market.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"
#include "properties/generators.h"

namespace gnncheck::suites {

std::shared_ptr<const Graph> family_graph(const GraphFamily& f, std::uint64_t case_seed) {
  Attributes params;
  for (const auto& [k, v] : f.params) params.set(k, v);
  try {
    if (f.kind() == GraphFamily::Kind::dataset) return std::make_shared<const Graph>(load_dataset(f.dataset).graph);
    if (f.kind() == GraphFamily::Kind::csbm) return std::make_shared<const Graph>(make_csbm(csbm_params_from(params), case_seed).graph);
    if (f.kind() == GraphFamily::Kind::file) {
      const bool mtx = std::filesystem::path(f.path).extension() == ".mtx";
      if (mtx) return std::make_shared<const Graph>(read_matrix_market_graph(f.path, {.max_dimension = f.max_dimension}).graph);
      return std::make_shared<const Graph>(read_edge_list(f.path, {.num_nodes = f.num_nodes}).graph);
    }
    return std::make_shared<const Graph>(make_graph(f.family, params, case_seed));
  } catch (const InputError& e) {
    throw InputError(fmt::format("graphs.{} ({}): {}", f.name, f.location.where(), e.what()));
  }
}

FamilyCaseSource::FamilyCaseSource(const GraphFamily& family, std::string target, const std::vector<AttributeChoice>& attributes,
                                   std::int64_t cases, std::uint64_t seed)
    : family_(family), target_(std::move(target)), attributes_(attributes), cases_(cases), seed_(seed) {}

namespace {
const std::vector<properties::ValueStyle> kValueStyles = properties::CaseOptions{}.value_styles;
}  // namespace

std::optional<properties::CaseFailure> FamilyCaseSource::draw(properties::CaseJudge& judge) {
  std::mt19937_64 attribute_rng(seed_);
  const auto& def = oracle::find_target(target_);
  for (std::int64_t i = 0; i < cases_; ++i) {
    const std::uint64_t case_seed = splitmix64(seed_ + static_cast<std::uint64_t>(i));
    auto graph = family_graph(family_, case_seed);
    if (def.spec.needs_square_graph && !graph->is_square())
      throw InputError(
          fmt::format("target '{}' needs a square graph; graphs.{} gives {}", target_, family_.name, graph->summary()));
    Attributes attributes;
    for (const auto& choice : attributes_) attributes.set(choice.name, choice.values[attribute_rng() % choice.values.size()]);
    // Attributes the catalogue draws (gspmm's message and reduction) that the entry leaves open.
    for (const auto& a : def.spec.attributes)
      if (a.drawn && !a.choices.empty() && !attributes.has(a.name))
        attributes.set(a.name, a.choices[attribute_rng() % a.choices.size()]);
    // Every value style in turn, as the generator draws them (small integers in every other case
    // of a max or min, which ties where values repeat).
    const properties::ValueStyle values = def.kinks.ties && i % 2 == 0
                                              ? properties::ValueStyle::small_integers
                                              : kValueStyles[static_cast<std::size_t>(i) % kValueStyles.size()];
    if (def.spec.is_layer && graph->n_dst() > graph->n_src()) {
      // A layer that pairs destination i with source i (self-loops, a node's own features) is not
      // defined on a block with more destinations than sources: nothing to check, by design.
      oracle::RandomCaseOptions forward_only;
      forward_only.with_grad_outputs = false;
      const Result defined = oracle::evaluate(oracle::make_random_case(def, graph, attributes, case_seed, forward_only));
      if (!defined.ok()) {
        judge.not_applicable(defined.message);
        continue;
      }
    }
    Case c = properties::drawn_case(def, graph, attributes, values, case_seed);
    checks::Verdict v;
    switch (judge.judge(c, v)) {
      case properties::CaseAnswer::go_on: break;
      case properties::CaseAnswer::stop: return std::nullopt;
      case properties::CaseAnswer::failed_earlier: return std::nullopt;  // the loop returns the judge's chosen case
      case properties::CaseAnswer::failed:
        return properties::CaseFailure{.c = std::move(c), .verdict = std::move(v), .how_found = "", .provenance = {}};
    }
  }
  return std::nullopt;
}

}  // namespace gnncheck::suites

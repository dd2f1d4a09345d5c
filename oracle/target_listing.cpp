#include "oracle/target_listing.h"

#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gnncheck::oracle {
namespace {

// Distinct primes for the probe: a dimension equal to one of them, or to a product of two, names
// the attribute(s) it came from without ambiguity.
constexpr std::int64_t kPrimes[] = {3, 5, 7, 11, 13, 17, 19, 23, 29};
constexpr index_t kProbeDst = 37, kProbeSrc = 41;

struct Probe {
  Graph graph;
  Attributes attributes;
  std::map<std::int64_t, std::string> symbols;  // dimension value -> its name
};

std::optional<Probe> make_probe(const TargetDef& def, bool with_primes) {
  const index_t n_dst = kProbeDst;
  const index_t n_src = def.spec.needs_square_graph ? kProbeDst : kProbeSrc;
  // 43 edges: one per destination, and six more into the first rows (E differs from both sides).
  std::vector<index_t> row_ptr{0}, col_idx;
  for (index_t i = 0; i < n_dst; ++i) {
    col_idx.push_back(i % n_src);
    if (i < 6) col_idx.push_back((i + 1) % n_src);
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  Probe p{Graph::from_csr(n_dst, n_src, row_ptr, col_idx), {}, {}};
  p.symbols[n_dst] = def.spec.needs_square_graph ? "n" : "n_dst";
  if (!def.spec.needs_square_graph) p.symbols[n_src] = "n_src";
  p.symbols[p.graph.num_edges()] = "E";
  std::size_t next = 0;
  std::vector<std::pair<std::int64_t, std::string>> chosen;
  for (const auto& a : def.spec.attributes) {
    AttrValue v = a.default_value;
    if (with_primes && std::holds_alternative<std::int64_t>(v) && a.name.find("seed") == std::string::npos &&
        next < std::size(kPrimes)) {
      v = kPrimes[next++];
      chosen.emplace_back(std::get<std::int64_t>(v), a.name);
    }
    p.attributes.set(a.name, v);
  }
  for (const auto& [value, name] : chosen) p.symbols.emplace(value, name);
  for (std::size_t i = 0; i < chosen.size(); ++i)
    for (std::size_t j = i + 1; j < chosen.size(); ++j)
      p.symbols.emplace(chosen[i].first * chosen[j].first, chosen[i].second + "·" + chosen[j].second);
  try {
    def.input_shapes(p.graph, p.attributes);
    def.output_shapes(p.graph, p.attributes);
  } catch (const std::exception&) {
    return std::nullopt;  // these attribute values are not a valid combination for the target
  }
  return p;
}

std::string symbolic(const std::vector<index_t>& shape, const Probe& p, bool exact) {
  std::vector<std::string> dims;
  for (index_t d : shape) {
    auto it = p.symbols.find(d);
    dims.push_back(exact && it != p.symbols.end() ? it->second : fmt::format("{}", d));
  }
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

}  // namespace

std::vector<TensorListing> list_tensors(const TargetDef& def) {
  std::optional<Probe> probe = make_probe(def, true);
  const bool exact = probe.has_value();
  if (!probe) probe = make_probe(def, false);  // defaults only: shapes are shown as numbers for them
  std::map<std::string, std::vector<index_t>> in, out;
  if (probe) {
    in = def.input_shapes(probe->graph, probe->attributes);
    out = def.output_shapes(probe->graph, probe->attributes);
  }
  auto shape_of = [&](const std::map<std::string, std::vector<index_t>>& shapes, const std::string& name) {
    auto it = shapes.find(name);
    return it == shapes.end() || !probe ? std::string("(depends on the attributes)") : symbolic(it->second, *probe, exact);
  };
  std::vector<TensorListing> listing;
  for (const auto& slot : def.spec.inputs)
    listing.push_back({slot.name, slot.kind == TensorKind::parameter ? "parameter" : "input", std::string(to_string(slot.kind)),
                       slot.differentiable, shape_of(in, slot.name)});
  for (const auto& slot : def.spec.outputs)
    listing.push_back({slot.name, "output", std::string(to_string(slot.kind)), slot.differentiable, shape_of(out, slot.name)});
  return listing;
}

}  // namespace gnncheck::oracle

#include "oracle/target_listing.h"

#include <algorithm>
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

// Which integer attributes the probe sets to a prime: none (the defaults), all, or those whose
// prime keeps the tensors the defaults give — an attribute that also selects tensors (R-GCN's
// bases: 0 is a weight per relation and no comp) then keeps its default, so the listing shows the
// default layout.
enum class Primes { none, all, keeping_the_default_tensors };

Graph probe_graph(const TargetDef& def) {
  const index_t n_dst = kProbeDst;
  const index_t n_src = def.spec.needs_square_graph ? kProbeDst : kProbeSrc;
  // 43 edges: one per destination, and six more into the first rows (E differs from both sides).
  std::vector<index_t> row_ptr{0}, col_idx;
  for (index_t i = 0; i < n_dst; ++i) {
    col_idx.push_back(i % n_src);
    if (i < 6) col_idx.push_back((i + 1) % n_src);
    row_ptr.push_back(static_cast<index_t>(col_idx.size()));
  }
  return Graph::from_csr(n_dst, n_src, row_ptr, col_idx);
}

// The names of the tensors `def` has under `attributes` (an optional one, like a disabled bias, has
// no shape), or nullopt where the values are not a valid combination for the target.
std::optional<std::vector<std::string>> tensor_names(const TargetDef& def, const Graph& g, const Attributes& attributes) {
  try {
    std::vector<std::string> names;
    for (const auto& [name, shape] : def.input_shapes(g, attributes)) names.push_back(name);
    for (const auto& [name, shape] : def.output_shapes(g, attributes)) names.push_back(name);
    return names;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool takes_a_prime(const AttributeSpec& a) {
  return std::holds_alternative<std::int64_t>(a.default_value) && a.name.find("seed") == std::string::npos;
}

std::optional<Probe> make_probe(const TargetDef& def, Primes primes) {
  Probe p{probe_graph(def), {}, {}};
  const index_t n_dst = p.graph.n_dst(), n_src = p.graph.n_src();
  p.symbols[n_dst] = def.spec.needs_square_graph ? "n" : "n_dst";
  if (!def.spec.needs_square_graph) p.symbols[n_src] = "n_src";
  p.symbols[p.graph.num_edges()] = "E";
  Attributes defaults;
  for (const auto& a : def.spec.attributes) defaults.set(a.name, a.default_value);
  const auto default_tensors = tensor_names(def, p.graph, defaults);
  std::size_t next = 0;
  std::vector<std::pair<std::int64_t, std::string>> chosen;
  for (const auto& a : def.spec.attributes) {
    AttrValue v = a.default_value;
    if (primes != Primes::none && takes_a_prime(a) && next < std::size(kPrimes)) {
      bool keep_default = false;
      if (primes == Primes::keeping_the_default_tensors && default_tensors) {
        Attributes alone = defaults;
        alone.set(a.name, kPrimes[next]);
        keep_default = tensor_names(def, p.graph, alone) != default_tensors;
      }
      if (!keep_default) {
        v = kPrimes[next++];
        chosen.emplace_back(std::get<std::int64_t>(v), a.name);
      }
    }
    p.attributes.set(a.name, v);
  }
  for (const auto& [value, name] : chosen) p.symbols.emplace(value, name);
  for (std::size_t i = 0; i < chosen.size(); ++i)
    for (std::size_t j = i + 1; j < chosen.size(); ++j)
      p.symbols.emplace(chosen[i].first * chosen[j].first, chosen[i].second + "·" + chosen[j].second);
  if (!tensor_names(def, p.graph, p.attributes)) return std::nullopt;  // not a valid combination for the target
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
  std::optional<Probe> probe = make_probe(def, Primes::keeping_the_default_tensors);
  const bool exact = probe.has_value();
  if (!probe) probe = make_probe(def, Primes::none);  // defaults only: shapes are shown as numbers for them
  // A tensor the default layout leaves out (R-GCN's comp without bases) is shown as every attribute
  // at a prime has it.
  const std::optional<Probe> every_prime = make_probe(def, Primes::all);
  std::map<std::string, std::vector<index_t>> in, out, other_in, other_out;
  if (probe) {
    in = def.input_shapes(probe->graph, probe->attributes);
    out = def.output_shapes(probe->graph, probe->attributes);
  }
  if (every_prime) {
    other_in = def.input_shapes(every_prime->graph, every_prime->attributes);
    other_out = def.output_shapes(every_prime->graph, every_prime->attributes);
  }
  auto shape_of = [&](const std::map<std::string, std::vector<index_t>>& shapes,
                      const std::map<std::string, std::vector<index_t>>& other_shapes, const std::string& name) {
    if (auto it = shapes.find(name); it != shapes.end() && probe) return symbolic(it->second, *probe, exact);
    if (auto it = other_shapes.find(name); it != other_shapes.end()) return symbolic(it->second, *every_prime, true);
    return std::string("(depends on the attributes)");
  };
  std::vector<TensorListing> listing;
  for (const auto& slot : def.spec.inputs)
    listing.push_back({slot.name, slot.kind == TensorKind::parameter ? "parameter" : "input", std::string(to_string(slot.kind)),
                       slot.differentiable, shape_of(in, other_in, slot.name), slot.index_range});
  for (const auto& slot : def.spec.outputs)
    listing.push_back({slot.name, "output", std::string(to_string(slot.kind)), slot.differentiable,
                       shape_of(out, other_out, slot.name)});
  return listing;
}

namespace {

std::string gradient_note(const TensorListing& t) {
  if (t.role == "output") return t.differentiable ? "receives its output gradient" : "no output gradient";
  if (!t.index_range.empty())
    return "index: integers in [0, " + t.index_range + ") stored as numbers; convert them, no gradient";
  return t.differentiable ? "differentiable: return its gradient" : "not differentiable";
}

// A Markdown table cell: a '|' would end the cell.
std::string cell(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

// Characters, not bytes, of UTF-8 text (fmt pads to characters: "·" is one).
std::size_t display_width(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char ch : text) n += (ch & 0xC0) != 0x80;
  return n;
}

// " (std and mul opt-in: …)" for an attribute with opt-in choices (AttributeSpec::opt_in_choices).
std::string opt_in_choices_note(const AttributeSpec& a, const std::string& how) {
  if (a.opt_in_choices.empty()) return {};
  std::vector<std::string> names;
  for (const auto& v : a.opt_in_choices) names.push_back(to_plain_string(v));
  return fmt::format(" ({} opt-in: {})", fmt::join(names, " and "), how);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::string describe_target(const TargetDef& def) {
  const auto& spec = def.spec;
  std::string out = fmt::format("{} ({}): {}\n", spec.name, spec.is_layer ? "layer" : "op", spec.summary);
  if (spec.needs_square_graph) out += "  needs a square graph (n_dst = n_src = n)\n";
  if (!spec.formula.empty()) {
    out += "\nFormula (row i = a destination, col_e = the source of edge e, Σ_{e ∈ row i} = over i's in-edges):\n";
    for (const auto& line : lines_of(spec.formula)) out += fmt::format("  {}\n", line);
  }
  if (!spec.conventions.empty()) {
    out += "\nConventions:\n";
    for (const auto& c : spec.conventions) out += fmt::format("  - {}\n", c);
  }
  out += "\nTensors (float64 in case files; a float32 system gets and returns float32):\n";
  const auto tensors = list_tensors(def);
  std::size_t name_width = 4, shape_width = 28;
  for (const auto& t : tensors) {
    name_width = std::max(name_width, display_width(t.name));
    shape_width = std::max(shape_width, display_width(t.shape));
  }
  for (const auto& t : tensors)
    out += fmt::format("  {:<{}}  {:<9}  {:<{}}  {:<10}  {}\n", t.name, name_width, t.role, t.shape, shape_width, t.lives,
                       gradient_note(t));
  out += "  (n_dst: destination rows of A; n_src: source columns; E: edges, in edge-id order = CSR position, unless the "
         "tensor lives on edges_csc)\n";
  if (!spec.attributes.empty()) {
    out += "\nAttributes (default; meaning):\n";
    for (const auto& a : spec.attributes)
      out += fmt::format("  {:<16} {:<10} {}{}{}\n", a.name, gnncheck::to_string(a.default_value), a.help,
                         a.opt_in ? " (opt-in: a system outside gnncheck is asked the default unless it declares it; "
                                    "PROTOCOL.md §2)"
                                  : "",
                         opt_in_choices_note(a, "a system outside gnncheck is asked them only if it declares the attribute; "
                                                "PROTOCOL.md §2"));
  }
  out += fmt::format("\nTolerance (how checks bound each element; checks/tolerance.md derives it):\n  {}\n", describe(spec.tolerance));
  if (!def.wrong_variants.empty()) {
    out += "\nKnown-wrong variants (a failure names the one its answer matches, after these the target's bug replicas; "
           "checks/README.md, \"Diagnosis\"):\n";
    for (const auto& v : def.wrong_variants) out += fmt::format("  {}: {}\n", v.name, v.description);
  }
  return out;
}

std::string targets_markdown() {
  std::string out = fmt::format("{}\n\n", kTargetsMarkdownBegin);
  out += "Shapes in terms of `n_dst` (destination rows of `A`), `n_src` (source columns), `E` (edges, in edge-id order "
         "unless the tensor lives on `edges_csc`) and the attributes at their names. Every input listed gets its "
         "gradient back; every output receives its output gradient. In the formulas row `i` is a destination, `col_e` "
         "the source of edge `e`, and `Σ_{e ∈ row i}` runs over destination `i`'s in-edges.\n\n";
  out += "| target | kind | inputs | parameters | outputs | attributes (default) |\n";
  out += "| --- | --- | --- | --- | --- | --- |\n";
  for (const auto& def : all_targets()) {
    std::vector<std::string> inputs, parameters, outputs, attributes;
    for (const auto& t : list_tensors(def)) {
      const std::string entry = fmt::format("`{}` {}", t.name, t.shape);
      (t.role == "output" ? outputs : t.role == "parameter" ? parameters : inputs).push_back(entry);
    }
    for (const auto& a : def.spec.attributes) attributes.push_back(fmt::format("`{}` = {}", a.name, gnncheck::to_string(a.default_value)));
    auto joined = [](const std::vector<std::string>& v) { return v.empty() ? std::string("—") : cell(fmt::format("{}", fmt::join(v, ", "))); };
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", def.spec.name, def.spec.is_layer ? "layer" : "op", joined(inputs),
                       joined(parameters), joined(outputs), joined(attributes));
  }
  for (const auto& def : all_targets()) {
    const auto& spec = def.spec;
    out += fmt::format("\n### `{}`\n\n{}\n\n```\n{}\n```\n", spec.name, spec.summary, spec.formula);
    if (spec.needs_square_graph) out += "\nNeeds a square graph (`n_dst = n_src`).\n";
    if (!spec.conventions.empty()) {
      out += "\n";
      for (const auto& c : spec.conventions) out += fmt::format("- {}\n", c);
    }
    if (!spec.attributes.empty()) {
      out += "\nAttributes:\n";
      for (const auto& a : spec.attributes)
        out += fmt::format("- `{}` (default {}): {}{}{}\n", a.name, gnncheck::to_string(a.default_value), a.help,
                           a.opt_in ? " (opt-in: asked only of a system that declares it, §2)" : "",
                           opt_in_choices_note(a, "asked only of a system that declares the attribute, §2"));
    }
    out += fmt::format("\nTolerance: {}.\n", describe(spec.tolerance));
  }
  out += fmt::format("\n{}\n", kTargetsMarkdownEnd);
  return out;
}

}  // namespace gnncheck::oracle

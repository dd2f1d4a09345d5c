// arbitrary_case(): a whole case drawn on a drawn graph — attributes (case_attributes.h), a shape
// where kernels change path (drawn_shapes.h), a value style and a value seed — and how a CaseSpec
// prints in a counterexample.
#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "core/error.h"
#include "oracle/targets.h"
#include "properties/case_attributes.h"
#include "properties/draws.h"
#include "properties/drawn_shapes.h"
#include "properties/generators.h"

namespace gnncheck::properties {

std::string_view to_string(ValueStyle style) {
  switch (style) {
    case ValueStyle::small_integers: return "small_integers";
    case ValueStyle::half_grid: return "half_grid";
    case ValueStyle::uniform: return "uniform";
    case ValueStyle::with_zeros: return "with_zeros";
    case ValueStyle::large: return "large";
  }
  return "unknown";
}

ValueStyle parse_value_style(std::string_view name) {
  for (ValueStyle s : {ValueStyle::small_integers, ValueStyle::half_grid, ValueStyle::uniform, ValueStyle::with_zeros,
                       ValueStyle::large})
    if (to_string(s) == name) return s;
  throw InputError(fmt::format("unknown value style '{}': expected small_integers, half_grid, uniform, with_zeros or large", name));
}

void showValue(const CaseSpec& spec, std::ostream& os) {
  os << fmt::format("target {}, attributes {{", spec.target);
  bool first = true;
  for (const auto& [name, value] : spec.attributes.values()) {
    os << (first ? "" : ", ") << name << "=" << gnncheck::to_string(value);
    first = false;
  }
  os << "}";
  if (!spec.shape.empty()) os << " (shape: " << spec.shape << ")";
  os << fmt::format(", values {} (seed {}), ", to_string(spec.values), spec.value_seed);
  showValue(spec.graph, os);
}

rc::Gen<CaseSpec> arbitrary_case(const std::string& target, CaseOptions options) {
  const oracle::TargetSpec spec = oracle::find_target(target).spec;
  // Layers read each destination's own features (GIN, SAGE) or add self-loops (i, i): destination i
  // is source i, so their blocks have n_dst ≤ n_src (oracle/layers/self_loops.h).
  options.graph.square_only = options.graph.square_only || spec.needs_square_graph;
  options.graph.dst_at_most_src = options.graph.dst_at_most_src || spec.is_layer;
  if (options.value_styles.empty()) throw InputError("case generator: at least one value style is needed");
  const bool ties = oracle::find_target(target).kinks.ties;
  return rc::gen::mapcat(arbitrary_graph(options.graph), [spec, options, ties](const GraphSpec& graph) {
    return rc::gen::exec([spec, options, graph, ties] {
      CaseSpec c;
      c.graph = graph;
      c.target = spec.name;
      DrawnAttributes drawn = draw_attributes(spec, options);
      c.attributes = std::move(drawn.attributes);
      c.shape = draw_shape(graph, options, drawn.open_widths, drawn.free_heads, drawn.bias_open, c.attributes);
      // A max or min ties where values repeat: small integers in at least 3/4 of its cases.
      std::vector<ValueStyle> styles = options.value_styles;
      if (ties && std::count(styles.begin(), styles.end(), ValueStyle::small_integers))
        styles.insert(styles.begin(), 3 * styles.size(), ValueStyle::small_integers);
      c.values = pick(styles);
      c.value_seed = *rc::gen::noShrink(rc::gen::arbitrary<std::uint64_t>());
      return c;
    });
  });
}
}  // namespace gnncheck::properties

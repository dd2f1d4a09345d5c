#include "properties/case_attributes.h"

#include <algorithm>
#include <cstdint>

#include "properties/draws.h"

namespace gnncheck::properties {

DrawnAttributes draw_attributes(const oracle::TargetSpec& spec, const CaseOptions& options) {
  std::vector<std::int64_t> widths;
  for (std::int64_t w : {1, 2, 3, 5, 7, 8, 16, 31, 33, 40, 64})
    if (w <= options.max_width) widths.push_back(w);
  const auto open = [&](const std::string& name) { return !options.attribute_values.count(name); };
  const std::vector<std::string> width_names = oracle::width_attributes(spec);
  const auto is_width = [&](const std::string& name) {
    return std::find(width_names.begin(), width_names.end(), name) != width_names.end();
  };
  DrawnAttributes out;
  bool has_heads = false, has_bias = false;
  for (const auto& a : spec.attributes) {
    if (is_width(a.name) && open(a.name)) out.open_widths.push_back(a.name);
    has_heads = has_heads || a.name == "heads";
    has_bias = has_bias || a.name == "bias";
    if (const auto fixed = options.attribute_values.find(a.name); fixed != options.attribute_values.end()) {
      out.attributes.set(a.name, pick(fixed->second));
      continue;
    }
    if (a.draw.kind == oracle::AttributeDraw::Kind::heads) {
      const bool one = options.max_heads < 2 || fixed_fraction_draw(4) == 0;
      out.attributes.set(a.name, one ? std::int64_t{1} : *rc::gen::inRange<std::int64_t>(2, options.max_heads + 1));
      continue;
    }
    if (is_width(a.name)) {
      out.attributes.set(a.name, pick(widths));
      continue;
    }
    switch (a.draw.kind) {  // the entry's AttributeDraw
      case oracle::AttributeDraw::Kind::one_of: out.attributes.set(a.name, pick(a.draw.values)); break;
      case oracle::AttributeDraw::Kind::integers:
        out.attributes.set(a.name, *rc::gen::inRange<std::int64_t>(a.draw.low, a.draw.high + 1));
        break;
      case oracle::AttributeDraw::Kind::coin: out.attributes.set(a.name, *rc::gen::arbitrary<bool>()); break;
      case oracle::AttributeDraw::Kind::choices:
        if (a.drawn && !a.choices.empty()) out.attributes.set(a.name, pick(a.choices));
        break;
      case oracle::AttributeDraw::Kind::heads: break;  // drawn above
    }
  }
  out.free_heads = has_heads && open("heads") && options.max_heads >= 2;
  out.bias_open = has_bias && open("bias");
  return out;
}

}  // namespace gnncheck::properties

#include "properties/drawn_shapes.h"

#include <algorithm>

#include <fmt/format.h>

#include "properties/draws.h"

namespace gnncheck::properties {
namespace {

// What a case of these attributes holds, roughly: node and edge rows times the widest row, plus a
// layer's widest weight matrix (the cost a drawn shape adds; CaseOptions::max_case_elements).
std::int64_t case_elements(const GraphSpec& g, const Attributes& a, const std::vector<std::string>& widths) {
  std::int64_t widest = 1;
  for (const auto& name : widths) widest = std::max(widest, a.get_int(name));
  const std::int64_t heads = a.has("heads") ? a.get_int("heads") : 1;
  const std::int64_t rows = g.n_dst + g.n_src + static_cast<std::int64_t>(g.dst.size());
  return rows * heads * widest + (widths.size() > 1 ? heads * widest * widest : 0);
}

}  // namespace

std::string draw_shape(const GraphSpec& g, const CaseOptions& options, const std::vector<std::string>& widths,
                       bool free_heads, bool bias_open, Attributes& a) {
  if (widths.empty() && !free_heads) return "";
  const int kind = fixed_fraction_draw(4);  // 0, 1 ordinary; 2 a path width; 3 a dimension coincidence
  if (kind < 2 || (kind == 2 && widths.empty())) return "";
  Attributes drawn = a;
  std::string what;
  const auto set_widths = [&](std::int64_t w) {
    for (const auto& name : widths) drawn.set(name, w);
  };
  if (kind == 2) {
    // One width (the others keep theirs) on either side of a warp, a 64- or 128-column tile or a
    // 256-thread block; heads halved until the case fits.
    const std::string name = uniform_pick(widths);
    const auto fits = [&](std::int64_t w) {
      drawn = a;
      drawn.set(name, w);
      while (free_heads && drawn.get_int("heads") > 1 && case_elements(g, drawn, widths) > options.max_case_elements)
        drawn.set("heads", drawn.get_int("heads") / 2);
      return case_elements(g, drawn, widths) <= options.max_case_elements;
    };
    std::vector<std::int64_t> fitting;
    for (std::int64_t w : options.path_widths)
      if (fits(w)) fitting.push_back(w);
    if (fitting.empty()) return "";
    const std::int64_t w = uniform_pick(fitting);
    (void)fits(w);
    what = fmt::format("{}={} (a path boundary)", name, w);
  } else {
    // Dimensions equal where a layout mix-up keeps the right shape, or a layout read from the shape
    // goes wrong: every width = a node count (n_dst = n_src = width on a square graph), heads =
    // width, heads·width = a node count.
    // With heads: heads = width in half of them (a head axis told from extents needs it exactly),
    // heads·width = nodes and width = nodes in a quarter each. A target with heads and no width:
    // heads = a node count.
    std::vector<std::string> kinds;
    if (!widths.empty()) kinds.push_back("width = nodes");
    if (free_heads) kinds.insert(kinds.end(), {"heads = width", "heads = width", "heads·width = nodes"});
    if (widths.empty()) kinds = {"heads = nodes"};
    const std::string coincidence = uniform_pick(kinds);
    const bool dst_side = *rc::gen::resize(100, rc::gen::arbitrary<bool>());
    const std::int64_t n = dst_side ? g.n_dst : g.n_src;
    const std::string side = g.n_dst == g.n_src ? "n_dst = n_src" : (dst_side ? "n_dst" : "n_src");
    if (coincidence == "heads = nodes") {
      if (n < 2 || n > options.max_heads) return "";
      drawn.set("heads", n);
      what = fmt::format("heads = {} = {}", side, n);
    } else if (coincidence == "heads = width") {
      const std::int64_t h = *rc::gen::resize(100, rc::gen::inRange<std::int64_t>(2, options.max_heads + 1));
      drawn.set("heads", h);
      set_widths(h);
      what = fmt::format("heads = width = {}", h);
    } else {
      std::vector<std::int64_t> divisors;
      if (coincidence == "heads·width = nodes")
        for (std::int64_t h = 2; h <= std::min(options.max_heads, n); ++h)
          if (n % h == 0) divisors.push_back(h);
      if (n < 1) return "";
      if (divisors.empty()) {
        set_widths(n);
        what = fmt::format("width = {} = {}", side, n);
      } else {
        const std::int64_t h = uniform_pick(divisors);
        drawn.set("heads", h);
        set_widths(n / h);
        what = fmt::format("heads·width = {}·{} = {} = {}", h, n / h, side, n);
      }
    }
    // A layer's bias broadcast along the wrong axis keeps its shape here too.
    if (bias_open) drawn.set("bias", true);
    if (case_elements(g, drawn, widths) > options.max_case_elements) return "";
  }
  a = drawn;
  return what;
}

}  // namespace gnncheck::properties

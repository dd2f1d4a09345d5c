// A failure's counterexample drawn: the shrunk graph as a small SVG with the offending element
// marked, its got / expected / bound beside it, the one re-run line, and links to the saved files.
//
// A square graph (one node set) is drawn on a circle: an edge j → i means "destination i reads
// source j"; self-loops are loops outside the circle; duplicate and reciprocal edges are separate
// arcs. A non-square n_dst × n_src block is two columns, sources left and destinations right.
// Graphs over kMaxDrawnNodes nodes or kMaxDrawnEdges edges are not drawn: a hairball answers nothing.
#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

#include <fmt/format.h>

#include "reports/html_figures.h"

namespace gnncheck::reports::figures {
namespace {

constexpr std::int64_t kMaxDrawnNodes = 40;
constexpr std::int64_t kMaxDrawnEdges = 120;
constexpr std::int64_t kMaxLabelledEdges = 24;  // edge ids are written on the arcs up to this many edges
constexpr double kNodeRadius = 11;
const char* kMarkColor = "#d62728";
const char* kTouchColor = "#e8847b";  // edges incident to the failing node

struct Vec {
  double x = 0, y = 0;
};
Vec operator+(Vec a, Vec b) { return {a.x + b.x, a.y + b.y}; }
Vec operator-(Vec a, Vec b) { return {a.x - b.x, a.y - b.y}; }
Vec operator*(Vec a, double k) { return {a.x * k, a.y * k}; }
double length(Vec a) { return std::hypot(a.x, a.y); }
Vec unit(Vec a) {
  const double l = length(a);
  return l > 0 ? a * (1 / l) : Vec{1, 0};
}
Vec left_normal(Vec d) { return {d.y, -d.x}; }

std::string arrowhead(Vec tip, Vec direction, const std::string& color) {
  const Vec d = unit(direction), n = left_normal(d);
  const Vec a = tip - d * 8 + n * 4, b = tip - d * 8 - n * 4;
  return fmt::format("<path d='M{} {}L{} {}L{} {}Z' fill='{}'/>", coord(tip.x), coord(tip.y), coord(a.x), coord(a.y), coord(b.x), coord(b.y),
                     color);
}

struct Drawing {
  std::string svg;  // everything inside <svg>
  double width = 0, height = 0;
};

struct Layout {
  std::vector<Vec> dst, src;  // centres (for a square graph both name the same nodes)
  Vec centre;                 // of the circle (square graphs): self-loops point away from it
  bool square = true;
};

// One edge as a quadratic arc from its source to its destination, `offset` px to the left of its
// direction at the middle (0: straight).
std::string edge_arc(Vec from, Vec to, double offset, const std::string& color, double width, const std::string& label,
                     bool bold_label) {
  const Vec d = unit(to - from), n = left_normal(d);
  const Vec mid = (from + to) * 0.5;
  const Vec control = mid + n * (2 * offset);
  const Vec start = from + unit(control - from) * kNodeRadius;
  const Vec end = to - unit(to - control) * (kNodeRadius + 1);
  std::string s = fmt::format("<path d='M{} {}Q{} {} {} {}' fill='none' stroke='{}' stroke-width='{}'/>", coord(start.x), coord(start.y),
                              coord(control.x), coord(control.y), coord(end.x), coord(end.y), color, width);
  s += arrowhead(end, end - control, color);
  if (!label.empty()) {
    const Vec at = mid + n * (offset + (offset >= 0 ? 7 : -7));
    s += fmt::format("<text x='{}' y='{}' font-size='9' text-anchor='middle' fill='{}'{}>{}</text>", coord(at.x), coord(at.y + 3), color,
                     bold_label ? " font-weight='700'" : "", markup_escape(label));
  }
  return s;
}

// A self-loop on the node at `c`, pointing away from `away_from`; the k-th loop is larger.
std::string self_loop(Vec c, Vec away_from, int k, const std::string& color, double width, const std::string& label, bool bold_label) {
  const Vec out = length(c - away_from) > 1e-6 ? unit(c - away_from) : Vec{0, -1};
  const double angle = std::atan2(out.y, out.x);
  auto dir = [&](double delta) { return Vec{std::cos(angle + delta), std::sin(angle + delta)}; };
  const double reach = kNodeRadius + 22 + 10 * k;
  const Vec p0 = c + dir(-0.45) * kNodeRadius, p3 = c + dir(0.45) * (kNodeRadius + 1);
  const Vec p1 = c + dir(-0.75) * reach, p2 = c + dir(0.75) * reach;
  std::string s = fmt::format("<path d='M{} {}C{} {} {} {} {} {}' fill='none' stroke='{}' stroke-width='{}'/>", coord(p0.x), coord(p0.y),
                              coord(p1.x), coord(p1.y), coord(p2.x), coord(p2.y), coord(p3.x), coord(p3.y), color, width);
  s += arrowhead(p3, p3 - p2, color);
  if (!label.empty()) {
    const Vec at = c + out * (reach * 0.78 + 6);
    s += fmt::format("<text x='{}' y='{}' font-size='9' text-anchor='middle' fill='{}'{}>{}</text>", coord(at.x), coord(at.y + 3), color,
                     bold_label ? " font-weight='700'" : "", markup_escape(label));
  }
  return s;
}

std::string node(Vec c, std::int64_t id, bool marked) {
  return fmt::format("<circle cx='{}' cy='{}' r='{}' fill='{}' stroke='{}' stroke-width='{}'/><text x='{}' y='{}' font-size='10' "
                     "text-anchor='middle'{}>{}</text>",
                     coord(c.x), coord(c.y), kNodeRadius, marked ? "#fce8e6" : "#fff", marked ? kMarkColor : "#555", marked ? 3 : 1.2,
                     coord(c.x), coord(c.y + 3.5), marked ? " font-weight='700'" : "", id);
}

Drawing draw_graph(const CounterexampleCase& c) {
  const CounterexampleElement* element = c.element ? &*c.element : nullptr;
  const bool mark_dst = element && element->place == ElementPlace::destination;
  const bool mark_src = element && element->place == ElementPlace::source;
  const bool mark_edge = element && element->place == ElementPlace::edge;
  Layout layout;
  layout.square = c.square();
  Drawing d;
  const double header = layout.square ? 0 : 18;
  if (layout.square) {
    const std::int64_t n = c.n_dst;
    const double radius = n <= 1 ? 0 : std::clamp(22.0 + 11.0 * static_cast<double>(n), 46.0, 175.0);
    const double margin = 58;  // room for self-loops and labels outside the circle
    d.width = std::max(2 * radius + 2 * margin, 200.0);
    d.height = 2 * radius + 2 * margin;
    layout.centre = {d.width / 2, d.height / 2};
    for (std::int64_t i = 0; i < n; ++i) {
      // Node 0 at the left, then clockwise: a 2-node graph reads left to right.
      const double a = std::numbers::pi + 2 * std::numbers::pi * static_cast<double>(i) / static_cast<double>(std::max<std::int64_t>(n, 1));
      layout.dst.push_back(layout.centre + Vec{std::cos(a), std::sin(a)} * radius);
    }
    layout.src = layout.dst;
  } else {
    const double spacing = 30, margin = 26;
    const std::int64_t tallest = std::max(c.n_dst, c.n_src);
    d.width = 360;
    d.height = header + 2 * margin + spacing * static_cast<double>(std::max<std::int64_t>(tallest - 1, 0));
    auto column = [&](std::int64_t count, double x) {
      std::vector<Vec> out;
      const double start = header + margin + spacing * static_cast<double>(tallest - count) / 2;
      for (std::int64_t i = 0; i < count; ++i) out.push_back({x, start + spacing * static_cast<double>(i)});
      return out;
    };
    layout.src = column(c.n_src, 60);
    layout.dst = column(c.n_dst, d.width - 60);
  }

  const bool label_edges = c.n_edges <= kMaxLabelledEdges;
  std::string edges, marked_edge;
  std::map<std::pair<std::int64_t, std::int64_t>, int> copies;  // (dst, src) → arcs drawn so far
  std::map<std::int64_t, int> loops;
  for (std::int64_t e = 0; e < c.n_edges; ++e) {
    const auto [dst, src] = c.edges[static_cast<std::size_t>(e)];
    const bool marked = mark_edge && element->mark == e;
    // The edges into or out of a failing node are the ones its value depends on: tinted.
    const bool touches = (mark_dst && element->mark == dst) || (mark_src && element->mark == src) ||
                         (layout.square && (mark_dst || mark_src) && (element->mark == dst || element->mark == src));
    const std::string color = marked ? kMarkColor : (touches ? kTouchColor : "#666");
    const double width = marked ? 2.6 : (touches ? 1.8 : 1.2);
    const std::string label = label_edges || marked ? fmt::format("e{}", e) : "";
    std::string arc;
    if (layout.square && dst == src) {
      arc = self_loop(layout.dst[dst], layout.centre, loops[dst]++, color, width, label, marked);
    } else {
      const int k = copies[{dst, src}]++;
      // Reciprocal edges bend apart; duplicates bend further each.
      const bool reciprocal = layout.square && std::count(c.edges.begin(), c.edges.end(), std::pair{src, dst}) > 0;
      const double offset = (reciprocal ? 12.0 : 0.0) + 13.0 * k;
      arc = edge_arc(layout.src[src], layout.dst[dst], offset, color, width, label, marked);
    }
    (marked || touches ? marked_edge : edges) += arc;
  }
  d.svg += edges + marked_edge;  // the marked edge and the failing node's edges on top
  if (layout.square) {
    for (std::int64_t i = 0; i < c.n_dst; ++i) d.svg += node(layout.dst[i], i, (mark_dst || mark_src) && element->mark == i);
  } else {
    d.svg += fmt::format("<text x='60' y='13' font-size='11' text-anchor='middle' fill='#444'>sources ({})</text>", c.n_src);
    d.svg += fmt::format("<text x='{}' y='13' font-size='11' text-anchor='middle' fill='#444'>destinations ({})</text>", coord(d.width - 60),
                         c.n_dst);
    for (std::int64_t j = 0; j < c.n_src; ++j) d.svg += node(layout.src[j], j, mark_src && element->mark == j);
    for (std::int64_t i = 0; i < c.n_dst; ++i) d.svg += node(layout.dst[i], i, mark_dst && element->mark == i);
  }

  // The key: what a node, an arrow and the red mark mean.
  std::vector<LegendItem> items = {
      {layout.square ? "node" : "node (id in its column)", "<circle r='5' fill='#fff' stroke='#555' stroke-width='1.2'/>"},
      {"edge source → destination" + std::string(label_edges ? " (eK: edge id)" : ""),
       "<path d='M-8 0H3' stroke='#666' stroke-width='1.2'/><path d='M8 0L1 -3.5L1 3.5Z' fill='#666'/>"}};
  if (element && element->place != ElementPlace::none)
    items.push_back({"the failing element", fmt::format("<circle r='5' fill='#fce8e6' stroke='{}' stroke-width='2.5'/>", kMarkColor)});
  if (mark_dst || mark_src)
    items.push_back({"its edges", fmt::format("<path d='M-8 0H8' stroke='{}' stroke-width='1.8'/>", kTouchColor)});
  const Legend key = legend_row(items, 6, d.height + 6, std::max(d.width, 300.0) - 12);
  d.width = std::max(d.width, 300.0);
  d.svg += key.svg;
  d.height += key.height + 10;
  return d;
}

std::string value_text(double v) { return fmt::format("{:.9g}", v); }

}  // namespace

std::string counterexample_figure(const ResultRecord& r) {
  std::string s = "<div class='cex'>";
  const CounterexampleCase* c = r.counterexample_case ? &*r.counterexample_case : nullptr;
  if (c) {
    const std::int64_t nodes = c->square() ? c->n_dst : c->n_dst + c->n_src;
    if (!c->edges_recorded() || nodes > kMaxDrawnNodes || c->n_edges > kMaxDrawnEdges) {
      s += fmt::format("<p class='cex-large'>The counterexample's graph ({}) is too large to draw readably (more than {} nodes or {} edges): "
                       "nothing is drawn; graph.mtx in the case directory has it.</p>",
                       markup_escape(graph_summary_text(*c)), kMaxDrawnNodes, kMaxDrawnEdges);
    } else {
      const Drawing d = draw_graph(*c);
      s += fmt::format("<svg class='graph' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {0} {1}' width='{0}' height='{1}' role='img' "
                       "aria-label='the counterexample graph'>{2}</svg>",
                       coord(d.width), coord(d.height), d.svg);
    }
  }
  s += "<div class='cex-detail'>";
  if (c) {
    s += fmt::format("<p><b>Graph</b>: {}", markup_escape(graph_summary_text(*c)));
    if (c->edges_recorded() && c->n_edges > 0 && c->n_edges <= 64)
      s += fmt::format(" — edges (destination ← source, in edge-id order): <code>{}</code>", markup_escape(edge_list_text(*c, 64)));
    s += "</p>";
    if (c->element) {
      const CounterexampleElement& e = *c->element;
      s += "<div class='tablebox'><table class='element'>";
      s += fmt::format("<tr><th>failing element</th><td>{}</td></tr>", markup_escape(element_where_text(e, c)));
      s += fmt::format("<tr><th>got</th><td><code>{}</code></td></tr>", value_text(e.got));
      s += fmt::format("<tr><th>expected</th><td><code>{}</code></td></tr>", value_text(e.expected));
      const double error = std::fabs(e.got - e.expected);
      const double ratio = e.bound > 0 ? error / e.bound : (error > 0 ? INFINITY : 0);
      s += fmt::format("<tr><th>bound</th><td><code>{:.3g}</code> (|got − expected| = {:.3g}, {})</td></tr>", e.bound, error,
                       std::isfinite(ratio) ? fmt::format("{:.3g}× the bound", ratio) : "∞× the bound");
      s += "</table></div>";
    } else {
      s += "<p>The verdict names no single element (the system errored or answered no tensor to compare).</p>";
    }
  }
  if (!r.repro.empty()) s += fmt::format("<p>Re-run: <code class='rerun'>{}</code></p>", markup_escape(r.repro));
  if (!r.counterexample.empty()) {
    const std::string dir = r.counterexample + (r.counterexample.back() == '/' ? "" : "/");
    s += fmt::format("<p>Saved case: <a href='{}'>{}</a> —", relative_href(dir), markup_escape(dir));
    for (const char* file : {"graph.mtx", "case.json", "system.json"})
      s += fmt::format(" <a href='{}'>{}</a>", relative_href(dir + file), file);
    s += "</p>";
  }
  s += "</div></div>\n";
  return s;
}

}  // namespace gnncheck::reports::figures

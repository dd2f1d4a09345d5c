// The margin plot: for one system, every target × check's cases as error / bound on a log axis, so
// that "how close did my correct kernel come to failing?" is read off the distance to the line at 1.
//
// Rows are the matrix's rows (targets, or "entry · target"); inside a row each check has its own
// lane and colour. A case is a dot; the failing case a check shrank (the result's own metric and
// bound) is a cross. Errors of exactly 0 have no logarithm and sit hollow in a column "0" left of
// the axis floor; NaN/Inf or a positive error against a zero bound sit in a column "∞" at the right.
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "reports/html_figures.h"

namespace gnncheck::reports::figures {
namespace {

// The axis spans the data's decades, but never more than these: a ratio of 1e-40 says no more
// than 1e-10 ("far from failing") and 1e300 no more than 1e10 ("far past the bound").
constexpr int kFloorDecade = -10;
constexpr int kCeilingDecade = 10;
constexpr double kWidth = 1000;
constexpr double kLaneHeight = 6;

enum class PointKind { finite, zero, infinite };

struct Point {
  PointKind kind = PointKind::finite;
  double log_ratio = 0;       // log10(error / bound) for finite points
  bool shrunk_failure = false;  // the result's headline case (a failure's shrunk counterexample)
};

// error / bound as a plot point; nullopt when the pair says nothing (no usable bound, negative error).
std::optional<Point> point_of(double metric, double bound) {
  if (std::isnan(bound) || std::isinf(bound) || bound < 0) return std::nullopt;
  if (std::isnan(metric) || std::isinf(metric)) return Point{PointKind::infinite};
  if (metric < 0) return std::nullopt;
  if (metric == 0) return Point{PointKind::zero};
  if (bound == 0) return Point{PointKind::infinite};
  const double ratio = metric / bound;
  if (!std::isfinite(ratio)) return Point{PointKind::infinite};
  return Point{PointKind::finite, std::log10(ratio)};
}

struct Lane {
  std::size_t check = 0;  // index into the plot's checks (its colour)
  std::vector<Point> points;
  bool epochs = false;    // an accuracy gate: one point per epoch
};
struct Row {
  std::string label;
  std::vector<Lane> lanes;
  double top = 0, height = 0;
};

std::string ratio_text(const Point& p) {
  if (p.kind == PointKind::zero) return "0";
  if (p.kind == PointKind::infinite) return "∞";
  return fmt::format("{:.2g}", std::pow(10.0, p.log_ratio));
}

std::string lane_title(const std::string& row, const std::string& check, const Lane& lane) {
  const Point* worst = nullptr;
  int zeros = 0;
  for (const Point& p : lane.points) {
    zeros += p.kind == PointKind::zero ? 1 : 0;
    auto rank = [](const Point& q) { return q.kind == PointKind::infinite ? INFINITY : (q.kind == PointKind::zero ? -INFINITY : q.log_ratio); };
    if (!worst || rank(p) > rank(*worst)) worst = &p;
  }
  std::string s = fmt::format("{} · {}: {} {}, worst {}× the bound", row, check, lane.points.size(), lane.epochs ? "epochs" : "cases",
                              worst ? ratio_text(*worst) : "—");
  if (zeros > 0) s += fmt::format(", {} exactly 0", zeros);
  return s;
}

std::string dot(const std::string& x, const std::string& y, const std::string& color, PointKind kind, bool shrunk) {
  if (shrunk)
    return fmt::format("<path d='M{0} {1}m-4 -4l8 8m0 -8l-8 8' stroke='{2}' stroke-width='2.2'/>", x, y, color);
  if (kind == PointKind::zero)
    return fmt::format("<circle cx='{}' cy='{}' r='2.6' fill='#fff' stroke='{}' stroke-width='1.2'/>", x, y, color);
  return fmt::format("<circle cx='{}' cy='{}' r='2.6' fill='{}' fill-opacity='0.75'/>", x, y, color);
}

}  // namespace

std::string margin_plot(const SystemMatrix& m) {
  std::vector<Row> rows;
  std::vector<bool> check_used(m.checks.size(), false);
  std::size_t total = 0;
  bool any_epochs = false;
  for (const std::string& target : m.targets) {
    Row row{target, {}};
    for (std::size_t ci = 0; ci < m.checks.size(); ++ci) {
      auto it = m.cells.find({target, m.checks[ci]});
      if (it == m.cells.end()) continue;
      Lane lane{ci, {}};
      for (const ResultRecord* r : it->second) {
        if (r->expectation != Expectation::pass) continue;  // a replica's bound is meant to break
        lane.epochs = lane.epochs || !r->curves.empty();
        for (const ErrorPoint& e : r->error_vs_bound)
          if (auto p = point_of(e.metric, e.bound)) lane.points.push_back(*p);
        // The failing case (the shrunk one for random graphs) is not among error_vs_bound: the
        // record's headline metric and bound are its numbers.
        if ((r->outcome == Outcome::fail || r->outcome == Outcome::error) && r->metric && r->bound && r->curves.empty())
          if (auto p = point_of(*r->metric, *r->bound)) {
            p->shrunk_failure = true;
            lane.points.push_back(*p);
          }
      }
      if (lane.points.empty()) continue;
      check_used[ci] = true;
      any_epochs = any_epochs || lane.epochs;
      total += lane.points.size();
      row.lanes.push_back(std::move(lane));
    }
    if (!row.lanes.empty()) rows.push_back(std::move(row));
  }
  if (rows.empty()) return "";

  // The axis: the data's decades, clamped, always with at least a decade either side of 1.
  double lo_log = INFINITY, hi_log = -INFINITY;
  int zeros = 0, infinite = 0, below_floor = 0, above_ceiling = 0;
  for (const Row& row : rows)
    for (const Lane& lane : row.lanes)
      for (const Point& p : lane.points) {
        if (p.kind == PointKind::zero) ++zeros;
        if (p.kind == PointKind::infinite) ++infinite;
        if (p.kind != PointKind::finite) continue;
        lo_log = std::min(lo_log, p.log_ratio);
        hi_log = std::max(hi_log, p.log_ratio);
      }
  int lo = std::isfinite(lo_log) ? static_cast<int>(std::floor(lo_log)) : -3;
  int hi = std::isfinite(hi_log) ? static_cast<int>(std::ceil(hi_log)) : 1;
  lo = std::clamp(lo, kFloorDecade, -1);
  hi = std::clamp(hi, 1, kCeilingDecade);
  // Row labels take what the longest needs (≈ 6.4 px per character at 11 px), within limits.
  std::size_t longest = 0;
  for (const Row& row : rows) longest = std::max(longest, row.label.size());
  Frame f;
  f.width = kWidth;
  f.left = std::clamp(12 + 6.4 * static_cast<double>(longest), 90.0, 320.0);
  f.right = 20;
  // The failing side keeps room for its label "→ over bound" (about 80 px).
  for (;;) {
    f.x_min = zeros > 0 ? lo - 1.0 : lo;
    f.x_max = infinite > 0 ? hi + 1.0 : hi;
    if (f.plot_right() - f.px(0) >= 90 || hi >= kCeilingDecade) break;
    ++hi;
  }
  const double zero_column = lo - 0.6, infinity_column = hi + 0.6;
  for (const Row& row : rows)
    for (const Lane& lane : row.lanes)
      for (const Point& p : lane.points)
        if (p.kind == PointKind::finite) {
          below_floor += p.log_ratio < lo ? 1 : 0;
          above_ceiling += p.log_ratio > hi ? 1 : 0;
        }

  std::vector<LegendItem> legend;
  for (std::size_t ci = 0; ci < m.checks.size(); ++ci)
    if (check_used[ci])
      legend.push_back({m.checks[ci] + (m.checks[ci] == "accuracy" ? " (per epoch)" : ""),
                        fmt::format("<circle r='4' fill='{}'/>", series_color(ci))});
  legend.push_back({"a case", "<circle r='2.6' fill='#555' fill-opacity='0.75'/>"});
  if (zeros > 0) legend.push_back({"error exactly 0 (no log: at the floor)", "<circle r='2.6' fill='#fff' stroke='#555' stroke-width='1.2'/>"});
  if (std::any_of(rows.begin(), rows.end(), [](const Row& r) {
        return std::any_of(r.lanes.begin(), r.lanes.end(), [](const Lane& l) {
          return std::any_of(l.points.begin(), l.points.end(), [](const Point& p) { return p.shrunk_failure; });
        });
      }))
    legend.push_back({"the failing case (shrunk)", "<path d='M-4 -4l8 8m0 -8l-8 8' stroke='#555' stroke-width='2.2'/>"});
  const Legend key = legend_row(legend, 8, 14, kWidth - 16);

  f.top = 14 + key.height + 18;  // legend, then a line for "within bound ← | → over bound"
  double y = f.top;
  for (Row& row : rows) {
    row.top = y;
    row.height = std::max(16.0, 6 + kLaneHeight * static_cast<double>(row.lanes.size()));
    y += row.height;
  }
  f.bottom = 46;
  f.height = y + f.bottom;

  std::string s = fmt::format(
      "<figure class='margin'><svg class='plot margin-plot' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {0} {1}' width='{0}' "
      "height='{1}' role='img' aria-label='{2}: error over bound per target and check'>",
      coord(f.width), coord(f.height), markup_escape(m.system));
  // Passing side pale green, failing side pale red, the bound at 1 a dashed red line.
  const std::string area_top = coord(f.top), area_height = coord(y - f.top);
  s += fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='#f1f8f2'/>", coord(f.left), area_top, coord(f.px(0) - f.left),
                   area_height);
  s += fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='#fdf0ee'/>", coord(f.px(0)), area_top,
                   coord(f.plot_right() - f.px(0)), area_height);
  s += fmt::format("<text x='{}' y='{}' font-size='11' fill='#1e6b34' text-anchor='end'>within bound ←</text>", coord(f.px(0) - 6),
                   coord(f.top - 5));
  s += fmt::format("<text x='{}' y='{}' font-size='11' fill='#a50e0e'>→ over bound</text>", coord(f.px(0) + 6), coord(f.top - 5));

  std::vector<Frame::Tick> ticks = decade_ticks(lo, hi, 12);
  if (zeros > 0) ticks.push_back({zero_column, "0"});
  if (infinite > 0) ticks.push_back({infinity_column, "∞"});
  s += f.x_axis(ticks, fmt::format("error / bound of each {} (log scale; the bound is 1)", any_epochs ? "case or epoch" : "case"));

  // Columns "0" and "∞" stand apart from the log axis.
  if (zeros > 0)
    s += fmt::format("<line x1='{0}' x2='{0}' y1='{1}' y2='{2}' stroke='#bbb' stroke-dasharray='2 2'/>", coord(f.px(lo - 0.2)), area_top,
                     coord(y));
  if (infinite > 0)
    s += fmt::format("<line x1='{0}' x2='{0}' y1='{1}' y2='{2}' stroke='#bbb' stroke-dasharray='2 2'/>", coord(f.px(hi + 0.2)), area_top,
                     coord(y));

  std::string labels = "<g class='axis y'>";
  std::string marks;
  for (std::size_t ri = 0; ri < rows.size(); ++ri) {
    const Row& row = rows[ri];
    if (ri > 0)
      marks += fmt::format("<line x1='0' x2='{0}' y1='{1}' y2='{1}' stroke='#ddd'/>", coord(f.plot_right()), coord(row.top));
    std::string label = row.label;
    const std::size_t fits = static_cast<std::size_t>((f.left - 12) / 6.4);
    if (label.size() > fits) label = label.substr(0, fits > 1 ? fits - 1 : 0) + "…";
    labels += fmt::format("<text x='{}' y='{}' font-size='11' text-anchor='end'>{}</text>", coord(f.left - 6),
                          coord(row.top + row.height / 2 + 4), markup_escape(label));
    for (std::size_t li = 0; li < row.lanes.size(); ++li) {
      const Lane& lane = row.lanes[li];
      const double lane_y = row.top + (row.height - kLaneHeight * static_cast<double>(row.lanes.size())) / 2 + kLaneHeight * (li + 0.5);
      const std::string& color = series_color(lane.check);
      marks += fmt::format("<g><title>{}</title>", markup_escape(lane_title(row.label, m.checks[lane.check], lane)));
      // Cases that land on the same half pixel are drawn once: the file stays small for 60 cases × 100 lanes.
      std::set<std::pair<long, int>> drawn;
      std::string crosses;
      for (const Point& p : lane.points) {
        double x = p.kind == PointKind::zero ? zero_column
                   : p.kind == PointKind::infinite ? infinity_column
                                                   : std::clamp(p.log_ratio, static_cast<double>(lo), static_cast<double>(hi));
        const double px = f.px(x);
        const int kind = p.shrunk_failure ? 3 : static_cast<int>(p.kind);
        if (!drawn.insert({std::lround(px * 2), kind}).second) continue;
        const std::string d = dot(coord(px), coord(lane_y), color, p.kind, p.shrunk_failure);
        (p.shrunk_failure ? crosses : marks) += d;  // crosses on top
      }
      marks += crosses + "</g>";
    }
  }
  labels += "</g>";
  s += marks + labels;
  s += fmt::format("<line x1='{0}' x2='{0}' y1='{1}' y2='{2}' stroke='#d62728' stroke-width='1.5' stroke-dasharray='5 3'/>",
                   coord(f.px(0)), coord(f.top - 2), coord(y));
  s += key.svg;
  s += "</svg>";

  std::string caption = fmt::format(
      "<b>{}</b>: error / bound of every case, per target and check ({} {}). Left of the dashed line at 1 a case stayed within its "
      "bound; right of it, it exceeded it. The matrix above gives each cell's worst ratio.",
      markup_escape(m.system), total, any_epochs ? "points; an accuracy gate has one per epoch" : "cases");
  if (zeros > 0)
    caption += fmt::format(" {} {} an error of exactly 0, which has no logarithm: drawn hollow in the column “0” at the axis floor.", zeros,
                           zeros == 1 ? "case has" : "cases have");
  if (below_floor > 0) caption += fmt::format(" {} below {}× are drawn at {}.", below_floor, decade_label(lo), decade_label(lo));
  if (above_ceiling > 0) caption += fmt::format(" {} above {}× are drawn at {}.", above_ceiling, decade_label(hi), decade_label(hi));
  if (infinite > 0)
    caption += fmt::format(" {} with NaN, Inf or a nonzero error against a zero bound {} in the column “∞”.", infinite,
                           infinite == 1 ? "is" : "are");
  s += "<figcaption>" + caption + "</figcaption></figure>\n";
  return s;
}

}  // namespace gnncheck::reports::figures

// index.html: one self-contained page (inline CSS and SVG, no scripts, no network) with the totals,
// the system × target × check matrix, the replica catch table, error-vs-bound plots per system,
// loss curves of every accuracy gate, and every unmet expectation with its re-run command.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/report_tables.h"
#include "reports/writers.h"

namespace gnncheck::reports {
namespace {

std::string cell_class(const std::string& cell) {
  if (cell == "pass" || cell == "caught") return "ok";
  if (cell == "FAIL" || cell == "ERROR") return "bad";
  if (cell == "skip") return "skip";
  if (cell == "·") return "miss";
  return "";
}

const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"};

// A plot frame: maps data coordinates to pixels and draws axes with a few labelled ticks.
struct Frame {
  double width = 520, height = 300, left = 64, right = 16, top = 16, bottom = 44;
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;

  double px(double x) const { return left + (x - x_min) / (x_max - x_min) * (width - left - right); }
  double py(double y) const { return height - bottom - (y - y_min) / (y_max - y_min) * (height - top - bottom); }

  std::string axes(const std::string& x_label, const std::string& y_label, bool log_x, bool log_y, bool integer_x = false) const {
    std::string s;
    s += fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='#fff' stroke='#999'/>", left, top,
                     width - left - right, height - top - bottom);
    auto tick_label = [](double v, bool log) {
      return log ? fmt::format("1e{}", static_cast<int>(std::lround(v))) : fmt::format("{:.3g}", v);
    };
    const int ticks = 5;
    for (int i = 0; i <= ticks; ++i) {
      double xv = x_min + (x_max - x_min) * i / ticks;
      double yv = y_min + (y_max - y_min) * i / ticks;
      if (log_x || integer_x) xv = std::round(xv);
      if (log_y) yv = std::round(yv);
      if (xv >= x_min - 1e-9 && xv <= x_max + 1e-9) {
        s += fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='{1}' y2='{2}' stroke='#eee'/>", px(xv), top, height - bottom);
        s += fmt::format("<text x='{:.1f}' y='{}' font-size='11' text-anchor='middle'>{}</text>", px(xv), height - bottom + 14,
                         tick_label(xv, log_x));
      }
      if (yv >= y_min - 1e-9 && yv <= y_max + 1e-9) {
        s += fmt::format("<line x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' stroke='#eee'/>", left, width - right, py(yv));
        s += fmt::format("<text x='{}' y='{:.1f}' font-size='11' text-anchor='end'>{}</text>", left - 4, py(yv) + 4,
                         tick_label(yv, log_y));
      }
    }
    s += fmt::format("<text x='{}' y='{}' font-size='12' text-anchor='middle'>{}</text>", (left + width - right) / 2,
                     height - bottom + 30, markup_escape(x_label));
    s += fmt::format("<text x='14' y='{0}' font-size='12' text-anchor='middle' transform='rotate(-90 14 {0})'>{1}</text>",
                     (top + height - bottom) / 2, markup_escape(y_label));
    return s;
  }
};

// Error vs bound for one system, log-log: every case is a point; points above the diagonal broke
// their bound. Errors of exactly 0 sit on the floor of the plot.
std::string error_vs_bound_plot(const std::string& system, const std::vector<const ResultRecord*>& records) {
  struct Point {
    double x, y;
    bool over;
    std::string label;
  };
  std::vector<Point> points;
  // Cases whose bound is below 1e-30 have exactly-zero data (the bound scales with Σ|a||b|); they
  // would stretch the axes over dozens of empty decades, so they are counted, not drawn.
  const double smallest_bound = 1e-30;
  int not_drawn = 0;
  for (const auto* r : records)
    for (const auto& p : r->error_vs_bound) {
      if (!(p.bound > 0) || !std::isfinite(p.bound)) continue;
      if (p.bound < smallest_bound && std::isfinite(p.metric) && p.metric <= p.bound) {
        ++not_drawn;
        continue;
      }
      const bool over = p.metric > p.bound || !std::isfinite(p.metric);
      const double err = std::isfinite(p.metric) ? p.metric : 1e300;
      points.push_back({std::log10(p.bound), err > 0 ? std::log10(err) : -INFINITY, over, r->target + " / " + r->check});
    }
  if (points.empty()) return "";
  Frame f;
  double lo = 1e9, hi = -1e9;
  for (const auto& p : points) {
    lo = std::min(lo, p.x);
    hi = std::max(hi, p.x);
    if (std::isfinite(p.y)) {
      lo = std::min(lo, p.y);
      hi = std::max(hi, std::min(p.y, 300.0));
    }
  }
  f.x_min = f.y_min = std::floor(lo) - 1;
  f.x_max = f.y_max = std::ceil(hi) + 1;
  std::string s = fmt::format("<figure><svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' role='img'>", f.width, f.height);
  s += f.axes("bound (log10)", "measured error (log10)", true, true);
  s += fmt::format("<line x1='{:.1f}' y1='{:.1f}' x2='{:.1f}' y2='{:.1f}' stroke='#d62728' stroke-dasharray='4 3'/>",
                   f.px(f.x_min), f.py(f.y_min), f.px(f.x_max), f.py(f.y_max));
  for (const auto& p : points)
    s += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3' fill='{}' fill-opacity='0.6'><title>{}</title></circle>", f.px(p.x),
                     f.py(std::isfinite(p.y) ? std::clamp(p.y, f.y_min, f.y_max) : f.y_min), p.over ? "#d62728" : "#1f77b4", markup_escape(p.label));
  s += fmt::format("</svg><figcaption>{}: {} cases; error at the worst element against its bound. Points above the dashed "
                   "line exceeded their bound; an error of exactly 0 sits on the bottom edge.{}</figcaption></figure>",
                   markup_escape(system), points.size(),
                   not_drawn > 0 ? fmt::format(" {} cases with all-zero data (bound below 1e-30) are not drawn.", not_drawn) : "");
  return s;
}

// Loss per epoch of an accuracy gate: one line per curve (the system and the oracle).
std::string curve_plot(const ResultRecord& r) {
  double y_lo = 1e300, y_hi = -1e300;
  std::size_t n = 0;
  for (const auto& c : r.curves)
    for (double v : c.values)
      if (std::isfinite(v)) {
        y_lo = std::min(y_lo, v);
        y_hi = std::max(y_hi, v);
        n = std::max(n, c.values.size());
      }
  if (n < 2) return "";
  if (y_hi - y_lo < 1e-12) y_hi = y_lo + 1;
  Frame f;
  f.bottom += 18.0 * static_cast<double>(r.curves.size());  // the legend sits under the axis label
  f.height += 18.0 * static_cast<double>(r.curves.size());
  f.x_min = 0;
  f.x_max = static_cast<double>(n - 1);
  f.y_min = y_lo - 0.05 * (y_hi - y_lo);
  f.y_max = y_hi + 0.05 * (y_hi - y_lo);
  std::string s = fmt::format("<figure><svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' role='img'>", f.width, f.height);
  s += f.axes("epoch", "training loss", false, false, /*integer_x=*/true);
  for (std::size_t i = 0; i < r.curves.size(); ++i) {
    const auto& c = r.curves[i];
    std::string pts;
    for (std::size_t k = 0; k < c.values.size(); ++k)
      if (std::isfinite(c.values[k])) pts += fmt::format("{:.1f},{:.1f} ", f.px(static_cast<double>(k)), f.py(c.values[k]));
    const char* color = kPalette[i % std::size(kPalette)];
    s += fmt::format("<polyline points='{}' fill='none' stroke='{}' stroke-width='2' {}/>", pts, color,
                     i == 0 ? "" : "stroke-dasharray='6 3'");
    const double legend_y = f.height - 18.0 * static_cast<double>(r.curves.size() - i) + 4;
    s += fmt::format("<line x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' stroke='{3}' stroke-width='2' {4}/><text x='{5}' y='{6:.1f}' "
                     "font-size='12'>{7}</text>",
                     f.left, f.left + 24, legend_y - 4, color, i == 0 ? "" : "stroke-dasharray='6 3'", f.left + 30, legend_y, markup_escape(c.name));
  }
  s += fmt::format("</svg><figcaption>{} / {}: {} — {}</figcaption></figure>", markup_escape(r.system), markup_escape(r.target),
                   to_string(r.outcome), markup_escape(r.message.empty() ? "loss curves agree" : r.message));
  return s;
}

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:22px;margin-bottom:4px} h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
.banner{padding:10px 14px;border-radius:6px;font-weight:600;margin:12px 0}
.banner.ok{background:#e6f4ea;color:#1e6b34}.banner.bad{background:#fce8e6;color:#a50e0e}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f5f5f5}
td.ok{background:#e6f4ea;color:#1e6b34;text-align:center}
td.bad{background:#fce8e6;color:#a50e0e;font-weight:700;text-align:center}
td.skip{background:#f1f3f4;color:#777;text-align:center}
td.miss{color:#999;text-align:center}
td.bug{min-width:360px;font-size:12px;color:#444}
.meta{color:#555;font-size:13px}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
pre{background:#f6f8fa;padding:8px;overflow-x:auto;white-space:pre-wrap}
figure{display:inline-block;margin:8px 16px 8px 0;vertical-align:top}
figcaption{font-size:12px;color:#555;max-width:520px}
)";

}  // namespace

std::string html_report(const RunReport& run) {
  const auto t = run.totals();
  std::string h = "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>";
  h += fmt::format("<title>gnncheck — {}</title><style>{}</style></head><body>\n", markup_escape(run.suite_name), kStyle);
  h += fmt::format("<h1>gnncheck report: suite <code>{}</code></h1>\n", markup_escape(run.suite_name));
  h += fmt::format("<div class='meta'>gnncheck {} · seed {} · started {} · {:.1f} s · {}</div>\n", markup_escape(run.gnncheck_version),
                   run.seed, markup_escape(run.started_utc), run.seconds, markup_escape(run.suite_path));
  if (!run.interrupted_by.empty())
    h += fmt::format("<div class='banner bad'>Interrupted by {}: only the results finished before it are shown</div>\n",
                     markup_escape(run.interrupted_by));
  h += fmt::format("<div class='banner {}'>{} — {}</div>\n", run.all_expectations_held() ? "ok" : "bad",
                   run.all_expectations_held() ? std::string("All expectations held")
                                               : fmt::format("{} expectation(s) not met", t.expectations_unmet),
                   markup_escape(totals_sentence(t)));

  h += "<h2>Systems</h2><table><tr><th>system</th><th>kind</th><th>available here</th></tr>\n";
  for (const auto& s : run.systems)
    h += fmt::format("<tr><td>{}</td><td>{}</td><td class='{}'>{}</td></tr>\n", markup_escape(s.name), markup_escape(s.kind), s.available ? "ok" : "skip",
                     s.available ? "yes" : "no: " + markup_escape(s.reason));
  h += "</table>\n";

  h += "<h2>System × target × check</h2>\n<p class='meta'><b>pass</b> within bound · <b>FAIL</b> exceeded it · <b>ERROR</b> the "
       "system errored · <b>skip</b> not run here · for bug replicas <b>caught</b> = this check detected the bug, "
       "<b>·</b> = it did not.</p>\n";
  const auto matrices = build_matrices(run);
  auto is_replica = [&](const std::string& system) {
    return std::any_of(run.systems.begin(), run.systems.end(), [&](const SystemRecord& s) { return s.name == system && s.kind == "replica"; });
  };
  for (const auto& m : matrices) {
    if (is_replica(m.system)) continue;  // the replica table below shows them compactly
    h += fmt::format("<h3>{}</h3><table><tr><th>target</th>", markup_escape(m.system));
    for (const auto& c : m.checks) h += fmt::format("<th>{}</th>", markup_escape(c));
    h += "</tr>\n";
    for (const auto& target : m.targets) {
      h += fmt::format("<tr><th>{}</th>", markup_escape(target));
      for (const auto& check : m.checks) {
        auto it = m.cells.find({target, check});
        if (it == m.cells.end()) {
          h += "<td></td>";
          continue;
        }
        const std::string cell = combined_cell(it->second);
        std::string tip;
        for (const auto* r : it->second)
          tip += fmt::format("{} (metric {}, bound {}) {}\n", to_string(r->outcome), r->metric ? fmt::format("{:.3g}", *r->metric) : "—",
                             r->bound ? fmt::format("{:.3g}", *r->bound) : "—", r->message);
        h += fmt::format("<td class='{}' title='{}'>{}</td>", cell_class(cell), markup_escape(tip), markup_escape(cell));
      }
      h += "</tr>\n";
    }
    h += "</table>\n";
  }

  const auto replicas = replica_rows(run);
  if (!replicas.empty()) {
    std::vector<std::string> checks;
    for (const auto& r : replicas)
      for (const auto& c : r.tried)
        if (std::find(checks.begin(), checks.end(), c) == checks.end()) checks.push_back(c);
    h += "<h2>Bug replicas</h2><p class='meta'>Each replica is a correct system with one published bug put back; a suite "
         "must catch every one. <b>caught</b>: the check failed on at least one target; <b>·</b>: it passed everywhere.</p>"
         "<table><tr><th>replica</th>";
    for (const auto& c : checks) h += fmt::format("<th>{}</th>", markup_escape(c));
    h += "<th>verdict</th><th>bug</th></tr>\n";
    for (const auto& r : replicas) {
      const std::string verdict = !r.ran ? "not run" : (r.caught ? "caught" : "MISSED");
      h += fmt::format("<tr><td>{}</td>", markup_escape(r.name));
      for (const auto& c : checks) {
        const bool tried = std::find(r.tried.begin(), r.tried.end(), c) != r.tried.end();
        const bool caught = std::find(r.caught_by.begin(), r.caught_by.end(), c) != r.caught_by.end();
        h += fmt::format("<td class='{}'>{}</td>", caught ? "ok" : (tried ? "miss" : "skip"), caught ? "caught" : (tried ? "·" : ""));
      }
      h += fmt::format("<td class='{}'>{}</td><td class='bug'>{}</td></tr>\n", !r.ran ? "skip" : (r.caught ? "ok" : "bad"), verdict,
                       markup_escape(r.bug));
    }
    h += "</table>\n";
  }

  std::string curves;
  for (const auto& r : run.results)
    if (!r.curves.empty()) curves += curve_plot(r);
  if (!curves.empty()) h += "<h2>Accuracy gates: loss curves, system vs oracle</h2>\n" + curves + "\n";

  std::string plots;
  for (const auto& m : matrices) {
    if (is_replica(m.system)) continue;  // replicas are meant to break their bounds; their points would hide the rest
    std::vector<const ResultRecord*> records;
    for (const auto& [key, cell] : m.cells) records.insert(records.end(), cell.begin(), cell.end());
    plots += error_vs_bound_plot(m.system, records);
  }
  if (!plots.empty()) h += "<h2>Error vs bound</h2>\n" + plots + "\n";

  std::string unmet;
  const UnmetSummary summary = unmet_summary(run);
  for (const auto& m : summary.missed_replicas)
    unmet += fmt::format("<h3>{} — bug replica not caught</h3>\n<p>None of {} caught it ({} results). Re-run: <code>{}</code></p>\n",
                         markup_escape(m.system), markup_escape(fmt::format("{}", fmt::join(m.checks, ", "))), m.results, markup_escape(m.repro));
  for (const auto* r : summary.results) {
    unmet += fmt::format("<h3>{} / {} / {} — {} (expected {})</h3>\n<pre>{}</pre>\n", markup_escape(r->system), markup_escape(r->target), markup_escape(r->check),
                         to_string(r->outcome), to_string(r->expectation), markup_escape(r->message));
    if (!r->counterexample.empty()) unmet += fmt::format("<p>Counterexample: <code>{}</code></p>\n", markup_escape(r->counterexample));
    if (!r->repro.empty()) unmet += fmt::format("<p>Re-run: <code>{}</code></p>\n", markup_escape(r->repro));
  }
  if (!unmet.empty()) h += "<h2>Expectations not met</h2>\n" + unmet;
  h += "</body></html>\n";
  return h;
}

}  // namespace gnncheck::reports

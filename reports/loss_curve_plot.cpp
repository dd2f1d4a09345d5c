// Loss curves of an accuracy gate: training loss per epoch of the system, the oracle and the float32
// rounding reference from one initialization, with the first epoch whose deviation from the oracle
// exceeded its bound marked. Curves that agree lie on top of each other: the oracle is drawn wide
// and pale beneath, the system solid, the reference dashed, so each stays visible.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "reports/html_figures.h"

namespace gnncheck::reports::figures {

std::optional<std::size_t> divergence_epoch(const ResultRecord& r) {
  for (std::size_t e = 0; e < r.error_vs_bound.size(); ++e) {
    const ErrorPoint& p = r.error_vs_bound[e];
    if (!std::isfinite(p.metric) || p.metric > p.bound) return e;
  }
  return std::nullopt;
}

namespace {

struct CurveStyle {
  std::string color;
  double width;
  double opacity;
  std::string dash;
};

// The oracle wide and pale, the system solid, any other curve (the float32 reference) dashed.
CurveStyle style_of(const std::string& name, std::size_t i, bool failed) {
  if (name.rfind("oracle", 0) == 0) return {"#222222", 5, 0.28, ""};
  if (i == 1) return {failed ? "#d62728" : "#1f77b4", 2, 1, ""};
  return {"#2ca02c", 1.6, 1, "6 4"};
}

std::string swatch(const CurveStyle& st) {
  return fmt::format("<line x1='-8' x2='8' y1='0' y2='0' stroke='{}' stroke-width='{}' stroke-opacity='{}'{}/>", st.color, st.width,
                     st.opacity, st.dash.empty() ? "" : fmt::format(" stroke-dasharray='{}'", st.dash));
}

}  // namespace

std::string loss_curve_plot(const ResultRecord& r) {
  double y_lo = INFINITY, y_hi = -INFINITY;
  std::size_t epochs = 0;
  for (const auto& c : r.curves) {
    epochs = std::max(epochs, c.values.size());
    for (double v : c.values)
      if (std::isfinite(v)) {
        y_lo = std::min(y_lo, v);
        y_hi = std::max(y_hi, v);
      }
  }
  if (epochs < 2 || !std::isfinite(y_lo)) return "";
  const bool failed = r.outcome != Outcome::pass;
  // A loss that blew up by orders of magnitude would flatten the others into a line: log scale then.
  const bool log_y = y_lo > 0 && y_hi / y_lo > 50;
  auto yv = [&](double v) { return log_y ? std::log10(v) : v; };

  Frame f;
  f.width = 560;
  f.height = 300;
  f.left = 64;
  f.top = 26;  // room for the divergence label
  f.x_min = 0;
  f.x_max = static_cast<double>(epochs - 1);
  if (log_y) {
    f.y_min = std::floor(std::log10(y_lo));
    f.y_max = std::ceil(std::log10(y_hi));
    if (f.y_max <= f.y_min) f.y_max = f.y_min + 1;
  } else {
    const double pad = y_hi - y_lo < 1e-12 ? 0.5 : 0.06 * (y_hi - y_lo);
    f.y_min = y_lo - pad;
    f.y_max = y_hi + pad;
  }

  std::vector<LegendItem> items;
  std::vector<CurveStyle> styles;
  for (std::size_t i = 0; i < r.curves.size(); ++i) {
    styles.push_back(style_of(r.curves[i].name, i, failed));
    items.push_back({r.curves[i].name, swatch(styles.back())});
  }
  const std::optional<std::size_t> diverged = divergence_epoch(r);
  if (diverged) items.push_back({"first epoch over its bound", "<line x1='0' x2='0' y1='-6' y2='6' stroke='#a50e0e' stroke-width='1.5' stroke-dasharray='3 2'/>"});
  const Legend key = legend_row(items, f.left, 0, f.width - f.left - f.right);
  // The legend sits under the x axis label.
  const double legend_top = f.height;
  f.height += key.height + 6;
  f.bottom += key.height + 6;

  std::string s = fmt::format(
      "<figure class='curves'><svg class='plot loss-plot' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {0} {1}' width='{0}' "
      "height='{1}' role='img' aria-label='training loss per epoch'>",
      coord(f.width), coord(f.height));
  s += fmt::format("<rect x='{}' y='{}' width='{}' height='{}' fill='#fff' stroke='#ccc'/>", coord(f.left), coord(f.top),
                   coord(f.plot_right() - f.left), coord(f.plot_bottom() - f.top));
  s += f.x_axis(linear_ticks(f.x_min, f.x_max, 8, /*integers=*/true), "epoch");
  std::vector<Frame::Tick> y_ticks;
  if (log_y)
    y_ticks = decade_ticks(static_cast<int>(f.y_min), static_cast<int>(f.y_max), 6);
  else
    y_ticks = linear_ticks(f.y_min, f.y_max, 8);
  s += f.y_axis(y_ticks, log_y ? "training loss (log scale)" : "training loss");

  if (diverged) {
    const double x = f.px(static_cast<double>(*diverged));
    s += fmt::format("<line x1='{0}' x2='{0}' y1='{1}' y2='{2}' stroke='#a50e0e' stroke-width='1.5' stroke-dasharray='3 2'/>", coord(x),
                     coord(f.top), coord(f.plot_bottom()));
    // The label sits above the plotting area, clear of every curve.
    const bool right_half = x > (f.left + f.plot_right()) / 2;
    s += fmt::format("<text x='{}' y='{}' font-size='11' fill='#a50e0e' text-anchor='{}'>diverges at epoch {}</text>",
                     coord(right_half ? x + 6 : x - 6), coord(f.top - 6), right_half ? "end" : "start", *diverged);
  }
  for (std::size_t i = 0; i < r.curves.size(); ++i) {
    std::string pts;
    for (std::size_t k = 0; k < r.curves[i].values.size(); ++k) {
      const double v = r.curves[i].values[k];
      if (!std::isfinite(v) || (log_y && v <= 0)) continue;
      pts += fmt::format("{},{} ", coord(f.px(static_cast<double>(k))), coord(f.py(std::clamp(yv(v), f.y_min, f.y_max))));
    }
    const CurveStyle& st = styles[i];
    s += fmt::format("<polyline points='{}' fill='none' stroke='{}' stroke-width='{}' stroke-opacity='{}' stroke-linejoin='round'{}/>", pts,
                     st.color, st.width, st.opacity, st.dash.empty() ? "" : fmt::format(" stroke-dasharray='{}'", st.dash));
  }
  std::string legend = key.svg;
  s += fmt::format("<g transform='translate(0 {})'>{}</g>", coord(legend_top + 4), legend);
  s += "</svg>";

  std::string caption = fmt::format("<b>{} / {}</b>{}: training loss over {} epochs, {}. ", markup_escape(r.system), markup_escape(r.target),
                                    r.entry.empty() ? "" : fmt::format(" ({})", markup_escape(r.entry)), epochs, to_string(r.outcome));
  if (diverged) {
    const ErrorPoint& p = r.error_vs_bound[*diverged];
    caption += fmt::format("The loss first left its bound at epoch {}: |loss − oracle loss| = {:.3g} &gt; bound {:.3g}.", *diverged, p.metric,
                           p.bound);
  } else if (!r.error_vs_bound.empty()) {
    std::size_t worst = 0;
    double worst_ratio = -1;
    for (std::size_t e = 0; e < r.error_vs_bound.size(); ++e) {
      const ErrorPoint& p = r.error_vs_bound[e];
      const double ratio = p.bound > 0 ? p.metric / p.bound : (p.metric > 0 ? INFINITY : 0);
      if (ratio > worst_ratio) {
        worst_ratio = ratio;
        worst = e;
      }
    }
    caption += fmt::format("Every epoch's |loss − oracle loss| stayed within its bound; closest at epoch {} ({:.2g}× the bound).", worst,
                           worst_ratio);
  }
  if (!r.message.empty()) caption += fmt::format("<span class='msg'>{}</span>", markup_escape(r.message));
  s += "<figcaption>" + caption + "</figcaption></figure>\n";
  return s;
}

}  // namespace gnncheck::reports::figures

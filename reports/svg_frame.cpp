// Axes, ticks and legends shared by the plots of index.html.
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "reports/html_figures.h"

namespace gnncheck::reports::figures {

const std::string& series_color(std::size_t i) {
  // Tableau 10, then two darker tones: twelve checks fit without repeating a colour.
  static const std::vector<std::string> palette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                                                   "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"};
  return palette[i % palette.size()];
}

std::string relative_href(const std::string& path) {
  std::string out;
  for (unsigned char ch : path) {
    if (std::isalnum(ch) || ch == '/' || ch == '-' || ch == '_' || ch == '.' || ch == '~' || ch >= 0x80) out += static_cast<char>(ch);
    else out += fmt::format("%{:02X}", ch);
  }
  return markup_escape(out);
}

std::string coord(double v) {
  if (std::fabs(v) < 0.05) v = 0;
  return fmt::format("{:.1f}", v);
}

std::string Frame::x_axis(const std::vector<Tick>& ticks, const std::string& label) const {
  std::string s = "<g class='axis x'>";
  s += fmt::format("<line x1='{}' x2='{}' y1='{}' y2='{}' stroke='#666'/>", coord(left), coord(plot_right()), coord(plot_bottom()),
                   coord(plot_bottom()));
  for (const Tick& t : ticks) {
    if (t.value < x_min - 1e-9 || t.value > x_max + 1e-9) continue;
    const std::string x = coord(px(t.value));
    s += fmt::format("<line x1='{0}' x2='{0}' y1='{1}' y2='{2}' stroke='#e4e4e4'/>", x, coord(top), coord(plot_bottom()));
    s += fmt::format("<line x1='{0}' x2='{0}' y1='{1}' y2='{2}' stroke='#666'/>", x, coord(plot_bottom()), coord(plot_bottom() + 4));
    s += fmt::format("<text x='{}' y='{}' font-size='11' text-anchor='middle'>{}</text>", x, coord(plot_bottom() + 15),
                     markup_escape(t.label));
  }
  s += fmt::format("<text x='{}' y='{}' font-size='12' text-anchor='middle'>{}</text></g>", coord((left + plot_right()) / 2),
                   coord(plot_bottom() + 31), markup_escape(label));
  return s;
}

std::string Frame::y_axis(const std::vector<Tick>& ticks, const std::string& label) const {
  std::string s = "<g class='axis y'>";
  s += fmt::format("<line x1='{0}' x2='{0}' y1='{1}' y2='{2}' stroke='#666'/>", coord(left), coord(top), coord(plot_bottom()));
  for (const Tick& t : ticks) {
    if (t.value < y_min - 1e-9 || t.value > y_max + 1e-9) continue;
    const std::string y = coord(py(t.value));
    s += fmt::format("<line x1='{0}' x2='{1}' y1='{2}' y2='{2}' stroke='#e4e4e4'/>", coord(left), coord(plot_right()), y);
    s += fmt::format("<line x1='{0}' x2='{1}' y1='{2}' y2='{2}' stroke='#666'/>", coord(left - 4), coord(left), y);
    s += fmt::format("<text x='{}' y='{}' font-size='11' text-anchor='end'>{}</text>", coord(left - 6), coord(py(t.value) + 4),
                     markup_escape(t.label));
  }
  const double mid = (top + plot_bottom()) / 2;
  s += fmt::format("<text x='14' y='{0}' font-size='12' text-anchor='middle' transform='rotate(-90 14 {0})'>{1}</text></g>",
                   coord(mid), markup_escape(label));
  return s;
}

std::vector<Frame::Tick> linear_ticks(double lo, double hi, int count, bool integers) {
  std::vector<Frame::Tick> out;
  if (!(hi > lo) || count < 1) return out;
  const double raw = (hi - lo) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  if (integers) step = std::max(1.0, std::round(step));
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    const double shown = std::fabs(v) < step * 1e-9 ? 0.0 : v;
    out.push_back({shown, integers ? fmt::format("{}", static_cast<long long>(std::llround(shown))) : fmt::format("{:.4g}", shown)});
  }
  return out;
}

std::string decade_label(int k) {
  switch (k) {
    case -2: return "0.01";
    case -1: return "0.1";
    case 0: return "1";
    case 1: return "10";
    case 2: return "100";
    default: return fmt::format("1e{}", k);
  }
}

std::vector<Frame::Tick> decade_ticks(int lo, int hi, int count) {
  std::vector<Frame::Tick> out;
  const int span = std::max(1, hi - lo);
  const int step = std::max(1, (span + count - 1) / count);
  // Ticks on multiples of the step, always including 10^0 when it is in range (the line at 1).
  for (int k = lo; k <= hi; ++k)
    if (k % step == 0 || (k == 0)) out.push_back({static_cast<double>(k), decade_label(k)});
  return out;
}

Legend legend_row(const std::vector<LegendItem>& items, double x, double y, double width) {
  Legend out;
  out.svg = "<g class='legend'>";
  const double row_height = 16;
  double cx = x, cy = y;
  for (const LegendItem& item : items) {
    // About 6.4 px per character at 11 px for the UI fonts; the swatch takes 22 px.
    const double item_width = 22 + 6.4 * static_cast<double>(item.name.size()) + 14;
    if (cx > x && cx + item_width > x + width) {
      cx = x;
      cy += row_height;
    }
    out.svg += fmt::format("<g transform='translate({} {})'>{}</g>", coord(cx + 8), coord(cy), item.swatch);
    out.svg += fmt::format("<text x='{}' y='{}' font-size='11'>{}</text>", coord(cx + 20), coord(cy + 4), markup_escape(item.name));
    cx += item_width;
  }
  out.svg += "</g>";
  out.height = cy - y + row_height;
  return out;
}

}  // namespace gnncheck::reports::figures

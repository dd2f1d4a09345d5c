// gnncheck/reports/html_figures.h — the figures of index.html (internal to the HTML writer).
//
// Each figure is a pure function of report data that returns inline HTML: an <svg> (classes `plot`
// or `graph`, with `axis x`, `axis y` and `legend` groups, so that a reader — and the rendering
// test — finds the axes and the legend of every plot) inside a <figure> with its caption, or ""
// when there is nothing to draw.
//   margin_plot          per system: error / bound of every case, per target × check, log axis
//   loss_curve_plot      per accuracy gate: loss per epoch of system, oracle and float32 reference
//   counterexample_figure per failure: the shrunk graph with the offending element marked
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/report_tables.h"
#include "reports/run_report.h"

namespace gnncheck::reports::figures {

// Colours for series (checks, curves), distinguishable on white; indexed modulo their count.
const std::string& series_color(std::size_t i);

// A path inside the report directory as an href attribute value: percent-encoded where a URL
// needs it (spaces, %, #, ?, quotes), then escaped for the attribute. Relative, so a moved report works.
std::string relative_href(const std::string& path);

// A number for SVG coordinates: one decimal, no "-0.0".
std::string coord(double v);

// A plot frame: maps data to pixels inside the plotting area and draws the axes as
// <g class='axis x'> and <g class='axis y'>, each with its ticks and its label.
struct Frame {
  double width = 560, height = 300;
  double left = 64, right = 16, top = 16, bottom = 44;
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;

  double px(double x) const { return left + (x - x_min) / (x_max - x_min) * (width - left - right); }
  double py(double y) const { return height - bottom - (y - y_min) / (y_max - y_min) * (height - top - bottom); }
  double plot_right() const { return width - right; }
  double plot_bottom() const { return height - bottom; }

  struct Tick {
    double value;
    std::string label;
  };
  std::string x_axis(const std::vector<Tick>& ticks, const std::string& label) const;
  std::string y_axis(const std::vector<Tick>& ticks, const std::string& label) const;
};

// Ticks at "nice" steps (1, 2, 5 × 10^k) covering [lo, hi], about `count` of them.
std::vector<Frame::Tick> linear_ticks(double lo, double hi, int count, bool integers = false);
// Ticks at whole decades of a log10 axis spanning [lo, hi] (in decades), at most about `count`.
std::vector<Frame::Tick> decade_ticks(int lo, int hi, int count);
// "1e-3", "0.01", "0.1", "1", "10", "100", "1e3": the label of 10^k.
std::string decade_label(int k);

// An HTML legend-free SVG legend row: swatches and names laid out left to right, wrapping at
// `width`; returns the markup (inside <g class='legend'>) and the height it took.
struct LegendItem {
  std::string name;
  std::string swatch;  // SVG markup of the swatch, drawn with its origin at the item's (x, y) centre
};
struct Legend {
  std::string svg;
  double height = 0;
};
Legend legend_row(const std::vector<LegendItem>& items, double x, double y, double width);

// The margin plot of one system (see margin_plot.cpp); only results that expect `pass` are drawn.
std::string margin_plot(const SystemMatrix& m);

// The loss curves of one accuracy gate with the divergence epoch marked (see loss_curve_plot.cpp).
std::string loss_curve_plot(const ResultRecord& r);

// The first epoch whose deviation exceeded its bound (error_vs_bound of an accuracy gate), if any.
std::optional<std::size_t> divergence_epoch(const ResultRecord& r);

// A failure's counterexample: the drawing of its graph (or why there is none) with the offending
// element marked, its values and the re-run line beside it, and links to the saved case files
// relative to index.html (see counterexample_drawing.cpp).
std::string counterexample_figure(const ResultRecord& r);

}  // namespace gnncheck::reports::figures

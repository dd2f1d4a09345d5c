// The figures of index.html, read as markup: the margin plot's axis follows the data and says
// where zeros and infinities went, the loss curves mark the divergence epoch, the counterexample
// drawing shows duplicates, self-loops, both columns of a block and the failing element, and the
// saved case's links stay relative. describe_counterexample places the element on the graph.
#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/graph.h"
#include "reports/counterexample_case.h"
#include "reports/html_figures.h"
#include "reports/report_tables.h"
#include "reports/writers.h"

namespace gnncheck::reports {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The labels of the x axis ticks, in document order.
std::vector<std::string> x_tick_labels(const std::string& svg) {
  const std::size_t start = svg.find("<g class='axis x'>");
  const std::size_t end = svg.find("</g>", start);
  const std::string axis = svg.substr(start, end - start);
  std::vector<std::string> out;
  const std::regex tick("font-size='11' text-anchor='middle'>([^<]*)</text>");
  for (auto it = std::sregex_iterator(axis.begin(), axis.end(), tick); it != std::sregex_iterator(); ++it) out.push_back((*it)[1]);
  return out;
}

RunReport margin_run(std::vector<ErrorPoint> differential, std::vector<ErrorPoint> adjoint) {
  RunReport run;
  run.systems = {{"cpu_float32", "builtin", true, "", ""}};
  ResultRecord a{.system = "cpu_float32", .target = "spmm", .check = "differential", .metric = 0.3, .bound = 1.0};
  a.error_vs_bound = std::move(differential);
  ResultRecord b{.system = "cpu_float32", .target = "spmm", .check = "adjoint", .metric = 0.1, .bound = 1.0};
  b.error_vs_bound = std::move(adjoint);
  ResultRecord c{.system = "cpu_float32", .target = "gcn", .check = "differential", .metric = 0.01, .bound = 1.0};
  c.error_vs_bound = {{1e-3, 1e-1}};
  run.results = {a, b, c};
  return run;
}

std::string margin_of(const RunReport& run) { return figures::margin_plot(build_matrices(run).at(0)); }

TEST(MarginPlotTest, OneRowPerTargetOneColourPerCheckWithALegendAndTheLineAtOne) {
  const std::string svg = margin_of(margin_run({{3e-4, 1e-3}, {2e-5, 1e-3}}, {{1e-4, 1e-2}}));
  EXPECT_THAT(svg, HasSubstr("class='plot margin-plot'"));
  EXPECT_THAT(svg, HasSubstr("<g class='axis x'>"));
  EXPECT_THAT(svg, HasSubstr("<g class='axis y'><text"));
  EXPECT_THAT(svg, HasSubstr(">spmm</text>"));
  EXPECT_THAT(svg, HasSubstr(">gcn</text>"));
  // The legend names each check with its colour; the dots use the same colours.
  EXPECT_THAT(svg, HasSubstr(fmt::format("<circle r='4' fill='{}'/></g><text x='28.0' y='18.0' font-size='11'>differential</text>",
                                         figures::series_color(0))));
  EXPECT_THAT(svg, HasSubstr(fmt::format("fill='{}'/></g><text", figures::series_color(1))));
  EXPECT_THAT(svg, HasSubstr(">adjoint</text>"));
  EXPECT_EQ(count(svg, fmt::format("r='2.6' fill='{}'", figures::series_color(0))), 3) << "two spmm cases and one gcn case";
  EXPECT_EQ(count(svg, fmt::format("r='2.6' fill='{}'", figures::series_color(1))), 1);
  EXPECT_THAT(svg, HasSubstr("stroke='#d62728' stroke-width='1.5' stroke-dasharray='5 3'")) << "the bound at 1";
  EXPECT_THAT(svg, HasSubstr("within bound ←"));
  EXPECT_THAT(svg, HasSubstr("→ over bound"));
  EXPECT_THAT(svg, HasSubstr("<title>spmm · differential: 2 cases, worst 0.3× the bound</title>"));
}

TEST(MarginPlotTest, TheAxisIsClampedToTheData) {
  // Ratios 0.02 … 0.3: decades 0.01 … 10 (always one decade past the line at 1), nothing else.
  EXPECT_EQ(x_tick_labels(margin_of(margin_run({{3e-4, 1e-3}, {2e-5, 1e-3}}, {{2e-4, 1e-2}}))),
            (std::vector<std::string>{"0.01", "0.1", "1", "10"}));
  // A ratio of 1e-128 (the oracle's exact cases) would stretch the axis over a hundred empty
  // decades: it is drawn at the floor 1e-10, and the caption says so. (The failing side then
  // grows to 100, so that its label "→ over bound" keeps room.)
  const std::string svg = margin_of(margin_run({{1e-130, 1e-2}, {3e-4, 1e-3}}, {{2e-4, 1e-2}}));
  const auto labels = x_tick_labels(svg);
  EXPECT_EQ(labels.front(), "1e-10");
  EXPECT_EQ(labels.back(), "100");
  EXPECT_THAT(svg, HasSubstr("1 below 1e-10× are drawn at 1e-10."));
}

TEST(MarginPlotTest, ZeroErrorsSitAtTheFloorAndInfinitiesInTheirOwnColumn) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  RunReport run = margin_run({{0.0, 1e-3}, {0.0, 0.0}, {3e-4, 1e-3}}, {{1e-4, 1e-2}, {nan, 1e-2}, {1.0, 0.0}});
  run.results[1].outcome = Outcome::fail;
  run.results[1].expectation_held = false;
  run.results[1].metric = 5.0;
  run.results[1].bound = 1e-3;
  const std::string svg = margin_of(run);
  const auto labels = x_tick_labels(svg);
  EXPECT_NE(std::find(labels.begin(), labels.end(), "0"), labels.end()) << "a column for exact zeros";
  EXPECT_NE(std::find(labels.begin(), labels.end(), "∞"), labels.end()) << "a column for NaN and x/0";
  EXPECT_THAT(svg, HasSubstr("2 cases have an error of exactly 0, which has no logarithm: drawn hollow in the column “0”"));
  EXPECT_THAT(svg, HasSubstr("2 with NaN, Inf or a nonzero error against a zero bound are in the column “∞”"));
  EXPECT_THAT(svg, HasSubstr("fill='#fff' stroke='" + figures::series_color(0) + "'")) << "zeros are hollow";
  // The failing case (the record's own metric and bound: 5e3× the bound) is a cross, right of the line.
  EXPECT_THAT(svg, HasSubstr("m-4 -4l8 8m0 -8l-8 8' stroke='" + figures::series_color(1) + "'"));
  EXPECT_THAT(svg, HasSubstr(">the failing case (shrunk)</text>"));
  EXPECT_THAT(x_tick_labels(svg), ::testing::Contains("1e4"));
}

TEST(MarginPlotTest, ReplicasExpectedToBeCaughtAreNotDrawnAndEmptyPlotsAreOmitted) {
  RunReport run = margin_run({{3e-4, 1e-3}}, {{1e-4, 1e-2}});
  for (auto& r : run.results) r.expectation = Expectation::caught;
  EXPECT_EQ(margin_of(run), "");
  RunReport none = margin_run({}, {});
  none.results.pop_back();
  EXPECT_EQ(margin_of(none), "");
}

TEST(MarginPlotTest, AccuracyGatesArePlottedPerEpoch) {
  RunReport run = margin_run({{3e-4, 1e-3}}, {{1e-4, 1e-2}});
  ResultRecord gate{.system = "cpu_float32", .target = "gcn", .check = "accuracy", .metric = 0.5, .bound = 1.0};
  gate.error_vs_bound = {{1e-3, 1e-2}, {5e-3, 1e-2}};
  gate.curves = {{"oracle (float64)", {1.0, 0.9}}, {"cpu_float32", {1.0, 0.9}}};
  run.results.push_back(gate);
  const std::string svg = margin_of(run);
  EXPECT_THAT(svg, HasSubstr(">accuracy (per epoch)</text>"));
  EXPECT_THAT(svg, HasSubstr("gcn · accuracy: 2 epochs, worst 0.5× the bound"));
  EXPECT_THAT(svg, HasSubstr("error / bound of each case or epoch"));
}

ResultRecord accuracy_gate(Outcome outcome) {
  ResultRecord r{.entry = "csbm", .system = "cpu_float32", .target = "gcn", .check = "accuracy", .outcome = outcome, .metric = 0.4,
                 .bound = 1.0, .message = "accuracy gate PASSED"};
  r.curves = {{"oracle (float64)", {2.0, 1.6, 1.3, 1.1, 1.0}},
              {"cpu_float32", {2.0, 1.6, 1.35, 1.2, 1.15}},
              {"cpu_float32 (rounding reference)", {2.0, 1.6, 1.3, 1.1, 1.0}}};
  r.error_vs_bound = {{0, 1e-6}, {1e-7, 1e-6}, {0.05, 1e-6}, {0.1, 1e-6}, {0.15, 1e-6}};
  return r;
}

TEST(LossCurvePlotTest, AxesLegendAndTheDivergenceEpoch) {
  const ResultRecord r = accuracy_gate(Outcome::fail);
  ASSERT_EQ(figures::divergence_epoch(r), 2u);
  const std::string svg = figures::loss_curve_plot(r);
  EXPECT_THAT(svg, HasSubstr("<g class='axis x'>"));
  EXPECT_THAT(svg, HasSubstr(">epoch</text></g>"));
  EXPECT_THAT(svg, HasSubstr(">training loss</text></g>"));
  EXPECT_THAT(svg, HasSubstr("<g class='legend'>"));
  for (const char* name : {"oracle (float64)", "cpu_float32", "cpu_float32 (rounding reference)", "first epoch over its bound"})
    EXPECT_THAT(svg, HasSubstr(fmt::format("font-size='11'>{}</text>", name))) << name;
  EXPECT_EQ(count(svg, "<polyline"), 3);
  EXPECT_THAT(svg, HasSubstr(">diverges at epoch 2</text>"));
  EXPECT_THAT(svg, HasSubstr("training loss over 5 epochs"));
  EXPECT_THAT(svg, HasSubstr("first left its bound at epoch 2: |loss − oracle loss| = 0.05 &gt; bound 1e-06"));
  EXPECT_THAT(svg, Not(HasSubstr("cases")));
}

TEST(LossCurvePlotTest, APassingGateSaysHowCloseItCame) {
  ResultRecord r = accuracy_gate(Outcome::pass);
  r.error_vs_bound = {{1e-7, 1e-6}, {4e-7, 1e-6}, {2e-7, 1e-6}};
  EXPECT_EQ(figures::divergence_epoch(r), std::nullopt);
  const std::string svg = figures::loss_curve_plot(r);
  EXPECT_THAT(svg, Not(HasSubstr("diverges at epoch")));
  EXPECT_THAT(svg, HasSubstr("closest at epoch 1 (0.4× the bound)"));
}

TEST(LossCurvePlotTest, ALossThatBlowsUpIsOnALogAxis) {
  ResultRecord r = accuracy_gate(Outcome::fail);
  r.curves[1].values = {6000, 8000, 5000, 4000, 3000};
  const std::string svg = figures::loss_curve_plot(r);
  EXPECT_THAT(svg, HasSubstr(">training loss (log scale)</text>"));
  EXPECT_THAT(svg, HasSubstr(">1e4</text>"));
}

CounterexampleCase square_case() {
  // 3 nodes: a duplicate pair 0←1 (twice), the reverse 1←0, a self-loop on 2, and 2←0.
  CounterexampleCase c{.n_dst = 3, .n_src = 3, .n_edges = 5, .edges = {{0, 1}, {0, 1}, {1, 0}, {2, 2}, {2, 0}}};
  c.element = CounterexampleElement{.tensor = "gradient x", .index = {1, 0}, .place = ElementPlace::source, .mark = 1, .got = -1.5,
                                    .expected = 0.25, .bound = 1e-6};
  return c;
}

ResultRecord failure_with(const CounterexampleCase& c) {
  return {.system = "tcgnn_backward_uses_A", .target = "spmm", .check = "differential", .outcome = Outcome::fail,
          .expectation_held = false, .counterexample = "cases/tcgnn spmm#1", .repro = "gnncheck repro /abs/path/cases/x",
          .counterexample_case = c};
}

TEST(CounterexampleFigureTest, DrawsEveryEdgeDuplicatesAndSelfLoopsApartAndMarksTheElement) {
  const std::string html = figures::counterexample_figure(failure_with(square_case()));
  EXPECT_THAT(html, HasSubstr("<svg class='graph'"));
  EXPECT_EQ(count(html, "fill='none' stroke="), 5) << "one arc per edge, duplicates included";
  // Node 1 fails: its three edges (e0, e1: 0←1, e2: 1←0) are tinted, the other two plain.
  EXPECT_EQ(count(html, "' fill='none' stroke='#e8847b' stroke-width='1.8'"), 3);
  EXPECT_EQ(count(html, "' fill='none' stroke='#666'"), 2);
  EXPECT_THAT(html, HasSubstr(">its edges</text>"));
  EXPECT_EQ(count(html, "Z' fill="), 5 + 1) << "an arrowhead per edge, and the legend's";
  // The duplicate arcs bend differently: their quadratic control points differ.
  std::regex arc("<path d='M[^Q']*Q([-0-9.]+ [-0-9.]+) ");
  std::set<std::string> controls;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), arc); it != std::sregex_iterator(); ++it) controls.insert((*it)[1]);
  EXPECT_EQ(controls.size(), 4u) << "four quadratic arcs (the self-loop is a cubic), no two alike";
  EXPECT_THAT(html, ::testing::ContainsRegex("<path d='M[-0-9. ]+C")) << "the self-loop";
  for (const char* id : {">e0<", ">e1<", ">e2<", ">e3<", ">e4<"}) EXPECT_THAT(html, HasSubstr(id));
  // Node 1 (the source the element belongs to) is marked; the values sit beside the drawing.
  EXPECT_THAT(html, HasSubstr("fill='#fce8e6' stroke='#d62728' stroke-width='3'/><text"));
  EXPECT_EQ(count(html, "stroke-width='3'/>"), 1);
  EXPECT_THAT(html, HasSubstr("gradient x [1, 0] at node 1"));
  EXPECT_THAT(html, HasSubstr("<th>got</th><td><code>-1.5</code>"));
  EXPECT_THAT(html, HasSubstr("<th>expected</th><td><code>0.25</code>"));
  EXPECT_THAT(html, HasSubstr("<th>bound</th><td><code>1e-06</code> (|got − expected| = 1.75, 1.75e+06× the bound)"));
  EXPECT_THAT(html, HasSubstr("e0 0←1, e1 0←1, e2 1←0, e3 2←2, e4 2←0"));
  EXPECT_THAT(html, HasSubstr("<g class='legend'>"));
}

TEST(CounterexampleFigureTest, ABlockIsTwoColumnsSourcesLeftDestinationsRight) {
  CounterexampleCase c{.n_dst = 2, .n_src = 3, .n_edges = 3, .edges = {{0, 2}, {1, 0}, {1, 2}}};
  c.element = CounterexampleElement{.tensor = "output e", .index = {2, 0}, .place = ElementPlace::edge, .mark = 2, .got = 1,
                                    .expected = 2, .bound = 0.1};
  const std::string html = figures::counterexample_figure(failure_with(c));
  EXPECT_THAT(html, HasSubstr("<text x='60' y='13' font-size='11' text-anchor='middle' fill='#444'>sources (3)</text>"));
  EXPECT_THAT(html, HasSubstr("fill='#444'>destinations (2)</text>"));
  EXPECT_EQ(count(html, "<circle cx='60.0'"), 3) << "three sources in the left column";
  EXPECT_EQ(count(html, "<circle cx='300.0'"), 2) << "two destinations in the right column";
  // The failing edge e2 (1 ← 2) is red and thick, and drawn last (on top).
  EXPECT_THAT(html, HasSubstr("fill='none' stroke='#d62728' stroke-width='2.6'"));
  EXPECT_THAT(html, HasSubstr("font-weight='700'>e2</text>"));
  EXPECT_THAT(html, HasSubstr("output e [2, 0] on edge e2 (1 ← 2)"));
}

TEST(CounterexampleFigureTest, ALargeGraphIsNotDrawnButSaidToBe) {
  CounterexampleCase c{.n_dst = 50, .n_src = 50, .n_edges = 60};
  for (int e = 0; e < 60; ++e) c.edges.emplace_back(e % 50, (e * 7) % 50);
  const std::string html = figures::counterexample_figure(failure_with(c));
  EXPECT_THAT(html, Not(HasSubstr("<svg")));
  EXPECT_THAT(html, HasSubstr("50 × 50 (square), 60 edges) is too large to draw readably"));
  CounterexampleCase unrecorded{.n_dst = 400, .n_src = 300, .n_edges = 2000};
  EXPECT_THAT(figures::counterexample_figure(failure_with(unrecorded)), HasSubstr("too large to draw"));
  EXPECT_EQ(edge_list_text(unrecorded, 10), "(edges not recorded: see graph.mtx)");
}

TEST(CounterexampleFigureTest, LinksAreRelativeToTheReportAndTheRerunLineIsAsRecorded) {
  const std::string html = figures::counterexample_figure(failure_with(square_case()));
  EXPECT_THAT(html, HasSubstr("<a href='cases/tcgnn%20spmm%231/'>cases/tcgnn spmm#1/</a>"));
  for (const char* file : {"graph.mtx", "case.json", "system.json"})
    EXPECT_THAT(html, HasSubstr(fmt::format("<a href='cases/tcgnn%20spmm%231/{0}'>{0}</a>", file)));
  EXPECT_THAT(html, Not(HasSubstr("href='/")));
  EXPECT_THAT(html, HasSubstr("Re-run: <code class='rerun'>gnncheck repro /abs/path/cases/x</code>"));
}

TEST(CounterexampleFigureTest, AScalarElementMarksNothing) {
  CounterexampleCase c = square_case();
  c.element = CounterexampleElement{.tensor = "gradient x (⟨ȳ, J·u⟩ vs ⟨Jᵀȳ, u⟩)", .got = 0.4, .expected = 1.4, .bound = 1e-12};
  const std::string html = figures::counterexample_figure(failure_with(c));
  EXPECT_THAT(html, Not(HasSubstr("stroke-width='3'/>")));
  EXPECT_THAT(html, Not(HasSubstr("the failing element</text>")));
  EXPECT_THAT(html, HasSubstr("a scalar over the whole case, on no single node or edge"));
}

TEST(DescribeCounterexampleTest, PlacesTheElementOnTheGraph) {
  const std::vector<index_t> dst = {0, 0, 2, 1}, src = {1, 2, 0, 2};
  const Graph g = Graph::from_edges(3, 3, dst, src);
  auto element = [](std::string tensor, std::vector<std::int64_t> index) {
    return CounterexampleElement{.tensor = std::move(tensor), .index = std::move(index), .got = 1, .expected = 2, .bound = 0.5};
  };
  const CounterexampleCase x = describe_counterexample(g, "spmm", element("gradient x", {2, 0}));
  EXPECT_EQ(x.n_edges, 4);
  ASSERT_TRUE(x.edges_recorded());
  EXPECT_EQ(x.edges[2], (std::pair<std::int64_t, std::int64_t>{1, 2})) << "edges in edge-id (CSR) order";
  EXPECT_EQ(x.element->place, ElementPlace::source);
  EXPECT_EQ(x.element->mark, 2);
  EXPECT_EQ(x.element->got, 1);
  EXPECT_EQ(describe_counterexample(g, "spmm", element("output y", {1, 0})).element->place, ElementPlace::destination);
  EXPECT_EQ(describe_counterexample(g, "sddmm_dot", element("output e", {3, 0})).element->place, ElementPlace::edge);
  // eshuffle's output is in CSC order: position p holds edge edge_perm[p].
  const auto csc = describe_counterexample(g, "eshuffle", element("output y", {0, 0}));
  EXPECT_EQ(csc.element->place, ElementPlace::edge);
  EXPECT_EQ(csc.element->mark, g.edge_perm()[0]);
  EXPECT_EQ(describe_counterexample(g, "gcn", element("gradient weight", {0, 0})).element->place, ElementPlace::none);
  EXPECT_EQ(describe_counterexample(g, "spmm", element("gradient x (⟨ȳ, J·u⟩ vs ⟨Jᵀȳ, u⟩)", {})).element->place, ElementPlace::none);
  EXPECT_EQ(describe_counterexample(g, "no_such_target", element("output y", {0})).element->place, ElementPlace::none);
  EXPECT_FALSE(describe_counterexample(g, "spmm", std::nullopt).element);
  // "gradient x_src" is not "gradient x".
  EXPECT_EQ(describe_counterexample(g, "spmm", element("gradient x_src", {0, 0})).element->place, ElementPlace::none);
}

TEST(DescribeCounterexampleTest, LargeGraphsKeepOnlyTheirSizes) {
  std::vector<index_t> dst, src;
  for (index_t e = 0; e < CounterexampleCase::kMaxRecordedEdges + 1; ++e) {
    dst.push_back(e % 30);
    src.push_back((e * 11) % 30);
  }
  const CounterexampleCase c = describe_counterexample(Graph::from_edges(30, 30, dst, src), "spmm", std::nullopt);
  EXPECT_EQ(c.n_edges, CounterexampleCase::kMaxRecordedEdges + 1);
  EXPECT_TRUE(c.edges.empty());
  EXPECT_FALSE(c.edges_recorded());
}

}  // namespace
}  // namespace gnncheck::reports

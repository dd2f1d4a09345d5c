// Tests of the scale check: the neighbourhood's oracle values equal the full oracle's on the
// sampled rows and every gradient, the strata are what they say, a correct system passes and
// replicas fail on a medium graph, and bad arguments name their flag.
#include <algorithm>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>

#include <omp.h>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/cpu_systems.h"
#include "adapters/replicas/replicas.h"
#include "fixtures/generators.h"
#include "core/error.h"
#include "core/parallel.h"
#include "checks/tolerance.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"
#include "gpu/kronecker.h"
#include "scale/graph_spec.h"
#include "scale/neighbourhood.h"
#include "scale/row_sampling.h"
#include "scale/scale_check.h"

namespace gnncheck::scale {
namespace {

using ::testing::HasSubstr;

struct TargetCase {
  std::string target;
  Attributes attributes;
};

std::vector<TargetCase> target_cases() {
  return {{"spmm", {{"features", std::int64_t{3}}}},
          {"spmm_ve", {{"heads", std::int64_t{2}}, {"features", std::int64_t{2}}}},
          {"normalized_spmm", {{"norm", std::string("symmetric")}}},
          {"normalized_spmm", {{"norm", std::string("row_mean")}}},
          {"sddmm_dot", {{"heads", std::int64_t{2}}, {"features", std::int64_t{3}}}},
          {"sddmm_add", {{"heads", std::int64_t{2}}}},
          {"edge_softmax", {{"heads", std::int64_t{2}}}},
          {"gcn", {{"norm", std::string("symmetric")}}},
          {"gcn", {{"norm", std::string("row_mean")}, {"bias", false}}},
          {"gcn", {{"self_loops", false}, {"in_features", std::int64_t{3}}}},
          {"gin", {{"in_features", std::int64_t{3}}}},
          {"gat", {{"heads", std::int64_t{2}}}},
          {"gat", {{"concat", false}, {"self_loops", false}}},
          {"sage", {{"in_features", std::int64_t{3}}}},
          {"agnn", {{"features", std::int64_t{3}}}},
          {"agnn", {{"self_loops", false}}}};
}

// Small graphs with what kernels get wrong: duplicates, self-loops, empty rows, non-square shapes.
std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> small_graphs() {
  std::vector<std::pair<std::string, std::shared_ptr<const Graph>>> graphs;
  auto add = [&](std::string name, Graph g) { graphs.emplace_back(std::move(name), std::make_shared<const Graph>(std::move(g))); };
  // Row 0: a duplicate (0<-1 twice) and a self-loop; row 1 empty; row 3 reads sources 1, 3, 1.
  const std::vector<index_t> dst = {0, 0, 0, 2, 3, 3, 3, 4}, src = {1, 0, 1, 4, 1, 3, 1, 2};
  add("multigraph 5x5", Graph::from_edges(5, 5, dst, src));
  const std::vector<index_t> bdst = {0, 0, 2, 2, 2, 3}, bsrc = {6, 1, 0, 6, 6, 2};
  add("bipartite 4x7", Graph::from_edges(4, 7, bdst, bsrc));  // non-square, row 1 empty, duplicates
  const std::vector<index_t> wdst = {0, 1, 1, 1}, wsrc = {0, 0, 1, 0};
  add("wide-rows 3x2", Graph::from_edges(3, 2, wdst, wsrc));  // more rows than sources, last row empty
  add("rmat 6 irregular", apply_graph_options(rmat({.scale = 6, .edge_factor = 6}, 3),
                                              {.duplicate_fraction = 0.1, .self_loop_fraction = 0.1, .empty_row_fraction = 0.2}, 3));
  return graphs;
}

void expect_close(double got, double want, const std::string& where) {
  EXPECT_LE(std::abs(got - want), 1e-13 * (1.0 + std::abs(want))) << where << ": neighbourhood " << got << ", full oracle " << want;
}

// The neighbourhood's exact values, mapped into the big tensor, equal the full oracle's; every
// gradient element the neighbourhood does not hold is exactly 0 in the full oracle.
void expect_neighbourhood_matches_full(const TargetCase& tc, std::shared_ptr<const Graph> g, const std::vector<index_t>& rows,
                                       const std::string& label) {
  const auto& def = oracle::find_target(tc.target);
  Case big = oracle::make_random_case(def, g, tc.attributes, 11);
  big.grad_outputs = sampled_grad_outputs(big, rows);
  const Result full = oracle::evaluate(big);
  ASSERT_TRUE(full.ok()) << full.message;
  const Neighbourhood nb = restrict_to_rows(big, rows);
  const Result sub = oracle::evaluate(nb.sub);
  ASSERT_TRUE(sub.ok()) << sub.message;
  auto map_of = [&](oracle::TensorKind kind) -> const std::vector<index_t>& {
    return kind == oracle::TensorKind::dst_nodes ? nb.rows : kind == oracle::TensorKind::src_nodes ? nb.cols : nb.edges;
  };
  for (const auto& out : def.spec.outputs) {
    const Tensor& f = full.outputs.at(out.name);
    const Tensor& s = sub.outputs.at(out.name);
    const auto& m = map_of(out.kind);
    const index_t w = f.row_size();
    for (size_t i = 0; i < m.size(); ++i)
      for (index_t k = 0; k < w; ++k)
        expect_close(s[static_cast<index_t>(i) * w + k], f[m[i] * w + k], fmt::format("{} output {} row {}", label, out.name, m[i]));
  }
  for (const auto& in : def.spec.inputs) {
    if (!in.differentiable) continue;
    if (!full.gradients.count(in.name)) continue;  // an optional parameter left out
    const Tensor& f = full.gradients.at(in.name);
    const Tensor& s = sub.gradients.at(in.name);
    if (in.kind == oracle::TensorKind::parameter) {  // sums over the sampled rows: the whole tensor
      ASSERT_EQ(f.shape(), s.shape());
      for (index_t i = 0; i < f.size(); ++i) expect_close(s[i], f[i], fmt::format("{} gradient {} [{}]", label, in.name, i));
      continue;
    }
    const auto& m = map_of(in.kind);
    const index_t w = f.row_size();
    std::vector<char> inside(static_cast<size_t>(f.rows()), 0);
    for (size_t i = 0; i < m.size(); ++i) {
      inside[static_cast<size_t>(m[i])] = 1;
      for (index_t k = 0; k < w; ++k)
        expect_close(s[static_cast<index_t>(i) * w + k], f[m[i] * w + k], fmt::format("{} gradient {} row {}", label, in.name, m[i]));
    }
    for (index_t row = 0; row < f.rows(); ++row)
      if (!inside[static_cast<size_t>(row)]) {
        for (index_t k = 0; k < w; ++k) EXPECT_EQ(f[row * w + k], 0.0) << label << " gradient " << in.name << " outside, row " << row;
      }
  }
}

TEST(Neighbourhood, EqualsTheFullOracleOnSampledRowsAndEveryGradient) {
  for (const auto& tc : target_cases()) {
    for (const auto& [name, g] : small_graphs()) {
      if (oracle::find_target(tc.target).spec.is_layer && g->n_dst() > g->n_src()) continue;  // no own features
      for (index_t k : {index_t{1}, index_t{3}, index_t{1000}}) {
        const auto rows = row_ids(sample_rows(*g, {.rows = k, .seed = 5}));
        const std::string label = fmt::format("{} {} on {} with K = {}", tc.target, gnncheck::to_string(tc.attributes.values().begin()->second),
                                              name, k);
        expect_neighbourhood_matches_full(tc, g, rows, label);
      }
    }
  }
}

TEST(Neighbourhood, EmptyRowsOnlyAndHandPickedRows) {
  const auto g = small_graphs()[0].second;  // row 1 is empty
  for (const auto& tc : target_cases()) {
    expect_neighbourhood_matches_full(tc, g, {1}, tc.target + " on the empty row");
    expect_neighbourhood_matches_full(tc, g, {0, 3}, tc.target + " on rows with duplicates and a self-loop");
  }
}

TEST(Neighbourhood, SymmetricNormCarriesFullOutDegreesInAPaddingRow) {
  const auto g = small_graphs()[0].second;
  Case big = oracle::make_random_case(oracle::find_target("normalized_spmm"), g, {{"norm", std::string("symmetric")}}, 1);
  big.grad_outputs = sampled_grad_outputs(big, std::vector<index_t>{3});
  const Neighbourhood nb = restrict_to_rows(big, std::vector<index_t>{3});
  // Row 3 reads sources 1, 3, 1; source 1 has out-degree 4 in the graph, source 3 one.
  EXPECT_EQ(nb.cols, (std::vector<index_t>{1, 3}));
  EXPECT_EQ(nb.sub.graph->n_dst(), 2);
  EXPECT_EQ(nb.padding_edges, 2);
  EXPECT_EQ(nb.sub.graph->out_degree(0), g->out_degree(1));
  EXPECT_EQ(nb.sub.graph->out_degree(1), g->out_degree(3));
  const Neighbourhood plain = restrict_to_rows(
      [&] {
        Case c = big;
        c.attributes.set("norm", std::string("row_mean"));
        return c;
      }(),
      std::vector<index_t>{3});
  EXPECT_EQ(plain.padding_edges, 0);
}

TEST(Neighbourhood, RejectsUnsortedRowsAndUnsupportedTargets) {
  const auto g = small_graphs()[0].second;
  Case c = oracle::make_random_case(oracle::find_target("spmm"), g, {}, 1);
  EXPECT_THROW(restrict_to_rows(c, std::vector<index_t>{3, 1}), InputError);
  EXPECT_THROW(restrict_to_rows(c, std::vector<index_t>{7}), InputError);
  try {
    supported_target("spmm_transposed");
    FAIL() << "spmm_transposed accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--target spmm_transposed"));
    EXPECT_THAT(e.what(), HasSubstr("spmm, spmm_ve, sddmm_dot, sddmm_add, edge_softmax, normalized_spmm, attention, sddmm_spmm, gcn, gin, gat, sage, agnn"));
  }
  EXPECT_THROW(supported_target("no_such_target"), InputError);
  EXPECT_THROW(require_restrictable(supported_target("gat"), {{"attn_dropout", 0.5}}, *g), InputError);
  const Graph wide = Graph::from_edges(3, 2, std::vector<index_t>{0, 1}, std::vector<index_t>{1, 0});
  EXPECT_THROW(require_restrictable(supported_target("gin"), {}, wide), InputError);
  EXPECT_NO_THROW(require_restrictable(supported_target("gcn"), {{"self_loops", false}}, wide));
  EXPECT_NO_THROW(require_restrictable(supported_target("spmm"), {}, wide));
}

TEST(RowSampling, StrataAreWhatTheySay) {
  const Graph g = rmat({.scale = 10, .edge_factor = 8}, 2);
  const index_t limit = g.num_edges() / 2;  // stands in for 2^31
  const auto rows = sample_rows(g, {.rows = 200, .seed = 9, .edge_offset_limit = limit});
  ASSERT_EQ(rows.size(), 200u);
  for (size_t i = 1; i < rows.size(); ++i) EXPECT_LT(rows[i - 1].row, rows[i].row);
  const auto counts = stratum_counts(rows);
  EXPECT_EQ(counts.at(Stratum::first_row), 1);
  EXPECT_EQ(counts.at(Stratum::last_row), 1);
  EXPECT_EQ(counts.at(Stratum::past_edge_limit), 50);
  EXPECT_GE(counts.at(Stratum::highest_in_degree), 40);
  EXPECT_GE(counts.at(Stratum::empty_row), 1);
  EXPECT_GT(counts.at(Stratum::random), 0);
  const auto row_ptr = g.row_ptr();
  index_t min_hub_degree = g.num_edges();
  bool straddling_found = false;
  for (const auto& r : rows) {
    if (r.stratum == Stratum::past_edge_limit) {
      EXPECT_GT(row_ptr[r.row + 1], limit) << r.row;
      straddling_found = straddling_found || (row_ptr[r.row] <= limit && row_ptr[r.row + 1] > limit);
    }
    if (r.stratum == Stratum::empty_row) {
      EXPECT_EQ(g.in_degree(r.row), 0);
    }
    if (r.stratum == Stratum::highest_in_degree) min_hub_degree = std::min(min_hub_degree, g.in_degree(r.row));
  }
  EXPECT_TRUE(straddling_found);
  for (const auto& r : rows) {
    if (r.stratum == Stratum::random) {
      EXPECT_LE(g.in_degree(r.row), min_hub_degree) << "a random row beats a hub row";
    }
  }
  // Same seed, same rows; all rows when K ≥ n.
  const auto again = sample_rows(g, {.rows = 200, .seed = 9, .edge_offset_limit = limit});
  EXPECT_EQ(row_ids(again), row_ids(rows));
  EXPECT_EQ(sample_rows(g, {.rows = 5000, .seed = 9}).size(), static_cast<size_t>(g.n_dst()));
  EXPECT_EQ(counts.at(Stratum::past_edge_limit), 50);
  EXPECT_EQ(stratum_counts(sample_rows(g, {.rows = 200, .seed = 9})).at(Stratum::past_edge_limit), 0);  // E ≤ 2^31
}

// The rows of the hub stratum of a K = 400 sample under `o`'s budgets, ascending; K stays 400.
std::vector<index_t> hub_rows_of(const Graph& g, SamplingOptions o) {
  o.rows = 400;
  o.seed = 2;
  const auto rows = sample_rows(g, o);
  EXPECT_EQ(rows.size(), 400u);
  std::vector<index_t> hubs;
  for (const auto& r : rows)
    if (r.stratum == Stratum::highest_in_degree) hubs.push_back(r.row);
  return hubs;
}

// The hub stratum stops before the row that would take it past its edge budget, always keeps the
// largest row, and hands the rows it leaves to the random stratum (K stays K).
TEST(RowSampling, HubStratumKeepsToItsEdgeBudget) {
  const Graph g = rmat({.scale = 12, .edge_factor = 8}, 3);
  std::vector<index_t> by_degree(static_cast<size_t>(g.n_dst()));
  std::iota(by_degree.begin(), by_degree.end(), index_t{0});
  std::stable_sort(by_degree.begin(), by_degree.end(), [&](index_t a, index_t b) { return g.in_degree(a) > g.in_degree(b); });
  const index_t largest = g.in_degree(by_degree[0]);
  auto hubs_of = [&](index_t budget) { return hub_rows_of(g, {.hub_edge_budget = budget}); };
  // Rows 0 and n − 1 belong to their own strata; here neither is among the 100 largest.
  for (index_t i = 0; i < 100; ++i) ASSERT_TRUE(by_degree[i] != 0 && by_degree[i] != g.n_dst() - 1);
  // Unbounded: the K/4 largest rows.
  EXPECT_EQ(hubs_of(g.num_edges()).size(), 100u);
  // A budget of 3 largest rows: exactly the largest rows whose running total stays within it.
  const index_t budget = g.in_degree(by_degree[0]) + g.in_degree(by_degree[1]) + g.in_degree(by_degree[2]);
  std::vector<index_t> hubs = hubs_of(budget);
  std::sort(hubs.begin(), hubs.end());
  std::vector<index_t> expected(by_degree.begin(), by_degree.begin() + 3);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(hubs, expected);
  // A budget below the largest row still takes it, and only it.
  EXPECT_EQ(hubs_of(largest - 1), std::vector<index_t>{by_degree[0]});
  EXPECT_EQ(hubs_of(0), std::vector<index_t>{by_degree[0]});
  EXPECT_THROW(sample_rows(g, {.rows = 10, .hub_edge_budget = -1}), InputError);
}

// The hub stratum also stops before the row that would take the distinct sources of its candidates
// past the source budget (the largest row always), whatever the edge budget; rows it leaves go to
// the random stratum.
TEST(RowSampling, HubStratumKeepsToItsSourceBudget) {
  const Graph g = rmat({.scale = 12, .edge_factor = 8}, 3);
  const HostGraphRows host(g);
  std::vector<index_t> by_degree;
  for (const RowDegree& r : host.largest_rows(100)) by_degree.push_back(r.row);
  for (index_t r : by_degree) ASSERT_TRUE(r != 0 && r != g.n_dst() - 1);
  const std::vector<index_t> together = host.sources_read_together(by_degree);
  ASSERT_LT(together[0], together[9]);  // the budgets below fall between distinct counts
  auto hubs_of = [&](index_t sources) { return hub_rows_of(g, {.hub_edge_budget = g.num_edges(), .hub_source_budget = sources}); };
  auto largest = [&](size_t count) {
    std::vector<index_t> rows(by_degree.begin(), by_degree.begin() + static_cast<std::ptrdiff_t>(count));
    std::sort(rows.begin(), rows.end());
    return rows;
  };
  // Exactly the prefix of the largest rows whose sources stay within the budget.
  for (const index_t budget : {together[9], together[9] + 1, together[30] - 1}) {
    const size_t within = static_cast<size_t>(std::upper_bound(together.begin(), together.end(), budget) - together.begin());
    EXPECT_EQ(hubs_of(budget), largest(within)) << budget;
  }
  EXPECT_EQ(hubs_of(g.n_src()), largest(100));
  EXPECT_EQ(hubs_of(0), largest(1));  // below the largest row's own sources: that row alone
  EXPECT_THROW(sample_rows(g, {.rows = 10, .hub_source_budget = -1}), InputError);
}

// The parallel first-use numbering is the serial map's, whatever the thread count.
// On a graph of many rows the largest rows are chosen by row ranges in parallel: the stratum is still
// the K/4 largest rows by (in-degree, lower id first), ties included, and the whole sample is the
// same for any number of threads.
TEST(RowSampling, HubStratumOfManyRowsIsTheLargestRowsForAnyThreadCount) {
  const Graph g = rmat({.scale = 17, .edge_factor = 4}, 8);  // 131,072 rows: many ties among the degrees
  std::vector<index_t> by_degree(static_cast<size_t>(g.n_dst()));
  std::iota(by_degree.begin(), by_degree.end(), index_t{0});
  std::stable_sort(by_degree.begin(), by_degree.end(), [&](index_t a, index_t b) { return g.in_degree(a) > g.in_degree(b); });
  const int threads_before = omp_get_max_threads();
  std::vector<SampledRow> first;
  for (int threads : {1, 2, 5}) {
    omp_set_num_threads(threads);
    const auto rows = sample_rows(g, {.rows = 4000, .seed = 9, .hub_edge_budget = g.num_edges()});
    std::vector<index_t> hubs;
    for (const auto& r : rows)
      if (r.stratum == Stratum::highest_in_degree) hubs.push_back(r.row);
    // The K/4 = 1000 largest, less the first and last rows (their own strata) should they be among them.
    std::vector<index_t> expected;
    for (auto it = by_degree.begin(); it != by_degree.begin() + 1000; ++it)
      if (*it != 0 && *it != g.n_dst() - 1) expected.push_back(*it);
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(hubs, expected) << threads << " threads";
    if (first.empty()) first = rows;
    ASSERT_EQ(rows.size(), first.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].row, first[i].row) << threads << " threads, row " << i;
      EXPECT_EQ(rows[i].stratum, first[i].stratum) << threads << " threads, row " << i;
    }
  }
  omp_set_num_threads(threads_before);
}

// A graph held elsewhere hands over the sampled rows' extents and columns, the sources' degrees and
// their numbering (SampledGraph): restricting through them gives restrict_to_rows' neighbourhood, for
// the three shapes of entries (block rows first, explicit self-loops, the degree-padding row).
TEST(Neighbourhood, FromWhatAGraphHeldElsewhereHandsOverAsFromTheGraph) {
  const Graph g = rmat({.scale = 9, .edge_factor = 6}, 4);
  const auto rows = row_ids(sample_rows(g, {.rows = 60, .seed = 2}));
  const HostGraphRows host(g.row_ptr());
  const std::vector<RowExtent> extents = host.extents(rows);
  std::vector<index_t> columns;
  for (const RowExtent& e : extents) columns.insert(columns.end(), g.col_idx().begin() + e.begin, g.col_idx().begin() + e.end);
  for (const auto& [target, attrs] : std::vector<std::pair<std::string, Attributes>>{
           {"gat", {}}, {"gcn", {{"norm", std::string("row_mean")}}}, {"normalized_spmm", {{"norm", std::string("symmetric")}}}}) {
    index_t numbered = 0, degrees_asked = 0;
    auto out_degrees = [&](std::span<const index_t> sources) {
      std::vector<index_t> d;
      for (index_t j : sources) d.push_back(g.out_degree(j));
      degrees_asked += static_cast<index_t>(sources.size());
      return d;
    };
    auto number = [&](std::span<const index_t> first, std::span<const index_t> entries, index_t n_src) {
      ++numbered;
      return number_by_first_use(first, entries, n_src);
    };
    const SampledGraph elsewhere{g.n_dst(), g.n_src(), g.summary(), extents, columns, out_degrees, number};
    const Neighbourhood got = restrict_graph_to_rows(supported_target(target), attrs, elsewhere, rows, 1);
    const Case c = oracle::make_random_case(oracle::find_target(target), std::make_shared<const Graph>(g), attrs, 1);
    const Neighbourhood want = restrict_to_rows(c, rows);
    EXPECT_EQ(numbered, 1) << target;
    EXPECT_EQ(degrees_asked > 0, target == "normalized_spmm") << target;
    EXPECT_EQ(got.cols, want.cols) << target;
    EXPECT_EQ(got.edges, want.edges) << target;
    EXPECT_EQ(got.padding_edges, want.padding_edges) << target;
    EXPECT_TRUE(std::ranges::equal(got.sub.graph->row_ptr(), want.sub.graph->row_ptr())) << target;
    EXPECT_TRUE(std::ranges::equal(got.sub.graph->col_idx(), want.sub.graph->col_idx())) << target;
  }
}

TEST(Neighbourhood, FirstUseNumberingEqualsASerialPass) {
  const index_t n_src = 5000;
  std::mt19937_64 rng(11);
  std::vector<index_t> first = {17, 3, 4999}, entries(200000);
  for (auto& e : entries) e = static_cast<index_t>(rng() % (rng() % 2 ? 50 : n_src));  // many repeats
  std::map<index_t, index_t> map;
  std::vector<index_t> sources, local;
  auto number = [&](index_t j) {
    auto [it, added] = map.emplace(j, static_cast<index_t>(sources.size()));
    if (added) sources.push_back(j);
    return it->second;
  };
  for (index_t j : first) number(j);
  for (index_t j : entries) local.push_back(number(j));
  const FirstUseNumbering got = number_by_first_use(first, entries, n_src);
  EXPECT_EQ(got.sources, sources);
  EXPECT_EQ(got.local, local);
  entries[123] = n_src;
  EXPECT_THROW(number_by_first_use(first, entries, n_src), InternalError);
}

// GraphRows of host offsets answers each question by its definition: the largest rows are a stable
// sort's first (ties: lower row), rows_where a filter, row_holding_edge the row whose range holds it.
TEST(RowSampling, HostGraphRowsAnswersByDefinition) {
  const Graph g = apply_graph_options(rmat({.scale = 9, .edge_factor = 4}, 5), {.empty_row_fraction = 0.3}, 5);
  const HostGraphRows rows(g.row_ptr());
  const index_t n = g.n_dst();
  std::vector<index_t> by_degree(static_cast<size_t>(n));
  std::iota(by_degree.begin(), by_degree.end(), index_t{0});
  std::stable_sort(by_degree.begin(), by_degree.end(), [&](index_t a, index_t b) { return g.in_degree(a) > g.in_degree(b); });
  for (index_t count : {index_t{1}, index_t{7}, n / 2, n, n + 5}) {
    std::vector<RowDegree> expected;
    for (index_t i = 0; i < std::min(count, n); ++i) expected.push_back({by_degree[i], g.in_degree(by_degree[i])});
    EXPECT_EQ(rows.largest_rows(count), expected) << count;
  }
  std::vector<index_t> empty, nonempty;
  for (index_t r = 10; r < n - 3; ++r) (g.in_degree(r) == 0 ? empty : nonempty).push_back(r);
  ASSERT_FALSE(empty.empty());
  EXPECT_EQ(rows.rows_where(10, n - 3, RowFilter::empty), empty);
  EXPECT_EQ(rows.rows_where(10, n - 3, RowFilter::nonempty), nonempty);
  for (index_t r = 0; r < n; ++r)
    for (index_t e = g.row_ptr()[r]; e < g.row_ptr()[r + 1]; ++e) ASSERT_EQ(rows.row_holding_edge(e), r) << e;
  // sources_read_together: the size of the union of the rows' columns so far.
  const HostGraphRows with_columns(g);
  const std::vector<index_t> some = {by_degree[0], 3, by_degree[1], n - 1, by_degree[2], 0};
  std::set<index_t> read;
  std::vector<index_t> expected_sources;
  for (index_t r : some) {
    for (index_t e = g.row_ptr()[r]; e < g.row_ptr()[r + 1]; ++e) read.insert(g.col_idx()[e]);
    expected_sources.push_back(static_cast<index_t>(read.size()));
  }
  EXPECT_EQ(with_columns.sources_read_together(some), expected_sources);
  EXPECT_THROW(rows.sources_read_together(some), std::logic_error);  // offsets only: no columns to count
}

// Sampling reads a graph's rows only through GraphRows, and asks it about the sampled rows and the
// rejection sampling's candidates: a number of rows that follows K, not the graph (what lets a graph
// on a device answer with K-sized transfers).
class CountingGraphRows final : public GraphRows {
 public:
  explicit CountingGraphRows(const GraphRows& g) : g_(g) {}
  index_t rows() const override { return g_.rows(); }
  index_t edges() const override { return g_.edges(); }
  std::vector<RowExtent> extents(std::span<const index_t> rows) const override {
    rows_asked += static_cast<index_t>(rows.size()), ++extent_calls;
    return g_.extents(rows);
  }
  index_t row_holding_edge(index_t edge) const override { return g_.row_holding_edge(edge); }
  std::vector<RowDegree> largest_rows(index_t count) const override {
    largest_asked += count;
    return g_.largest_rows(count);
  }
  std::vector<index_t> rows_where(index_t lo, index_t hi, RowFilter filter) const override {
    ++listings;
    return g_.rows_where(lo, hi, filter);
  }
  std::vector<index_t> sources_read_together(std::span<const index_t> rows) const override {
    source_rows_asked += static_cast<index_t>(rows.size());
    return g_.sources_read_together(rows);
  }
  mutable index_t rows_asked = 0, extent_calls = 0, largest_asked = 0, listings = 0, source_rows_asked = 0;

 private:
  const GraphRows& g_;
};

TEST(RowSampling, AsksTheGraphAboutSampledRowsAndCandidatesOnly) {
  const Graph g = rmat({.scale = 17, .edge_factor = 4}, 4);  // 131,072 rows, a third of them empty
  const index_t k = 400;
  const SamplingOptions o{.rows = k, .seed = 5, .edge_offset_limit = g.num_edges() / 3};
  const HostGraphRows host(g);
  const CountingGraphRows counted(host);
  const auto rows = sample_rows(counted, o);
  const auto plain = sample_rows(g, o);
  ASSERT_EQ(rows.size(), static_cast<size_t>(k));
  ASSERT_EQ(row_ids(rows), row_ids(plain));
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].stratum, plain[i].stratum);
    EXPECT_EQ(rows[i].in_degree, g.in_degree(rows[i].row));
    EXPECT_EQ(rows[i].first_edge, g.row_ptr()[rows[i].row]);
  }
  EXPECT_EQ(stratum_counts(rows).at(Stratum::past_edge_limit), k / 4);
  EXPECT_GE(stratum_counts(rows).at(Stratum::empty_row), 1);
  EXPECT_EQ(counted.largest_asked, k / 4);
  EXPECT_LE(counted.source_rows_asked, k / 4);  // the hub candidates the edge budget leaves, once
  EXPECT_EQ(counted.listings, 0) << "rejection sampling sufficed; no stratum should list its candidates";
  EXPECT_LE(counted.extent_calls, 4);                // one batch per stratum that tests degrees, and the result's
  EXPECT_LE(counted.rows_asked, 8 * k + 3 * 256) << counted.extent_calls;  // the batches follow the quotas, not the 131,072 rows
}

// Where rejection finds too few rows (a range of mostly empty rows past the limit, no empty row at
// all), the candidates are listed, and the strata still hold only rows that qualify.
TEST(RowSampling, StrataOfFewQualifyingRowsListTheirCandidates) {
  std::vector<index_t> dst, src;
  for (index_t i = 0; i < 3000; ++i)
    if (i < 1500 || i % 97 == 3)
      for (index_t q = 0; q < 1 + i % 5; ++q) dst.push_back(i), src.push_back(q);
  const Graph sparse_tail = Graph::from_edges(3000, 3000, dst, src);
  const HostGraphRows host(sparse_tail);
  const CountingGraphRows counted(host);
  const index_t limit = sparse_tail.row_ptr()[1500];
  const auto rows = sample_rows(counted, {.rows = 400, .seed = 3, .edge_offset_limit = limit});
  EXPECT_GE(counted.listings, 1);
  index_t past = 0;
  for (const auto& r : rows)
    if (r.stratum == Stratum::past_edge_limit) {
      ++past;
      EXPECT_GT(sparse_tail.row_ptr()[r.row + 1], limit) << r.row;
    }
  EXPECT_EQ(past, 15);  // the row holding edge `limit` (1555, after 55 empty rows), then the 14 non-empty rows after it
  std::vector<index_t> d2, s2;
  for (index_t i = 0; i < 3000; ++i) d2.push_back(i), s2.push_back((i * 7) % 3000);
  const Graph no_empty = Graph::from_edges(3000, 3000, d2, s2);
  const auto full = sample_rows(no_empty, {.rows = 400, .seed = 3});
  EXPECT_EQ(stratum_counts(full).at(Stratum::empty_row), 0);
  EXPECT_EQ(full.size(), 400u);
}

// kronecker: is gpu/kronecker.h's graph: symmetric, simple, no self-loops, rows ascending; seeded.
TEST(GraphSpec, KroneckerIsTheDeviceGeneratorsDefinition) {
  const Graph g = build_graph(parse_graph_spec("kronecker:9"), 11);
  EXPECT_EQ(g.n_dst(), 512);
  ASSERT_GT(g.num_edges(), 0);
  const auto row_ptr = g.row_ptr();
  const auto col = g.col_idx();
  for (index_t i = 0; i < g.n_dst(); ++i) {
    EXPECT_EQ(g.in_degree(i), g.out_degree(i)) << i;
    for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
      EXPECT_NE(col[e], i) << "self-loop at row " << i;
      if (e > row_ptr[i]) {
        EXPECT_LT(col[e - 1], col[e]) << "row " << i << " not strictly ascending";
      }
    }
  }
  // Every kept edge is a draw of the definition in one of its directions.
  std::set<std::pair<index_t, index_t>> drawn;
  const gpu::KroneckerParams p{.scale = 9, .seed = 11};
  for (std::int64_t k = 0; k < (p.edge_factor << p.scale); ++k) {
    const auto e = gpu::kronecker_edge(p, static_cast<std::uint64_t>(k));
    drawn.insert({e.dst, e.src});
    drawn.insert({e.src, e.dst});
  }
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) EXPECT_TRUE(drawn.count({i, col[e]})) << i << " " << col[e];
  EXPECT_NE(build_graph(parse_graph_spec("kronecker:9"), 12), g);
  EXPECT_EQ(build_graph(parse_graph_spec("kronecker:9"), 11), g);
}

TEST(Arguments, BadValuesNameTheirFlag) {
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_THAT(message([] { parse_graph_spec("rmat:x"); }), HasSubstr("--graph 'rmat:x'"));
  EXPECT_THAT(message([] { parse_graph_spec("kronecker:40"); }), HasSubstr("SCALE must be in 0..30"));
  EXPECT_THAT(message([] { parse_graph_spec("kronecker:10,4"); }), HasSubstr("--graph"));
  EXPECT_THAT(message([] { parse_graph_spec("rmat:10,0"); }), HasSubstr("EDGE_FACTOR"));
  EXPECT_THAT(message([] { parse_graph_spec("/no/such/file.mtx"); }), HasSubstr("--graph '/no/such/file.mtx': not a file"));
  const Graph g = chain(4);
  EXPECT_THAT(message([&] { sample_rows(g, {.rows = 0}); }), HasSubstr("--rows"));
  const auto k = parse_graph_spec("kronecker:5");
  EXPECT_TRUE(k.rmat.symmetrize);
  EXPECT_EQ(k.rmat.edge_factor, 16);
  EXPECT_EQ(build_graph(k, 3), build_graph(k, 3));
  EXPECT_EQ(parse_graph_spec("rmat:5,4").rmat.edge_factor, 4);
}

TEST(Arguments, GraphFromAFile) {
  const auto path = std::filesystem::temp_directory_path() / fmt::format("gnncheck-scale-{}.txt", ::getpid());
  {
    std::ofstream out(path);
    out << "0 1\n1 2\n2 0\n2 1\n";  // u v: edge u -> v, so v's row lists u
  }
  const GraphSpec spec = parse_graph_spec(path.string());
  EXPECT_EQ(spec.kind, GraphSpec::Kind::file);
  const Graph g = build_graph(spec, 1);
  EXPECT_EQ(g.num_edges(), 4);
  EXPECT_EQ(g.in_degree(1), 2);
  std::ofstream(path) << "0 x\n";
  try {
    build_graph(parse_graph_spec(path.string()), 1);
    ADD_FAILURE() << "a malformed edge list was accepted";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--graph '" + path.string() + "'"));
  }
  std::filesystem::remove(path);
}

TEST(ScaleCheck, CorrectSystemsPassEveryTargetOnAMediumGraph) {
  auto g = std::make_shared<const Graph>(rmat({.scale = 12, .edge_factor = 8}, 4));
  for (const auto& tc : target_cases()) {
    for (auto make : {make_cpu_float32_system, make_oracle_system}) {
      auto sys = make();
      const ScaleResult r = run_scale_check(*sys, g, {.target = &supported_target(tc.target), .attributes = tc.attributes, .rows = 300, .seed = 4});
      EXPECT_EQ(r.outcome, reports::Outcome::pass) << summary_text(r);
      EXPECT_GT(r.compared_elements, 0);
      EXPECT_GT(r.zero_checked_elements, 0);
    }
  }
}

TEST(ScaleCheck, ReplicasFailOnAMediumGraph) {
  auto g = std::make_shared<const Graph>(rmat({.scale = 12, .edge_factor = 8}, 4));
  const std::vector<std::pair<std::string, TargetCase>> bugs = {
      {"tcgnn_backward_uses_A", {"spmm", {}}},
      {"tcgnn_backward_uses_A", {"normalized_spmm", {}}},
      {"gnnadvisor_sqrt_degree", {"normalized_spmm", {}}},
      {"gnnadvisor_norm_backward_order", {"normalized_spmm", {}}},
      {"tlpgnn_no_attention_grad", {"edge_softmax", {}}},
      {"tcgnn_backward_uses_A", {"gcn", {}}},
      {"gnnadvisor_sqrt_degree", {"gcn", {}}},
      {"missing_bias_grad", {"gcn", {}}},
      {"tcgnn_backward_uses_A", {"gin", {}}},
      {"tcgnn_agnn_attention_grad", {"agnn", {}}},
      {"gat_backward_untransposed_attention", {"gat", {}}},
      {"tlpgnn_no_attention_grad", {"gat", {}}},
  };
  for (const auto& [replica, tc] : bugs) {
    auto sys = make_replica(replica, make_cpu_float32_system());
    const ScaleResult r = run_scale_check(*sys, g, {.target = &supported_target(tc.target), .rows = 300, .seed = 4, .rerun_command = "gnncheck scale …"});
    EXPECT_EQ(r.outcome, reports::Outcome::fail) << replica << " on " << tc.target << "\n" << summary_text(r);
    ASSERT_TRUE(r.worst.has_value());
    EXPECT_GT(r.worst->ratio, 1.0);
    EXPECT_THAT(r.message, HasSubstr("Re-run: gnncheck scale …"));
    EXPECT_FALSE(r.worst->where.empty());
  }
}

TEST(ScaleCheck, LargeLogitsOverflowASoftmaxWithoutMaxSubtraction) {
  auto g = std::make_shared<const Graph>(rmat({.scale = 12, .edge_factor = 8}, 4));
  auto correct = make_cpu_float32_system();
  const ScaleResult ok = run_scale_check(*correct, g, {.target = &supported_target("edge_softmax"), .rows = 300, .seed = 4, .input_magnitude = 1e3});
  EXPECT_EQ(ok.outcome, reports::Outcome::pass) << summary_text(ok);
  auto wrong = make_replica("fusegnn_softmax_no_max", make_cpu_float32_system());
  const ScaleResult caught = run_scale_check(*wrong, g, {.target = &supported_target("edge_softmax"), .rows = 300, .seed = 4, .input_magnitude = 1e3});
  EXPECT_EQ(caught.outcome, reports::Outcome::fail) << summary_text(caught);
  const ScaleResult unit = run_scale_check(*wrong, g, {.target = &supported_target("edge_softmax"), .rows = 300, .seed = 4});
  EXPECT_EQ(unit.outcome, reports::Outcome::pass) << "logits in [-1, 1) cannot overflow: " << summary_text(unit);
}

void expect_same_bits(const std::map<std::string, Tensor>& got, const std::map<std::string, Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [name, t] : want) {
    ASSERT_TRUE(got.count(name)) << what << " lacks " << name;
    const Tensor& g = got.at(name);
    ASSERT_EQ(g.shape(), t.shape()) << what << " " << name;
    EXPECT_EQ(std::memcmp(g.data(), t.data(), sizeof(double) * static_cast<size_t>(t.size())), 0) << what << " " << name << " differs";
  }
}

// The check takes the neighbourhood's reference and bounds from one pool of evaluations run side by
// side (the closed form's helpers, the measured model's orders, its |inputs| evaluation and the GAT
// floor beside the reference): the same bits as the oracle followed by the model, for any number of
// threads and of concurrent evaluations. The neighbourhood is large enough for every parallel path.
TEST(ScaleCheck, ReferenceAndBoundsSideBySideEqualTheOracleThenTheModel) {
  auto g = std::make_shared<const Graph>(rmat({.scale = 14, .edge_factor = 8}, 5));
  const int threads_before = omp_get_max_threads();
  for (const auto& tc : target_cases()) {
    const auto& def = oracle::find_target(tc.target);
    Case big = oracle::make_random_case(def, g, tc.attributes, 6);
    const std::vector<index_t> rows = row_ids(sample_rows(*g, {.rows = 2000, .seed = 6}));
    big.grad_outputs = sampled_grad_outputs(big, rows);
    const Neighbourhood nb = restrict_to_rows(big, rows);
    ASSERT_GT(nb.sub.graph->num_edges() + nb.sub.graph->n_src(), kParallelMinWork) << tc.target;
    const Result exact = oracle::evaluate(nb.sub, Precision::float64);
    ASSERT_TRUE(exact.ok()) << exact.message;
    const checks::Bounds want = checks::ToleranceModel().bounds(nb.sub, exact, Precision::float32);
    for (int threads : {1, 3})
      for (int concurrent : {1, 3}) {
        omp_set_num_threads(threads);
        const std::string what = fmt::format("{} {}, {} threads, {} concurrent", tc.target, tc.attributes.values().size(), threads, concurrent);
        const checks::ReferenceAndBounds got =
            checks::ToleranceModel({.concurrent_evaluations = concurrent}).reference_and_bounds(nb.sub, Precision::float32);
        ASSERT_TRUE(got.reference.ok()) << got.reference.message;
        expect_same_bits(got.reference.outputs, exact.outputs, what + ", reference outputs");
        expect_same_bits(got.reference.gradients, exact.gradients, what + ", reference gradients");
        expect_same_bits(got.bounds.tensors, want.tensors, what + ", bounds");
        EXPECT_EQ(got.bounds.model, want.model) << what;
      }
    omp_set_num_threads(threads_before);
  }
}

TEST(ScaleCheck, NeverPassesWithNothingCompared) {
  auto g = std::make_shared<const Graph>(Graph::from_csr(0, 3, {0}, {}));
  auto sys = make_cpu_float32_system();
  const ScaleResult r = run_scale_check(*sys, g, {.target = &supported_target("spmm"), .rows = 10});
  EXPECT_EQ(r.outcome, reports::Outcome::error);
  EXPECT_THAT(r.message, HasSubstr("no element was compared"));
  const reports::ResultRecord rec = to_result_record(r);
  EXPECT_EQ(rec.check, "scale");
  EXPECT_EQ(rec.conclusive, 0);
}

}  // namespace
}  // namespace gnncheck::scale

#include "core/graph.h"

#include <random>

#include <omp.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gnncheck {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// 3 destinations × 4 sources, with a duplicate edge (0<-2 twice), an empty row (1) and an
// isolated source (3): every derived view is written out by hand.
Graph small_graph() {
  const std::vector<index_t> dst = {2, 0, 0, 2, 0};
  const std::vector<index_t> src = {0, 2, 1, 2, 2};
  return Graph::from_edges(3, 4, dst, src);
}

TEST(Graph, FromEdgesGroupsByDestinationAndKeepsInputOrder) {
  Graph g = small_graph();
  EXPECT_EQ(g.n_dst(), 3);
  EXPECT_EQ(g.n_src(), 4);
  EXPECT_EQ(g.num_edges(), 5);
  EXPECT_THAT(g.row_ptr(), ElementsAre(0, 3, 3, 5));
  EXPECT_THAT(g.col_idx(), ElementsAre(2, 1, 2, 0, 2));
  EXPECT_THAT(g.row_of_edge(), ElementsAre(0, 0, 0, 2, 2));
}

TEST(Graph, CscViewAndEdgePerm) {
  Graph g = small_graph();
  // Column 0: edge 3 (row 2); column 1: edge 1 (row 0); column 2: edges 0, 2, 4; column 3: none.
  EXPECT_THAT(g.col_ptr(), ElementsAre(0, 1, 2, 5, 5));
  EXPECT_THAT(g.edge_perm(), ElementsAre(3, 1, 0, 2, 4));
  EXPECT_THAT(g.row_idx(), ElementsAre(2, 0, 0, 0, 2));
  EXPECT_EQ(g.in_degree(0), 3);
  EXPECT_EQ(g.in_degree(1), 0);
  EXPECT_EQ(g.out_degree(2), 3);
  EXPECT_EQ(g.out_degree(3), 0);
}

TEST(Graph, TransposeSwapsShapeAndUsesCscOrder) {
  Graph g = small_graph();
  Graph t = g.transposed();
  EXPECT_EQ(t.n_dst(), 4);
  EXPECT_EQ(t.n_src(), 3);
  EXPECT_THAT(t.row_ptr(), ElementsAre(0, 1, 2, 5, 5));
  EXPECT_THAT(t.col_idx(), ElementsAre(2, 0, 0, 0, 2));
  // Transposing twice sorts each row by column (CSC order), so it is the identity exactly when
  // the rows were already sorted.
  Graph tt = t.transposed();
  EXPECT_THAT(tt.row_ptr(), ElementsAre(0, 3, 3, 5));
  EXPECT_THAT(tt.col_idx(), ElementsAre(1, 2, 2, 0, 2));
  EXPECT_EQ(tt.transposed().transposed(), tt);
}

TEST(Graph, SelfLoopsAppendOnePerRow) {
  Graph g = Graph::from_edges(2, 2, std::vector<index_t>{0}, std::vector<index_t>{1});
  Graph s = g.with_self_loops();
  EXPECT_THAT(s.row_ptr(), ElementsAre(0, 2, 3));
  EXPECT_THAT(s.col_idx(), ElementsAre(1, 0, 1));
  EXPECT_THROW(small_graph().with_self_loops(), InputError);
}

// The CSC views by the definition (a stable counting sort by column, one pass in edge order) and a
// row-by-row A + I, for comparing against what the parallel constructions build.
struct CscViews {
  std::vector<index_t> col_ptr, row_idx, edge_perm;
};
CscViews serial_csc(const Graph& g) {
  CscViews v;
  v.col_ptr.assign(static_cast<size_t>(g.n_src()) + 1, 0);
  for (index_t j : g.col_idx()) ++v.col_ptr[static_cast<size_t>(j) + 1];
  for (index_t j = 0; j < g.n_src(); ++j) v.col_ptr[j + 1] += v.col_ptr[j];
  std::vector<index_t> next(v.col_ptr.begin(), v.col_ptr.end() - 1);
  v.row_idx.resize(static_cast<size_t>(g.num_edges()));
  v.edge_perm.resize(v.row_idx.size());
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e) {
      const index_t pos = next[g.col_idx()[e]]++;
      v.row_idx[pos] = i;
      v.edge_perm[pos] = e;
    }
  return v;
}

// A random graph of `edges` edges on n_dst × n_src, a fraction `hub` of them into column 0 and
// rows of very different lengths (row of each edge drawn from a skewed distribution).
Graph random_graph(index_t n_dst, index_t n_src, index_t edges, double hub, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<index_t> dst(static_cast<size_t>(edges)), src(dst.size());
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (index_t e = 0; e < edges; ++e) {
    const double u = unit(rng);
    dst[e] = std::min<index_t>(n_dst - 1, static_cast<index_t>(u * u * u * static_cast<double>(n_dst)));
    src[e] = unit(rng) < hub ? 0 : static_cast<index_t>(rng() % static_cast<std::uint64_t>(n_src));
  }
  return Graph::from_edges(n_dst, n_src, dst, src);
}

// Both constructions split their work by thread count; the CSC by edge ranges when a column has
// more edges than there are threads, else by column blocks: every split must give the one stable CSC
// and the one A + I.
TEST(Graph, ParallelCscAndSelfLoopsEqualTheSerialDefinitionForAnySplit) {
  struct Shape {
    index_t n_dst, n_src, edges;
    double hub;
  };
  const Shape shapes[] = {
      {1000, 100, 200000, 0.0},              // many edges per column
      {300000, 300000, 100000, 0.0},         // fewer edges than columns (a neighbourhood's sources)
      {50000, 4096 * 3 + 7, 150000, 0.5},    // half the edges in one column; a partial last block
      {40000, 40000, 70000, 0.0},
  };
  const int threads_before = omp_get_max_threads();
  for (const Shape& s : shapes)
    for (int threads : {1, 2, 3, 8, 16}) {  // above and below each shape's edges per column
      omp_set_num_threads(threads);
      const Graph g = random_graph(s.n_dst, s.n_src, s.edges, s.hub, static_cast<std::uint64_t>(s.n_src));
      const CscViews want = serial_csc(g);
      SCOPED_TRACE(testing::Message() << g.summary() << ", " << threads << " threads");
      EXPECT_TRUE(std::equal(want.col_ptr.begin(), want.col_ptr.end(), g.col_ptr().begin(), g.col_ptr().end()));
      EXPECT_TRUE(std::equal(want.row_idx.begin(), want.row_idx.end(), g.row_idx().begin(), g.row_idx().end()));
      EXPECT_TRUE(std::equal(want.edge_perm.begin(), want.edge_perm.end(), g.edge_perm().begin(), g.edge_perm().end()));
      if (!g.is_square()) continue;
      const Graph looped = g.with_self_loops();
      std::vector<index_t> row_ptr{0}, col_idx;
      for (index_t i = 0; i < g.n_dst(); ++i) {
        col_idx.insert(col_idx.end(), g.col_idx().begin() + g.row_ptr()[i], g.col_idx().begin() + g.row_ptr()[i + 1]);
        col_idx.push_back(i);
        row_ptr.push_back(static_cast<index_t>(col_idx.size()));
      }
      EXPECT_EQ(looped, Graph::from_csr(g.n_dst(), g.n_src(), row_ptr, col_idx));
    }
  omp_set_num_threads(threads_before);
}

TEST(Graph, Symmetry) {
  EXPECT_FALSE(small_graph().is_symmetric());
  Graph sym = Graph::from_edges(2, 2, std::vector<index_t>{0, 1}, std::vector<index_t>{1, 0});
  EXPECT_TRUE(sym.is_symmetric());
}

TEST(Graph, EmptyGraphIsValid) {
  Graph g;
  EXPECT_EQ(g.num_edges(), 0);
  Graph zero_edges = Graph::from_csr(3, 2, {0, 0, 0, 0}, {});
  EXPECT_THAT(zero_edges.col_ptr(), ElementsAre(0, 0, 0));
}

void expect_invalid(index_t n_dst, index_t n_src, std::vector<index_t> row_ptr, std::vector<index_t> col_idx,
                    const std::string& message_part) {
  try {
    Graph::from_csr(n_dst, n_src, std::move(row_ptr), std::move(col_idx));
    FAIL() << "expected InputError containing '" << message_part << "'";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(message_part));
  }
}

TEST(Graph, ValidationNamesTheProblem) {
  expect_invalid(2, 2, {0, 2, 1}, {0, 1}, "row_ptr is not monotone: row_ptr[1] = 2 > row_ptr[2] = 1");
  expect_invalid(2, 2, {0, 1}, {0}, "row_ptr has 2 entries");
  expect_invalid(2, 2, {1, 1, 1}, {}, "row_ptr[0] is 1");
  expect_invalid(2, 2, {0, 1, 2}, {0, 2}, "col_idx[1] = 2 is out of range [0, 2)");
  expect_invalid(2, 2, {0, 1, 3}, {0, 1}, "row_ptr[n_dst] = 3 but col_idx has 2 entries");
  expect_invalid(-1, 2, {0}, {}, "sizes must be non-negative");
  std::vector<index_t> dst = {0, 5}, src = {0, 0};
  EXPECT_THROW(Graph::from_edges(2, 2, dst, src), InputError);
}

}  // namespace
}  // namespace gnncheck

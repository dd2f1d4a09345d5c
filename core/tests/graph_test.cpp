#include "core/graph.h"

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

// gnncheck/core/graph.h — the sparse graph of DESIGN.md.
//
// A Graph is the pattern of a sparse matrix A of shape n_dst × n_src (non-square allowed). Row i
// lists the in-edges of destination i, so Y = A·X means Y[i] = Σ_{e ∈ row i} w_e · X[col_e].
// Storage is CSR (row_ptr, col_idx) and an edge's id is its CSR position (implicit edge id).
// Edge values are not part of the graph: they are [E, H] edge tensors in edge-id order.
// Derived views, built once at construction:
//   row_of_edge  row-ordered COO (edge id -> destination), for edge-parallel SDDMM;
//   col_ptr, row_idx, edge_perm   CSC; edge_perm maps a CSC position to the edge id it holds
//                                 (applying it is "eShuffle"). Within a column, CSC positions
//                                 follow increasing edge id.
// Duplicate edges, self-loops, empty rows and isolated nodes are legal and kept exactly.
//
//   auto g = gnncheck::Graph::from_edges(3, 3, /*dst=*/{0, 0, 2}, /*src=*/{1, 2, 0});
//   g.num_edges();   // 3
//   g.in_degree(0);  // 2 (row length, duplicates counted)
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace gnncheck {

class Graph {
 public:
  Graph() : Graph(from_csr(0, 0, {0}, {})) {}

  // Validates and takes CSR arrays. Throws InputError naming the first problem found:
  // negative sizes, row_ptr of the wrong length, not starting at 0, decreasing, not ending at
  // col_idx.size(), or a column index outside [0, n_src).
  static Graph from_csr(index_t n_dst, index_t n_src, std::vector<index_t> row_ptr, std::vector<index_t> col_idx);

  // Builds from a COO edge list (dst[k] <- src[k]). Edges are grouped by destination; within a
  // destination they keep their input order (a stable sort), so edge ids are reproducible.
  // Throws InputError on mismatched lengths or an index out of range (naming the edge).
  static Graph from_edges(index_t n_dst, index_t n_src, std::span<const index_t> dst, std::span<const index_t> src);

  index_t n_dst() const { return n_dst_; }
  index_t n_src() const { return n_src_; }
  index_t num_edges() const { return static_cast<index_t>(col_idx_.size()); }
  bool is_square() const { return n_dst_ == n_src_; }

  std::span<const index_t> row_ptr() const { return row_ptr_; }
  std::span<const index_t> col_idx() const { return col_idx_; }
  std::span<const index_t> row_of_edge() const { return row_of_edge_; }
  std::span<const index_t> col_ptr() const { return col_ptr_; }
  std::span<const index_t> row_idx() const { return row_idx_; }
  std::span<const index_t> edge_perm() const { return edge_perm_; }

  // In-degree of destination i (its row length) and out-degree of source j (its column length);
  // duplicate edges count once per copy.
  index_t in_degree(index_t dst) const { return row_ptr_[dst + 1] - row_ptr_[dst]; }
  index_t out_degree(index_t src) const { return col_ptr_[src + 1] - col_ptr_[src]; }

  // Aᵀ as a graph (n_src × n_dst). Its edge ids are this graph's CSC positions, so an edge
  // tensor of this graph maps to the transpose's edge order through eshuffle.
  Graph transposed() const;
  // A + I: one self-loop appended at the end of every row (requires a square graph).
  Graph with_self_loops() const;
  // True if every edge (i, j) has a matching (j, i) with the same multiplicity.
  bool is_symmetric() const;

  // One line for messages: "Graph 4×3, 5 edges".
  std::string summary() const;

  friend bool operator==(const Graph& a, const Graph& b) {
    return a.n_dst_ == b.n_dst_ && a.n_src_ == b.n_src_ && a.row_ptr_ == b.row_ptr_ && a.col_idx_ == b.col_idx_;
  }
  friend std::ostream& operator<<(std::ostream& os, const Graph& g) { return os << g.summary(); }

 private:
  Graph(index_t n_dst, index_t n_src, std::vector<index_t> row_ptr, std::vector<index_t> col_idx);
  void build_derived_views();

  index_t n_dst_ = 0;
  index_t n_src_ = 0;
  std::vector<index_t> row_ptr_;
  std::vector<index_t> col_idx_;
  std::vector<index_t> row_of_edge_;
  std::vector<index_t> col_ptr_;
  std::vector<index_t> row_idx_;
  std::vector<index_t> edge_perm_;
};

}  // namespace gnncheck

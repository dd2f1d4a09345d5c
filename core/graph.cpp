#include "core/graph.h"

#include "core/parallel.h"

#include <algorithm>
#include <map>

#include <omp.h>

#include <fmt/format.h>

namespace gnncheck {

Graph::Graph(index_t n_dst, index_t n_src, std::vector<index_t> row_ptr, std::vector<index_t> col_idx)
    : n_dst_(n_dst), n_src_(n_src), row_ptr_(std::move(row_ptr)), col_idx_(std::move(col_idx)) {
  build_derived_views();
}

Graph Graph::from_csr(index_t n_dst, index_t n_src, std::vector<index_t> row_ptr, std::vector<index_t> col_idx) {
  if (n_dst < 0 || n_src < 0)
    throw InputError(fmt::format("graph shape {}×{}: sizes must be non-negative", n_dst, n_src));
  if (static_cast<index_t>(row_ptr.size()) != n_dst + 1)
    throw InputError(fmt::format("row_ptr has {} entries; a graph with {} destinations needs n_dst + 1 = {}",
                                 row_ptr.size(), n_dst, n_dst + 1));
  if (row_ptr[0] != 0) throw InputError(fmt::format("row_ptr[0] is {}; it must be 0", row_ptr[0]));
  // The checks run in parallel (10^8 entries at Reddit scale); only when one fails is the first
  // offending entry looked for, serially, to name it.
  const index_t num_e = static_cast<index_t>(col_idx.size());
  bool monotone = true, in_range = true;
#pragma omp parallel for schedule(static) reduction(&& : monotone) if (worth_parallel(n_dst))
  for (index_t i = 0; i < n_dst; ++i) monotone = monotone && row_ptr[i + 1] >= row_ptr[i];
  if (!monotone) {
    for (index_t i = 0; i < n_dst; ++i) {
      if (row_ptr[i + 1] < row_ptr[i])
        throw InputError(fmt::format("row_ptr is not monotone: row_ptr[{}] = {} > row_ptr[{}] = {}", i, row_ptr[i],
                                     i + 1, row_ptr[i + 1]));
    }
  }
  if (row_ptr[n_dst] != num_e)
    throw InputError(fmt::format("row_ptr[n_dst] = {} but col_idx has {} entries", row_ptr[n_dst], col_idx.size()));
#pragma omp parallel for schedule(static) reduction(&& : in_range) if (worth_parallel(num_e))
  for (index_t e = 0; e < num_e; ++e) in_range = in_range && col_idx[e] >= 0 && col_idx[e] < n_src;
  if (!in_range) {
    for (size_t e = 0; e < col_idx.size(); ++e) {
      if (col_idx[e] < 0 || col_idx[e] >= n_src)
        throw InputError(fmt::format("col_idx[{}] = {} is out of range [0, {})", e, col_idx[e], n_src));
    }
  }
  return Graph(n_dst, n_src, std::move(row_ptr), std::move(col_idx));
}

Graph Graph::from_edges(index_t n_dst, index_t n_src, std::span<const index_t> dst, std::span<const index_t> src) {
  if (n_dst < 0 || n_src < 0)
    throw InputError(fmt::format("graph shape {}×{}: sizes must be non-negative", n_dst, n_src));
  if (dst.size() != src.size())
    throw InputError(fmt::format("edge list: {} destinations but {} sources", dst.size(), src.size()));
  for (size_t k = 0; k < dst.size(); ++k) {
    if (dst[k] < 0 || dst[k] >= n_dst)
      throw InputError(fmt::format("edge {}: destination {} is out of range [0, {})", k, dst[k], n_dst));
    if (src[k] < 0 || src[k] >= n_src)
      throw InputError(fmt::format("edge {}: source {} is out of range [0, {})", k, src[k], n_src));
  }
  // Counting sort by destination: stable, so edges of one row keep their input order.
  std::vector<index_t> row_ptr(static_cast<size_t>(n_dst) + 1, 0);
  for (index_t d : dst) ++row_ptr[static_cast<size_t>(d) + 1];
  for (index_t i = 0; i < n_dst; ++i) row_ptr[i + 1] += row_ptr[i];
  std::vector<index_t> next(row_ptr.begin(), row_ptr.end() - 1);
  std::vector<index_t> col_idx(dst.size());
  for (size_t k = 0; k < dst.size(); ++k) col_idx[static_cast<size_t>(next[dst[k]]++)] = src[k];
  return Graph(n_dst, n_src, std::move(row_ptr), std::move(col_idx));
}

void Graph::build_derived_views() {
  const index_t num_e = num_edges();
  row_of_edge_.resize(static_cast<size_t>(num_e));
#pragma omp parallel for schedule(dynamic, 1024) if (worth_parallel(num_e))
  for (index_t i = 0; i < n_dst_; ++i)
    for (index_t e = row_ptr_[i]; e < row_ptr_[i + 1]; ++e) row_of_edge_[e] = i;

  // CSC by a stable counting sort over edge ids in increasing order: within a column, positions
  // follow increasing edge id. The result is unique, so it is the same however the work is split.
  col_ptr_.assign(static_cast<size_t>(n_src_) + 1, 0);
  row_idx_.resize(static_cast<size_t>(num_e));
  edge_perm_.resize(static_cast<size_t>(num_e));
  if (!worth_parallel(num_e)) {
    for (index_t e = 0; e < num_e; ++e) ++col_ptr_[col_idx_[e] + 1];
    for (index_t j = 0; j < n_src_; ++j) col_ptr_[j + 1] += col_ptr_[j];
    std::vector<index_t> next(col_ptr_.begin(), col_ptr_.end() - 1);
    for (index_t e = 0; e < num_e; ++e) {
      const index_t pos = next[col_idx_[e]]++;
      row_idx_[pos] = row_of_edge_[e];
      edge_perm_[pos] = e;
    }
    return;
  }
  const index_t threads = omp_get_max_threads();
  if (num_e / std::max<index_t>(n_src_, 1) >= threads) {
    // Many edges per column: each of `threads` consecutive edge ranges counts its columns, then
    // places its edges after those of the ranges before it (threads·n_src counts, below the edge count).
    auto range_begin = [&](index_t k) { return num_e * k / threads; };
    std::vector<index_t> next(static_cast<size_t>(threads * n_src_), 0);  // next[k·n_src + j]
#pragma omp parallel for schedule(static)
    for (index_t k = 0; k < threads; ++k)
      for (index_t e = range_begin(k); e < range_begin(k + 1); ++e) ++next[k * n_src_ + col_idx_[e]];
    for (index_t j = 0; j < n_src_; ++j) {
      index_t position = col_ptr_[j];
      for (index_t k = 0; k < threads; ++k) {
        const index_t count = next[k * n_src_ + j];
        next[k * n_src_ + j] = position;  // where range k's first edge of column j goes
        position += count;
      }
      col_ptr_[j + 1] = position;
    }
#pragma omp parallel for schedule(static)
    for (index_t k = 0; k < threads; ++k)
      for (index_t e = range_begin(k); e < range_begin(k + 1); ++e) {
        const index_t pos = next[k * n_src_ + col_idx_[e]]++;
        row_idx_[pos] = row_of_edge_[e];
        edge_perm_[pos] = e;
      }
    return;
  }
  // Fewer edges per column than threads (a neighbourhood of a big graph has about as many sources
  // as edges): two stable passes whose memory does not grow with threads × n_src. The edges are
  // first distributed over `blocks` consecutive column ranges — each of `chunks` edge ranges counts its edges
  // per block, then places them after those of the ranges before it, so a block lists its edges in
  // increasing id — and each block is then sorted by column on its own (blocks are independent: their
  // CSC positions are consecutive, starting where the block's edges start).
  const index_t chunks = std::max<index_t>(1, std::min<index_t>(threads, num_e / kParallelMinWork));
  const index_t block_columns = std::max<index_t>(1, (n_src_ + 4095) / 4096);
  const index_t blocks = n_src_ == 0 ? 0 : (n_src_ + block_columns - 1) / block_columns;
  auto chunk_begin = [&](index_t k) { return num_e * k / chunks; };
  std::vector<index_t> place(static_cast<size_t>(chunks * blocks), 0);  // place[k·blocks + b]
#pragma omp parallel for schedule(static)
  for (index_t k = 0; k < chunks; ++k)
    for (index_t e = chunk_begin(k); e < chunk_begin(k + 1); ++e) ++place[k * blocks + col_idx_[e] / block_columns];
  std::vector<index_t> block_start(static_cast<size_t>(blocks) + 1, 0);
  for (index_t b = 0, position = 0; b < blocks; ++b) {
    block_start[b] = position;
    for (index_t k = 0; k < chunks; ++k) {
      const index_t count = place[k * blocks + b];
      place[k * blocks + b] = position;  // where range k's first edge of block b goes
      position += count;
    }
    block_start[b + 1] = position;
  }
  std::vector<index_t> by_block(static_cast<size_t>(num_e));  // edge ids, grouped by block, increasing within one
#pragma omp parallel for schedule(static)
  for (index_t k = 0; k < chunks; ++k)
    for (index_t e = chunk_begin(k); e < chunk_begin(k + 1); ++e) by_block[place[k * blocks + col_idx_[e] / block_columns]++] = e;
#pragma omp parallel
  {
    std::vector<index_t> next;
#pragma omp for schedule(dynamic, 1)
    for (index_t b = 0; b < blocks; ++b) {
      const index_t first_column = b * block_columns, columns = std::min(block_columns, n_src_ - first_column);
      next.assign(static_cast<size_t>(columns) + 1, 0);
      for (index_t q = block_start[b]; q < block_start[b + 1]; ++q) ++next[col_idx_[by_block[q]] - first_column + 1];
      next[0] = block_start[b];
      for (index_t j = 0; j < columns; ++j) next[j + 1] += next[j];
      for (index_t j = 0; j < columns; ++j) col_ptr_[first_column + j + 1] = next[j + 1];
      for (index_t q = block_start[b]; q < block_start[b + 1]; ++q) {
        const index_t e = by_block[q];
        const index_t pos = next[col_idx_[e] - first_column]++;
        row_idx_[pos] = row_of_edge_[e];
        edge_perm_[pos] = e;
      }
    }
  }
}

Graph Graph::transposed() const {
  return Graph(n_src_, n_dst_, col_ptr_, row_idx_);
}

Graph Graph::with_self_loops() const {
  if (!is_square())
    throw InputError(fmt::format("self-loops need a square graph; this one is {}×{}", n_dst_, n_src_));
  // Row i moves up by the i loops before it; rows are copied in parallel (each writes its own range).
  std::vector<index_t> row_ptr(row_ptr_.size());
  std::vector<index_t> col_idx(col_idx_.size() + static_cast<size_t>(n_dst_));
#pragma omp parallel for schedule(dynamic, 1024) if (worth_parallel(num_edges() + n_dst_))
  for (index_t i = 0; i < n_dst_; ++i) {
    const index_t start = row_ptr_[i] + i;
    std::copy(col_idx_.begin() + row_ptr_[i], col_idx_.begin() + row_ptr_[i + 1], col_idx.begin() + start);
    col_idx[static_cast<size_t>(row_ptr_[i + 1] + i)] = i;
    row_ptr[i + 1] = row_ptr_[i + 1] + i + 1;
  }
  return Graph(n_dst_, n_src_, std::move(row_ptr), std::move(col_idx));
}

bool Graph::is_symmetric() const {
  if (!is_square()) return false;
  for (index_t i = 0; i < n_dst_; ++i) {
    std::vector<index_t> out(col_idx_.begin() + row_ptr_[i], col_idx_.begin() + row_ptr_[i + 1]);
    std::vector<index_t> in(row_idx_.begin() + col_ptr_[i], row_idx_.begin() + col_ptr_[i + 1]);
    std::sort(out.begin(), out.end());
    std::sort(in.begin(), in.end());
    if (out != in) return false;
  }
  return true;
}

std::string Graph::summary() const {
  return fmt::format("Graph {}×{}, {} edges", n_dst_, n_src_, num_edges());
}

}  // namespace gnncheck

// gnncheck/performance/reddit_graph.h — the deterministic Reddit-shaped data set of the
// performance benchmarks (issue 8), and the binary file that hands exactly the same graph,
// features and labels to the PyTorch Geometric script (performance/pyg_reddit_bench.py).
//
// Shape (Hamilton et al.'s Reddit): 232,965 nodes, 114,615,892 directed edges stored in both
// directions (57,307,946 undirected pairs, uniform at random, no self-loops; duplicates are legal
// and kept), 602 features, 41 classes. Every value is a counter-based hash of (seed, index), so
// the data are the same for the same seed whatever the number of threads (OpenMP fills them).
// Features carry a weak class signal (feature `label` is shifted by +1) so that training loss
// visibly falls, which is a cheap sanity check that both systems train.
//
//   RedditData data = make_reddit_shaped(RedditShape{}, /*seed=*/1);   // ~2 s on 16 cores
//   write_reddit_file("/tmp/reddit.bin", data);
//   RedditData again = read_reddit_file("/tmp/reddit.bin");
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"

namespace gnncheck::perf {

struct RedditShape {
  index_t nodes = 232'965;
  index_t directed_edges = 114'615'892;  // even: every pair is stored in both directions
  index_t features = 602;
  index_t classes = 41;
  double train_fraction = 0.66;  // Reddit's split: 153,431 of 232,965 nodes train
  // Append one self-loop at the end of every row (A + I, as Graph::with_self_loops() does), so
  // that models aggregating over A + I need no second host graph (building one costs seconds at
  // this size). directed_edges counts the edges without the loops.
  bool self_loops = false;
};

struct RedditData {
  RedditShape shape;
  std::uint64_t seed = 0;
  Graph graph;                       // n × n, symmetric, each row sorted by column, then its self-loop if asked
  std::vector<float> features;       // [nodes, features] row-major
  std::vector<std::int32_t> labels;  // [nodes] in [0, classes)
  std::vector<std::uint8_t> train_mask;  // [nodes] 1 = the node's loss counts
};

// Throws InputError for a shape that cannot be built (odd edge count, fewer than 2 nodes, no
// classes, more classes than features).
RedditData make_reddit_shaped(const RedditShape& shape, std::uint64_t seed);

// The file: a 64-byte header — magic "GNNCKRD1", then int64 nodes, edges (stored entries, loops
// included), features, classes, seed, train count, self_loops (1: the last entry of every row is
// its appended self-loop) — followed by int64 row_ptr [nodes+1], int32 col_idx [edges], float32
// features [nodes·features], int32 labels [nodes], uint8 train_mask [nodes]; little-endian.
void write_reddit_file(const std::string& path, const RedditData& data);
// Throws InputError naming the file and the field when the header or a size is wrong.
RedditData read_reddit_file(const std::string& path);

}  // namespace gnncheck::perf

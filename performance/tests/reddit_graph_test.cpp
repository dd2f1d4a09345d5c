// Tests of performance/reddit_graph.h (host only, no device needed): the Reddit-shaped
// generator's structure (exact edge count, symmetry, no self-loops, sorted rows, label and mask
// ranges, the class signal), determinism for a seed whatever the thread count, the data file's
// round trip, and the errors for bad shapes and bad files.
#include "performance/reddit_graph.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <omp.h>

#include "core/error.h"

namespace gnncheck::perf {
namespace {

using ::testing::HasSubstr;

const RedditShape small{.nodes = 500, .directed_edges = 12'000, .features = 12, .classes = 5, .train_fraction = 0.5};

std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no InputError";
}

TEST(RedditGraph, HasTheShapeAsked) {
  const RedditData d = make_reddit_shaped(small, 3);
  const Graph& g = d.graph;
  EXPECT_EQ(g.n_dst(), 500);
  EXPECT_EQ(g.n_src(), 500);
  EXPECT_EQ(g.num_edges(), 12'000);
  EXPECT_TRUE(g.is_symmetric());
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e) {
      EXPECT_NE(g.col_idx()[e], i) << "self-loop at node " << i;
      if (e > g.row_ptr()[i]) EXPECT_LE(g.col_idx()[e - 1], g.col_idx()[e]) << "row " << i << " not sorted";
    }
  ASSERT_EQ(d.features.size(), 500u * 12u);
  index_t train = 0;
  double signal = 0, other = 0;
  for (index_t i = 0; i < 500; ++i) {
    ASSERT_GE(d.labels[i], 0);
    ASSERT_LT(d.labels[i], 5);
    train += d.train_mask[i];
    for (index_t c = 0; c < 12; ++c) {
      const float v = d.features[i * 12 + c];
      EXPECT_GE(v, c == d.labels[i] ? 0.0f : -1.0f);
      EXPECT_LT(v, c == d.labels[i] ? 2.0f : 1.0f);
      (c == d.labels[i] ? signal : other) += v;
    }
  }
  EXPECT_GT(train, 200);
  EXPECT_LT(train, 300);
  EXPECT_GT(signal / 500, 0.8);  // mean 1 + U(-1, 1)
  EXPECT_LT(std::abs(other / (500 * 11)), 0.1);
}

TEST(RedditGraph, SelfLoopsAreAppendedToEveryRowAsWithSelfLoopsDoes) {
  RedditShape with_loops = small;
  with_loops.self_loops = true;
  const RedditData d = make_reddit_shaped(with_loops, 3);
  EXPECT_EQ(d.graph, make_reddit_shaped(small, 3).graph.with_self_loops());
  EXPECT_EQ(d.features, make_reddit_shaped(small, 3).features);
  const auto path = std::filesystem::temp_directory_path() / "gnncheck_reddit_graph_loops_test.bin";
  write_reddit_file(path.string(), d);
  const RedditData back = read_reddit_file(path.string());
  EXPECT_TRUE(back.shape.self_loops);
  EXPECT_EQ(back.shape.directed_edges, 12'000);
  EXPECT_EQ(back.graph, d.graph);
  std::filesystem::remove(path);
}

TEST(RedditGraph, SameSeedSameDataWhateverTheThreads) {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const RedditData one = make_reddit_shaped(small, 9);
  omp_set_num_threads(std::max(2, threads));
  const RedditData many = make_reddit_shaped(small, 9);
  omp_set_num_threads(threads);
  EXPECT_EQ(one.graph, many.graph);
  EXPECT_EQ(one.features, many.features);
  EXPECT_EQ(one.labels, many.labels);
  EXPECT_EQ(one.train_mask, many.train_mask);
  const RedditData other = make_reddit_shaped(small, 10);
  EXPECT_FALSE(one.graph == other.graph);
}

TEST(RedditGraph, FileRoundTrip) {
  const auto path = std::filesystem::temp_directory_path() / "gnncheck_reddit_graph_test.bin";
  const RedditData d = make_reddit_shaped(small, 4);
  write_reddit_file(path.string(), d);
  // 64-byte header, row_ptr int64, col_idx int32, features float32, labels int32, mask uint8.
  EXPECT_EQ(std::filesystem::file_size(path), 64u + 8u * 501 + 4u * 12'000 + 4u * 500 * 12 + 4u * 500 + 500);
  const RedditData back = read_reddit_file(path.string());
  EXPECT_EQ(back.graph, d.graph);
  EXPECT_EQ(back.features, d.features);
  EXPECT_EQ(back.labels, d.labels);
  EXPECT_EQ(back.train_mask, d.train_mask);
  EXPECT_EQ(back.seed, 4u);
  // A truncated file names the field it ends in.
  std::filesystem::resize_file(path, 64 + 8 * 501 + 100);
  EXPECT_THAT(error_of([&] { read_reddit_file(path.string()); }), HasSubstr("field 'col_idx'"));
  {
    std::ofstream(path, std::ios::binary) << "not a graph file at all";
  }
  EXPECT_THAT(error_of([&] { read_reddit_file(path.string()); }), HasSubstr("GNNCKRD1"));
  std::filesystem::remove(path);
}

TEST(RedditGraph, BadShapesAreRefused) {
  EXPECT_THAT(error_of([] { make_reddit_shaped({.nodes = 1}, 1); }), HasSubstr("nodes = 1"));
  EXPECT_THAT(error_of([] { make_reddit_shaped({.nodes = 10, .directed_edges = 7}, 1); }),
              HasSubstr("directed_edges = 7"));
  EXPECT_THAT(error_of([] { make_reddit_shaped({.nodes = 10, .directed_edges = 8, .features = 3, .classes = 4}, 1); }),
              HasSubstr("classes = 4"));
}

}  // namespace
}  // namespace gnncheck::perf

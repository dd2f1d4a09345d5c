#include "performance/reddit_graph.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/splitmix64.h"

namespace gnncheck::perf {
namespace {

// SplitMix64's finalizer over (seed, stream, index): independent values per index, so the result
// does not depend on which thread computes which index.
std::uint64_t draw(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return mix64(mix64(seed * kSplitMix64Gamma + stream) + index);
}
// Uniform in [0, n) by the multiply-shift reduction of 32 random bits: bias below 2^-32·n, far
// below anything a timing or a loss curve can see (n < 2^31 here).
std::uint64_t below(std::uint64_t bits, std::uint64_t n) { return ((bits >> 32) * n) >> 32; }

constexpr char magic[8] = {'G', 'N', 'N', 'C', 'K', 'R', 'D', '1'};

void check_shape(const RedditShape& s) {
  if (s.nodes < 2 || s.nodes >= (index_t{1} << 31))
    throw InputError(fmt::format("Reddit-shaped graph: nodes = {}; expected 2 ≤ nodes < 2^31", s.nodes));
  if (s.directed_edges < 0 || s.directed_edges % 2 != 0)
    throw InputError(fmt::format("Reddit-shaped graph: directed_edges = {}; expected an even count ≥ 0 (every "
                                 "pair is stored in both directions)",
                                 s.directed_edges));
  if (s.classes < 1 || s.classes > s.features)
    throw InputError(fmt::format("Reddit-shaped graph: classes = {} with {} features; expected 1 ≤ classes ≤ "
                                 "features (feature `label` carries the class signal)",
                                 s.classes, s.features));
}

}  // namespace

RedditData make_reddit_shaped(const RedditShape& shape, std::uint64_t seed) {
  check_shape(shape);
  const index_t n = shape.nodes, pairs = shape.directed_edges / 2, e = shape.directed_edges;
  // Pair k joins u and v ≠ u; it is stored as u <- v and v <- u.
  std::vector<std::int32_t> pair_u(static_cast<size_t>(pairs)), pair_v(static_cast<size_t>(pairs));
  std::vector<std::atomic<index_t>> degree(static_cast<size_t>(n));
#pragma omp parallel for schedule(static)
  for (index_t k = 0; k < pairs; ++k) {
    const auto u = static_cast<index_t>(below(draw(seed, 1, k), n));
    const auto v = static_cast<index_t>((u + 1 + static_cast<index_t>(below(draw(seed, 2, k), n - 1))) % n);
    pair_u[k] = static_cast<std::int32_t>(u);
    pair_v[k] = static_cast<std::int32_t>(v);
    degree[u].fetch_add(1, std::memory_order_relaxed);
    degree[v].fetch_add(1, std::memory_order_relaxed);
  }
  const index_t loop = shape.self_loops ? 1 : 0;
  std::vector<index_t> row_ptr(static_cast<size_t>(n) + 1, 0);
  for (index_t i = 0; i < n; ++i) row_ptr[i + 1] = row_ptr[i] + degree[i].load() + loop;
  // Fill rows in any order, then sort each row: the result depends only on the pairs.
  std::vector<std::atomic<index_t>>& cursor = degree;
  for (index_t i = 0; i < n; ++i) cursor[i].store(row_ptr[i]);
  std::vector<index_t> col_idx(static_cast<size_t>(e + loop * n));
#pragma omp parallel for schedule(static)
  for (index_t k = 0; k < pairs; ++k) {
    const index_t u = pair_u[k], v = pair_v[k];
    col_idx[cursor[u].fetch_add(1, std::memory_order_relaxed)] = v;
    col_idx[cursor[v].fetch_add(1, std::memory_order_relaxed)] = u;
  }
  pair_u = {};
  pair_v = {};
#pragma omp parallel for schedule(dynamic, 1024)
  for (index_t i = 0; i < n; ++i) {
    std::sort(col_idx.begin() + row_ptr[i], col_idx.begin() + row_ptr[i + 1] - loop);
    if (loop) col_idx[row_ptr[i + 1] - 1] = i;
  }

  RedditData data;
  data.shape = shape;
  data.seed = seed;
  data.graph = Graph::from_csr(n, n, std::move(row_ptr), std::move(col_idx));
  const index_t f = shape.features;
  data.labels.resize(static_cast<size_t>(n));
  data.train_mask.resize(static_cast<size_t>(n));
  data.features.resize(static_cast<size_t>(n * f));
  const auto train_threshold = static_cast<std::uint64_t>(shape.train_fraction * 4294967296.0);
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < n; ++i) {
    const auto label = static_cast<std::int32_t>(below(draw(seed, 3, i), shape.classes));
    data.labels[i] = label;
    data.train_mask[i] = (draw(seed, 4, i) >> 32) < train_threshold ? 1 : 0;
    float* row = data.features.data() + i * f;
    for (index_t c = 0; c < f; ++c) {
      // Uniform in [-1, 1) from 24 bits (exact in float32), plus the class signal.
      const auto bits = static_cast<std::int64_t>(draw(seed, 5, static_cast<std::uint64_t>(i * f + c)) >> 40);
      row[c] = static_cast<float>(bits - (1 << 23)) / static_cast<float>(1 << 23) + (c == label ? 1.0f : 0.0f);
    }
  }
  return data;
}

namespace {

template <class T>
void write_array(std::ofstream& out, const T* values, size_t count) {
  out.write(reinterpret_cast<const char*>(values), static_cast<std::streamsize>(count * sizeof(T)));
}
template <class T>
void read_array(std::ifstream& in, T* values, size_t count, const std::string& path, const char* field) {
  in.read(reinterpret_cast<char*>(values), static_cast<std::streamsize>(count * sizeof(T)));
  if (!in)
    throw InputError(fmt::format("{}: file ends inside field '{}' ({} values of {} bytes expected)", path, field, count,
                                 sizeof(T)));
}

}  // namespace

void write_reddit_file(const std::string& path, const RedditData& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InputError(fmt::format("{}: cannot open for writing", path));
  const Graph& g = data.graph;
  const std::int64_t train = std::count(data.train_mask.begin(), data.train_mask.end(), std::uint8_t{1});
  const std::int64_t header[7] = {g.n_dst(), g.num_edges(), data.shape.features, data.shape.classes,
                                  static_cast<std::int64_t>(data.seed), train, data.shape.self_loops ? 1 : 0};
  out.write(magic, sizeof magic);
  write_array(out, header, 7);
  write_array(out, g.row_ptr().data(), g.row_ptr().size());
  std::vector<std::int32_t> col32(g.col_idx().begin(), g.col_idx().end());
  write_array(out, col32.data(), col32.size());
  write_array(out, data.features.data(), data.features.size());
  write_array(out, data.labels.data(), data.labels.size());
  write_array(out, data.train_mask.data(), data.train_mask.size());
  out.close();
  if (!out) throw InputError(fmt::format("{}: write failed (disk full?)", path));
}

RedditData read_reddit_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open for reading", path));
  char found[8] = {};
  in.read(found, sizeof found);
  if (!in || std::memcmp(found, magic, sizeof magic) != 0)
    throw InputError(fmt::format("{}: not a Reddit-shaped data file (the first 8 bytes must be \"GNNCKRD1\")", path));
  std::int64_t header[7];
  read_array(in, header, 7, path, "header");
  RedditData data;
  data.shape.nodes = header[0];
  data.shape.self_loops = header[6] == 1;
  data.shape.directed_edges = header[1] - (data.shape.self_loops ? header[0] : 0);
  data.shape.features = header[2];
  data.shape.classes = header[3];
  data.seed = static_cast<std::uint64_t>(header[4]);
  if (header[6] != 0 && header[6] != 1)
    throw InputError(fmt::format("{}: header field self_loops = {}; expected 0 or 1", path, header[6]));
  if (header[0] < 0 || header[1] < 0 || header[2] < 0 || header[3] < 1 || header[0] >= (std::int64_t{1} << 31))
    throw InputError(fmt::format("{}: header sizes nodes={} edges={} features={} classes={} are out of range", path,
                                 header[0], header[1], header[2], header[3]));
  const auto n = static_cast<size_t>(header[0]), e = static_cast<size_t>(header[1]);
  std::vector<index_t> row_ptr(n + 1);
  read_array(in, row_ptr.data(), n + 1, path, "row_ptr");
  std::vector<std::int32_t> col32(e);
  read_array(in, col32.data(), e, path, "col_idx");
  data.features.resize(n * static_cast<size_t>(header[2]));
  read_array(in, data.features.data(), data.features.size(), path, "features");
  data.labels.resize(n);
  read_array(in, data.labels.data(), n, path, "labels");
  data.train_mask.resize(n);
  read_array(in, data.train_mask.data(), n, path, "train_mask");
  for (size_t i = 0; i < n; ++i)
    if (data.labels[i] < 0 || data.labels[i] >= header[3])
      throw InputError(fmt::format("{}: labels[{}] = {} is outside [0, {})", path, i, data.labels[i], header[3]));
  // Graph::from_csr validates row_ptr and col_idx and names the first bad entry.
  data.graph = Graph::from_csr(header[0], header[0], std::move(row_ptr), std::vector<index_t>(col32.begin(), col32.end()));
  data.shape.train_fraction = n == 0 ? 0.0 : static_cast<double>(header[5]) / static_cast<double>(n);
  return data;
}

}  // namespace gnncheck::perf

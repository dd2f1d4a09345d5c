#include "scale/row_sampling.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <queue>
#include <random>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>

#include "fixtures/random.h"
#include "core/error.h"
#include "core/parallel.h"

namespace gnncheck::scale {

std::string_view to_string(Stratum s) {
  switch (s) {
    case Stratum::first_row: return "first row";
    case Stratum::last_row: return "last row";
    case Stratum::past_edge_limit: return "edges past 2^31";
    case Stratum::highest_in_degree: return "highest in-degree";
    case Stratum::empty_row: return "empty row";
    case Stratum::random: return "random";
  }
  return "?";
}

const std::vector<Stratum>& all_strata() {
  static const std::vector<Stratum> strata = {Stratum::first_row,         Stratum::last_row,  Stratum::past_edge_limit,
                                              Stratum::highest_in_degree, Stratum::empty_row, Stratum::random};
  return strata;
}

namespace {

// The rows picked so far, in pick order, with membership in O(1).
class Picks {
 public:
  explicit Picks(index_t capacity) : capacity_(capacity) {}
  bool full() const { return static_cast<index_t>(rows_.size()) >= capacity_; }
  bool contains(index_t row) const { return chosen_.count(row) != 0; }
  // Adds `row` unless it is already picked or K rows are; returns whether it was added.
  bool add(index_t row, Stratum s) {
    if (full() || contains(row)) return false;
    chosen_.insert(row);
    rows_.push_back({row, s});
    return true;
  }
  index_t size() const { return static_cast<index_t>(rows_.size()); }
  std::vector<SampledRow> take() { return std::move(rows_); }

 private:
  index_t capacity_;
  std::unordered_set<index_t> chosen_;
  std::vector<SampledRow> rows_;
};

// The random stream of one stratum's candidates: uniform rows of [lo, hi).
index_t draw_row(std::mt19937_64& rng, index_t lo, index_t span) {
  return lo + static_cast<index_t>(uniform_below(rng, static_cast<std::uint64_t>(span)));
}

// Adds up to `quota` rows of [lo, hi) that pass `filter` (none: every row), uniformly at random,
// not yet picked. Few wanted of many: rejection; otherwise the candidates are listed and partially
// shuffled.
void add_random_rows(const GraphRows& g, Picks& picks, index_t lo, index_t hi, index_t quota, Stratum s, std::mt19937_64& rng,
                     std::optional<RowFilter> filter) {
  if (hi <= lo || quota <= 0) return;
  const index_t span = hi - lo;
  if (quota * 8 < span) {
    // Rejection sampling: bounded attempts so a range of mostly rejected rows cannot spin. The
    // degrees a filter tests are asked for in batches: on a miss, this row's and those of the next
    // draws the loop would make (a copy of the generator replays them), so a graph on a device
    // answers a few calls of many rows, and the draws are those of one row at a time.
    const index_t attempts = 64 * quota;
    std::unordered_map<index_t, index_t> degree;
    auto passes = [&](index_t row, index_t attempt, index_t added) {
      if (!filter) return true;
      if (!degree.count(row)) {
        std::vector<index_t> batch = {row};
        std::mt19937_64 ahead = rng;
        const index_t more = std::min(attempts - attempt - 1, 4 * (quota - added) + 256);
        for (index_t q = 0; q < more; ++q) batch.push_back(draw_row(ahead, lo, span));
        const std::vector<RowExtent> ext = g.extents(batch);
        for (size_t q = 0; q < batch.size(); ++q) degree.emplace(batch[q], ext[q].degree());
      }
      return (degree.at(row) == 0) == (*filter == RowFilter::empty);
    };
    index_t added = 0;
    for (index_t attempt = 0; attempt < attempts && added < quota && !picks.full(); ++attempt) {
      const index_t row = draw_row(rng, lo, span);
      if (passes(row, attempt, added) && picks.add(row, s)) ++added;
    }
    if (added == quota || picks.full()) return;
    quota -= added;
  }
  std::vector<index_t> candidates;
  if (filter) {
    candidates = g.rows_where(lo, hi, *filter);
    std::erase_if(candidates, [&](index_t row) { return picks.contains(row); });
  } else {
    for (index_t row = lo; row < hi; ++row)
      if (!picks.contains(row)) candidates.push_back(row);
  }
  const index_t n = static_cast<index_t>(candidates.size());
  for (index_t i = 0; i < n && i < quota && !picks.full(); ++i) {
    const index_t j = i + static_cast<index_t>(uniform_below(rng, static_cast<std::uint64_t>(n - i)));
    std::swap(candidates[i], candidates[j]);
    picks.add(candidates[i], s);
  }
}

}  // namespace

HostGraphRows::HostGraphRows(std::span<const index_t> row_ptr, std::span<const index_t> col_idx, index_t n_src)
    : row_ptr_(row_ptr), col_idx_(col_idx), n_src_(n_src) {
  if (row_ptr.empty()) throw InputError("scale: a row_ptr needs n_dst + 1 entries, got none");
}

HostGraphRows::HostGraphRows(const Graph& g) : HostGraphRows(g.row_ptr(), g.col_idx(), g.n_src()) {}

std::vector<RowExtent> HostGraphRows::extents(std::span<const index_t> rows) const {
  std::vector<RowExtent> out(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) out[i] = {row_ptr_[static_cast<size_t>(rows[i])], row_ptr_[static_cast<size_t>(rows[i]) + 1]};
  return out;
}

index_t HostGraphRows::row_holding_edge(index_t edge) const {
  // The first row whose end passes `edge` holds it.
  const auto it = std::upper_bound(row_ptr_.begin() + 1, row_ptr_.end(), edge);
  return static_cast<index_t>(it - row_ptr_.begin()) - 1;
}

std::vector<RowDegree> HostGraphRows::largest_rows(index_t count) const {
  // Each of `parts` row ranges keeps its own best in a min-heap (a pass over every row: 1.3·10^8
  // at Kronecker scale 27), then the parts' best are merged.
  const index_t n = rows();
  count = std::min(count, n);
  if (count <= 0) return {};
  using Entry = std::pair<index_t, index_t>;  // (in-degree, −row): larger is better
  const index_t parts = worth_parallel(n) ? std::min<index_t>(64, n / kParallelMinWork + 1) : 1;
  std::vector<std::vector<Entry>> part_best(static_cast<size_t>(parts));
#pragma omp parallel for schedule(dynamic, 1) if (parts > 1)
  for (index_t p = 0; p < parts; ++p) {
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> best;
    for (index_t row = n * p / parts; row < n * (p + 1) / parts; ++row) {
      const Entry e{row_ptr_[static_cast<size_t>(row) + 1] - row_ptr_[static_cast<size_t>(row)], -row};
      if (static_cast<index_t>(best.size()) < count) best.push(e);
      else if (e > best.top()) {
        best.pop();
        best.push(e);
      }
    }
    auto& kept = part_best[static_cast<size_t>(p)];
    while (!best.empty()) kept.push_back(best.top()), best.pop();
  }
  std::vector<Entry> merged;
  for (const auto& kept : part_best) merged.insert(merged.end(), kept.begin(), kept.end());
  std::sort(merged.begin(), merged.end(), std::greater<>());
  merged.resize(static_cast<size_t>(count));
  std::vector<RowDegree> out;
  out.reserve(merged.size());
  for (const auto& [degree, neg_row] : merged) out.push_back({-neg_row, degree});
  return out;
}

std::vector<index_t> HostGraphRows::rows_where(index_t lo, index_t hi, RowFilter filter) const {
  std::vector<index_t> out;
  for (index_t row = lo; row < hi; ++row)
    if ((row_ptr_[static_cast<size_t>(row) + 1] == row_ptr_[static_cast<size_t>(row)]) == (filter == RowFilter::empty)) out.push_back(row);
  return out;
}

std::vector<index_t> HostGraphRows::sources_read_together(std::span<const index_t> rows) const {
  if (static_cast<index_t>(col_idx_.size()) != edges())
    throw std::logic_error("HostGraphRows::sources_read_together needs the graph's columns");
  std::vector<std::uint8_t> seen(static_cast<size_t>(n_src_), 0);
  std::vector<index_t> out(rows.size());
  index_t distinct = 0;
  for (size_t p = 0; p < rows.size(); ++p) {
    const auto r = static_cast<size_t>(rows[p]);
    for (index_t e = row_ptr_[r]; e < row_ptr_[r + 1]; ++e) {
      auto& s = seen[static_cast<size_t>(col_idx_[static_cast<size_t>(e)])];
      distinct += s == 0;
      s = 1;
    }
    out[p] = distinct;
  }
  return out;
}

std::vector<SampledRow> sample_rows(const Graph& g, const SamplingOptions& options) {
  return sample_rows(HostGraphRows(g), options);
}

std::vector<SampledRow> sample_rows(const GraphRows& g, const SamplingOptions& options) {
  if (options.rows < 1) throw InputError(fmt::format("--rows must be at least 1, got {}", options.rows));
  if (options.hub_edge_budget < 0) throw InputError(fmt::format("--hub-edges must be at least 0, got {}", options.hub_edge_budget));
  if (options.hub_source_budget < 0)
    throw InputError(fmt::format("--hub-sources must be at least 0, got {}", options.hub_source_budget));
  const index_t n = g.rows();
  const index_t num_edges = g.edges();
  const index_t k = std::min(options.rows, n);
  Picks picks(k);
  std::mt19937_64 rng(options.seed ^ 0x5ca1ab1e5eedULL);
  if (n == 0) return {};

  picks.add(0, Stratum::first_row);
  picks.add(n - 1, Stratum::last_row);

  // Rows holding an edge at position ≥ limit: the row containing edge `limit`, then any non-empty
  // row after it.
  if (num_edges > options.edge_offset_limit) {
    const index_t straddling = g.row_holding_edge(options.edge_offset_limit);
    picks.add(straddling, Stratum::past_edge_limit);
    add_random_rows(g, picks, straddling + 1, n, std::max<index_t>(1, k / 4) - 1, Stratum::past_edge_limit, rng, RowFilter::nonempty);
  }

  // The K/4 rows of largest in-degree, largest first, stopping before the row that would take the
  // stratum past its edge budget (edges of rows it adds) or its source budget (the distinct sources
  // of every candidate so far, rows an earlier stratum took included: they are read all the same).
  // The edge budget cuts the candidates first, so the sources are counted over at most its edges.
  std::vector<index_t> candidates;
  index_t hub_edges = 0;
  for (const auto& [row, degree] : g.largest_rows(std::max<index_t>(1, k / 4))) {
    const bool adds = !picks.contains(row);
    if (!candidates.empty() && adds && hub_edges + degree > options.hub_edge_budget) break;
    candidates.push_back(row);
    if (adds) hub_edges += degree;
  }
  if (!candidates.empty()) {
    const std::vector<index_t> sources = g.sources_read_together(candidates);
    for (size_t p = 0; p < candidates.size(); ++p) {
      if (p > 0 && sources[p] > options.hub_source_budget) break;
      picks.add(candidates[p], Stratum::highest_in_degree);
    }
  }

  add_random_rows(g, picks, 0, n, std::max<index_t>(1, k / 16), Stratum::empty_row, rng, RowFilter::empty);
  add_random_rows(g, picks, 0, n, k - picks.size(), Stratum::random, rng, std::nullopt);

  auto rows = picks.take();
  std::sort(rows.begin(), rows.end(), [](const SampledRow& a, const SampledRow& b) { return a.row < b.row; });
  const std::vector<RowExtent> ext = g.extents(row_ids(rows));
  for (size_t i = 0; i < rows.size(); ++i) rows[i].in_degree = ext[i].degree(), rows[i].first_edge = ext[i].begin;
  return rows;
}

std::vector<index_t> row_ids(const std::vector<SampledRow>& rows) {
  std::vector<index_t> ids;
  ids.reserve(rows.size());
  for (const auto& r : rows) ids.push_back(r.row);
  return ids;
}

std::map<Stratum, index_t> stratum_counts(const std::vector<SampledRow>& rows) {
  std::map<Stratum, index_t> counts;
  for (Stratum s : all_strata()) counts[s] = 0;
  for (const auto& r : rows) ++counts[r.stratum];
  return counts;
}

}  // namespace gnncheck::scale

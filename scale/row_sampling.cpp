#include "scale/row_sampling.h"

#include <algorithm>
#include <queue>
#include <random>
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

// Adds up to `quota` rows of [lo, hi) that satisfy `accept`, uniformly at random, not yet picked.
// Few wanted of many: rejection; otherwise the candidates are listed and partially shuffled.
template <class Accept>
void add_random_rows(Picks& picks, index_t lo, index_t hi, index_t quota, Stratum s, std::mt19937_64& rng, Accept accept) {
  if (hi <= lo || quota <= 0) return;
  const index_t span = hi - lo;
  if (quota * 8 < span) {
    // Rejection sampling: bounded attempts so a range of mostly rejected rows cannot spin.
    index_t added = 0;
    for (index_t attempt = 0; attempt < 64 * quota && added < quota && !picks.full(); ++attempt) {
      const index_t row = lo + static_cast<index_t>(uniform_below(rng, static_cast<std::uint64_t>(span)));
      if (accept(row) && picks.add(row, s)) ++added;
    }
    if (added == quota || picks.full()) return;
    quota -= added;
  }
  std::vector<index_t> candidates;
  for (index_t row = lo; row < hi; ++row)
    if (accept(row) && !picks.contains(row)) candidates.push_back(row);
  const index_t n = static_cast<index_t>(candidates.size());
  for (index_t i = 0; i < n && i < quota && !picks.full(); ++i) {
    const index_t j = i + static_cast<index_t>(uniform_below(rng, static_cast<std::uint64_t>(n - i)));
    std::swap(candidates[i], candidates[j]);
    picks.add(candidates[i], s);
  }
}

}  // namespace

std::vector<SampledRow> sample_rows(const Graph& g, const SamplingOptions& options) {
  return sample_rows(g.row_ptr(), options);
}

std::vector<SampledRow> sample_rows(std::span<const index_t> row_ptr, const SamplingOptions& options) {
  if (options.rows < 1) throw InputError(fmt::format("--rows must be at least 1, got {}", options.rows));
  if (options.hub_edge_budget < 0) throw InputError(fmt::format("--hub-edges must be at least 0, got {}", options.hub_edge_budget));
  if (row_ptr.empty()) throw InputError("scale: a row_ptr needs n_dst + 1 entries, got none");
  const index_t n = static_cast<index_t>(row_ptr.size()) - 1;
  const index_t num_edges = row_ptr.back();
  auto in_degree = [&](index_t row) { return row_ptr[static_cast<size_t>(row) + 1] - row_ptr[static_cast<size_t>(row)]; };
  const index_t k = std::min(options.rows, n);
  Picks picks(k);
  std::mt19937_64 rng(options.seed ^ 0x5ca1ab1e5eedULL);
  if (n == 0) return {};

  picks.add(0, Stratum::first_row);
  picks.add(n - 1, Stratum::last_row);

  // Rows holding an edge at position ≥ limit: the row containing edge `limit`, then any after it.
  if (num_edges > options.edge_offset_limit) {
    // The first row whose end passes the limit holds edge `limit`.
    const auto it = std::upper_bound(row_ptr.begin() + 1, row_ptr.end(), options.edge_offset_limit);
    const index_t straddling = static_cast<index_t>(it - row_ptr.begin()) - 1;
    picks.add(straddling, Stratum::past_edge_limit);
    add_random_rows(picks, straddling + 1, n, std::max<index_t>(1, k / 4) - 1, Stratum::past_edge_limit, rng,
                    [&](index_t row) { return in_degree(row) > 0; });
  }

  // The K/4 rows of largest in-degree: (degree, −row) orders rows totally, so the K/4 best are one
  // set however the rows are split. Each of `parts` row ranges keeps its own best in a min-heap (a
  // pass over every row: 1.3·10^8 at Kronecker scale 27), then the parts' best are merged.
  const index_t hubs = std::max<index_t>(1, k / 4);
  using Entry = std::pair<index_t, index_t>;  // (in-degree, −row): larger is better
  const index_t parts = worth_parallel(n) ? std::min<index_t>(64, n / kParallelMinWork + 1) : 1;
  std::vector<std::vector<Entry>> part_best(static_cast<size_t>(parts));
#pragma omp parallel for schedule(dynamic, 1) if (parts > 1)
  for (index_t p = 0; p < parts; ++p) {
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> best;
    for (index_t row = n * p / parts; row < n * (p + 1) / parts; ++row) {
      const Entry e{in_degree(row), -row};
      if (static_cast<index_t>(best.size()) < hubs) best.push(e);
      else if (e > best.top()) {
        best.pop();
        best.push(e);
      }
    }
    auto& kept = part_best[static_cast<size_t>(p)];
    while (!best.empty()) kept.push_back(best.top()), best.pop();
  }
  std::vector<Entry> hub_rows;
  for (const auto& kept : part_best) hub_rows.insert(hub_rows.end(), kept.begin(), kept.end());
  std::sort(hub_rows.begin(), hub_rows.end(), std::greater<>());
  if (static_cast<index_t>(hub_rows.size()) > hubs) hub_rows.resize(static_cast<size_t>(hubs));
  // Largest first, stopping before the row that would take the stratum past its edge budget.
  index_t hub_edges = 0, hubs_taken = 0;
  for (const auto& [degree, neg_row] : hub_rows) {
    if (hubs_taken > 0 && hub_edges + degree > options.hub_edge_budget) break;
    if (picks.add(-neg_row, Stratum::highest_in_degree)) hub_edges += degree, ++hubs_taken;
  }

  add_random_rows(picks, 0, n, std::max<index_t>(1, k / 16), Stratum::empty_row, rng,
                  [&](index_t row) { return in_degree(row) == 0; });
  add_random_rows(picks, 0, n, k - picks.size(), Stratum::random, rng, [](index_t) { return true; });

  auto rows = picks.take();
  for (auto& r : rows) r.in_degree = in_degree(r.row);
  std::sort(rows.begin(), rows.end(), [](const SampledRow& a, const SampledRow& b) { return a.row < b.row; });
  return rows;
}

std::map<Stratum, index_t> stratum_counts(const std::vector<SampledRow>& rows) {
  std::map<Stratum, index_t> counts;
  for (Stratum s : all_strata()) counts[s] = 0;
  for (const auto& r : rows) ++counts[r.stratum];
  return counts;
}

}  // namespace gnncheck::scale

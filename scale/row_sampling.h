// gnncheck/scale/row_sampling.h — which destination rows a scale check verifies, and why each.
//
// Bugs at scale live in particular rows: hub rows (softmax overflow, races, long sums), rows whose
// edges sit past the 2^31-th edge (32-bit edge offsets), the first and last rows (off-by-one
// bounds), empty rows (0/0, uninitialised outputs). sample_rows picks K distinct rows in strata, in
// this priority order, each row named by the first stratum that picked it:
//   first_row, last_row      rows 0 and n_dst − 1
//   past_edge_limit          when E > edge_offset_limit (2^31): the row holding edge 2^31, then
//                            random rows whose edges all lie past it — up to K/4
//   highest_in_degree        the rows of largest in-degree (ties: lower id first), in decreasing
//                            in-degree, up to K/4 rows and while they hold at most hub_edge_budget
//                            edges and read at most hub_source_budget distinct sources together
//                            (the largest row always)
//   empty_row                up to max(1, K/16) random rows with no in-edge
//   random                   uniform over the rows not yet picked, up to K in all
// Every choice is a function of the graph and the seed (std::mt19937_64 bits, fixtures/random.h).
//
//   auto rows = gnncheck::scale::sample_rows(g, {.rows = 1000, .seed = 7});
//   rows[0].row; to_string(rows[0].stratum);   // ascending rows
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string_view>
#include <vector>

#include "core/graph.h"

namespace gnncheck::scale {

enum class Stratum { first_row, last_row, past_edge_limit, highest_in_degree, empty_row, random };
std::string_view to_string(Stratum s);
const std::vector<Stratum>& all_strata();

// The hub stratum's budgets: the oracle's cost follows the neighbourhood's edges and its distinct
// sources, and the largest rows of a power-law graph grow in both with the graph (scale/sampling.md,
// "What each stratum is for"): a hub's in-edges come from more nearly distinct nodes in a bigger graph.
inline constexpr index_t kDefaultHubEdgeBudget = index_t{1} << 24;
inline constexpr index_t kDefaultHubSourceBudget = index_t{1} << 20;

struct SampledRow {
  index_t row = 0;
  Stratum stratum = Stratum::random;
  index_t in_degree = 0;
  index_t first_edge = 0;  // row_ptr[row]: where its edges start in the whole graph
};

struct SamplingOptions {
  index_t rows = 1000;  // K; all rows when K ≥ n_dst
  std::uint64_t seed = 1;
  index_t edge_offset_limit = index_t{1} << 31;  // the edge position 32-bit offsets cannot reach
  index_t hub_edge_budget = kDefaultHubEdgeBudget;      // edges the highest in-degree rows may hold together
  index_t hub_source_budget = kDefaultHubSourceBudget;  // distinct sources they may read together
};

// (row_ptr[r], row_ptr[r + 1]) of a row r.
struct RowExtent {
  index_t begin = 0, end = 0;
  index_t degree() const { return end - begin; }
};
// A row with its in-degree, as the hub stratum ranks them.
struct RowDegree {
  index_t row = 0, degree = 0;
  bool operator==(const RowDegree&) const = default;
};
enum class RowFilter { empty, nonempty };

// What sampling (and the neighbourhood, scale/neighbourhood.h) reads of a big graph's rows. Every
// question is about a few rows or has a short answer, so a graph held on a device answers it there
// and hands over K-sized answers, never its whole row_ptr (scale/device_scale_check.cpp). One
// sampling serves both: the strata below ask only these.
class GraphRows {
 public:
  virtual ~GraphRows() = default;
  virtual index_t rows() const = 0;   // n_dst
  virtual index_t edges() const = 0;  // row_ptr[n_dst]
  // The extent of each row of `rows` (any order, repeats allowed), in that order.
  virtual std::vector<RowExtent> extents(std::span<const index_t> rows) const = 0;
  // The row r with row_ptr[r] ≤ edge < row_ptr[r + 1], for 0 ≤ edge < edges().
  virtual index_t row_holding_edge(index_t edge) const = 0;
  // The min(count, rows()) rows of largest in-degree, ties broken by the lower row, in that order:
  // (degree, −row) orders rows totally, so the answer is one list however it is computed.
  virtual std::vector<RowDegree> largest_rows(index_t count) const = 0;
  // The rows of [lo, hi) that pass `filter`, ascending.
  virtual std::vector<index_t> rows_where(index_t lo, index_t hi, RowFilter filter) const = 0;
  // For each p, how many distinct sources the edges of rows[0], …, rows[p] read together (rows
  // distinct, any order): a count per prefix, so it is one list however it is computed.
  virtual std::vector<index_t> sources_read_together(std::span<const index_t> rows) const = 0;
};

// GraphRows of a CSR held on the host (row_ptr [n_dst + 1], col_idx [E] of sources in [0, n_src),
// kept by the caller). Without col_idx it answers everything but sources_read_together (which then
// throws std::logic_error).
class HostGraphRows final : public GraphRows {
 public:
  explicit HostGraphRows(std::span<const index_t> row_ptr, std::span<const index_t> col_idx = {}, index_t n_src = 0);
  explicit HostGraphRows(const Graph& g);
  index_t rows() const override { return static_cast<index_t>(row_ptr_.size()) - 1; }
  index_t edges() const override { return row_ptr_.back(); }
  std::vector<RowExtent> extents(std::span<const index_t> rows) const override;
  index_t row_holding_edge(index_t edge) const override;
  std::vector<RowDegree> largest_rows(index_t count) const override;
  std::vector<index_t> rows_where(index_t lo, index_t hi, RowFilter filter) const override;
  std::vector<index_t> sources_read_together(std::span<const index_t> rows) const override;

 private:
  std::span<const index_t> row_ptr_, col_idx_;
  index_t n_src_ = 0;
};

// Distinct rows in ascending order. Throws InputError when options.rows < 1 or a budget is negative.
std::vector<SampledRow> sample_rows(const GraphRows& g, const SamplingOptions& options);
std::vector<SampledRow> sample_rows(const Graph& g, const SamplingOptions& options);  // through HostGraphRows

// The rows' ids, in order.
std::vector<index_t> row_ids(const std::vector<SampledRow>& rows);

// How many rows each stratum holds (every stratum listed, 0 included).
std::map<Stratum, index_t> stratum_counts(const std::vector<SampledRow>& rows);

}  // namespace gnncheck::scale

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
//                            edges (the largest row always)
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

// The hub stratum's edge budget: the oracle's cost follows the sampled rows' edges, and the largest
// rows of a power-law graph grow with it (scale/README.md, "Sampled rows").
inline constexpr index_t kDefaultHubEdgeBudget = index_t{1} << 24;

struct SampledRow {
  index_t row = 0;
  Stratum stratum = Stratum::random;
  index_t in_degree = 0;
};

struct SamplingOptions {
  index_t rows = 1000;  // K; all rows when K ≥ n_dst
  std::uint64_t seed = 1;
  index_t edge_offset_limit = index_t{1} << 31;  // the edge position 32-bit offsets cannot reach
  index_t hub_edge_budget = kDefaultHubEdgeBudget;  // edges the highest in-degree rows may hold together
};

// Distinct rows in ascending order. Throws InputError when options.rows < 1.
std::vector<SampledRow> sample_rows(const Graph& g, const SamplingOptions& options);
// The same from the CSR offsets alone (row_ptr [n_dst + 1]), for a graph that lives on a device.
std::vector<SampledRow> sample_rows(std::span<const index_t> row_ptr, const SamplingOptions& options);

// How many rows each stratum holds (every stratum listed, 0 included).
std::map<Stratum, index_t> stratum_counts(const std::vector<SampledRow>& rows);

}  // namespace gnncheck::scale

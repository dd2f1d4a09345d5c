// gnncheck/scale/neighbourhood.h — the small case that determines a big case's sampled rows.
//
// With an output gradient that is zero outside a set S of destination rows (and, for edge outputs,
// outside the edges of those rows), every output row in S and every gradient of the supported
// targets depends only on S's neighbourhood: the rows of S with their edges in the same order, the
// source rows those edges read, and the values on those edges (scale/README.md derives it per
// target). restrict_to_rows builds exactly that neighbourhood as a Case of its own — rows S in
// ascending order, sources compacted in order of first use — so the float64 oracle and the
// tolerance model of checks/ evaluate it like any other case, at a cost that grows with the edges
// of S, not with the graph. The maps say where each of its elements lives in the big case; every
// gradient element outside them is exactly zero.
//
// The symmetric normalization D_dst^-½ A D_src^-½ also reads each source's out-degree in the WHOLE
// graph. The neighbourhood then carries one padding destination row, last, with out_degree(j) −
// (uses of j in S) edges to each source j it reads, and a zero output gradient: the degrees are
// the big graph's, the padding row adds no term to any gradient, and its outputs are not compared.
// The GCN layer with self-loops aggregates over A + I: the neighbourhood holds each sampled row's
// self-loop as an explicit last edge of its row and sets self_loops = false, so the aggregated
// graph (and its degrees) is the big case's restricted; weight and bias gradients are compared whole.
//
//   auto rows = gnncheck::scale::sample_rows(*c.graph, {.rows = 1000});
//   c.grad_outputs = gnncheck::scale::sampled_grad_outputs(c, row_ids(rows));
//   gnncheck::scale::Neighbourhood nb = gnncheck::scale::restrict_to_rows(c, row_ids(rows));
//   gnncheck::Result exact = gnncheck::oracle::evaluate(nb.sub);  // = the big case's, on those rows
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/case.h"
#include "oracle/targets.h"
#include "scale/row_sampling.h"

namespace gnncheck::scale {

// The targets a scale check supports, in the order `gnncheck scale` lists them.
const std::vector<std::string>& supported_targets();
bool is_supported_target(const std::string& target);
// The entry of a supported target (its receptive field declared). Throws InputError naming --target
// and listing supported_targets() when `target` is not one (the catalogue's own message when it
// names no target at all).
const oracle::TargetDef& supported_target(const std::string& target);
// The same InputError for an entry the scale check does not support.
void require_supported(const oracle::TargetDef& target);

// The big case's output gradients: `c.grad_outputs` (or, when it has none, fresh values from the
// case's seed) kept on the rows `rows` (ascending, distinct) — on the edges of those rows for edge
// outputs — and zero everywhere else.
TensorMap sampled_grad_outputs(const Case& c, std::span<const index_t> rows);

struct Neighbourhood {
  Case sub;                    // target, attributes and seed of the big case; graph, inputs and grad_outputs restricted
  std::vector<index_t> rows;   // sub destination i -> big row (the padding row, when present, is not listed)
  std::vector<index_t> cols;   // sub source j -> big source
  std::vector<index_t> edges;  // sub edge k -> big edge id (the padding row's edges are not listed)
  index_t padding_edges = 0;   // edges of the padding row (symmetric normalization only)
  index_t padding_rows = 0;    // 1 with the padding row, else 0
};

// Throws InputError when a case of `target` with `attributes` on `g` cannot be restricted to rows:
// an unsupported target, GAT with attention dropout, gcn/normalized_spmm with source_degree = in, a layer reading own features with n_dst > n_src.
void require_restrictable(const oracle::TargetDef& target, const Attributes& attributes, const Graph& g);

void require_restrictable(const oracle::TargetDef& target, const Attributes& attributes, index_t n_dst, index_t n_src,
                          const std::string& graph_summary);

// Throws InputError as require_restrictable does, and for rows that are not ascending, distinct and in range.
Neighbourhood restrict_to_rows(const Case& c, std::span<const index_t> rows);

// Big source ids renumbered 0…m−1 in order of first use: `first` (distinct ids, numbered first, in
// order), then `entries` in order. local[p] is entries[p]'s new number and sources[j] the big id of
// new number j — what one serial pass with a map gives, computed in parallel (each id's first
// position by an atomic minimum, then a prefix count of the first positions). InternalError for an
// id outside [0, n_src).
struct FirstUseNumbering {
  std::vector<index_t> local;    // [entries.size()]
  std::vector<index_t> sources;  // [m]
};
FirstUseNumbering number_by_first_use(std::span<const index_t> first, std::span<const index_t> entries, index_t n_src);

// What restricting to rows reads of the big graph, so that a graph held elsewhere (on a device)
// needs to hand over only the sampled rows' offsets and columns, and the symmetric norm's source
// degrees — K × degree values, never one per node.
struct SampledGraph {
  index_t n_dst = 0, n_src = 0;
  std::string summary;                        // for messages
  std::span<const RowExtent> row_extents;     // (row_ptr[r], row_ptr[r + 1]) of each sampled row, in order
  std::span<const index_t> sampled_columns;   // the columns of the sampled rows, concatenated in row order
  // The whole graph's out-degree of each source listed, in order (symmetric norm only).
  std::function<std::vector<index_t>(std::span<const index_t>)> out_degrees;
  // number_by_first_use's answer for (first, entries, n_src), computed where the graph lives (its
  // map has one entry per source of the whole graph); number_by_first_use on the host when empty.
  std::function<FirstUseNumbering(std::span<const index_t> first, std::span<const index_t> entries, index_t n_src)> number_sources;
};

// The neighbourhood's graph, maps, target, attributes and seed; its tensors are left to the caller
// (restrict_to_rows fills them from a host case; a device check gathers them on the device).
Neighbourhood restrict_graph_to_rows(const oracle::TargetDef& target, const Attributes& attributes, const SampledGraph& g,
                                     std::span<const index_t> rows, std::uint64_t seed);

// Rows `rows` of t (row i of the result = row rows[i] of t), then `zero_rows` rows of zeros.
Tensor gather_rows(const Tensor& t, std::span<const index_t> rows, index_t zero_rows = 0);

// Where the neighbourhood's rows of a node or edge tensor lie in the big case, and how many zero
// rows follow them (the padding row, or its edges). InputError for CSC-ordered tensors; parameters
// are taken whole (InternalError here).
struct NeighbourhoodRows {
  std::span<const index_t> big_rows;
  index_t zero_rows = 0;
};
NeighbourhoodRows neighbourhood_rows(const Neighbourhood& nb, oracle::TensorKind kind, const std::string& name);

}  // namespace gnncheck::scale

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

#include <span>
#include <string>
#include <vector>

#include "oracle/case.h"
#include "scale/row_sampling.h"

namespace gnncheck::scale {

// The targets a scale check supports, in the order `gnncheck scale` lists them.
const std::vector<std::string>& supported_targets();
bool is_supported_target(const std::string& target);
// Throws InputError naming --target and listing supported_targets() when `target` is not one.
void require_supported_target(const std::string& target);

std::vector<index_t> row_ids(const std::vector<SampledRow>& rows);

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
};

// Throws InputError when a case of `target` with `attributes` on `g` cannot be restricted to rows:
// an unsupported target, GAT with attention dropout, gcn/normalized_spmm with source_degree = in, a layer reading own features with n_dst > n_src.
void require_restrictable(const std::string& target, const Attributes& attributes, const Graph& g);

// Throws InputError as require_restrictable does, and for rows that are not ascending, distinct and in range.
Neighbourhood restrict_to_rows(const Case& c, std::span<const index_t> rows);

}  // namespace gnncheck::scale

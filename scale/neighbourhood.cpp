#include "scale/neighbourhood.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::scale {

const std::vector<std::string>& supported_targets() {
  static const std::vector<std::string> targets = {"spmm",         "spmm_ve", "normalized_spmm", "sddmm_dot", "sddmm_add",
                                                   "edge_softmax", "gcn",     "gin",             "gat",       "sage",
                                                   "agnn"};
  return targets;
}

bool is_supported_target(const std::string& target) {
  const auto& t = supported_targets();
  return std::find(t.begin(), t.end(), target) != t.end();
}

void require_supported_target(const std::string& target) {
  if (is_supported_target(target)) return;
  oracle::find_target(target);  // an unknown name gets the catalogue's message
  throw InputError(fmt::format("--target {}: not supported by gnncheck scale; supported targets: {}", target,
                               fmt::join(supported_targets(), ", ")));
}

std::vector<index_t> row_ids(const std::vector<SampledRow>& rows) {
  std::vector<index_t> ids;
  ids.reserve(rows.size());
  for (const auto& r : rows) ids.push_back(r.row);
  return ids;
}

namespace {

void check_rows(index_t n_dst, std::span<const index_t> rows) {
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] < 0 || rows[i] >= n_dst)
      throw InputError(fmt::format("sampled row {} is outside the graph's {} destination rows", rows[i], n_dst));
    if (i > 0 && rows[i] <= rows[i - 1])
      throw InputError(fmt::format("sampled rows must be ascending and distinct ({} follows {})", rows[i], rows[i - 1]));
  }
}

// Copies the rows `which` of `t` (row i of the result = row which[i] of t); `extra` zero rows follow.
Tensor gather_rows(const Tensor& t, std::span<const index_t> which, index_t extra = 0) {
  std::vector<index_t> shape = t.shape();
  const index_t width = t.row_size();
  shape[0] = static_cast<index_t>(which.size()) + extra;
  Tensor out(shape);
  for (size_t i = 0; i < which.size(); ++i)
    std::copy_n(t.data() + which[i] * width, width, out.data() + static_cast<index_t>(i) * width);
  return out;
}

}  // namespace

TensorMap sampled_grad_outputs(const Case& c, std::span<const index_t> rows) {
  if (!c.graph) throw InputError("scale: the case has no graph");
  const Graph& g = *c.graph;
  check_rows(g.n_dst(), rows);
  const auto& def = oracle::find_target(c.target);
  TensorMap grads = c.grad_outputs;
  if (grads.empty()) {
    const auto shapes = def.output_shapes(g, oracle::with_defaults(def.spec, c.attributes));
    for (const auto& out : def.spec.outputs)
      grads[out.name] = oracle::random_tensor(shapes.at(out.name), c.seed, "grad_" + out.name);
  }
  const auto row_ptr = g.row_ptr();
  for (const auto& out : def.spec.outputs) {
    Tensor& t = grads.at(out.name);
    const index_t width = t.row_size();
    Tensor kept(t.shape());
    for (index_t row : rows) {
      index_t begin = row, end = row + 1;  // node rows
      if (out.kind == oracle::TensorKind::edges) begin = row_ptr[row], end = row_ptr[row + 1];
      else if (out.kind != oracle::TensorKind::dst_nodes)
        throw InputError(fmt::format("scale: output '{}' of '{}' is not a destination-node or edge tensor", out.name, c.target));
      std::copy(t.data() + begin * width, t.data() + end * width, kept.data() + begin * width);
    }
    t = std::move(kept);
  }
  return grads;
}

void require_restrictable(const std::string& target, const Attributes& attributes, index_t n_dst, index_t n_src,
                          const std::string& graph_summary) {
  require_supported_target(target);
  const auto& def = oracle::find_target(target);
  const Attributes attrs = oracle::with_defaults(def.spec, attributes);
  if (target == "gat" && attrs.get_double("attn_dropout") > 0.0)
    throw InputError("target 'gat' with attn_dropout > 0: the dropout mask is drawn per edge id, which the sampled rows' "
                     "neighbourhood renumbers; a scale check runs GAT without attention dropout");
  if ((target == "gcn" || target == "normalized_spmm") && attrs.get_string("norm") == "symmetric" &&
      attrs.get_string("source_degree") == "in")
    throw InputError(fmt::format("target '{}' with source_degree = in scales each source by its own in-degree, a row the "
                                 "sampled neighbourhood does not carry; a scale check runs it with source_degree = out",
                                 target));
  const bool own_features = def.spec.is_layer && (target != "gcn" || attrs.get_bool("self_loops"));
  if (own_features && n_dst > n_src)
    throw InputError(fmt::format("target '{}' reads destination i's own features as source i, which needs n_dst ≤ n_src; got {}",
                                 target, graph_summary));
}

void require_restrictable(const std::string& target, const Attributes& attributes, const Graph& g) {
  require_restrictable(target, attributes, g.n_dst(), g.n_src(), g.summary());
}

Neighbourhood restrict_graph_to_rows(const std::string& target, const Attributes& attributes, const SampledGraph& g,
                                     std::span<const index_t> rows, std::uint64_t seed) {
  require_restrictable(target, attributes, g.n_dst, g.n_src, g.summary);
  check_rows(g.n_dst, rows);
  if (static_cast<index_t>(g.row_ptr.size()) != g.n_dst + 1)
    throw InternalError(fmt::format("scale: row_ptr has {} entries for {} rows", g.row_ptr.size(), g.n_dst));
  const auto& def = oracle::find_target(target);
  const Attributes attrs = oracle::with_defaults(def.spec, attributes);
  // A layer with self-loops aggregates over A + I, (i, i) appended to every row (the block
  // convention: destination i is source i). The neighbourhood carries those self-loops as explicit
  // edges and asks the layer for none, so it needs no square shape.
  const bool explicit_self_loops = target == "gcn" && attrs.get_bool("self_loops");
  const bool pad_degrees = (target == "normalized_spmm" || target == "gcn") && attrs.get_string("norm") == "symmetric";
  // The other layers read destination i's own features as source i (GIN's (1+ε)·x_i, SAGE's
  // x_i·W_self, GAT's and AGNN's self-loops): the neighbourhood keeps that convention by giving the
  // sampled rows the first sources, in order. None of them reads a degree of the sources.
  const bool block = def.spec.is_layer && target != "gcn";
  if (pad_degrees || explicit_self_loops)
    for (const auto& slots : {def.spec.inputs, def.spec.outputs})
      for (const auto& t : slots)
        if (t.kind == oracle::TensorKind::edges)
          throw InternalError(fmt::format("scale: '{}' has an edge tensor, which padding or explicit self-loops would misalign", target));

  Neighbourhood nb;
  nb.rows.assign(rows.begin(), rows.end());
  const auto row_ptr = g.row_ptr;
  // big source -> sub source, −1 while unseen: a dense map (4 bytes per source of the big graph)
  // because a hub-heavy neighbourhood looks up 10^8 columns, where a hash map's misses dominated.
  std::vector<std::int32_t> local_col(static_cast<size_t>(g.n_src), -1);
  std::vector<index_t> uses;  // sub source -> entries in its column so far
  std::vector<index_t> sub_row_ptr{0};
  std::vector<index_t> sub_col;
  sub_col.reserve(g.sampled_columns.size() + (explicit_self_loops ? rows.size() : 0));
  nb.edges.reserve(g.sampled_columns.size());
  auto local_of = [&](index_t big_col) {
    if (big_col < 0 || big_col >= g.n_src)
      throw InternalError(fmt::format("scale: column {} outside the graph's {} sources", big_col, g.n_src));
    std::int32_t& local = local_col[static_cast<size_t>(big_col)];
    if (local < 0) {
      if (nb.cols.size() >= static_cast<size_t>(std::numeric_limits<std::int32_t>::max()))
        throw InputError("scale: the neighbourhood would read 2^31 or more sources; sample fewer rows (--rows)");
      local = static_cast<std::int32_t>(nb.cols.size());
      nb.cols.push_back(big_col);
      uses.push_back(0);
    }
    return static_cast<index_t>(local);
  };
  auto add_entry = [&](index_t big_col) {
    const index_t local = local_of(big_col);
    ++uses[static_cast<size_t>(local)];
    sub_col.push_back(local);
  };
  if (block)
    for (index_t row : rows) local_of(row);
  size_t next_column = 0;  // into g.sampled_columns
  for (index_t row : rows) {
    for (index_t e = row_ptr[row]; e < row_ptr[row + 1]; ++e) {
      if (next_column >= g.sampled_columns.size())
        throw InternalError(fmt::format("scale: {} sampled columns for rows holding more edges", g.sampled_columns.size()));
      add_entry(g.sampled_columns[next_column++]);
      nb.edges.push_back(e);
    }
    if (explicit_self_loops) add_entry(row);
    sub_row_ptr.push_back(static_cast<index_t>(sub_col.size()));
  }
  if (next_column != g.sampled_columns.size())
    throw InternalError(fmt::format("scale: {} sampled columns for rows holding {} edges", g.sampled_columns.size(), next_column));
  const index_t n_cols = static_cast<index_t>(nb.cols.size());
  if (pad_degrees) {
    // Each source's column in the aggregated graph of the big case: its out-degree, plus its
    // self-loop when the layer adds one and the source is also a destination.
    for (index_t j = 0; j < n_cols; ++j) {
      const index_t big_col = nb.cols[static_cast<size_t>(j)];
      const index_t full = g.out_degree(big_col) + (explicit_self_loops && big_col < g.n_dst ? 1 : 0);
      for (index_t k = uses[static_cast<size_t>(j)]; k < full; ++k) sub_col.push_back(j);
    }
    nb.padding_edges = static_cast<index_t>(sub_col.size()) - sub_row_ptr.back();
    sub_row_ptr.push_back(static_cast<index_t>(sub_col.size()));
  }
  nb.padding_rows = pad_degrees ? 1 : 0;
  const index_t sub_n_dst = static_cast<index_t>(rows.size()) + nb.padding_rows;
  nb.sub.graph = std::make_shared<const Graph>(Graph::from_csr(sub_n_dst, n_cols, std::move(sub_row_ptr), std::move(sub_col)));
  nb.sub.target = target;
  nb.sub.attributes = attributes;
  if (explicit_self_loops) nb.sub.attributes.set("self_loops", false);
  nb.sub.seed = seed;
  return nb;
}

NeighbourhoodRows neighbourhood_rows(const Neighbourhood& nb, oracle::TensorKind kind, const std::string& name) {
  switch (kind) {
    case oracle::TensorKind::dst_nodes: return {nb.rows, nb.padding_rows};
    case oracle::TensorKind::src_nodes: return {nb.cols, 0};
    case oracle::TensorKind::edges: return {nb.edges, nb.padding_edges};
    case oracle::TensorKind::parameter:
      throw InternalError(fmt::format("scale: parameter '{}' is taken whole, not by rows", name));
    case oracle::TensorKind::edges_csc: break;
  }
  throw InputError(fmt::format("scale: tensor '{}' of '{}' is in CSC order, which a row restriction does not cover", name, nb.sub.target));
}

Neighbourhood restrict_to_rows(const Case& c, std::span<const index_t> rows) {
  if (!c.graph) throw InputError("scale: the case has no graph");
  const Graph& g = *c.graph;
  require_restrictable(c.target, c.attributes, g);
  check_rows(g.n_dst(), rows);
  const auto row_ptr = g.row_ptr();
  const auto col_idx = g.col_idx();
  std::vector<index_t> columns;
  for (index_t row : rows) columns.insert(columns.end(), col_idx.begin() + row_ptr[row], col_idx.begin() + row_ptr[row + 1]);
  const SampledGraph sampled{g.n_dst(), g.n_src(), g.summary(), row_ptr, columns, [&g](index_t j) { return g.out_degree(j); }};
  Neighbourhood nb = restrict_graph_to_rows(c.target, c.attributes, sampled, rows, c.seed);
  const auto& def = oracle::find_target(c.target);

  auto restrict = [&](const Tensor& t, oracle::TensorKind kind, const std::string& name) -> Tensor {
    if (kind == oracle::TensorKind::parameter) return t;
    const NeighbourhoodRows where = neighbourhood_rows(nb, kind, name);
    return gather_rows(t, where.big_rows, where.zero_rows);
  };
  for (const auto& in : def.spec.inputs) {
    const TensorMap& from = in.kind == oracle::TensorKind::parameter ? c.parameters : c.inputs;
    TensorMap& to = in.kind == oracle::TensorKind::parameter ? nb.sub.parameters : nb.sub.inputs;
    const auto it = from.find(in.name);
    if (it == from.end() && in.kind == oracle::TensorKind::parameter) continue;  // optional (a layer without bias)
    if (it == from.end()) throw InputError(fmt::format("scale: the case lacks input '{}' of '{}'", in.name, c.target));
    to[in.name] = restrict(it->second, in.kind, in.name);
  }
  for (const auto& out : def.spec.outputs) {
    const auto it = c.grad_outputs.find(out.name);
    if (it == c.grad_outputs.end()) continue;
    nb.sub.grad_outputs[out.name] = restrict(it->second, out.kind, out.name);  // padding rows and edges get 0
  }
  return nb;
}

}  // namespace gnncheck::scale

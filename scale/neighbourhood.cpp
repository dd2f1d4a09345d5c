#include "scale/neighbourhood.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/parallel.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::scale {

const std::vector<std::string>& supported_targets() {
  static const std::vector<std::string> targets = [] {
    std::vector<std::string> names;
    for (const auto& def : oracle::all_targets())
      if (def.receptive_field) names.push_back(def.spec.name);
    return names;
  }();
  return targets;
}

bool is_supported_target(const std::string& target) {
  const auto& t = supported_targets();
  return std::find(t.begin(), t.end(), target) != t.end();
}

void require_supported(const oracle::TargetDef& target) {
  if (!target.receptive_field)
    throw InputError(fmt::format("--target {}: not supported by gnncheck scale; supported targets: {}", target.spec.name,
                                 fmt::join(supported_targets(), ", ")));
}

const oracle::TargetDef& supported_target(const std::string& target) {
  const oracle::TargetDef& def = oracle::find_target(target);  // an unknown name gets the catalogue's message
  require_supported(def);
  return def;
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

}  // namespace

Tensor gather_rows(const Tensor& t, std::span<const index_t> which, index_t extra) {
  std::vector<index_t> shape = t.shape();
  const index_t width = t.row_size();
  shape[0] = static_cast<index_t>(which.size()) + extra;
  Tensor out(shape);
  const index_t n = static_cast<index_t>(which.size());
#pragma omp parallel for schedule(static) if (worth_parallel(n * width))
  for (index_t i = 0; i < n; ++i) std::copy_n(t.data() + which[i] * width, width, out.data() + i * width);
  return out;
}

TensorMap sampled_grad_outputs(const Case& c, std::span<const index_t> rows) {
  if (!c.graph) throw InputError("scale: the case has no graph");
  const Graph& g = *c.graph;
  check_rows(g.n_dst(), rows);
  const auto& def = oracle::entry_of(c);
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
    if (out.kind != oracle::TensorKind::edges && out.kind != oracle::TensorKind::dst_nodes)
      throw InputError(fmt::format("scale: output '{}' of '{}' is not a destination-node or edge tensor", out.name, c.target));
    const bool edges = out.kind == oracle::TensorKind::edges;
    Tensor kept(t.shape());
#pragma omp parallel for schedule(dynamic, 16) if (worth_parallel(static_cast<index_t>(rows.size()) * width))
    for (size_t i = 0; i < rows.size(); ++i) {
      const index_t row = rows[i];
      const index_t begin = edges ? row_ptr[row] : row, end = edges ? row_ptr[row + 1] : row + 1;
      std::copy(t.data() + begin * width, t.data() + end * width, kept.data() + begin * width);
    }
    t = std::move(kept);
  }
  return grads;
}

void require_restrictable(const oracle::TargetDef& def, const Attributes& attributes, index_t n_dst, index_t n_src,
                          const std::string& graph_summary) {
  const std::string& target = def.spec.name;
  require_supported(def);
  const Attributes attrs = oracle::with_defaults(def.spec, attributes);
  if (oracle::dropout_probability(def, attrs) > 0.0)
    throw InputError(fmt::format("target '{}' with {} > 0: the dropout mask is drawn per edge id, which the sampled rows' "
                                 "neighbourhood renumbers; a scale check runs it with {} = 0",
                                 target, def.dropout.probability_attribute, def.dropout.probability_attribute));
  const oracle::ReceptiveField field = def.receptive_field(attrs);
  if (field.source_degrees == oracle::SourceDegrees::own_in_degree)
    throw InputError(fmt::format("target '{}' with source_degree = in scales each source by its own in-degree, a row the "
                                 "sampled neighbourhood does not carry; a scale check runs it with source_degree = out",
                                 target));
  const bool own_features = field.own_features || !field.self_loops_attribute.empty();
  if (own_features && n_dst > n_src)
    throw InputError(fmt::format("target '{}' reads destination i's own features as source i, which needs n_dst ≤ n_src; got {}",
                                 target, graph_summary));
}

void require_restrictable(const oracle::TargetDef& target, const Attributes& attributes, const Graph& g) {
  require_restrictable(target, attributes, g.n_dst(), g.n_src(), g.summary());
}

FirstUseNumbering number_by_first_use(std::span<const index_t> first, std::span<const index_t> entries, index_t n_src) {
  const index_t n_first = static_cast<index_t>(first.size());
  const index_t n = n_first + static_cast<index_t>(entries.size());
  auto at = [&](index_t p) { return p < n_first ? first[p] : entries[p - n_first]; };  // the combined sequence
  // first_position[j]: the earliest position of big id j (n: unused), then, once numbered, j's new
  // number. One entry per source of the big graph (8 bytes per node: 1 GiB at Kronecker scale 27),
  // filled in parallel, never zeroed first.
  const std::unique_ptr<index_t[]> first_position_storage(new index_t[static_cast<size_t>(n_src)]);
  const std::span<index_t> first_position(first_position_storage.get(), static_cast<size_t>(n_src));
#pragma omp parallel for schedule(static) if (worth_parallel(n_src))
  for (index_t j = 0; j < n_src; ++j) first_position[static_cast<size_t>(j)] = n;
  bool in_range = true;
#pragma omp parallel for schedule(static) reduction(&& : in_range) if (worth_parallel(n))
  for (index_t p = 0; p < n; ++p) {
    const index_t j = at(p);
    if (j < 0 || j >= n_src) {
      in_range = false;
      continue;
    }
    std::atomic_ref<index_t> slot(first_position[static_cast<size_t>(j)]);
    index_t seen = slot.load(std::memory_order_relaxed);
    while (p < seen && !slot.compare_exchange_weak(seen, p, std::memory_order_relaxed)) {
    }
  }
  if (!in_range)
    for (index_t p = 0; p < n; ++p)
      if (at(p) < 0 || at(p) >= n_src) throw InternalError(fmt::format("scale: column {} outside the graph's {} sources", at(p), n_src));
  // Number the first positions in order: count per chunk, then each chunk numbers its own.
  const index_t chunks = worth_parallel(n) ? 256 : 1;
  auto chunk_begin = [&](index_t k) { return n * k / chunks; };
  auto is_first = [&](index_t p) { return first_position[static_cast<size_t>(at(p))] == p; };
  std::vector<index_t> numbered_before(static_cast<size_t>(chunks) + 1, 0);
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (index_t k = 0; k < chunks; ++k)
    for (index_t p = chunk_begin(k); p < chunk_begin(k + 1); ++p) numbered_before[static_cast<size_t>(k) + 1] += is_first(p);
  for (index_t k = 0; k < chunks; ++k) numbered_before[static_cast<size_t>(k) + 1] += numbered_before[static_cast<size_t>(k)];
  FirstUseNumbering out;
  out.sources.resize(static_cast<size_t>(numbered_before.back()));
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (index_t k = 0; k < chunks; ++k) {
    index_t next = numbered_before[static_cast<size_t>(k)];
    for (index_t p = chunk_begin(k); p < chunk_begin(k + 1); ++p) {
      const index_t j = at(p);
      if (first_position[static_cast<size_t>(j)] != p) continue;
      out.sources[static_cast<size_t>(next)] = j;
      ++next;
    }
  }
#pragma omp parallel for schedule(static) if (worth_parallel(out.sources.size()))
  for (index_t id = 0; id < static_cast<index_t>(out.sources.size()); ++id) first_position[static_cast<size_t>(out.sources[id])] = id;
  out.local.resize(entries.size());
#pragma omp parallel for schedule(static) if (worth_parallel(static_cast<index_t>(entries.size())))
  for (index_t p = 0; p < static_cast<index_t>(entries.size()); ++p) out.local[p] = first_position[static_cast<size_t>(entries[p])];
  return out;
}

Neighbourhood restrict_graph_to_rows(const oracle::TargetDef& def, const Attributes& attributes, const SampledGraph& g,
                                     std::span<const index_t> rows, std::uint64_t seed) {
  require_restrictable(def, attributes, g.n_dst, g.n_src, g.summary);
  check_rows(g.n_dst, rows);
  if (g.row_extents.size() != rows.size())
    throw InternalError(fmt::format("scale: {} row extents for {} sampled rows", g.row_extents.size(), rows.size()));
  const Attributes attrs = oracle::with_defaults(def.spec, attributes);
  // A layer with self-loops aggregates over A + I, (i, i) appended to every row (the block
  // convention: destination i is source i). The neighbourhood carries those self-loops as explicit
  // edges and asks the layer for none, so it needs no square shape.
  const oracle::ReceptiveField field = def.receptive_field(attrs);
  const bool explicit_self_loops = !field.self_loops_attribute.empty();
  const bool pad_degrees = field.source_degrees != oracle::SourceDegrees::none;
  // Layers that read destination i's own features as source i (GIN's (1+ε)·x_i, SAGE's x_i·W_self,
  // GAT's and AGNN's self-loops): the neighbourhood keeps that convention by giving the sampled rows
  // the first sources, in order.
  const bool block = field.own_features;
  if (pad_degrees || explicit_self_loops)
    for (const auto& slots : {def.spec.inputs, def.spec.outputs})
      for (const auto& t : slots)
        if (t.kind == oracle::TensorKind::edges)
          throw InternalError(fmt::format("scale: '{}' has an edge tensor, which padding or explicit self-loops would misalign", def.spec.name));

  Neighbourhood nb;
  nb.rows.assign(rows.begin(), rows.end());
  const index_t k = static_cast<index_t>(rows.size());
  // Where each sampled row's columns start in g.sampled_columns and its entries in the sub graph.
  std::vector<index_t> column_start(static_cast<size_t>(k) + 1, 0), sub_row_ptr(static_cast<size_t>(k) + 1, 0);
  for (index_t i = 0; i < k; ++i) {
    const index_t degree = g.row_extents[static_cast<size_t>(i)].degree();
    column_start[i + 1] = column_start[i] + degree;
    sub_row_ptr[i + 1] = sub_row_ptr[i] + degree + (explicit_self_loops ? 1 : 0);
  }
  if (column_start.back() != static_cast<index_t>(g.sampled_columns.size()))
    throw InternalError(fmt::format("scale: {} sampled columns for rows holding {} edges", g.sampled_columns.size(), column_start.back()));
  // Every entry of the sub graph, as a big source (the sampled row itself for an explicit self-loop),
  // and the big edge each non-padding, non-self-loop entry is.
  std::vector<index_t> entries(static_cast<size_t>(sub_row_ptr.back()));
  nb.edges.resize(g.sampled_columns.size());
#pragma omp parallel for schedule(dynamic, 16) if (worth_parallel(static_cast<index_t>(entries.size())))
  for (index_t i = 0; i < k; ++i) {
    const index_t degree = column_start[i + 1] - column_start[i];
    std::copy_n(g.sampled_columns.begin() + column_start[i], degree, entries.begin() + sub_row_ptr[i]);
    std::iota(nb.edges.begin() + column_start[i], nb.edges.begin() + column_start[i + 1], g.row_extents[static_cast<size_t>(i)].begin);
    if (explicit_self_loops) entries[static_cast<size_t>(sub_row_ptr[i] + degree)] = rows[i];
  }
  const std::span<const index_t> first = block ? rows : std::span<const index_t>();
  FirstUseNumbering numbering = g.number_sources ? g.number_sources(first, entries, g.n_src) : number_by_first_use(first, entries, g.n_src);
  if (numbering.local.size() != entries.size())
    throw InternalError(fmt::format("scale: {} source numbers for {} entries", numbering.local.size(), entries.size()));
  entries = {};
  nb.cols = std::move(numbering.sources);
  std::vector<index_t> sub_col = std::move(numbering.local);
  const index_t n_cols = static_cast<index_t>(nb.cols.size());
  if (pad_degrees) {
    // Each source's column in the aggregated graph of the big case: its out-degree, plus its
    // self-loop when the layer adds one and the source is also a destination. The padding row holds
    // the missing entries of every column, columns in order.
    std::vector<index_t> uses(static_cast<size_t>(n_cols), 0);
#pragma omp parallel for schedule(static) if (worth_parallel(static_cast<index_t>(sub_col.size())))
    for (size_t p = 0; p < sub_col.size(); ++p) std::atomic_ref<index_t>(uses[static_cast<size_t>(sub_col[p])]).fetch_add(1, std::memory_order_relaxed);
    std::vector<index_t> padding_start(static_cast<size_t>(n_cols) + 1, 0);
    const std::vector<index_t> out_degree = g.out_degrees(nb.cols);
    if (static_cast<index_t>(out_degree.size()) != n_cols)
      throw InternalError(fmt::format("scale: {} out-degrees for {} sources", out_degree.size(), n_cols));
    for (index_t j = 0; j < n_cols; ++j) {
      const index_t big_col = nb.cols[static_cast<size_t>(j)];
      const index_t full = out_degree[static_cast<size_t>(j)] + (explicit_self_loops && big_col < g.n_dst ? 1 : 0);
      padding_start[j + 1] = padding_start[j] + std::max<index_t>(full - uses[static_cast<size_t>(j)], 0);
    }
    const size_t before = sub_col.size();
    sub_col.resize(before + static_cast<size_t>(padding_start.back()));
#pragma omp parallel for schedule(dynamic, 1024) if (worth_parallel(padding_start.back()))
    for (index_t j = 0; j < n_cols; ++j)
      std::fill(sub_col.begin() + static_cast<std::ptrdiff_t>(before) + padding_start[j],
                sub_col.begin() + static_cast<std::ptrdiff_t>(before) + padding_start[j + 1], j);
    nb.padding_edges = padding_start.back();
    sub_row_ptr.push_back(static_cast<index_t>(sub_col.size()));
  }
  nb.padding_rows = pad_degrees ? 1 : 0;
  const index_t sub_n_dst = k + nb.padding_rows;
  nb.sub.graph = std::make_shared<const Graph>(Graph::from_csr(sub_n_dst, n_cols, std::move(sub_row_ptr), std::move(sub_col)));
  oracle::set_target(nb.sub, def);
  nb.sub.attributes = attributes;
  if (explicit_self_loops) nb.sub.attributes.set(field.self_loops_attribute, false);
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
  require_restrictable(oracle::entry_of(c), c.attributes, g);
  check_rows(g.n_dst(), rows);
  const auto row_ptr = g.row_ptr();
  const auto col_idx = g.col_idx();
  std::vector<index_t> start(rows.size() + 1, 0);
  for (size_t i = 0; i < rows.size(); ++i) start[i + 1] = start[i] + g.in_degree(rows[i]);
  std::vector<index_t> columns(static_cast<size_t>(start.back()));
#pragma omp parallel for schedule(dynamic, 16) if (worth_parallel(start.back()))
  for (size_t i = 0; i < rows.size(); ++i)
    std::copy(col_idx.begin() + row_ptr[rows[i]], col_idx.begin() + row_ptr[rows[i] + 1], columns.begin() + start[i]);
  const std::vector<RowExtent> extents = HostGraphRows(row_ptr).extents(rows);
  auto out_degrees = [&g](std::span<const index_t> sources) {
    std::vector<index_t> d(sources.size());
    for (size_t j = 0; j < sources.size(); ++j) d[j] = g.out_degree(sources[j]);
    return d;
  };
  const SampledGraph sampled{g.n_dst(), g.n_src(), g.summary(), extents, columns, out_degrees, {}};  // numbered on the host
  Neighbourhood nb = restrict_graph_to_rows(oracle::entry_of(c), c.attributes, sampled, rows, c.seed);
  const auto& def = oracle::entry_of(c);

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

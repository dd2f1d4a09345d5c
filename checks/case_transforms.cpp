#include "checks/case_transforms.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "checks/stored_values.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/splitmix64.h"
#include "oracle/random_case.h"

namespace gnncheck::checks {

using oracle::TensorKind;


bool is_index_tensor(const Case& c, const std::string& name) {
  const oracle::TargetDef* def = c.entry ? &oracle::entry_of(c) : oracle::lookup_target(c.target);
  const oracle::TensorSlot* slot = def ? oracle::find_slot(def->spec, name) : nullptr;
  return slot && slot->is_index();
}

Case map_values(const Case& c, const std::function<double(double)>& f) {
  Case out{c.target, c.entry, c.attributes, c.graph, {}, {}, {}, c.seed};  // tensors written once, never copied first
  const std::pair<const TensorMap*, TensorMap*> maps[] = {
      {&c.inputs, &out.inputs}, {&c.parameters, &out.parameters}, {&c.grad_outputs, &out.grad_outputs}};
  for (const auto& [from, to] : maps)
    for (const auto& [name, t] : *from) {
      if (from != &c.grad_outputs && is_index_tensor(c, name)) {  // a choice, not a value: kept
        to->emplace(name, t);
        continue;
      }
      Tensor& mapped = to->emplace(name, Tensor(t.shape())).first->second;
      const Tensor& source = t;  // clang does not let an OpenMP region capture a structured binding
      // Element-wise (10^8 values for a feature matrix at Reddit scale): any thread order gives the
      // same tensor.
#pragma omp parallel for schedule(static) if (worth_parallel(source.size()))
      for (index_t i = 0; i < source.size(); ++i) mapped[i] = f(source[i]);
    }
  return out;
}

Case abs_case(const Case& c) {
  return map_values(c, [](double v) { return std::abs(v); });
}

Case ones_case(const Case& c) {
  return map_values(c, [](double) { return 1.0; });
}

TensorMap random_like(const TensorMap& tensors, std::uint64_t seed, const std::string& tag, double lo, double hi) {
  oracle::RandomCaseOptions range;
  range.min_value = lo;
  range.max_value = hi;
  TensorMap out;
  for (const auto& [name, t] : tensors) out.emplace(name, oracle::random_tensor(t.shape(), seed, tag + ":" + name, range));
  return out;
}

Case jittered(const Case& c, std::uint64_t seed, HalfGrid grid) {
  Case out = c;
  for (TensorMap* m : {&out.inputs, &out.parameters}) {
    const TensorMap noise = random_like(*m, seed, "jitter");
    for (auto& [name, t] : *m) {
      if (is_index_tensor(c, name)) continue;
      double sq = 0.0;
      for (double v : t.values()) sq += v * v;
      const double rms = t.size() ? std::sqrt(sq / static_cast<double>(t.size())) : 0.0;
      const double scale = 0.01 * (rms > 0 ? rms : 1.0);
      const Tensor& r = noise.at(name);
      for (index_t i = 0; i < t.size(); ++i) {
        const double v = t[i];
        t[i] = grid == HalfGrid::keep && held_by_every_half_format(v) ? moved_on_every_half_grid(v, scale * r[i])
                                                                       : v + scale * r[i];
      }
    }
  }
  return out;
}

namespace {

// new_of_old is a permutation, so every output row is written by exactly one old row: the loops
// are parallel and the result is the same for any thread count.
Tensor permute_rows(const Tensor& t, const std::vector<index_t>& new_of_old) {
  Tensor out(t.shape());
  const index_t width = t.row_size();
#pragma omp parallel for schedule(static) if (worth_parallel(t.size()))
  for (index_t old = 0; old < static_cast<index_t>(new_of_old.size()); ++old)
    std::copy_n(t.row(old), width, out.row(new_of_old[old]));
  return out;
}

Tensor unpermute_rows(const Tensor& t, const std::vector<index_t>& new_of_old) {
  Tensor out(t.shape());
  const index_t width = t.row_size();
#pragma omp parallel for schedule(static) if (worth_parallel(t.size()))
  for (index_t old = 0; old < static_cast<index_t>(new_of_old.size()); ++old)
    std::copy_n(t.row(new_of_old[old]), width, out.row(old));
  return out;
}

const std::vector<index_t>& permutation_for(TensorKind kind, const Relabeling& r) {
  switch (kind) {
    case TensorKind::dst_nodes: return r.new_dst_of_old;
    case TensorKind::src_nodes: return r.new_src_of_old;
    case TensorKind::edges: return r.new_edge_of_old;
    case TensorKind::edges_csc: return r.new_csc_of_old;
    case TensorKind::parameter: break;
  }
  throw InternalError("parameters do not move with the graph");
}

// Old CSC position p holds old edge edge_perm[p]; it moves to the new CSC position of that edge's new id.
void derive_csc_moves(const Graph& old_graph, Relabeling& r) {
  const Graph& moved = *r.transformed.graph;
  std::vector<index_t> csc_of_edge(static_cast<size_t>(moved.num_edges()));
  // edge_perm is a permutation: each p writes its own slot.
#pragma omp parallel for schedule(static) if (worth_parallel(moved.num_edges()))
  for (index_t p = 0; p < moved.num_edges(); ++p) csc_of_edge[moved.edge_perm()[p]] = p;
  r.new_csc_of_old.resize(static_cast<size_t>(old_graph.num_edges()));
#pragma omp parallel for schedule(static) if (worth_parallel(old_graph.num_edges()))
  for (index_t p = 0; p < old_graph.num_edges(); ++p)
    r.new_csc_of_old[p] = csc_of_edge[r.new_edge_of_old[old_graph.edge_perm()[p]]];
}

// t's values in a new tensor, copied in parallel (a feature matrix is the case's largest tensor).
Tensor copied(const Tensor& t) {
  Tensor out(t.shape());
#pragma omp parallel for schedule(static) if (worth_parallel(t.size()))
  for (index_t i = 0; i < t.size(); ++i) out[i] = t[i];
  return out;
}

// The case `c` with its graph, target, attributes and seed, and no tensors (move_tensors writes them).
Case without_tensors(const Case& c) { return Case{c.target, c.entry, c.attributes, c.graph, {}, {}, {}, c.seed}; }

// Every input, parameter and output gradient of `c`, moved as `r` says, into r.transformed (made by
// without_tensors); r.transformed.graph and the node and edge moves must be set. Each tensor is
// written once: permuted where its rows move, else copied.
void move_tensors(const Case& c, Relabeling& r) {
  derive_csc_moves(*c.graph, r);
  const oracle::TargetDef& def = oracle::entry_of(c);
  auto moved = [&](const Tensor& t, TensorKind kind) {
    return moves_rows(kind, r) ? permute_rows(t, permutation_for(kind, r)) : copied(t);
  };
  for (const auto& [name, t] : c.inputs) r.transformed.inputs.emplace(name, moved(t, input_kind(def.spec, name)));
  for (const auto& [name, t] : c.parameters) r.transformed.parameters.emplace(name, moved(t, input_kind(def.spec, name)));
  for (const auto& [name, t] : c.grad_outputs) r.transformed.grad_outputs.emplace(name, moved(t, output_kind(def.spec, name)));
}

std::vector<index_t> random_permutation(index_t n, std::mt19937_64& rng) {
  std::vector<index_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), index_t{0});
  std::shuffle(p.begin(), p.end(), rng);
  return p;
}

// Rebuilds the graph with every row's edges in the order `order_in_row(row, edge ids)` returns.
// Rows are independent, so they are reordered in parallel: order_in_row must depend only on its
// arguments (not on which rows ran before), which also makes the result independent of threads.
Relabeling reorder_rows(const Case& c, const std::function<void(index_t, std::vector<index_t>&)>& order_in_row) {
  const Graph& g = *c.graph;
  Relabeling r;
  r.transformed = without_tensors(c);
  r.nodes_moved = false;
  r.new_dst_of_old.resize(static_cast<size_t>(g.n_dst()));
  std::iota(r.new_dst_of_old.begin(), r.new_dst_of_old.end(), index_t{0});
  r.new_src_of_old.resize(static_cast<size_t>(g.n_src()));
  std::iota(r.new_src_of_old.begin(), r.new_src_of_old.end(), index_t{0});
  r.new_edge_of_old.resize(static_cast<size_t>(g.num_edges()));
  std::vector<index_t> col_idx(static_cast<size_t>(g.num_edges()));
#pragma omp parallel if (worth_parallel(g.num_edges()))
  {
    std::vector<index_t> row_edges;
    // Small chunks: rows differ in length by orders of magnitude (a scale check's neighbourhood is
    // 10^4 rows, a hundred of them holding most of the edges).
#pragma omp for schedule(dynamic, 16)
    for (index_t i = 0; i < g.n_dst(); ++i) {
      row_edges.resize(static_cast<size_t>(g.in_degree(i)));
      std::iota(row_edges.begin(), row_edges.end(), g.row_ptr()[i]);
      order_in_row(i, row_edges);
      for (size_t k = 0; k < row_edges.size(); ++k) {
        const index_t new_id = g.row_ptr()[i] + static_cast<index_t>(k);
        r.new_edge_of_old[row_edges[k]] = new_id;
        col_idx[new_id] = g.col_idx()[row_edges[k]];
      }
    }
  }
  std::vector<index_t> row_ptr(g.row_ptr().begin(), g.row_ptr().end());
  r.transformed.graph =
      std::make_shared<const Graph>(Graph::from_csr(g.n_dst(), g.n_src(), std::move(row_ptr), std::move(col_idx)));
  move_tensors(c, r);
  return r;
}

// One independent SplitMix64 stream per row for std::shuffle, so that rows can be shuffled in any
// order and still give the same permutation.
SplitMix64 row_stream(std::uint64_t seed, index_t row) {
  return SplitMix64(seed ^ (kSplitMix64Gamma * (static_cast<std::uint64_t>(row) + 1)));
}

}  // namespace

Relabeling relabel_nodes(const Case& c, std::uint64_t seed) {
  const Graph& g = *c.graph;
  std::mt19937_64 rng(seed);
  Relabeling r;
  r.transformed = without_tensors(c);
  // Node i < min(n_dst, n_src) is both destination i and source i: layers pair them (self-loops,
  // GIN's (1+ε)·x_i, SAGE's x_i, GAT's and AGNN's destination scores use the first n_dst rows of x),
  // so those shared ids get one permutation on both sides; the ids only one side has are permuted
  // among themselves. On a square graph this is one permutation for both sides.
  const index_t shared = std::min(g.n_dst(), g.n_src());
  const std::vector<index_t> shared_move = random_permutation(shared, rng);
  auto extend = [&](index_t n) {
    std::vector<index_t> move = shared_move;
    const std::vector<index_t> tail = random_permutation(n - shared, rng);
    for (index_t t : tail) move.push_back(shared + t);
    return move;
  };
  r.new_dst_of_old = extend(g.n_dst());
  r.new_src_of_old = extend(g.n_src());
  // Graph::from_edges groups by destination keeping input order, so listing the old edges in id
  // order puts old edge e at new_row_start + (its rank among the old edges of the same row).
  std::vector<index_t> dst(static_cast<size_t>(g.num_edges())), src(dst.size());
  for (index_t e = 0; e < g.num_edges(); ++e) {
    dst[e] = r.new_dst_of_old[g.row_of_edge()[e]];
    src[e] = r.new_src_of_old[g.col_idx()[e]];
  }
  auto moved = std::make_shared<const Graph>(Graph::from_edges(g.n_dst(), g.n_src(), dst, src));
  r.new_edge_of_old.resize(dst.size());
  for (index_t i = 0; i < g.n_dst(); ++i) {
    index_t next = moved->row_ptr()[r.new_dst_of_old[i]];
    for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e) r.new_edge_of_old[e] = next++;
  }
  r.transformed.graph = moved;
  move_tensors(c, r);
  return r;
}

bool edge_ids_enter_the_function(const Case& c) {
  const oracle::TargetDef& def = oracle::entry_of(c);
  return oracle::dropout_probability(def, oracle::with_defaults(def.spec, c.attributes)) > 0.0;
}

std::vector<index_t> position_classes(const Case& c) {
  if (!edge_ids_enter_the_function(c)) return {};
  const oracle::TargetDef& def = oracle::entry_of(c);
  const Attributes a = oracle::with_defaults(def.spec, c.attributes);
  const Graph& g = *c.graph;
  // The entry's DropoutHooks give each position's mask; positions with equal masks form a class.
  std::map<std::vector<bool>, index_t> class_of_mask;
  std::vector<index_t> classes(static_cast<size_t>(g.num_edges()));
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t q = g.row_ptr()[i]; q < g.row_ptr()[i + 1]; ++q)
      classes[static_cast<size_t>(q)] =
          class_of_mask.try_emplace(def.dropout.mask_at(g, a, i, q), static_cast<index_t>(class_of_mask.size())).first->second;
  return classes;
}

namespace {

// Applies `order` to each class of positions of the row separately, so that every edge lands on a
// position of its own class (with no classes: to the whole row).
void reorder_within_classes(const std::vector<index_t>& classes, std::vector<index_t>& edges,
                            const std::function<void(std::vector<index_t>&)>& order) {
  if (classes.empty()) return order(edges);
  std::map<index_t, std::vector<size_t>> slots;  // class -> slots of the row, in order
  for (size_t k = 0; k < edges.size(); ++k) slots[classes[static_cast<size_t>(edges[k])]].push_back(k);
  for (const auto& [cls, at] : slots) {
    std::vector<index_t> part;
    for (size_t k : at) part.push_back(edges[k]);
    order(part);
    for (size_t k = 0; k < at.size(); ++k) edges[at[k]] = part[k];
  }
}

}  // namespace

Relabeling shuffle_edges_within_rows(const Case& c, std::uint64_t seed) {
  const std::vector<index_t> classes = position_classes(c);
  return reorder_rows(c, [seed, &classes](index_t row, std::vector<index_t>& edges) {
    SplitMix64 stream = row_stream(seed, row);
    reorder_within_classes(classes, edges, [&](std::vector<index_t>& part) { std::shuffle(part.begin(), part.end(), stream); });
  });
}

namespace {

// t with axis `axis` permuted: element [.., i, ..] moves to [.., new_of_old[i], ..] (or back).
Tensor permute_axis(const Tensor& t, int axis, const std::vector<index_t>& new_of_old, bool back) {
  index_t outer = 1, inner = 1;
  for (int a = 0; a < axis; ++a) outer *= t.shape()[static_cast<size_t>(a)];
  for (size_t a = static_cast<size_t>(axis) + 1; a < t.shape().size(); ++a) inner *= t.shape()[a];
  const index_t n = t.shape()[static_cast<size_t>(axis)];
  Tensor out(t.shape());
  for (index_t o = 0; o < outer; ++o)
    for (index_t i = 0; i < n; ++i) {
      const index_t from = back ? new_of_old[static_cast<size_t>(i)] : i, to = back ? i : new_of_old[static_cast<size_t>(i)];
      std::copy_n(t.data() + (o * n + from) * inner, inner, out.data() + (o * n + to) * inner);
    }
  return out;
}

Tensor* named_tensor(Case& c, const std::string& name) {
  if (auto it = c.inputs.find(name); it != c.inputs.end()) return &it->second;
  if (auto it = c.parameters.find(name); it != c.parameters.end()) return &it->second;
  return nullptr;
}

}  // namespace

void permute_contracted_axes(Relabeling& r, const std::vector<oracle::TensorAxis>& axes, std::uint64_t seed) {
  index_t length = -1;
  for (const auto& a : axes) {
    const Tensor* t = named_tensor(r.transformed, a.tensor);
    if (!t) continue;  // absent in this case (rgcn's root without root_weight)
    if (a.axis < 0 || static_cast<size_t>(a.axis) >= t->shape().size())
      throw InternalError(fmt::format("target '{}': '{}' has no axis {}", r.transformed.target, a.tensor, a.axis));
    const index_t n = t->shape()[static_cast<size_t>(a.axis)];
    if (length >= 0 && n != length)
      throw InternalError(fmt::format("contracted axes of target '{}' differ in length ({} and {})", r.transformed.target,
                                      length, n));
    length = n;
  }
  if (length <= 1) return;
  std::vector<index_t> perm(static_cast<size_t>(length));
  std::iota(perm.begin(), perm.end(), index_t{0});
  SplitMix64 stream(seed);
  std::shuffle(perm.begin(), perm.end(), stream);
  for (const auto& a : axes)
    if (Tensor* t = named_tensor(r.transformed, a.tensor)) *t = permute_axis(*t, a.axis, perm, false);
  r.permuted_axes = axes;
  r.new_feature_of_old = std::move(perm);
}

Tensor to_original_axes(const Tensor& t, const std::string& name, const Relabeling& r) {
  for (const auto& a : r.permuted_axes)
    if (a.tensor == name && static_cast<size_t>(a.axis) < t.shape().size() &&
        t.shape()[static_cast<size_t>(a.axis)] == static_cast<index_t>(r.new_feature_of_old.size()))
      return permute_axis(t, a.axis, r.new_feature_of_old, true);
  return t;
}

Relabeling reverse_edges_within_rows(const Case& c) {
  const std::vector<index_t> classes = position_classes(c);
  return reorder_rows(c, [&classes](index_t, std::vector<index_t>& edges) {
    reorder_within_classes(classes, edges, [](std::vector<index_t>& part) { std::reverse(part.begin(), part.end()); });
  });
}

bool moves_rows(TensorKind kind, const Relabeling& r) {
  switch (kind) {
    case TensorKind::parameter: return false;
    case TensorKind::dst_nodes:
    case TensorKind::src_nodes: return r.nodes_moved;
    case TensorKind::edges:
    case TensorKind::edges_csc: return true;
  }
  return true;
}

Tensor to_original_order(const Tensor& t, TensorKind kind, const Relabeling& r) {
  if (kind == TensorKind::parameter) return t;
  const auto& perm = permutation_for(kind, r);
  if (t.rank() < 1 || t.rows() != static_cast<index_t>(perm.size()))
    throw InputError(fmt::format("a {} tensor of shape [{}] does not have the {} rows of its graph", to_string(kind),
                                 fmt::join(t.shape(), ", "), perm.size()));
  return unpermute_rows(t, perm);
}

TensorKind output_kind(const oracle::TargetSpec& spec, const std::string& output) {
  for (const auto& slot : spec.outputs)
    if (slot.name == output) return slot.kind;
  throw InputError(fmt::format("target '{}' has no output '{}'", spec.name, output));
}

TensorKind input_kind(const oracle::TargetSpec& spec, const std::string& input) {
  for (const auto& slot : spec.inputs)
    if (slot.name == input) return slot.kind;
  throw InputError(fmt::format("target '{}' has no input or parameter '{}'", spec.name, input));
}

std::vector<NamedTensor> result_tensors(const oracle::TargetSpec& spec, const Result& reference) {
  std::vector<NamedTensor> out;
  for (const auto& slot : spec.outputs)
    if (reference.outputs.count(slot.name)) out.push_back({"output " + slot.name, slot.name, false, slot.kind});
  for (const auto& slot : spec.inputs)
    if (reference.gradients.count(slot.name)) out.push_back({"gradient " + slot.name, slot.name, true, slot.kind});
  return out;
}

const Tensor* find_tensor(const Result& r, const NamedTensor& which) {
  const TensorMap& m = which.is_gradient ? r.gradients : r.outputs;
  auto it = m.find(which.name);
  return it == m.end() ? nullptr : &it->second;
}

}  // namespace gnncheck::checks

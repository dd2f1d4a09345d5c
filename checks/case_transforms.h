// gnncheck/checks/case_transforms.h — rewriting a case while knowing exactly how its tensors move.
//
// The tolerance model evaluates a case on |inputs| and on all-ones inputs; the metamorphic checks
// relabel nodes or reorder edges within rows, which moves node and edge tensors. A Relabeling
// records where every destination, source and edge went, so tensors of the transformed case can be
// mapped back to the original order (by the slot's TensorKind, see oracle/targets.h).
//
//   auto moved = gnncheck::checks::relabel_nodes(c, /*seed=*/7);
//   Result r = system.evaluate(moved.transformed);
//   Tensor y_back = gnncheck::checks::to_original_order(r.outputs.at("y"), oracle::TensorKind::dst_nodes, moved);
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/case.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

// Whether `name` is an index tensor of the case's target (oracle::TensorSlot::is_index): a choice per
// row, which every transform of values leaves as it is.
bool is_index_tensor(const Case& c, const std::string& name);

// The case with `f` applied to every value of every input, parameter and output gradient, index
// tensors kept (large tensors in parallel: `f` must be a pure function of its argument).
Case map_values(const Case& c, const std::function<double(double)>& f);
// |x| everywhere: with non-negative coefficients, the oracle on this case computes Σ|w||x|.
Case abs_case(const Case& c);
// 1 everywhere: with unit coefficients, the oracle on this case counts the terms of each sum.
Case ones_case(const Case& c);

// Fresh seeded values, uniform in [lo, hi), for every tensor of `tensors`, with the same shapes
// (oracle::random_tensor streams named "<tag>:<name>").
TensorMap random_like(const TensorMap& tensors, std::uint64_t seed, const std::string& tag, double lo = -1.0,
                      double hi = 1.0);

// The case moved off exact kinks: every input and parameter value v (index tensors kept) becomes v + 0.01·s·r, with s the
// root-mean-square of its tensor (1 if that is 0) and r uniform in [-1, 1) from `seed`. Integer
// and zero inputs put ReLU/LeakyReLU pre-activations exactly at 0, where finite differences say
// nothing; the adjoint and gradient checks probe this nearby point instead (deterministically).
// A value that float16, bfloat16 and TF32 all hold (a small integer) moves to the nearest other value
// of their common grid instead: a system that stores in a half format then stores the moved case
// exactly too, and its bound keeps the sums' format alone (checks/tolerance.md, "Storage and
// accumulation") — otherwise moving a case off its kinks would hide every half-precision fault.
// HalfGrid::ignore moves every value by the continuous jitter: where no format stores the case (the
// float64 gradient check), since the grid's coarse steps can leave a sum exactly at a kink or tie.
enum class HalfGrid { keep, ignore };
Case jittered(const Case& c, std::uint64_t seed, HalfGrid grid = HalfGrid::keep);

// Where everything went: new index of each old destination, source and edge id.
struct Relabeling {
  Case transformed;
  std::vector<index_t> new_dst_of_old;
  std::vector<index_t> new_src_of_old;
  std::vector<index_t> new_edge_of_old;
  std::vector<index_t> new_csc_of_old;  // CSC positions (for edges_csc tensors)
  bool nodes_moved = true;              // false: node ids are unchanged (only edges moved within rows)
  // Contracted axes permuted as well (permute_contracted_axes): new index of each old one.
  std::vector<oracle::TensorAxis> permuted_axes;
  std::vector<index_t> new_feature_of_old;
};

// Permutes, with one random permutation drawn from `seed`, the given axis of each named input and
// parameter of r.transformed (a target's TargetDef::contracted_axes), skipping tensors the case does
// not hold; nothing when the list is empty. Throws InternalError when the axes differ in length.
void permute_contracted_axes(Relabeling& r, const std::vector<oracle::TensorAxis>& axes, std::uint64_t seed);
// The gradient of `name` in its original axis order (t itself when r permuted no axis of it).
Tensor to_original_axes(const Tensor& t, const std::string& name, const Relabeling& r);

// Whether tensors of `kind` have their rows in a different order in r.transformed (parameters
// never; node tensors only when nodes were relabeled; edge tensors always).
bool moves_rows(oracle::TensorKind kind, const Relabeling& r);

// Relabels nodes by a random permutation drawn from `seed` and rebuilds the graph; node and edge
// tensors move with their nodes and edges. Ids below min(n_dst, n_src) name one node on both sides
// (the layers' convention: destination i is source i), so they move together and self-loops stay
// self-loops; the remaining ids of the larger side are permuted among themselves.
Relabeling relabel_nodes(const Case& c, std::uint64_t seed);
// Permutes the edges inside every row (a random permutation from `seed` and the row, the same for
// any thread count); nodes keep their labels. Where edge ids enter the function itself (GAT's
// attention-dropout mask is drawn per aggregated edge id), edges move only among the positions of
// their row whose mask (every head) equals their own, so the moved case computes the same function
// in another summation order.
Relabeling shuffle_edges_within_rows(const Case& c, std::uint64_t seed);
// Reverses the edge order inside every row (a deterministic "other summation order"); the same
// restriction to equal-mask positions.
Relabeling reverse_edges_within_rows(const Case& c);
// Whether edge ids enter the function itself, not only the order of its sums: a target whose entry
// declares dropout (oracle::DropoutHooks) with its probability > 0 — GAT with attn_dropout > 0 (its
// mask is drawn per aggregated edge id, self-loops included, so even a graph without edges has
// masked self-loops).
bool edge_ids_enter_the_function(const Case& c);
// For each edge position of c's graph, a class id such that moving an edge between positions of
// one class of its row leaves the function unchanged (for GAT with dropout: the position's mask over
// the heads); empty when edge ids do not enter the function (any order is the same function).
std::vector<index_t> position_classes(const Case& c);

// A tensor of `kind` computed on r.transformed, put back into the original case's order.
Tensor to_original_order(const Tensor& t, oracle::TensorKind kind, const Relabeling& r);

// The TensorKind of an output name or of an input/parameter name (its gradient moves like it).
oracle::TensorKind output_kind(const oracle::TargetSpec& spec, const std::string& output);
oracle::TensorKind input_kind(const oracle::TargetSpec& spec, const std::string& input);

// Every tensor of a Result keyed the way verdicts name them: "output <name>" and "gradient <name>".
struct NamedTensor {
  std::string label;        // "output y", "gradient x"
  std::string name;         // "y", "x"
  bool is_gradient = false;
  oracle::TensorKind kind = oracle::TensorKind::dst_nodes;
};
std::vector<NamedTensor> result_tensors(const oracle::TargetSpec& spec, const Result& reference);
const Tensor* find_tensor(const Result& r, const NamedTensor& which);

}  // namespace gnncheck::checks

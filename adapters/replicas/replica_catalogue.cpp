// The catalogue of the CPU bug replicas (replicas.h): the table of replica_entries.cpp resolved into
// each one's targets the oracle knows, its bug class, and the attributes and shape its bug needs. Wrapping a base system and
// injecting the bug is replicas.cpp's job; the bugs themselves are in the *_bugs.cpp files.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "adapters/replicas/replica_entries.h"
#include "adapters/replicas/replicas.h"
#include "adapters/replicas/half_precision.h"
#include "core/error.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck {
namespace {

// The class of mistake of each replica, by number (ReplicaInfo::bug_class).
struct BugClass {
  int number;
  const char* bug_class;
  const char* description;
  bool single_evaluation;
  bool in_system_precision = false;  // the bug exists only in the system's precision (overflow)
  bool after_previous_call = false;  // the bug shows on a case evaluated after another (state)
};
constexpr BugClass kBugClasses[] = {
    {1, "a_for_at", "backward uses A where Aᵀ is needed (the TC-GNN bug class)", true},
    {2, "agnn_attention_grad",
     "the attention gradient formed from the output gradient with itself and the aggregation backward untransposed "
     "(the TC-GNN AGNN bug class)",
     true},
    {3, "degree_power", "degree normalization with the wrong power: √d where 1/√d is needed (the GNNAdvisor bug class)",
     true},
    {4, "degree_side",
     "degree normalization on the wrong side in backward, in the forward's order (the GNNAdvisor and Seastar bug class)",
     true},
    {5, "a_for_at", "backward uses the attention graph A_α where A_αᵀ is needed (the GAT untransposed-attention bug class)",
     true},
    {6, "gradient_dropped", "no gradient reaches the attention (forward-only attention kernels: the TLPGNN bug class)",
     true},
    {7, "stale_state", "backward reads an edge buffer a previous call wrote (state left over, Huang et al.)", false,
     false, true},
    {8, "softmax_no_max", "edge softmax without max subtraction, overflowing at large logits (the FuseGNN bug class)",
     true, true},
    {9, "memory_growth", "memory kept alive by every evaluation (the dgNN bug class)", false},
    {10, "width_tail", "the last (width mod 32) feature columns never written (warp-width kernels, Huang et al.)", true},
    {11, "missing_eshuffle", "edge values read in CSR order where the CSC traversal needs them shuffled (missing eShuffle)",
     true},
    {12, "gradient_dropped", "the bias receives no gradient (a gradient term dropped)", true},
    {26, "gradient_dropped", "the edge features receive no gradient (a gradient term dropped)", true},
    {27, "pre_activation_used",
     "the backward reads the saved pre-activation where the activated value is needed (a nonlinearity skipped in "
     "backward)",
     true},
    {28, "relation_gradient_misrouted", "a relation's weight gradient summed into another relation (a type id off by one)",
     true},
    {29, "weight_not_transposed", "the forward weight used in backward where its transpose is needed", true},
    {30, "segment_off_by_one", "a segment boundary off by one row (the first row of each segment takes the previous weight)",
     true},
    {31, "accumulation_precision",
     "sums formed in a coarser format than declared (float16 partial sums where float32 accumulation is declared)", true},
    {32, "attention_precision",
     "attention logits rounded to the storage format before the softmax, where the declared arithmetic keeps them "
     "in float32", true},
    {33, "softmax_within_relation",
     "the attention softmax normalized within each relation's edges where it runs across all of a destination's "
     "in-edges",
     true},
    {34, "rows_left_sorted", "the output left in the order its rows were sorted into by type, not permuted back", true},
    {13, "square_only_backward", "the backward's loops stop at min(n_dst, n_src) (a kernel written for square graphs)",
     true},
    {14, "lost_updates", "updates lost on rows and columns of many edges (a race in the accumulation)", true},
    {15, "scaled_edge_gradient", "the edge-value gradient scaled by a constant (a scale applied twice)", true},
    {16, "nondeterministic", "an answer that changes from call to call far beyond rounding", false},
    {17, "tie_gradient_copied", "the output gradient copied to every tied candidate of a max or min instead of split", true},
    {18, "stale_state", "max/min backward through the selections a previous call left (state left over)", false, false,
     true},
    {19, "index_confusion", "the edge gradient scattered with the source index instead of the edge index", true},
    {20, "degree_side", "the mean's backward divides by the source's degree instead of the destination's", true},
    {21, "quotient_term_dropped", "the division's backward for the denominator without its quotient factor u/e", true},
    {22, "broadcast_not_summed", "the backward through a broadcast operand not summed over the broadcast axis", true},
    {23, "width_tail", "the partial last tile of rows wider than 64 values never written (a tiled path for wide rows)",
     true},
    {24, "layout_from_shape",
     "a node input read in another layout that its shape cannot tell apart (a square matrix read transposed)", true},
    {25, "layout_from_shape",
     "a node input read in another layout that its shape cannot tell apart (heads and features swapped when equal)",
     true},
};

// The shape each replica's bug needs (ReplicaInfo::shape).
ReplicaInfo::Shape shape_of(int number) {
  switch (number) {
    case 23: return ReplicaInfo::Shape::row_wider_than_64;
    case 24: return ReplicaInfo::Shape::square_node_matrix;
    case 25: return ReplicaInfo::Shape::heads_equal_features;
    case 29: return ReplicaInfo::Shape::square_node_matrix;  // in_features = out_features
    default: return ReplicaInfo::Shape::any;
  }
}

// The attributes under which each gspmm replica's bug shows (ReplicaInfo::shows_with).
struct ShowsWith {
  int number;
  std::vector<std::pair<const char*, const char*>> attributes;
  bool tied_values = false;
};
const std::vector<ShowsWith>& shows_with() {
  static const std::vector<ShowsWith> table = {
      {17, {{"reduce", "max"}}, true},
      {18, {{"reduce", "max"}, {"message", "mul"}}},
      {19, {{"reduce", "min"}, {"message", "add"}}},
      {20, {{"reduce", "mean"}}},
      {21, {{"message", "div"}}},
      {22, {{"message", "mul"}}},
  };
  return table;
}

// Targets with a node tensor among their inputs (and outputs, when asked): where a feature width
// or a node layout applies.
bool has_node_tensor(const oracle::TargetDef& def, bool outputs_too = true) {
  for (const auto* slots : {&def.spec.inputs, &def.spec.outputs}) {
    for (const auto& slot : *slots)
      if (slot.kind == oracle::TensorKind::dst_nodes || slot.kind == oracle::TensorKind::src_nodes) return true;
    if (!outputs_too) break;
  }
  return false;
}

// Targets whose node inputs (under the default attributes) all have three or more dimensions:
// segment_mm's weight [n_dst, in, out] has a layout its shape tells, so replica 24's [n, n] matrix
// read as [width, n] does not apply.
bool node_inputs_all_beyond_matrices(const oracle::TargetDef& def) {
  const Graph g = Graph::from_edges(2, 2, std::vector<index_t>{0}, std::vector<index_t>{1});
  const auto shapes = def.input_shapes(g, oracle::with_defaults(def.spec, {}));
  bool any = false;
  for (const auto& slot : def.spec.inputs) {
    if (slot.kind != oracle::TensorKind::dst_nodes && slot.kind != oracle::TensorKind::src_nodes) continue;
    const auto it = shapes.find(slot.name);
    if (it == shapes.end()) continue;
    if (it->second.size() < 3) return false;
    any = true;
  }
  return any;
}

bool bias_target(const oracle::TargetDef& def) {
  for (const auto& slot : def.spec.inputs)
    if (slot.kind == oracle::TensorKind::parameter && slot.name.find("bias") != std::string::npos) return true;
  return false;
}

// The entry's targets that the oracle's catalogue knows today.
ReplicaInfo resolve_targets(const CatalogueEntry& entry) {
  ReplicaInfo info = entry.info;
  std::vector<std::string> known;
  for (const auto& def : oracle::all_targets()) {
    const std::string& name = def.spec.name;
    bool wanted = entry.every_target;
    for (const auto& t : info.targets) wanted = wanted || t == name;
    if (info.number == 10) wanted = has_node_tensor(def);
    // 23: rows of more than 64 values need a feature width (heads alone stay few).
    if (info.number == 23) wanted = has_node_tensor(def) && !oracle::width_attributes(def.spec).empty();
    if (info.number == 24) wanted = has_node_tensor(def, false) && !node_inputs_all_beyond_matrices(def);
    if (info.number == 25) wanted = has_node_tensor(def, false) && def.spec.has_attribute("heads") && def.spec.has_attribute("features");
    if (info.number == 12) wanted = bias_target(def);
    if (wanted) known.push_back(name);
  }
  info.targets = std::move(known);
  for (const BugClass& c : kBugClasses)
    if (c.number == info.number) {
      info.bug_class = c.bug_class;
      info.bug_class_description = c.description;
      info.single_evaluation = c.single_evaluation;
      info.after_previous_call = c.after_previous_call;
      info.in_system_precision = c.in_system_precision;
    }
  info.shape = shape_of(info.number);
  for (const ShowsWith& w : shows_with())
    if (w.number == info.number) {
      for (const auto& [name, value] : w.attributes) info.shows_with.set(name, std::string(value));
      info.needs_tied_values = w.tied_values;
    }
  return info;
}

}  // namespace

std::vector<ReplicaInfo> replica_catalogue() {
  std::vector<ReplicaInfo> out;
  for (const auto& entry : replica_entries()) out.push_back(resolve_targets(entry));
  return out;
}

void reveal_values(const ReplicaInfo& info, Case& c) {
  if (info.values == ReplicaInfo::Values::dominant_destination_logits) {
    oracle::round_to_small_integers(c);
    const auto it = c.parameters.find("att_dst");
    if (it != c.parameters.end())
      for (double& v : it->second.values()) v *= 16.0;
  }
}

ReplicaInfo find_replica(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& entry : replica_entries()) {
    if (entry.info.name == name) return resolve_targets(entry);
    names.push_back(entry.info.name);
  }
  throw InputError(fmt::format("unknown replica '{}'; known replicas: {}", name, fmt::join(names, ", ")));
}

}  // namespace gnncheck

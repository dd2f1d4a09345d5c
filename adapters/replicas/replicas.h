// gnncheck/adapters/replicas/replicas.h — bug replicas: correct systems with one published bug put back.
//
// Each replica wraps a correct System (the oracle, cpu_float32, the GPU reference, …) and injects
// exactly one bug that a published GNN system shipped (see DESIGN.md and the ATC'25 pitfalls paper).
// The catalogue says, for every replica, where the bug came from (in our words), what the replica
// does wrong, which check is expected to catch it, and on which targets the bug is injected. A
// suite that does not catch every replica has a hole; the mutation-score table in
// docs/replicas.md is produced from this catalogue.
//
// On a target the replica supports but a case the bug cannot be expressed on (most "A for Aᵀ" bugs
// need a square graph, as the original kernels did), evaluate() returns Status::unsupported saying so.
//
//   for (const auto& info : gnncheck::replica_catalogue())
//     fmt::print("{:2} {:40} caught by {}\n", info.number, info.name, info.expected_check);
//   auto wrong = gnncheck::make_replica("tcgnn_backward_uses_A", gnncheck::make_oracle_system());
//   gnncheck::Result r = wrong->evaluate(c);   // c.target == "spmm": gradient A·ḡ instead of Aᵀ·ḡ
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/system.h"
#include "oracle/targets.h"

namespace gnncheck {

struct ReplicaInfo {
  int number = 0;              // 1..12 in the order of issue 6, 13..16 from issue 15, 17..22 for gspmm,
                               // 23..25 for the shapes where kernels change path, 26 for GINE, 27 for GATv2
  std::string name;            // system name, e.g. "tcgnn_backward_uses_A"
  std::string origin;          // the published system and what went wrong there, in our words
  std::string bug;             // precisely what this replica computes wrongly
  std::string expected_check;  // check kind of DESIGN.md expected to catch it: differential, adjoint,
                               // op_order, state_interleaved, numerics, resources (checks/verdict.h)
  std::string needs;           // what a case must have for the bug to show, e.g. "a graph with A ≠ Aᵀ"
  std::vector<std::string> targets;  // targets the bug is injected into (those the catalogue knows today)
  // The precision the replica declares, when not its base's (a TF32 kernel's bug, on an exact base).
  std::optional<Precision> declared_precision;
  // The bug shows only on a row or column of more than this many edges (0: on any graph).
  index_t hub_degree = 0;
  // The class of mistake it belongs to (oracle::WrongVariant::bug_class: generic transforms of the
  // same class name the same mistake) and the class in words, as a diagnosis prints it.
  std::string bug_class = {};
  std::string bug_class_description = {};
  // Whether one evaluation of a case shows the bug (false: it needs earlier calls or repeats —
  // state, memory growth, noise — and is no known-wrong variant of a single case).
  bool single_evaluation = true;
  // Whether it shows on a case evaluated right after another one (state left from that call): a
  // known-wrong variant of the state checks' case, given the case before it.
  bool after_previous_call = false;
  // Whether the bug exists only in the system's precision (an overflow): as a known-wrong variant it
  // wraps the float32 oracle for a system that is not float64.
  bool in_system_precision = false;
  // The attribute values a case needs for the bug to show (gspmm's reduce = max), and whether its
  // values must repeat (small integers: a tie of a max or min). Tests and docs build the case from them.
  Attributes shows_with = {};
  bool needs_tied_values = false;
  // The values that show the bug on any case of the target, beyond its attributes (reveal_values
  // builds them): GAT logits whose destination part dominates, on small integers (32: float16 holds
  // every input, so storing is charged nothing and the rounded logits stand out; checks/tolerance.md,
  // "Storage and accumulation"). Random cases show it too, less often.
  enum class Values { any, dominant_destination_logits };
  Values values = Values::any;
  // The shape a case needs for the bug to show, beyond fixed attribute values (revealing_attributes).
  enum class Shape { any, row_wider_than_64, square_node_matrix, heads_equal_features };
  Shape shape = Shape::any;
  // The accumulation format the replica declares beside declared_precision (float16 stored, summed
  // in float32: the precision replicas); unset: its precision's.
  std::optional<Precision> declared_accumulation = {};
};

// The attributes of a case of `target` on `graph` under which the bug of `info` shows: `base` with
// the replica's shows_with and the shape it needs — every width 127 (a row wider than 64 whose
// partial tile differs from its partial warp), every width = n_src with one head (a square node
// matrix; heads = n_src where the target has heads and no width), or heads = features = 2.
Attributes revealing_attributes(const ReplicaInfo& info, const oracle::TargetSpec& target, const Graph& graph,
                                Attributes base = {});

// `c` with the values `info`'s bug needs (ReplicaInfo::values): GAT's att_dst × 10², so that each
// row's common logit a_dst·h_i dwarfs the part that varies along the row. Nothing for Values::any.
void reveal_values(const ReplicaInfo& info, Case& c);

// The replicas in catalogue order. Targets are filtered to those present in oracle::all_targets(),
// so layer targets appear as soon as they are registered.
std::vector<ReplicaInfo> replica_catalogue();

// Throws InputError "unknown replica 'x'; known replicas: …".
ReplicaInfo find_replica(const std::string& name);

// Every replica that injects its bug into `target` and shows it in one evaluation (or in one after
// the previous call's, VariantContext::previous), as a known-wrong variant (oracle/targets.h): the replica wrapping the float64 oracle (the float32 one,
// for a system that is not float64, where the bug exists only in the precision: an overflow),
// simplicity 100 + its number. Used by the diagnosis of a failure (checks/diagnosis.h) after the target's own variants.
std::vector<oracle::WrongVariant> replica_variants(const std::string& target);

// The replica `name` wrapping `base`. The replica supports a target when it injects its bug there
// and `base` supports it; its precision is base's unless the catalogue declares one (`declared_precision`).
// Throws InputError for an unknown name or a null base.
std::unique_ptr<System> make_replica(const std::string& name, std::unique_ptr<System> base);

}  // namespace gnncheck

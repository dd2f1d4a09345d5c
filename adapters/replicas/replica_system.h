// gnncheck/adapters/replicas/replica_system.h — the machinery shared by the bug replicas (internal).
//
// ReplicaSystem evaluates a case with the correct base system and then lets one Bug rewrite the
// outputs and gradients the way the published system computed them. The rewrite uses the oracle's
// ops in float64, so a bug is written as the wrong formula and nothing else.
//
//   class DropBiasGradient final : public Bug { void inject(BugContext& ctx) override { ... } };
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "adapters/replicas/replicas.h"
#include "oracle/targets.h"

namespace gnncheck::replicas {

// Everything a bug needs to rewrite one result.
struct BugContext {
  const Case& c;
  const oracle::TargetDef& def;
  Attributes attributes;  // the case's attributes with the target's defaults filled in
  Precision base_precision;
  Result& result;         // the base system's correct answer, rewritten in place

  const Graph& graph() const { return *c.graph; }
  bool wants_gradients() const { return !c.grad_outputs.empty(); }
  // The case's input or parameter `name`; InternalError if absent (the base accepted the case).
  const Tensor& input(const std::string& name) const;
  // The gradient of the target's only output.
  const Tensor& output_gradient() const;
  // Name of the first input slot of `kind`; InternalError when the target has none.
  std::string slot(oracle::TensorKind kind) const;
  std::string output_name() const;
  // Marks the case as one the bug cannot be expressed on (Status::unsupported, with the reason).
  void unsupported(const std::string& reason);
  // Unsupported unless the graph is square; returns whether it is.
  bool require_square(const std::string& why);
};

class Bug {
 public:
  virtual ~Bug() = default;
  virtual void inject(BugContext& ctx) = 0;
  // Bytes the bug itself holds (the leak replica); added to the base's live bytes.
  virtual std::int64_t held_bytes() const { return 0; }
};

// Layer versions of the bugs (layer_bugs.cpp); each rewrites ctx.result of a gcn/gin/gat case. The
// callers have already checked what the bug needs (a square graph, output gradients).
void gcn_backward_uses_A(BugContext& ctx);         // 1
void gin_backward_uses_A(BugContext& ctx);         // 1
void gcn_sqrt_degree(BugContext& ctx);             // 3 (forward too)
void gcn_norm_backward_order(BugContext& ctx);     // 4
void gat_untransposed_attention(BugContext& ctx);  // 5
void gat_no_attention_grad(BugContext& ctx);       // 6
void gat_missing_eshuffle(BugContext& ctx);        // 11
void agnn_attention_grad(BugContext& ctx);         // 2 (square graphs)
void gatv2_att_grad_from_pre_activation(BugContext& ctx);  // 27
// 7: a forward-only call stores its attention in `buffer`; a backward of the same shape reads it.
void gat_shared_edge_buffer(BugContext& ctx, Tensor& buffer);
// 8: `naive_softmax` is the edge softmax without max subtraction, in the base's precision.
void gat_softmax_no_max(BugContext& ctx, const std::function<Tensor(const Graph&, const Tensor&)>& naive_softmax);

// The bug of catalogue entry `info` (by name); InternalError for a name without an implementation.
std::unique_ptr<Bug> make_bug(const ReplicaInfo& info);
std::unique_ptr<Bug> make_gspmm_bug(int number);  // 17 to 22 (gspmm_bugs.cpp); null for another number
std::unique_ptr<Bug> make_shape_bug(int number);  // 10, 23 to 25 (shape_bugs.cpp); null for another number
std::unique_ptr<Bug> make_relational_bug(int number);  // 28 to 30 (relational_bugs.cpp); null for another number
// The precision replicas (precision_bugs.cpp), by name; null for another name.
std::unique_ptr<Bug> make_precision_bug(const std::string& name);

}  // namespace gnncheck::replicas

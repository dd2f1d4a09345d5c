// The twelve bugs of the replica catalogue, each written as the wrong formula over the oracle's ops.
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "adapters/replicas/replica_system.h"
#include "oracle/degree_norm.h"
#include "oracle/edge_softmax.h"
#include "oracle/eshuffle.h"
#include "oracle/sddmm.h"
#include "oracle/spmm.h"
#include "oracle/spmm_ve.h"

namespace gnncheck::replicas {

using oracle::TensorKind;

const Tensor& BugContext::input(const std::string& name) const {
  if (auto it = c.inputs.find(name); it != c.inputs.end()) return it->second;
  if (auto it = c.parameters.find(name); it != c.parameters.end()) return it->second;
  throw InternalError(fmt::format("replica: case for '{}' has no input '{}'", c.target, name));
}

const Tensor& BugContext::output_gradient() const {
  auto it = c.grad_outputs.find(output_name());
  if (it == c.grad_outputs.end())
    throw InternalError(fmt::format("replica: case for '{}' has no gradient of output '{}'", c.target, output_name()));
  return it->second;
}

std::string BugContext::slot(TensorKind kind) const {
  for (const auto& s : def.spec.inputs)
    if (s.kind == kind && (c.inputs.count(s.name) || c.parameters.count(s.name))) return s.name;
  throw InternalError(fmt::format("replica: target '{}' has no input of kind {}", c.target, oracle::to_string(kind)));
}

std::string BugContext::output_name() const {
  if (def.spec.outputs.empty()) throw InternalError(fmt::format("replica: target '{}' has no output", c.target));
  return def.spec.outputs.front().name;
}

void BugContext::unsupported(const std::string& reason) {
  result = Result{};
  result.status = Status::unsupported;
  result.message = reason;
}

bool BugContext::require_square(const std::string& why) {
  if (graph().is_square()) return true;
  unsupported(fmt::format("{} ({}); this case's graph is {}", why, c.target, graph().summary()));
  return false;
}

namespace {

index_t heads_of(const Tensor& edge_values) { return edge_values.rank() >= 2 ? edge_values.row_size() : 1; }

// An [E, H] result given back in the shape of the edge tensor it is the gradient of ([E] or [E, H]).
Tensor shaped_like(Tensor t, const Tensor& like) {
  return Tensor(like.shape(), std::move(t.values()));
}

oracle::DegreeNorm norm_of(const BugContext& ctx) { return oracle::parse_degree_norm(ctx.attributes.get_string("norm")); }
oracle::SourceDegree source_degree_of(const BugContext& ctx) {
  return oracle::parse_source_degree(ctx.attributes.get_string("source_degree"));
}

// 1. TC-GNN: backward aggregation with A instead of Aᵀ.
class BackwardUsesA final : public Bug {
  void inject(BugContext& ctx) override {
    if (!ctx.wants_gradients()) return;
    if (!ctx.require_square("TC-GNN's kernels assume a square adjacency")) return;
    if (ctx.c.target == "gcn") return gcn_backward_uses_A(ctx);
    if (ctx.c.target == "gin") return gin_backward_uses_A(ctx);
    const std::string x = ctx.slot(TensorKind::src_nodes);
    const Tensor& gy = ctx.output_gradient();
    if (ctx.c.target == "spmm") ctx.result.gradients[x] = oracle::spmm_forward(ctx.graph(), gy);
    else ctx.result.gradients[x] = oracle::normalized_spmm_forward(ctx.graph(), norm_of(ctx), gy, source_degree_of(ctx));
  }
};

// 2. TC-GNN AGNN: attention gradient ⟨ḡ, ḡ⟩ and untransposed attention in backward.
class AgnnAttentionGrad final : public Bug {
  void inject(BugContext& ctx) override {
    if (!ctx.wants_gradients()) return;
    if (!ctx.require_square("TC-GNN's AGNN kernels assume a square adjacency")) return;
    if (ctx.c.target == "agnn") return agnn_attention_grad(ctx);
    const std::string w = ctx.slot(TensorKind::edges), x = ctx.slot(TensorKind::src_nodes);
    const Tensor& edge_values = ctx.input(w);
    const Tensor& gy = ctx.output_gradient();
    ctx.result.gradients[w] =
        shaped_like(oracle::sddmm_dot_forward(ctx.graph(), gy, gy, heads_of(edge_values)), edge_values);
    ctx.result.gradients[x] = oracle::spmm_ve_forward(ctx.graph(), edge_values, gy);
  }
};

// 3. GNNAdvisor: sqrt(degree) instead of 1/sqrt(degree), consistently in forward and backward.
class SqrtDegree final : public Bug {
  void inject(BugContext& ctx) override {
    if (ctx.c.target == "gcn") return gcn_sqrt_degree(ctx);
    const Graph& g = ctx.graph();
    const oracle::DegreeNorm norm = norm_of(ctx);
    Tensor wrong_values({g.num_edges(), 1});
    for (index_t e = 0; e < g.num_edges(); ++e) {
      const auto d_dst = static_cast<double>(g.in_degree(g.row_of_edge()[e]));
      const auto d_src = static_cast<double>(g.out_degree(g.col_idx()[e]));
      wrong_values[e] = norm == oracle::DegreeNorm::symmetric ? std::sqrt(d_dst * d_src) : d_dst;
    }
    const std::string x = ctx.slot(TensorKind::src_nodes);
    ctx.result.outputs[ctx.output_name()] = oracle::spmm_ve_forward(g, wrong_values, ctx.input(x));
    if (ctx.wants_gradients())
      ctx.result.gradients[x] = oracle::spmm_ve_backward(g, wrong_values, ctx.input(x), ctx.output_gradient()).grad_x;
  }
};

// 4. GNNAdvisor/Seastar: backward scales by the degrees in the forward's order (wrong side).
class NormBackwardOrder final : public Bug {
  void inject(BugContext& ctx) override {
    if (!ctx.wants_gradients()) return;
    if (!ctx.require_square("the fused kernels index degrees by node id, which needs a square graph")) return;
    if (ctx.c.target == "gcn") return gcn_norm_backward_order(ctx);
    const Graph& g = ctx.graph();
    const oracle::DegreeNorm norm = norm_of(ctx);
    // Backward walks Aᵀ: the gradient enters at destination row_e and leaves at source col_e. The
    // forward's order scales the entering row by a source-side factor and the leaving one by a
    // destination-side factor, each looked up by node id: exactly the sides swapped.
    Tensor wrong_values({g.num_edges(), 1});
    for (index_t e = 0; e < g.num_edges(); ++e) {
      const index_t entering = g.row_of_edge()[e], leaving = g.col_idx()[e];
      const auto out_deg_entering = static_cast<double>(g.out_degree(entering));
      const auto in_deg_leaving = static_cast<double>(g.in_degree(leaving));
      if (norm == oracle::DegreeNorm::symmetric)
        wrong_values[e] = out_deg_entering > 0 && in_deg_leaving > 0 ? 1.0 / std::sqrt(out_deg_entering * in_deg_leaving) : 0.0;
      else
        wrong_values[e] = in_deg_leaving > 0 ? 1.0 / in_deg_leaving : 0.0;
    }
    ctx.result.gradients[ctx.slot(TensorKind::src_nodes)] =
        oracle::spmm_ve_transposed_forward(g, wrong_values, ctx.output_gradient());
  }
};

// 5. GAT controlled experiment: backward walks the forward's CSR where it needs the transposed
// attention graph — in the aggregation backward (spmm_ve) and in the source side of the logits'
// backward (sddmm_add: column sums become row sums).
class UntransposedAttention final : public Bug {
  void inject(BugContext& ctx) override {
    if (!ctx.wants_gradients()) return;
    if (!ctx.require_square("using A_α for A_αᵀ needs a square graph")) return;
    if (ctx.c.target == "gat") return gat_untransposed_attention(ctx);
    if (ctx.c.target == "sddmm_add") {
      const std::string b = ctx.slot(TensorKind::src_nodes);
      ctx.result.gradients[b] =
          Tensor(ctx.input(b).shape(), std::move(oracle::sddmm_add_backward(ctx.graph(), ctx.output_gradient()).grad_u.values()));
      return;
    }
    ctx.result.gradients[ctx.slot(TensorKind::src_nodes)] =
        oracle::spmm_ve_forward(ctx.graph(), ctx.input(ctx.slot(TensorKind::edges)), ctx.output_gradient());
  }
};

// 6. TLPGNN / Huang et al.: forward-only attention, no gradient to the logits.
class NoAttentionGrad final : public Bug {
  void inject(BugContext& ctx) override {
    if (!ctx.wants_gradients()) return;
    if (ctx.c.target == "gat") return gat_no_attention_grad(ctx);
    const std::string w = ctx.slot(TensorKind::edges);
    ctx.result.gradients[w] = Tensor(ctx.input(w).shape(), 0.0);
  }
};

// 7. Huang et al.: one edge buffer shared across layers and calls.
class SharedEdgeBuffer final : public Bug {
  void inject(BugContext& ctx) override {
    if (ctx.c.target == "gat") return gat_shared_edge_buffer(ctx, buffer_);
    const Graph& g = ctx.graph();
    const bool softmax = ctx.c.target == "edge_softmax";
    // What the forward saves for backward: the softmax output, or the edge values of the product.
    const Tensor& saved = softmax ? ctx.result.outputs.at(ctx.output_name()) : ctx.input(ctx.slot(TensorKind::edges));
    if (!ctx.wants_gradients()) {
      buffer_ = saved;
      return;
    }
    if (buffer_.shape() != saved.shape()) return;  // nothing stale of this shape: the own forward is used
    if (softmax) {
      ctx.result.gradients[ctx.slot(TensorKind::edges)] = oracle::edge_softmax_backward(g, buffer_, ctx.output_gradient());
    } else {
      const std::string x = ctx.slot(TensorKind::src_nodes);
      auto grads = oracle::spmm_ve_backward(g, buffer_, ctx.input(x), ctx.output_gradient());
      ctx.result.gradients[x] = std::move(grads.grad_x);
    }
  }
  std::int64_t held_bytes() const override { return 0; }  // one buffer, overwritten: not a leak

  Tensor buffer_;
};

// 8. FuseGNN: edge softmax without max subtraction.
template <class T>
Tensor naive_edge_softmax(const Graph& g, const Tensor& logits) {
  const index_t heads = heads_of(logits);
  Tensor alpha(logits.shape(), 0.0);
  for (index_t i = 0; i < g.n_dst(); ++i) {
    for (index_t h = 0; h < heads; ++h) {
      T sum = 0;
      for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e) sum += std::exp(static_cast<T>(logits[e * heads + h]));
      for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e)
        alpha[e * heads + h] = static_cast<double>(std::exp(static_cast<T>(logits[e * heads + h])) / sum);
    }
  }
  return alpha;
}

class SoftmaxNoMax final : public Bug {
  void inject(BugContext& ctx) override {
    const auto naive = [&ctx](const Graph& g, const Tensor& logits) {
      return ctx.base_precision == Precision::float64 ? naive_edge_softmax<double>(g, logits)
                                                      : naive_edge_softmax<float>(g, logits);
    };
    if (ctx.c.target == "gat") return gat_softmax_no_max(ctx, naive);
    const Graph& g = ctx.graph();
    const Tensor& logits = ctx.input(ctx.slot(TensorKind::edges));
    Tensor alpha = naive(g, logits);
    if (ctx.wants_gradients())
      ctx.result.gradients[ctx.slot(TensorKind::edges)] = oracle::edge_softmax_backward(g, alpha, ctx.output_gradient());
    ctx.result.outputs[ctx.output_name()] = std::move(alpha);
  }
};

// 9. dgNN: memory that grows with every evaluation.
class MemoryGrowth final : public Bug {
  void inject(BugContext& ctx) override {
    std::int64_t bytes = 1 << 20;
    for (const auto& [name, t] : ctx.result.outputs) bytes += t.size() * static_cast<std::int64_t>(sizeof(double));
    for (const auto& [name, t] : ctx.result.gradients) bytes += t.size() * static_cast<std::int64_t>(sizeof(double));
    // Filled, not just reserved, so the pages are resident and the process's memory really grows.
    leaked_.emplace_back(static_cast<size_t>(bytes), static_cast<unsigned char>(leaked_.size() + 1));
    held_ += bytes;
    ctx.result.peak_bytes = ctx.result.peak_bytes.value_or(0) + held_;
  }
  std::int64_t held_bytes() const override { return held_; }

  std::vector<std::vector<unsigned char>> leaked_;
  std::int64_t held_ = 0;
};

// 10. Huang et al.: the last (width mod 32) feature columns are never written.
void zero_tail_columns(Tensor& t) {
  const index_t width = t.row_size(), tail = width % 32;
  if (t.rank() < 2 || tail == 0) return;
  for (index_t r = 0; r < t.rows(); ++r)
    for (index_t col = width - tail; col < width; ++col) t.at(r, col) = 0.0;
}

bool is_node_kind(TensorKind kind) { return kind == TensorKind::dst_nodes || kind == TensorKind::src_nodes; }

class WidthTail final : public Bug {
  void inject(BugContext& ctx) override {
    for (const auto& slot : ctx.def.spec.outputs)
      if (is_node_kind(slot.kind))
        if (auto it = ctx.result.outputs.find(slot.name); it != ctx.result.outputs.end()) zero_tail_columns(it->second);
    for (const auto& slot : ctx.def.spec.inputs)
      if (is_node_kind(slot.kind))
        if (auto it = ctx.result.gradients.find(slot.name); it != ctx.result.gradients.end()) zero_tail_columns(it->second);
  }
};

// 11. Missing eShuffle: CSR-ordered edge values read in CSC order.
class MissingEshuffle final : public Bug {
  void inject(BugContext& ctx) override {
    if (ctx.c.target == "gat") {
      if (ctx.wants_gradients()) gat_missing_eshuffle(ctx);
      return;
    }
    const Graph& g = ctx.graph();
    const Tensor& edge_values = ctx.input(ctx.slot(TensorKind::edges));
    // spmm_ve_transposed_forward(g, w2, ·) reads w2[edge_perm[p]] at CSC position p; with
    // w2 = eshuffle_inverse(w) that is w[p]: the unshuffled value.
    const Tensor unshuffled = oracle::eshuffle_inverse_forward(g, edge_values);
    if (ctx.c.target == "spmm_ve") {
      if (ctx.wants_gradients())
        ctx.result.gradients[ctx.slot(TensorKind::src_nodes)] =
            oracle::spmm_ve_transposed_forward(g, unshuffled, ctx.output_gradient());
    } else {
      ctx.result.outputs[ctx.output_name()] =
          oracle::spmm_ve_transposed_forward(g, unshuffled, ctx.input(ctx.slot(TensorKind::dst_nodes)));
    }
  }
};

// 12. Missing bias gradient.
class MissingBiasGrad final : public Bug {
  void inject(BugContext& ctx) override {
    for (const auto& slot : ctx.def.spec.inputs)
      if (slot.kind == TensorKind::parameter && slot.name.find("bias") != std::string::npos)
        if (auto it = ctx.result.gradients.find(slot.name); it != ctx.result.gradients.end())
          it->second = Tensor(it->second.shape(), 0.0);
  }
};

}  // namespace

std::unique_ptr<Bug> make_bug(const ReplicaInfo& info) {
  switch (info.number) {
    case 1: return std::make_unique<BackwardUsesA>();
    case 2: return std::make_unique<AgnnAttentionGrad>();
    case 3: return std::make_unique<SqrtDegree>();
    case 4: return std::make_unique<NormBackwardOrder>();
    case 5: return std::make_unique<UntransposedAttention>();
    case 6: return std::make_unique<NoAttentionGrad>();
    case 7: return std::make_unique<SharedEdgeBuffer>();
    case 8: return std::make_unique<SoftmaxNoMax>();
    case 9: return std::make_unique<MemoryGrowth>();
    case 10: return std::make_unique<WidthTail>();
    case 11: return std::make_unique<MissingEshuffle>();
    case 12: return std::make_unique<MissingBiasGrad>();
  }
  throw InternalError(fmt::format("replica '{}' (number {}) has no implementation", info.name, info.number));
}

}  // namespace gnncheck::replicas

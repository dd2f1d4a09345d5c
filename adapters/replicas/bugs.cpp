// The bugs of the replica catalogue, each written as the wrong formula over the oracle's ops.
#include <cmath>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "adapters/replicas/replica_system.h"
#include "core/splitmix64.h"
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
    // Fused attention: the aggregation's edge values are the softmax of the logits.
    const Tensor& edges = ctx.input(ctx.slot(TensorKind::edges));
    const Tensor weights = ctx.c.target == "attention" ? oracle::edge_softmax_forward(ctx.graph(), edges) : edges;
    ctx.result.gradients[ctx.slot(TensorKind::src_nodes)] = oracle::spmm_ve_forward(ctx.graph(), weights, ctx.output_gradient());
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
    if (ctx.c.target == "attention") {  // fused: the naive attention aggregated, forward and backward
      const Tensor& x = ctx.input("x");
      ctx.result.outputs[ctx.output_name()] = oracle::spmm_ve_forward(g, alpha, x);
      if (ctx.wants_gradients()) {
        auto grads = oracle::spmm_ve_backward(g, alpha, x, ctx.output_gradient());
        ctx.result.gradients["logits"] = oracle::edge_softmax_backward(g, alpha, grads.grad_edge_values);
        ctx.result.gradients["x"] = std::move(grads.grad_x);
      }
      return;
    }
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

// 26. GINE's edge-feature gradient dropped: every edge input's gradient is zero.
class EdgeInputGradDropped final : public Bug {
  void inject(BugContext& ctx) override {
    for (const auto& slot : ctx.def.spec.inputs)
      if (slot.kind == TensorKind::edges || slot.kind == TensorKind::edges_csc)
        if (auto it = ctx.result.gradients.find(slot.name); it != ctx.result.gradients.end())
          it->second = Tensor(it->second.shape(), 0.0);
  }
};

// 27. GATv2's attention gradient from the pre-activation z instead of LeakyReLU(z).
class Gatv2AttGradFromPreActivation final : public Bug {
  void inject(BugContext& ctx) override {
    if (ctx.wants_gradients()) gatv2_att_grad_from_pre_activation(ctx);
  }
};

// 13. A backward written for square graphs: the transposed product's loops run to min(n_dst, n_src)
// on both sides, so on a rectangular graph the gradient rows of sources j ≥ n_dst stay zero and
// the contributions of destinations i ≥ n_src are dropped. Square graphs are computed exactly.
class BackwardAssumesSquare final : public Bug {
  void inject(BugContext& ctx) override {
    if (!ctx.wants_gradients() || ctx.graph().is_square()) return;
    const Graph& g = ctx.graph();
    const index_t reach = std::min(g.n_dst(), g.n_src());
    std::vector<index_t> dst, src;
    std::vector<index_t> kept;  // edge ids of the edges the square loops still reach
    for (index_t e = 0; e < g.num_edges(); ++e)
      if (g.row_of_edge()[e] < reach && g.col_idx()[e] < reach) {
        dst.push_back(g.row_of_edge()[e]);
        src.push_back(g.col_idx()[e]);
        kept.push_back(e);
      }
    const Graph reached = Graph::from_edges(g.n_dst(), g.n_src(), dst, src);
    // Edge values of the reached edges: from_edges keeps the edge-list order within each row, and
    // the kept edges are listed in edge-id (CSR) order, so the k-th kept edge is edge k of `reached`.
    const auto values_of_kept = [&](const Tensor& per_edge) {
      const index_t width = per_edge.rank() >= 2 ? per_edge.row_size() : 1;
      Tensor out({static_cast<index_t>(kept.size()), width});
      for (size_t k = 0; k < kept.size(); ++k)
        for (index_t h = 0; h < width; ++h) out[static_cast<index_t>(k) * width + h] = per_edge[kept[k] * width + h];
      return out;
    };
    const std::string x = ctx.slot(TensorKind::src_nodes);
    const Tensor& gy = ctx.output_gradient();
    if (ctx.c.target == "spmm") {
      ctx.result.gradients[x] = oracle::spmm_transposed_forward(reached, gy);
    } else if (ctx.c.target == "spmm_ve") {
      const Tensor& w = ctx.input(ctx.slot(TensorKind::edges));
      ctx.result.gradients[x] = oracle::spmm_ve_transposed_forward(reached, values_of_kept(w), gy);
    } else {  // normalized_spmm: the degrees are the graph's own; only the loops are cut short
      const Tensor scale = oracle::degree_norm_edge_values<double>(g, norm_of(ctx));
      ctx.result.gradients[x] = oracle::spmm_ve_transposed_forward(reached, values_of_kept(scale), gy);
    }
  }
};

// A reproducible stand-in for a race's lost updates: whether update `k` of row `row` (one edge's
// contribution to one element) is lost, from the case seed; one in `kLostUpdateOdds`.
constexpr std::uint64_t kLostUpdateOdds = 10000;
constexpr index_t kRaceDegree = 1000;
bool update_lost(std::uint64_t seed, std::uint64_t side, index_t row, index_t k) {
  const std::uint64_t z = mix64(seed ^ (side * kSplitMix64Gamma) ^ (static_cast<std::uint64_t>(row) << 32) ^
                                 static_cast<std::uint64_t>(k));
  return z % kLostUpdateOdds == 0;
}

// 14. Atomic accumulation that loses updates under contention: on a destination row of more than
// 1000 in-edges (forward) and a source column of more than 1000 out-edges (the backward's scatter),
// each update — one edge's contribution to one element — is lost with probability 1/10⁴, chosen
// from the case seed (so the same case always loses the same updates).
class HubRowRace final : public Bug {
  void inject(BugContext& ctx) override {
    const Graph& g = ctx.graph();
    const bool weighted = ctx.c.target == "spmm_ve";
    const Tensor* w = weighted ? &ctx.input(ctx.slot(TensorKind::edges)) : nullptr;
    const index_t heads = weighted ? heads_of(*w) : 1;
    const auto weight = [&](index_t e, index_t column, index_t width) {
      return weighted ? (*w)[e * heads + column / (width / heads)] : 1.0;
    };
    const Tensor& x = ctx.input(ctx.slot(TensorKind::src_nodes));
    Tensor& y = ctx.result.outputs.at(ctx.output_name());
    const index_t width = y.row_size();
    for (index_t i = 0; i < g.n_dst(); ++i) {
      if (g.in_degree(i) <= kRaceDegree) continue;
      for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e)
        for (index_t col = 0; col < width; ++col)
          if (update_lost(ctx.c.seed, 1, i, (e - g.row_ptr()[i]) * width + col))
            y.at(i, col) -= weight(e, col, width) * x.at(g.col_idx()[e], col);
    }
    if (!ctx.wants_gradients()) return;
    const Tensor& gy = ctx.output_gradient();
    Tensor& gx = ctx.result.gradients.at(ctx.slot(TensorKind::src_nodes));
    for (index_t j = 0; j < g.n_src(); ++j) {
      if (g.out_degree(j) <= kRaceDegree) continue;
      for (index_t p = g.col_ptr()[j]; p < g.col_ptr()[j + 1]; ++p) {
        const index_t e = g.edge_perm()[p];
        for (index_t col = 0; col < width; ++col)
          if (update_lost(ctx.c.seed, 2, j, (p - g.col_ptr()[j]) * width + col))
            gx.at(j, col) -= weight(e, col, width) * gy.at(g.row_idx()[p], col);
      }
    }
  }
};

// 15. A TF32 kernel whose edge-value gradient is off by 1/8 of itself (e.g. a scale folded in
// twice): small next to an A-for-Aᵀ bug, beyond TF32's worst-case rounding γ_C·Σ|terms| for
// feature widths C up to about 16 per head (wider rows' bound covers it: no check can tell).
constexpr double kEdgeGradientError = 1.0 / 8;
class Tf32EdgeValueGradient final : public Bug {
  void inject(BugContext& ctx) override {
    if (!ctx.wants_gradients()) return;
    auto it = ctx.result.gradients.find(ctx.slot(TensorKind::edges));
    if (it == ctx.result.gradients.end()) return;
    for (double& v : it->second.values()) v *= 1 + kEdgeGradientError;
  }
};

// 16. A forward that is not repeatable: every output element multiplied by (1 + 2^-10·r), r uniform
// in [-1, 1), drawn afresh on every call (a seeded sequence, so a fresh instance repeats the run).
// 2^-10 is far beyond what float32 or float64 rounding lets two evaluations differ by.
constexpr double kForwardNoise = 0x1p-10;
class ForwardNotRepeatable final : public Bug {
  void inject(BugContext& ctx) override {
    std::mt19937_64 rng(0x5eed0f0c0a11ull + ++calls_);
    for (auto& [name, y] : ctx.result.outputs)
      for (double& v : y.values()) v *= 1 + kForwardNoise * (static_cast<double>(rng() >> 11) * 0x1p-52 - 1.0);
  }
  std::uint64_t calls_ = 0;
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
    case 11: return std::make_unique<MissingEshuffle>();
    case 12: return std::make_unique<MissingBiasGrad>();
    case 13: return std::make_unique<BackwardAssumesSquare>();
    case 14: return std::make_unique<HubRowRace>();
    case 15: return std::make_unique<Tf32EdgeValueGradient>();
    case 16: return std::make_unique<ForwardNotRepeatable>();
    case 26: return std::make_unique<EdgeInputGradDropped>();
    case 27: return std::make_unique<Gatv2AttGradFromPreActivation>();
  }
  if (auto bug = make_gspmm_bug(info.number)) return bug;
  if (auto bug = make_shape_bug(info.number)) return bug;
  if (auto bug = make_relational_bug(info.number)) return bug;
  if (auto bug = make_precision_bug(info.name)) return bug;
  throw InternalError(fmt::format("replica '{}' (number {}) has no implementation", info.name, info.number));
}

}  // namespace gnncheck::replicas

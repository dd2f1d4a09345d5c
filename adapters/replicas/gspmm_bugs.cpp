// The bugs of the generalized SpMM (replicas 17 to 22): each recomputes gspmm's backward in float64
// with one mistake that generalized SpMM kernels (DGL's, FeatGraph, uGrapher) make in max/min,
// mean, division or broadcasting.
#include "adapters/replicas/replica_system.h"

#include <optional>

#include "oracle/gspmm.h"

namespace gnncheck::replicas {
namespace {

using oracle::GspmmConfig;
using oracle::GspmmOperands;
using oracle::Reduction;

const Tensor* optional_input(const BugContext& ctx, const char* name) {
  const auto it = ctx.c.inputs.find(name);
  return it == ctx.c.inputs.end() ? nullptr : &it->second;
}

enum class Mistake {
  gradient_to_every_tied_edge,     // 17
  selection_from_buffer,           // 18: argmax from the previous forward-only call
  edge_gradient_at_source_index,   // 19
  mean_by_source_degree,           // 20
  division_without_quotient,       // 21
  broadcast_not_summed,            // 22
};

// gspmm's backward with `mistake`; `stored` holds the selections (row-major [n_dst, width]) to use
// instead of the case's own (Mistake::selection_from_buffer).
void wrong_backward(BugContext& ctx, Mistake mistake, const std::vector<index_t>* stored = nullptr) {
  const Graph& g = ctx.graph();
  const GspmmConfig config = oracle::gspmm_config(ctx.attributes);
  const GspmmOperands<double> ops{g, config, optional_input(ctx, "u"), optional_input(ctx, "e")};
  const Tensor& grad_y = ctx.output_gradient();
  const index_t width = config.width();
  const auto row_ptr = g.row_ptr();
  const auto col_idx = g.col_idx();
  Tensor grad_u, grad_e;
  if (config.uses_u()) grad_u = Tensor({g.n_src(), config.columns(config.u_broadcast)});
  if (config.uses_e()) grad_e = Tensor({g.num_edges(), config.columns(config.e_broadcast)});
  const auto first_of_broadcast = [&](oracle::Broadcast b, index_t c) {
    for (index_t other = 0; other < c; ++other)
      if (config.column(b, other) == config.column(b, c)) return false;
    return true;
  };
  const auto add = [&](index_t k, index_t c, double g_out) {
    auto [du, de] = ops.derivatives_at(k, c);
    if (mistake == Mistake::division_without_quotient && config.message == oracle::MessageOp::div)
      de = -1.0 / ops.e_at(k, c);  // −1/e where −u/e² = −(u/e)·(1/e) is needed
    const bool u_counted = mistake != Mistake::broadcast_not_summed || first_of_broadcast(config.u_broadcast, c);
    const bool e_counted = mistake != Mistake::broadcast_not_summed || first_of_broadcast(config.e_broadcast, c);
    if (config.uses_u() && u_counted) grad_u[ops.u_index(k, c)] += g_out * du;
    if (!config.uses_e() || !e_counted) return;
    if (mistake == Mistake::edge_gradient_at_source_index && config.selects()) {
      // The selected source's id used as the edge index (an arg_u buffer read for arg_e).
      const index_t at = col_idx[k] * config.columns(config.e_broadcast) + config.column(config.e_broadcast, c);
      if (at < grad_e.size()) grad_e[at] += g_out * de;
      return;
    }
    grad_e[ops.e_index(k, c)] += g_out * de;
  };
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t degree = row_ptr[i + 1] - row_ptr[i];
    for (index_t c = 0; c < width; ++c) {
      const double g_out = grad_y[i * width + c];
      if (config.selects()) {
        index_t sel = oracle::gspmm_selected_edge(ops, i, c);
        if (sel < 0) continue;
        if (stored) {
          const index_t from_buffer = (*stored)[static_cast<std::size_t>(i * width + c)];
          if (from_buffer >= row_ptr[i] && from_buffer < row_ptr[i + 1]) sel = from_buffer;
        }
        if (mistake == Mistake::gradient_to_every_tied_edge) {
          for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
            if (ops.message_at(k, c) == ops.message_at(sel, c)) add(k, c, g_out);
        } else {
          add(sel, c, g_out);
        }
        continue;
      }
      for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
        double scale = 1.0;
        if (config.reduce == Reduction::mean) {
          const index_t d = mistake == Mistake::mean_by_source_degree ? g.out_degree(col_idx[k]) : degree;
          scale = 1.0 / double(d);
        }
        add(k, c, g_out * scale);
      }
    }
  }
  if (config.uses_u()) ctx.result.gradients["u"] = std::move(grad_u);
  if (config.uses_e()) ctx.result.gradients["e"] = std::move(grad_e);
}

class GspmmBug final : public Bug {
 public:
  explicit GspmmBug(Mistake mistake) : mistake_(mistake) {}
  void inject(BugContext& ctx) override {
    if (mistake_ != Mistake::selection_from_buffer) {
      if (ctx.wants_gradients()) wrong_backward(ctx, mistake_);
      return;
    }
    // A forward-only call leaves its selections in one buffer; a call with output gradients (the
    // backward) reads them when the buffer's shape matches, instead of its own forward's.
    const GspmmConfig config = oracle::gspmm_config(ctx.attributes);
    if (!config.selects()) return;
    const Graph& g = ctx.graph();
    if (!ctx.wants_gradients()) {
      const GspmmOperands<double> ops{g, config, optional_input(ctx, "u"), optional_input(ctx, "e")};
      buffer_.assign(static_cast<std::size_t>(g.n_dst() * config.width()), -1);
      for (index_t i = 0; i < g.n_dst(); ++i)
        for (index_t c = 0; c < config.width(); ++c)
          buffer_[static_cast<std::size_t>(i * config.width() + c)] = oracle::gspmm_selected_edge(ops, i, c);
      return;
    }
    const bool matches = buffer_.size() == static_cast<std::size_t>(g.n_dst() * config.width());
    wrong_backward(ctx, mistake_, matches ? &buffer_ : nullptr);
  }

 private:
  Mistake mistake_;
  std::vector<index_t> buffer_;
};

}  // namespace

std::unique_ptr<Bug> make_gspmm_bug(int number) {
  switch (number) {
    case 17: return std::make_unique<GspmmBug>(Mistake::gradient_to_every_tied_edge);
    case 18: return std::make_unique<GspmmBug>(Mistake::selection_from_buffer);
    case 19: return std::make_unique<GspmmBug>(Mistake::edge_gradient_at_source_index);
    case 20: return std::make_unique<GspmmBug>(Mistake::mean_by_source_degree);
    case 21: return std::make_unique<GspmmBug>(Mistake::division_without_quotient);
    case 22: return std::make_unique<GspmmBug>(Mistake::broadcast_not_summed);
  }
  return nullptr;
}

}  // namespace gnncheck::replicas

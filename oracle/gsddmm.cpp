#include "oracle/gsddmm.h"

#include <cmath>

#include <fmt/format.h>

#include "core/parallel.h"

namespace gnncheck::oracle {
namespace {

const char* side_meaning(OperandSide side) {
  switch (side) {
    case OperandSide::u: return "source node";
    case OperandSide::v: return "destination node";
    case OperandSide::e: return "edge, in edge-id order";
  }
  return "row";
}

template <class T>
void validate(const Graph& g, const GsddmmConfig& config, const DenseTensor<T>* lhs, const DenseTensor<T>* rhs) {
  const auto check = [&](const DenseTensor<T>* t, bool used, const std::string& name, OperandSide side, Broadcast b,
                         const char* broadcast_attribute) {
    if (!used) return;
    if (!t) throw InputError(fmt::format("gsddmm: op {} reads input {}, which is missing", to_string(config.op), name));
    require_broadcast_operand(*t, side_rows(g, side), config, b, fmt::format("gsddmm: input {}", name),
                              side_meaning(side), broadcast_attribute);
  };
  check(lhs, config.uses_lhs(), lhs_input_name(config), config.lhs, config.lhs_broadcast, "lhs_broadcast");
  check(rhs, config.uses_rhs(), rhs_input_name(config), config.rhs, config.rhs_broadcast, "rhs_broadcast");
}

}  // namespace

BinaryOp GsddmmConfig::binary() const {
  switch (op) {
    case SddmmOp::add: return BinaryOp::add;
    case SddmmOp::sub: return BinaryOp::sub;
    case SddmmOp::mul:
    case SddmmOp::dot: return BinaryOp::mul;
    case SddmmOp::div: return BinaryOp::div;
    case SddmmOp::copy_lhs: return BinaryOp::copy_lhs;
    case SddmmOp::copy_rhs: return BinaryOp::copy_rhs;
  }
  return BinaryOp::mul;
}

GsddmmConfig gsddmm_config(const Attributes& attrs) {
  GsddmmConfig config;
  config.op = parse_choice<SddmmOp>(attrs, "gsddmm", "op", kSddmmOpNames);
  config.lhs = parse_choice<OperandSide>(attrs, "gsddmm", "lhs", kOperandSideNames);
  config.rhs = parse_choice<OperandSide>(attrs, "gsddmm", "rhs", kOperandSideNames);
  static_cast<BroadcastShape&>(config) = broadcast_shape(attrs, "gsddmm");
  config.lhs_broadcast = parse_choice<Broadcast>(attrs, "gsddmm", "lhs_broadcast", kBroadcastNames);
  config.rhs_broadcast = parse_choice<Broadcast>(attrs, "gsddmm", "rhs_broadcast", kBroadcastNames);
  return config;
}

std::string lhs_input_name(const GsddmmConfig& config) { return fmt::format("lhs_{}", to_string(config.lhs)); }
std::string rhs_input_name(const GsddmmConfig& config) { return fmt::format("rhs_{}", to_string(config.rhs)); }

index_t side_rows(const Graph& g, OperandSide side) {
  switch (side) {
    case OperandSide::u: return g.n_src();
    case OperandSide::v: return g.n_dst();
    case OperandSide::e: return g.num_edges();
  }
  return 0;
}

template <class T>
DenseTensor<T> gsddmm_forward(const Graph& g, const GsddmmConfig& config, const DenseTensor<T>* lhs,
                              const DenseTensor<T>* rhs) {
  validate(g, config, lhs, rhs);
  const GsddmmOperands<T> ops{g, config, lhs, rhs};
  const BinaryOp binary = config.binary();
  const index_t out_width = config.out_width(), terms = config.terms_per_output();
  DenseTensor<T> out({g.num_edges(), out_width});
#pragma omp parallel for schedule(static) if (worth_parallel(g.num_edges() * config.width()))
  for (index_t k = 0; k < g.num_edges(); ++k)
    for (index_t o = 0; o < out_width; ++o) {
      const index_t first = config.first_column(o);
      T value = apply_binary(binary, ops.lhs_at(k, first), ops.rhs_at(k, first));
      for (index_t c = first + 1; c < first + terms; ++c) value += apply_binary(binary, ops.lhs_at(k, c), ops.rhs_at(k, c));
      out[k * out_width + o] = value;
    }
  return out;
}

template <class T>
GsddmmGrads<T> gsddmm_backward(const Graph& g, const GsddmmConfig& config, const DenseTensor<T>* lhs,
                               const DenseTensor<T>* rhs, const DenseTensor<T>& grad_out) {
  validate(g, config, lhs, rhs);
  const index_t out_width = config.out_width();
  require_rows(grad_out, g.num_edges(), "gsddmm backward: grad_out (one row per edge, in edge-id order)");
  if (grad_out.row_size() != out_width)
    throw InputError(fmt::format("gsddmm backward: grad_out has {} values per row, expected {} ({} with heads = {} "
                                 "and features = {})",
                                 grad_out.row_size(), out_width, config.op == SddmmOp::dot ? "heads" : "heads·features",
                                 config.heads, config.features));
  const GsddmmOperands<T> ops{g, config, lhs, rhs};
  const BinaryOp binary = config.binary();
  GsddmmGrads<T> grads;
  if (config.uses_lhs()) grads.grad_lhs = DenseTensor<T>({side_rows(g, config.lhs), config.columns(config.lhs_broadcast)});
  if (config.uses_rhs()) grads.grad_rhs = DenseTensor<T>({side_rows(g, config.rhs), config.columns(config.rhs_broadcast)});
  // Edge by edge in edge-id order: a node's gradient adds its edges' terms in one fixed order.
  for (index_t k = 0; k < g.num_edges(); ++k)
    for (index_t c = 0; c < config.width(); ++c) {
      const T g_out = grad_out[k * out_width + config.output_of(c)];
      const auto [d_lhs, d_rhs] = binary_partials(binary, ops.lhs_at(k, c), ops.rhs_at(k, c));
      if (config.uses_lhs()) grads.grad_lhs[ops.lhs_index(k, c)] += g_out * d_lhs;
      if (config.uses_rhs()) grads.grad_rhs[ops.rhs_index(k, c)] += g_out * d_rhs;
    }
  return grads;
}

GsddmmTerms gsddmm_closed_form_terms(const Graph& g, const GsddmmConfig& config, const Tensor* lhs, const Tensor* rhs,
                                     const Tensor* grad_out) {
  validate(g, config, lhs, rhs);
  const GsddmmOperands<double> ops{g, config, lhs, rhs};
  const BinaryOp binary = config.binary();
  const index_t out_width = config.out_width();
  GsddmmTerms t;
  t.out_abs = Tensor({g.num_edges(), out_width});
  t.out_count = Tensor({g.num_edges(), out_width});
  const bool lhs_gradient = grad_out && config.uses_lhs(), rhs_gradient = grad_out && config.uses_rhs();
  const std::vector<index_t> lhs_shape = {side_rows(g, config.lhs), config.columns(config.lhs_broadcast)};
  const std::vector<index_t> rhs_shape = {side_rows(g, config.rhs), config.columns(config.rhs_broadcast)};
  if (lhs_gradient) t.grad_lhs_abs = Tensor(lhs_shape), t.grad_lhs_count = Tensor(lhs_shape);
  if (rhs_gradient) t.grad_rhs_abs = Tensor(rhs_shape), t.grad_rhs_count = Tensor(rhs_shape);
  for (index_t k = 0; k < g.num_edges(); ++k)
    for (index_t c = 0; c < config.width(); ++c) {
      const double a = ops.lhs_at(k, c), b = ops.rhs_at(k, c);
      const index_t o = k * out_width + config.output_of(c);
      t.out_abs[o] += binary_magnitude(binary, a, b);
      t.out_count[o] += 1;
      if (!grad_out) continue;
      const double g_abs = std::abs((*grad_out)[o]);
      const auto [d_lhs, d_rhs] = binary_partials(binary, a, b);
      if (lhs_gradient) {
        const index_t at = ops.lhs_index(k, c);
        t.grad_lhs_abs[at] += g_abs * std::abs(d_lhs), t.grad_lhs_count[at] += 1;
      }
      if (rhs_gradient) {
        const index_t at = ops.rhs_index(k, c);
        t.grad_rhs_abs[at] += g_abs * std::abs(d_rhs), t.grad_rhs_count[at] += 1;
      }
    }
  // One term's roundings (checks/tolerance.md, "The bound of gsddmm"): the operation's, and for a
  // gradient grad_out rounded with the partial's.
  for (double& n : t.out_count.values()) n += binary_roundings(binary);
  for (double& n : t.grad_lhs_count.values()) n += 1 + lhs_partial_roundings(binary);
  for (double& n : t.grad_rhs_count.values()) n += 1 + rhs_partial_roundings(binary);
  return t;
}

#define GNNCHECK_INSTANTIATE(T)                                                                                   \
  template DenseTensor<T> gsddmm_forward<T>(const Graph&, const GsddmmConfig&, const DenseTensor<T>*,             \
                                            const DenseTensor<T>*);                                               \
  template GsddmmGrads<T> gsddmm_backward<T>(const Graph&, const GsddmmConfig&, const DenseTensor<T>*,            \
                                             const DenseTensor<T>*, const DenseTensor<T>&);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle

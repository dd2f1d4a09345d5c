#include "oracle/gspmm.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gnncheck::oracle {
namespace {

template <class T>
void validate(const Graph& g, const GspmmConfig& config, const DenseTensor<T>* u, const DenseTensor<T>* e) {
  const auto check = [&](const DenseTensor<T>* t, bool used, const char* name, index_t rows, Broadcast b,
                         const char* where) {
    if (!used) return;
    if (!t) throw InputError(fmt::format("gspmm: message {} reads input {}, which is missing", to_string(config.message), name));
    require_broadcast_operand(*t, rows, config, b, fmt::format("gspmm: input {}", name), where,
                              fmt::format("{}_broadcast", name));
  };
  check(u, config.uses_u(), "u", g.n_src(), config.u_broadcast, "source node");
  check(e, config.uses_e(), "e", g.num_edges(), config.e_broadcast, "edge, in edge-id order");
}

// The edge a max or min selects in row i, column c: the first extreme in CSR order; -1 for an empty row.
template <class T>
index_t selected_edge(const GspmmOperands<T>& ops, index_t i, index_t c) {
  const auto row_ptr = ops.g.row_ptr();
  index_t best = -1;
  T best_value{};
  for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) {
    const T m = ops.message_at(k, c);
    const bool better = ops.config.reduce == Reduction::max ? m > best_value : m < best_value;
    if (best < 0 || better) best = k, best_value = m;
  }
  return best;
}

// Roundings of one message from float64 inputs: each operand rounded to the declared precision, and the operation.
int message_roundings(MessageOp op) { return binary_roundings(binary_op(op)); }

// Whether candidate k may be selected instead of `sel` by a correct implementation at unit roundoff u:
// the two messages lie within the rounding each may make (2·γ_r·(|terms of sel| + |terms of k|)).
bool ties(const GspmmOperands<double>& ops, index_t sel, index_t k, index_t c, double u) {
  if (k == sel) return true;
  const double gap = std::abs(ops.message_at(sel, c) - ops.message_at(k, c));
  return gap <= 2 * gamma(message_roundings(ops.config.message), u) * (ops.magnitude_at(sel, c) + ops.magnitude_at(k, c));
}

// The candidates of row i, column c a correct implementation may select: every edge for sum and mean.
std::vector<index_t> candidates(const GspmmOperands<double>& ops, index_t i, index_t c, double u) {
  const auto row_ptr = ops.g.row_ptr();
  std::vector<index_t> out;
  if (!ops.config.selects()) {
    for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) out.push_back(k);
    return out;
  }
  const index_t sel = selected_edge(ops, i, c);
  if (sel < 0) return out;
  out.push_back(sel);
  for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
    if (k != sel && ties(ops, sel, k, c, u)) out.push_back(k);
  return out;
}

}  // namespace

index_t gspmm_selected_edge(const GspmmOperands<double>& ops, index_t i, index_t c) { return selected_edge(ops, i, c); }

GspmmConfig gspmm_config(const Attributes& attrs) {
  GspmmConfig config;
  config.message = parse_choice<MessageOp>(attrs, "gspmm", "message", kMessageOpNames);
  config.reduce = parse_choice<Reduction>(attrs, "gspmm", "reduce", kReductionNames);
  static_cast<BroadcastShape&>(config) = broadcast_shape(attrs, "gspmm");
  config.u_broadcast = parse_choice<Broadcast>(attrs, "gspmm", "u_broadcast", kBroadcastNames);
  config.e_broadcast = parse_choice<Broadcast>(attrs, "gspmm", "e_broadcast", kBroadcastNames);
  config.empty_rows = parse_choice<EmptyRows>(attrs, "gspmm", "empty_rows", kEmptyRowsNames);
  return config;
}

template <class T>
DenseTensor<T> gspmm_forward(const Graph& g, const GspmmConfig& config, const DenseTensor<T>* u, const DenseTensor<T>* e) {
  validate(g, config, u, e);
  const GspmmOperands<T> ops{g, config, u, e};
  const index_t width = config.width();
  const auto row_ptr = g.row_ptr();
  DenseTensor<T> y({g.n_dst(), width});
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t degree = row_ptr[i + 1] - row_ptr[i];
    for (index_t c = 0; c < width; ++c) {
      T out{};
      if (config.selects()) {
        const index_t sel = selected_edge(ops, i, c);
        if (sel >= 0) out = ops.message_at(sel, c);
        else if (config.empty_rows == EmptyRows::identity)
          out = config.reduce == Reduction::max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
      } else {
        for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) out += ops.message_at(k, c);
        if (config.reduce == Reduction::mean && degree > 0) out /= T(degree);
      }
      y[i * width + c] = out;
    }
  }
  return y;
}

template <class T>
GspmmGrads<T> gspmm_backward(const Graph& g, const GspmmConfig& config, const DenseTensor<T>* u, const DenseTensor<T>* e,
                             const DenseTensor<T>& grad_y, TiePolicy ties) {
  validate(g, config, u, e);
  require_rows(grad_y, g.n_dst(), "gspmm backward: grad_y (one row per destination node)");
  const index_t width = config.width();
  if (grad_y.row_size() != width)
    throw InputError(fmt::format("gspmm backward: grad_y has {} values per row, expected heads·features = {}",
                                 grad_y.row_size(), width));
  const GspmmOperands<T> ops{g, config, u, e};
  const auto row_ptr = g.row_ptr();
  const auto col_idx = g.col_idx();
  const index_t u_cols = config.columns(config.u_broadcast), e_cols = config.columns(config.e_broadcast);
  GspmmGrads<T> grads;
  if (config.uses_u()) grads.grad_u = DenseTensor<T>({g.n_src(), u_cols});
  if (config.uses_e()) grads.grad_e = DenseTensor<T>({g.num_edges(), e_cols});
  const auto add_edge = [&](index_t k, index_t c, T g_out) {
    const auto [du, de] = ops.derivatives_at(k, c);
    if (config.uses_u()) grads.grad_u[col_idx[k] * u_cols + config.column(config.u_broadcast, c)] += g_out * du;
    if (config.uses_e()) grads.grad_e[k * e_cols + config.column(config.e_broadcast, c)] += g_out * de;
  };
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t degree = row_ptr[i + 1] - row_ptr[i];
    for (index_t c = 0; c < width; ++c) {
      T g_out = grad_y[i * width + c];
      if (config.selects()) {
        const index_t sel = selected_edge(ops, i, c);
        if (sel < 0) continue;
        if (ties == TiePolicy::first) {
          add_edge(sel, c, g_out);
          continue;
        }
        std::vector<index_t> tied;  // every edge whose message equals the selected one exactly
        for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
          if (ops.message_at(k, c) == ops.message_at(sel, c)) tied.push_back(k);
        if (tied.empty()) add_edge(sel, c, g_out);  // a NaN message equals nothing
        else if (ties == TiePolicy::last) add_edge(tied.back(), c, g_out);
        else for (index_t k : tied) add_edge(k, c, g_out / T(tied.size()));
        continue;
      }
      if (config.reduce == Reduction::mean && degree > 0) g_out /= T(degree);
      for (index_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) add_edge(k, c, g_out);
    }
  }
  return grads;
}

GspmmTerms gspmm_closed_form_terms(const Graph& g, const GspmmConfig& config, const Tensor* u, const Tensor* e,
                                   const Tensor* grad_y, double unit_roundoff) {
  validate(g, config, u, e);
  const GspmmOperands<double> ops{g, config, u, e};
  const index_t width = config.width();
  const auto row_ptr = g.row_ptr();
  const auto col_idx = g.col_idx();
  const index_t u_cols = config.columns(config.u_broadcast), e_cols = config.columns(config.e_broadcast);
  const bool mean = config.reduce == Reduction::mean;
  // Roundings of one term besides the sum's additions (derived in checks/tolerance.md, "The bound of gspmm").
  const int forward_roundings = message_roundings(config.message) + (mean ? 2 : 0);
  const int derivative_u = lhs_partial_roundings(binary_op(config.message));
  const int derivative_e = rhs_partial_roundings(binary_op(config.message));
  const int gradient_u_roundings = 1 + derivative_u + (mean ? 2 : 0);
  const int gradient_e_roundings = 1 + derivative_e + (mean ? 2 : 0);

  GspmmTerms t;
  t.y_abs = Tensor({g.n_dst(), width});
  t.y_count = Tensor({g.n_dst(), width});
  if (grad_y && config.uses_u()) t.grad_u_abs = Tensor({g.n_src(), u_cols}), t.grad_u_count = Tensor({g.n_src(), u_cols});
  if (grad_y && config.uses_e()) t.grad_e_abs = Tensor({g.num_edges(), e_cols}), t.grad_e_count = Tensor({g.num_edges(), e_cols});
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t degree = row_ptr[i + 1] - row_ptr[i];
    for (index_t c = 0; c < width; ++c) {
      const std::vector<index_t> ks = candidates(ops, i, c, unit_roundoff);
      const double scale = mean && degree > 0 ? 1.0 / double(degree) : 1.0;
      double y_abs = 0;
      for (index_t k : ks)
        y_abs = config.selects() ? std::max(y_abs, ops.magnitude_at(k, c)) : y_abs + scale * ops.magnitude_at(k, c);
      t.y_abs[i * width + c] = y_abs;
      t.y_count[i * width + c] = (config.selects() ? 1 : double(ks.size())) + forward_roundings;
      if (!grad_y) continue;
      const double g_abs = std::abs((*grad_y)[i * width + c]) * scale;
      for (index_t k : ks) {
        const auto [du, de] = ops.derivatives_at(k, c);
        if (config.uses_u()) {
          const index_t at = col_idx[k] * u_cols + config.column(config.u_broadcast, c);
          t.grad_u_abs[at] += g_abs * std::abs(du);
          t.grad_u_count[at] += 1;
        }
        if (config.uses_e()) {
          const index_t at = k * e_cols + config.column(config.e_broadcast, c);
          t.grad_e_abs[at] += g_abs * std::abs(de);
          t.grad_e_count[at] += 1;
        }
      }
    }
  }
  for (double& n : t.grad_u_count.values()) n += gradient_u_roundings;
  for (double& n : t.grad_e_count.values()) n += gradient_e_roundings;
  return t;
}

SubgradientChoices gspmm_subgradients(const Graph& g, const GspmmConfig& config, const Tensor* u, const Tensor* e,
                                      const Tensor& grad_y, double unit_roundoff, const GspmmInputNames& names) {
  validate(g, config, u, e);
  SubgradientChoices s;
  // The base is the oracle's gradient without the tied groups' terms; each group's alternatives add them back.
  GspmmGrads<double> oracle_grads = gspmm_backward(g, config, u, e, grad_y);
  if (config.uses_u()) s.base[names.u] = std::move(oracle_grads.grad_u);
  if (config.uses_e()) s.base[names.e] = std::move(oracle_grads.grad_e);
  if (!config.selects()) return s;
  const GspmmOperands<double> ops{g, config, u, e};
  const index_t width = config.width();
  const index_t u_cols = config.columns(config.u_broadcast), e_cols = config.columns(config.e_broadcast);
  const auto col_idx = g.col_idx();
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t c = 0; c < width; ++c) {
      const std::vector<index_t> ks = candidates(ops, i, c, unit_roundoff);
      if (ks.size() < 2) continue;
      TieGroup group;
      group.what = fmt::format("y[{}, {}]", i, c);
      for (index_t k : ks) {
        const auto [du, de] = ops.derivatives_at(k, c);
        const double g_out = grad_y[i * width + c];
        TieAlternative alternative{fmt::format("edge {} (source {})", k, col_idx[k]), {}};
        if (config.uses_u())
          alternative.terms.push_back({names.u, col_idx[k] * u_cols + config.column(config.u_broadcast, c), g_out * du});
        if (config.uses_e())
          alternative.terms.push_back({names.e, k * e_cols + config.column(config.e_broadcast, c), g_out * de});
        group.alternatives.push_back(std::move(alternative));
      }
      // ks[0] is the oracle's selection: its terms are in the base; take them out.
      for (const GradientTerm& term : group.alternatives.front().terms) s.base.at(term.input)[term.flat_index] -= term.value;
      s.groups.push_back(std::move(group));
    }
  return s;
}

void gspmm_kink_arguments(const Case& c, const Attributes& attrs, KinkArguments& k) {
  gspmm_kink_arguments(c, gspmm_config(attrs), GspmmInputNames{}, k);
}

void gspmm_kink_arguments(const Case& c, const GspmmConfig& config, const GspmmInputNames& names, KinkArguments& k) {
  if (!config.selects()) return;
  const Graph& g = *c.graph;
  const auto find = [&](const std::string& name) -> const Tensor* {
    const auto it = c.inputs.find(name);
    return it == c.inputs.end() ? nullptr : &it->second;
  };
  const GspmmOperands<double> ops{g, config, config.uses_u() ? find(names.u) : nullptr,
                                  config.uses_e() ? find(names.e) : nullptr};
  validate(g, config, ops.u, ops.e);
  const auto row_ptr = g.row_ptr();
  struct Where {
    index_t row, column, edge, selected;
  };
  auto where = std::make_shared<std::vector<Where>>();
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t col = 0; col < config.width(); ++col) {
      const index_t sel = selected_edge(ops, i, col);
      for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
        if (e == sel) continue;
        const double gap = ops.message_at(sel, col) - ops.message_at(e, col);
        k.offsets.push_back(config.reduce == Reduction::max ? gap : -gap);
        k.abs_terms.push_back(ops.magnitude_at(sel, col) + ops.magnitude_at(e, col));
        k.terms.push_back(message_roundings(config.message));
        where->push_back({i, col, e, sel});
      }
    }
  if (config.uses_u()) k.upstream.push_back(names.u);
  if (config.uses_e()) k.upstream.push_back(names.e);
  k.describe = [where, reduce = config.reduce](std::size_t n) {
    const Where& w = (*where)[n];
    return fmt::format("the {} of y[{}, {}]: edge {}'s message against the selected edge {}'s", to_string(reduce), w.row,
                       w.column, w.edge, w.selected);
  };
}

#define GNNCHECK_INSTANTIATE(T)                                                                                       \
  template DenseTensor<T> gspmm_forward<T>(const Graph&, const GspmmConfig&, const DenseTensor<T>*, const DenseTensor<T>*); \
  template GspmmGrads<T> gspmm_backward<T>(const Graph&, const GspmmConfig&, const DenseTensor<T>*,                  \
                                           const DenseTensor<T>*, const DenseTensor<T>&, TiePolicy);
GNNCHECK_INSTANTIATE(double)
GNNCHECK_INSTANTIATE(float)
#undef GNNCHECK_INSTANTIATE

}  // namespace gnncheck::oracle

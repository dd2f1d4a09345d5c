#include "oracle/layers/agnn.h"

#include <cmath>

#include "oracle/edge_softmax.h"
#include "oracle/layers/dense.h"
#include "oracle/layers/layer_config.h"
#include "oracle/layers/self_loops.h"
#include "oracle/sddmm.h"
#include "oracle/spmm_ve.h"

namespace gnncheck::oracle::layers {

AgnnConfig AgnnConfig::from_attributes(const Attributes& attrs) {
  AgnnConfig cfg;
  cfg.features = positive_attribute(attrs, "features", "agnn");
  cfg.self_loops = attrs.get_bool("self_loops");
  return cfg;
}

namespace {

// PyG's F.normalize floor: a zero row stays zero instead of dividing by zero.
constexpr double kNormFloor = 1e-12;

template <class T>
void check_inputs(const Graph& g, const AgnnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& beta) {
  require_destinations_are_sources(g, "agnn");
  require_shape(x, {g.n_src(), cfg.features}, "agnn: x");
  require_shape(beta, {1}, "agnn: beta");
}

// The divisor of each row: max(‖x_i‖, floor).
template <class T>
std::vector<T> row_divisors(const DenseTensor<T>& x) {
  std::vector<T> divisor(static_cast<size_t>(x.rows()));
  for (index_t i = 0; i < x.rows(); ++i) {
    T sum = 0;
    for (index_t c = 0; c < x.row_size(); ++c) sum += x.at(i, c) * x.at(i, c);
    divisor[static_cast<size_t>(i)] = std::max(std::sqrt(sum), static_cast<T>(kNormFloor));
  }
  return divisor;
}

template <class T>
struct AgnnActivations {
  AggregationGraph graph;
  std::vector<T> divisor;
  DenseTensor<T> normalized;  // n = x / divisor
  DenseTensor<T> cosine;      // [E, 1]
  DenseTensor<T> alpha;       // [E, 1]
};

template <class T>
AgnnActivations<T> agnn_activations(const Graph& g, const AgnnConfig& cfg, const DenseTensor<T>& x,
                                    const DenseTensor<T>& beta) {
  AgnnActivations<T> act{AggregationGraph(g, cfg.self_loops), row_divisors(x), x, {}, {}};
  for (index_t i = 0; i < x.rows(); ++i)
    for (index_t c = 0; c < x.row_size(); ++c) act.normalized.at(i, c) /= act.divisor[static_cast<size_t>(i)];
  act.cosine = sddmm_dot_forward(*act.graph, first_rows(act.normalized, g.n_dst()), act.normalized, index_t{1});
  DenseTensor<T> logits = act.cosine;
  for (auto& v : logits.values()) v *= beta[0];
  act.alpha = edge_softmax_forward(*act.graph, logits);
  return act;
}

}  // namespace

template <class T>
DenseTensor<T> agnn_forward(const Graph& g, const AgnnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& beta) {
  check_inputs(g, cfg, x, beta);
  const AgnnActivations<T> act = agnn_activations(g, cfg, x, beta);
  return spmm_ve_forward(*act.graph, act.alpha, x);
}

template <class T>
AgnnGrads<T> agnn_backward(const Graph& g, const AgnnConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& beta,
                           const DenseTensor<T>& grad_y) {
  check_inputs(g, cfg, x, beta);
  require_shape(grad_y, {g.n_dst(), cfg.features}, "agnn: grad_y");
  const AgnnActivations<T> act = agnn_activations(g, cfg, x, beta);
  SpmmVeGrads<T> aggregation = spmm_ve_backward(*act.graph, act.alpha, x, grad_y);
  const DenseTensor<T> grad_logits = edge_softmax_backward(*act.graph, act.alpha, aggregation.grad_edge_values);

  AgnnGrads<T> grads;
  T grad_beta = 0;
  DenseTensor<T> grad_cosine = grad_logits;
  for (index_t k = 0; k < grad_logits.size(); ++k) {
    grad_beta += grad_logits[k] * act.cosine[k];
    grad_cosine[k] *= beta[0];
  }
  grads.grad_beta = DenseTensor<T>({1}, std::vector<T>{grad_beta});

  const SddmmGrads<T> similarity =
      sddmm_dot_backward(*act.graph, first_rows(act.normalized, g.n_dst()), act.normalized, index_t{1}, grad_cosine);
  DenseTensor<T> grad_normalized = similarity.grad_v;
  add_into_first_rows(grad_normalized, T(1), similarity.grad_u);

  // Row normalization backward: above the floor, grad_x = (grad_n − n ⟨n, grad_n⟩) / ‖x‖;
  // at the floor the divisor is a constant and grad_x = grad_n / floor.
  grads.grad_x = std::move(aggregation.grad_x);
  for (index_t i = 0; i < x.rows(); ++i) {
    const T divisor = act.divisor[static_cast<size_t>(i)];
    // At ‖x_i‖ = floor exactly (divisor == floor) the left side is the floor's, the right x/‖x‖'s.
    bool at_floor = !(divisor > static_cast<T>(kNormFloor));
    if (at_floor && cfg.kink_side == KinkSide::right) {
      T sum = 0;
      for (index_t c = 0; c < x.row_size(); ++c) sum += x.at(i, c) * x.at(i, c);
      at_floor = std::sqrt(sum) < static_cast<T>(kNormFloor);
    }
    T projection = 0;
    if (!at_floor)
      for (index_t c = 0; c < x.row_size(); ++c) projection += act.normalized.at(i, c) * grad_normalized.at(i, c);
    for (index_t c = 0; c < x.row_size(); ++c)
      grads.grad_x.at(i, c) += (grad_normalized.at(i, c) - projection * act.normalized.at(i, c)) / divisor;
  }
  return grads;
}

template DenseTensor<double> agnn_forward(const Graph&, const AgnnConfig&, const Tensor&, const Tensor&);
template DenseTensor<float> agnn_forward(const Graph&, const AgnnConfig&, const TensorF&, const TensorF&);
template AgnnGrads<double> agnn_backward(const Graph&, const AgnnConfig&, const Tensor&, const Tensor&, const Tensor&);
template AgnnGrads<float> agnn_backward(const Graph&, const AgnnConfig&, const TensorF&, const TensorF&,
                                        const TensorF&);

}  // namespace gnncheck::oracle::layers

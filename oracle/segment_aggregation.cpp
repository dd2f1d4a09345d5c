#include "oracle/segment_aggregation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "core/parallel.h"
#include "oracle/broadcast_operands.h"

namespace gnncheck::oracle {

SegmentAggregationConfig SegmentAggregationConfig::from_attributes(const Attributes& attrs) {
  SegmentAggregationConfig cfg;
  cfg.aggr = parse_choice<SegmentAggregation>(attrs, "segment_aggregation", "aggr", kSegmentAggregationNames);
  cfg.features = positive_size(attrs, "segment_aggregation", "features");
  return cfg;
}

namespace {

template <class T>
void check_inputs(const Graph& g, const SegmentAggregationConfig& cfg, const DenseTensor<T>& x, const DenseTensor<T>& t) {
  require_shape(x, {g.num_edges(), cfg.features}, "segment_aggregation: x");
  if (cfg.has_temperature()) require_shape(t, {1}, "segment_aggregation: t");
}

// One segment's column f: x[k, f] for k in [begin, end).
template <class T>
struct Column {
  const DenseTensor<T>& x;
  index_t begin, end, f;
  index_t size() const { return end - begin; }
  T operator[](index_t k) const { return x.at(begin + k, f); }
};

// The softmax weights α_k of a column under temperature t (the largest t·x subtracted first).
template <class T>
std::vector<T> softmax_weights(const Column<T>& c, T t) {
  std::vector<T> w(static_cast<size_t>(c.size()));
  T top = -std::numeric_limits<T>::infinity();
  for (index_t k = 0; k < c.size(); ++k) top = std::max(top, t * c[k]);
  T sum = 0;
  for (index_t k = 0; k < c.size(); ++k) sum += (w[static_cast<size_t>(k)] = std::exp(t * c[k] - top));
  for (T& v : w) v /= sum;
  return w;
}

// The mean and the population variance of a column as PyG computes it (mean of squares minus the
// squared mean); 0 and 0 on an empty one.
template <class T>
struct Moments {
  T mean = 0, var = 0;
};

template <class T>
Moments<T> moments(const Column<T>& c) {
  const index_t n = c.size();
  if (n == 0) return {};
  T sum = 0, squares = 0;
  for (index_t k = 0; k < n; ++k) sum += c[k], squares += c[k] * c[k];
  const T mean = sum / static_cast<T>(n);
  return {mean, squares / static_cast<T>(n) - mean * mean};
}

// std's value where the variance is above PyG's floor; 0 there and below (the masked_fill).
template <class T>
bool std_above_floor(T var) {
  return var > static_cast<T>(kStdVarianceFloor);
}

template <class T>
T aggregate(const SegmentAggregationConfig& cfg, const Column<T>& c, T t) {
  const index_t n = c.size();
  switch (cfg.aggr) {
    case SegmentAggregation::var: return moments(c).var;
    case SegmentAggregation::std: {
      const T var = moments(c).var;
      return std_above_floor(var) ? std::sqrt(var) : T(0);
    }
    case SegmentAggregation::mul: {
      T product = 1;
      for (index_t k = 0; k < n; ++k) product *= c[k];
      return product;
    }
    case SegmentAggregation::softmax: {
      const std::vector<T> alpha = softmax_weights(c, t);
      T y = 0;
      for (index_t k = 0; k < n; ++k) y += alpha[static_cast<size_t>(k)] * c[k];
      return y;
    }
  }
  return 0;
}

}  // namespace

template <class T>
DenseTensor<T> segment_aggregation_forward(const Graph& g, const SegmentAggregationConfig& cfg, const DenseTensor<T>& x,
                                           const DenseTensor<T>& t) {
  check_inputs(g, cfg, x, t);
  const T temperature = cfg.has_temperature() ? t[0] : T(1);
  DenseTensor<T> y({g.n_dst(), cfg.features});
  const auto& ptr = g.row_ptr();
#pragma omp parallel for schedule(dynamic, 64) if (worth_parallel(g.num_edges() * cfg.features))
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t f = 0; f < cfg.features; ++f)
      y.at(i, f) = aggregate(cfg, Column<T>{x, ptr[i], ptr[i + 1], f}, temperature);
  return y;
}

template <class T>
SegmentAggregationGrads<T> segment_aggregation_backward(const Graph& g, const SegmentAggregationConfig& cfg,
                                                        const DenseTensor<T>& x, const DenseTensor<T>& t,
                                                        const DenseTensor<T>& grad_y) {
  check_inputs(g, cfg, x, t);
  require_shape(grad_y, {g.n_dst(), cfg.features}, "segment_aggregation: grad_y");
  const T temperature = cfg.has_temperature() ? t[0] : T(1);
  SegmentAggregationGrads<T> grads{DenseTensor<T>(x.shape()), {}};
  // grad_t's terms per destination row, summed in row order below (the same for any thread count).
  std::vector<T> grad_t_rows(cfg.has_temperature() ? static_cast<size_t>(g.n_dst()) : 0, T(0));
  const auto& ptr = g.row_ptr();
#pragma omp parallel for schedule(dynamic, 64) if (worth_parallel(g.num_edges() * cfg.features))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    for (index_t f = 0; f < cfg.features; ++f) {
      const Column<T> c{x, ptr[i], ptr[i + 1], f};
      const index_t n = c.size();
      const T gy = grad_y.at(i, f);
      if (n == 0) continue;
      switch (cfg.aggr) {
        case SegmentAggregation::var: {
          const T mean = moments(c).mean;
          for (index_t k = 0; k < n; ++k) grads.grad_x.at(c.begin + k, f) = gy * (T(2) / static_cast<T>(n)) * (c[k] - mean);
          break;
        }
        case SegmentAggregation::std: {
          const Moments<T> m = moments(c);
          if (!std_above_floor(m.var)) break;  // the masked value is constant: its gradient is 0
          const T scale = gy / (static_cast<T>(n) * std::sqrt(m.var));
          for (index_t k = 0; k < n; ++k) grads.grad_x.at(c.begin + k, f) = scale * (c[k] - m.mean);
          break;
        }
        case SegmentAggregation::mul: {
          // Π_{l≠k} x[l] as the product before k times the product after k: exact where the
          // segment holds zeros, which y / x[k] is not.
          std::vector<T> after(static_cast<size_t>(n) + 1, T(1));
          for (index_t k = n - 1; k >= 0; --k)
            after[static_cast<size_t>(k)] = after[static_cast<size_t>(k) + 1] * c[k];
          T before = 1;
          for (index_t k = 0; k < n; ++k) {
            grads.grad_x.at(c.begin + k, f) = gy * (before * after[static_cast<size_t>(k) + 1]);
            before *= c[k];
          }
          break;
        }
        case SegmentAggregation::softmax: {
          const std::vector<T> alpha = softmax_weights(c, temperature);
          T y = 0;
          for (index_t k = 0; k < n; ++k) y += alpha[static_cast<size_t>(k)] * c[k];
          T dt = 0;
          for (index_t k = 0; k < n; ++k) {
            const T a = alpha[static_cast<size_t>(k)];
            grads.grad_x.at(c.begin + k, f) = gy * a * (T(1) + temperature * (c[k] - y));
            dt += a * c[k] * (c[k] - y);
          }
          grad_t_rows[static_cast<size_t>(i)] += gy * dt;
          break;
        }
      }
    }
  }
  if (cfg.has_temperature()) {
    grads.grad_t = DenseTensor<T>({1});
    for (T v : grad_t_rows) grads.grad_t[0] += v;
  }
  return grads;
}

template DenseTensor<double> segment_aggregation_forward(const Graph&, const SegmentAggregationConfig&, const Tensor&,
                                                         const Tensor&);
template DenseTensor<float> segment_aggregation_forward(const Graph&, const SegmentAggregationConfig&, const TensorF&,
                                                        const TensorF&);
template SegmentAggregationGrads<double> segment_aggregation_backward(const Graph&, const SegmentAggregationConfig&,
                                                                      const Tensor&, const Tensor&, const Tensor&);
template SegmentAggregationGrads<float> segment_aggregation_backward(const Graph&, const SegmentAggregationConfig&,
                                                                     const TensorF&, const TensorF&, const TensorF&);

}  // namespace gnncheck::oracle

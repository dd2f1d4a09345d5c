#include "checks/segment_softmax_floor.h"

#include <cmath>
#include <vector>

#include "core/parallel.h"

namespace gnncheck::checks {

Floors segment_softmax_floor(const Case& c, double u) {
  const auto x = c.inputs.find("x"), t = c.parameters.find("t");
  const auto gy = c.grad_outputs.find("y");
  if (x == c.inputs.end() || t == c.parameters.end() || gy == c.grad_outputs.end() || t->second.size() != 1) return {};
  const Graph& g = *c.graph;
  const Tensor& xs = x->second;
  const double temperature = t->second[0];
  const index_t F = xs.row_size();
  Tensor floor_x(xs.shape());
  std::vector<double> t_parts(static_cast<size_t>(g.n_dst()), 0.0);
  // Each segment adds to its own rows of x and to its own part of t's floor: segments run in parallel.
#pragma omp parallel for schedule(dynamic, 64) if (worth_parallel(g.num_edges() * F))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = g.row_ptr()[i], end = g.row_ptr()[i + 1];
    if (begin == end) continue;
    const double gamma_d = gamma(static_cast<double>(end - begin) + 4.0, u);
    std::vector<double> logit(static_cast<size_t>(end - begin)), G(logit.size()), delta(logit.size());
    for (index_t f = 0; f < F; ++f) {
      const double gif = std::abs(gy->second[i * F + f]);
      for (index_t k = begin; k < end; ++k) {
        logit[static_cast<size_t>(k - begin)] = temperature * xs[k * F + f];
        G[static_cast<size_t>(k - begin)] = gif * std::abs(xs[k * F + f]);
      }
      softmax_backward_rounding(logit, G, gamma_d, delta);
      for (index_t k = begin; k < end; ++k) {
        const double d = delta[static_cast<size_t>(k - begin)];
        t_parts[static_cast<size_t>(i)] += d * std::abs(xs[k * F + f]);
        floor_x[k * F + f] = d * std::abs(temperature);
      }
    }
  }
  Tensor floor_t(t->second.shape());
  for (double part : t_parts) floor_t[0] += part;
  Floors floors;
  floors.emplace_back("gradient t", std::move(floor_t));
  floors.emplace_back("gradient x", std::move(floor_x));
  return floors;
}

}  // namespace gnncheck::checks

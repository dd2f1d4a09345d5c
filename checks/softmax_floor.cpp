// edge_softmax's backward floor (checks/softmax.md; GAT's use: checks/tolerance.md, "Measured"): a
// member of the tolerance model kept apart from its general rules.
#include <cmath>

#include "checks/tolerance.h"
#include "core/parallel.h"

namespace gnncheck::checks {

void ToleranceModel::add_softmax_backward_floor(const Case& c, const Result& exact, double u, Tensor& bound) const {
  // grad_s[k] = α_k·(ḡ_k − Σ_{k' in row} α_k'·ḡ_k'): a short sum whose terms are α_k·ḡ_k and
  // α_k·α_k'·ḡ_k'. When α is one-hot the difference cancels to ~0 and neither |y| nor float32's error
  // (flushed to 0) reflects the rounding of those terms: γ_(d+4)·α_k·(|ḡ_k| + Σ α|ḡ|) does.
  auto alpha_it = exact.outputs.find("alpha");
  auto grad_it = c.grad_outputs.find("alpha");
  if (alpha_it == exact.outputs.end() || grad_it == c.grad_outputs.end()) return;
  const Tensor& alpha = alpha_it->second;
  const Tensor& gy = grad_it->second;
  const Graph& g = *c.graph;
  const index_t heads = std::max<index_t>(1, alpha.row_size());
  // Each row adds to its own edges only: rows run in parallel.
#pragma omp parallel for schedule(dynamic, 64) if (worth_parallel(g.num_edges() * heads))
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const double d = static_cast<double>(g.in_degree(i)) + 4.0;
    for (index_t h = 0; h < heads; ++h) {
      double weighted = 0.0;
      for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e)
        weighted += std::abs(alpha[e * heads + h] * gy[e * heads + h]);
      for (index_t e = g.row_ptr()[i]; e < g.row_ptr()[i + 1]; ++e) {
        const index_t k = e * heads + h;
        bound[k] += options_.safety_factor * gamma(d, u) * std::abs(alpha[k]) * (std::abs(gy[k]) + weighted);
      }
    }
  }
}

}  // namespace gnncheck::checks

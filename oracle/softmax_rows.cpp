#include "oracle/softmax_rows.h"

#include <algorithm>
#include <cmath>

namespace gnncheck::oracle {

std::vector<double> leaky_relu_arguments(KinkArgumentsFn kink_arguments_of, const Case& c, Attributes attrs) {
  attrs.set("negative_slope", 0.0);
  KinkArguments k;
  kink_arguments_of(c, attrs, k);
  return k.offsets;
}

double leaky_relu(double z, double slope) { return z > 0.0 ? z : slope * z; }

std::vector<SoftmaxRow> softmax_rows_of(const Graph& g, const std::vector<double>& logits, index_t heads) {
  const auto row_ptr = g.row_ptr();
  std::vector<SoftmaxRow> rows;
  rows.reserve(static_cast<std::size_t>(g.n_dst() * heads));
  for (index_t i = 0; i < g.n_dst(); ++i)
    for (index_t h = 0; h < heads; ++h) {
      SoftmaxRow r;
      r.length = static_cast<double>(row_ptr[i + 1] - row_ptr[i]);
      for (index_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e)
        r.largest_logit = std::max(r.largest_logit, std::abs(logits[static_cast<std::size_t>(e * heads + h)]));
      rows.push_back(r);
    }
  return rows;
}

}  // namespace gnncheck::oracle

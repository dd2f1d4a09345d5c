#include "oracle/softmax_rows.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "oracle/kink_arguments.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::oracle {
namespace {

using KinkArgumentsFn = void (*)(const Case&, const Attributes&, KinkArguments&);

// The LeakyReLU's argument at every unit (edge and head, or edge and channel), in float64: what the
// layer's kink hook lists. The hook lists nothing at a slope of 1 (LeakyReLU is then the identity),
// so it is asked at another slope: the argument does not depend on it.
std::vector<double> leaky_relu_arguments(KinkArgumentsFn kink_arguments_of, const Case& c, Attributes attrs) {
  attrs.set("negative_slope", 0.0);
  KinkArguments k;
  kink_arguments_of(c, attrs, k);
  return k.offsets;
}

double leaky_relu(double z, double slope) { return z > 0.0 ? z : slope * z; }

// Each (row of g, head): its length and its largest |logit|, for logits [E, heads] in edge-id order.
std::vector<SoftmaxRow> rows_of(const Graph& g, const std::vector<double>& logits, index_t heads) {
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

}  // namespace

std::vector<SoftmaxRow> gat_softmax_rows(const Case& c, const Attributes& attrs) {
  const double slope = attrs.get_double("negative_slope");
  std::vector<double> logits = leaky_relu_arguments(gat_kink_arguments, c, attrs);
  for (double& s : logits) s = leaky_relu(s, slope);
  const layers::AggregationGraph agg(*c.graph, attrs.get_bool("self_loops"));
  return rows_of(*agg, logits, attrs.get_int("heads"));
}

std::vector<SoftmaxRow> gatv2_softmax_rows(const Case& c, const Attributes& attrs) {
  const double slope = attrs.get_double("negative_slope");
  const index_t heads = attrs.get_int("heads"), channels = attrs.get_int("out_features");
  const std::vector<double> z = leaky_relu_arguments(gatv2_kink_arguments, c, attrs);  // [E of Ã, heads·C]
  const auto att_it = c.parameters.find("att");
  if (att_it == c.parameters.end()) throw InternalError("gatv2_softmax_rows: the case has no 'att'");
  const Tensor& att = att_it->second;  // [heads, C]
  const std::size_t width = static_cast<std::size_t>(heads * channels);
  std::vector<double> logits(width ? z.size() / width * static_cast<std::size_t>(heads) : 0, 0.0);
  for (std::size_t e = 0; width && e < z.size() / width; ++e)
    for (index_t h = 0; h < heads; ++h)
      for (index_t ch = 0; ch < channels; ++ch)
        logits[e * static_cast<std::size_t>(heads) + static_cast<std::size_t>(h)] +=
            att.at(h, ch) * leaky_relu(z[e * width + static_cast<std::size_t>(h * channels + ch)], slope);
  const layers::AggregationGraph agg(*c.graph, attrs.get_bool("self_loops"));
  return rows_of(*agg, logits, heads);
}

std::vector<SoftmaxRow> rgat_softmax_rows(const Case& c, const Attributes& attrs) {
  const double slope = attrs.get_double("negative_slope");
  std::vector<double> logits = leaky_relu_arguments(rgat_kink_arguments, c, attrs);
  for (double& s : logits) s = leaky_relu(s, slope);
  return rows_of(*c.graph, logits, attrs.get_int("heads"));
}

std::vector<SoftmaxRow> agnn_softmax_rows(const Case& c, const Attributes& attrs) {
  // β·cos(x_i, x_j), |cos| ≤ 1: every logit is within |β|.
  const auto beta_it = c.parameters.find("beta");
  if (beta_it == c.parameters.end()) throw InternalError("agnn_softmax_rows: the case has no 'beta'");
  const double beta = std::abs(beta_it->second[0]);
  const layers::AggregationGraph agg(*c.graph, attrs.get_bool("self_loops"));
  const auto row_ptr = agg->row_ptr();
  std::vector<SoftmaxRow> rows;
  for (index_t i = 0; i < agg->n_dst(); ++i) {
    const double length = static_cast<double>(row_ptr[i + 1] - row_ptr[i]);
    rows.push_back({length > 0 ? beta : 0.0, length});
  }
  return rows;
}

std::vector<SoftmaxRow> attention_softmax_rows(const Case& c, const Attributes& attrs) {
  const auto it = c.inputs.find("logits");
  if (it == c.inputs.end()) throw InternalError("attention_softmax_rows: the case has no 'logits'");
  return rows_of(*c.graph, it->second.values(), attrs.get_int("heads"));
}

}  // namespace gnncheck::oracle

// GATv2's rounding floor (checks/gat_floor.h): GAT's δ_e on the logits' gradient, carried through
// GATv2's own chain — att meets LeakyReLU(z) per channel, z meets att through LeakyReLU′ — into
// att, weight_src, weight_dst and x.
#include <algorithm>
#include <cmath>
#include <vector>

#include "checks/gat_floor.h"
#include "checks/tolerance.h"
#include "oracle/layers/dense.h"
#include "oracle/layers/gatv2.h"
#include "oracle/layers/self_loops.h"

namespace gnncheck::checks {
Floors gatv2_attention_floors(const oracle::TargetDef& def, const Case& c, double u, double stored_u) {
  if (!c.inputs.count("x") || !c.parameters.count("weight_src") || !c.parameters.count("weight_dst") ||
      !c.parameters.count("att") || !c.grad_outputs.count("y"))
    return {};
  namespace ol = oracle::layers;
  const auto cfg = ol::Gatv2Config::from_attributes(oracle::with_defaults(def.spec, c.attributes));
  const ol::AggregationGraph looped(*c.graph, cfg.self_loops);
  const Graph& g = *looped;
  const Tensor& x = c.inputs.at("x");
  const Tensor& w_src = c.parameters.at("weight_src");
  const Tensor& w_dst = c.parameters.at("weight_dst");
  const Tensor& att = c.parameters.at("att");
  const Tensor& gy = c.grad_outputs.at("y");
  const index_t H = cfg.heads, C = cfg.out_features;
  const double slope = cfg.negative_slope, steepest = std::max(1.0, std::abs(slope));
  const Tensor h_src = ol::matmul(x, w_src), h_dst = ol::matmul(ol::first_rows(x, g.n_dst()), w_dst);
  // |x|·|W| per side, where the storing term needs the logits' terms.
  const Tensor h_src_abs = stored_u > 0 ? ol::matmul(ol::absolute(x), ol::absolute(w_src)) : Tensor();
  const Tensor h_dst_abs = stored_u > 0 ? ol::matmul(ol::first_rows(ol::absolute(x), g.n_dst()), ol::absolute(w_dst)) : Tensor();
  auto grad_out = [&](index_t i, index_t head, index_t ch) {
    return cfg.concat ? gy.at(i, head * C + ch) : gy.at(i, ch) / static_cast<double>(H);
  };
  Tensor floor_att(att.shape()), floor_h_src(h_src.shape()), floor_h_dst(h_dst.shape());
  for (index_t i = 0; i < g.n_dst(); ++i) {
    const index_t begin = g.row_ptr()[i], end = g.row_ptr()[i + 1];
    if (begin == end) continue;
    const double d = static_cast<double>(end - begin) + 4.0 + static_cast<double>(C);
    for (index_t head = 0; head < H; ++head) {
      std::vector<double> logits(static_cast<size_t>(end - begin)), G(logits.size()), delta(logits.size());
      double logit_terms = 0.0;  // the row's largest logit on |inputs|
      std::vector<double> gbar(logits.size());
      for (index_t e = begin; e < end; ++e) {
        const index_t j = g.col_idx()[e];
        double logit = 0.0, mag = 0.0, terms = 0.0, signed_g = 0.0;
        for (index_t ch = 0; ch < C; ++ch) {
          const double z = h_dst.at(i, head * C + ch) + h_src.at(j, head * C + ch);
          logit += att.at(head, ch) * (z > 0 ? z : slope * z);
          mag += std::abs(grad_out(i, head, ch)) * std::abs(h_src.at(j, head * C + ch));
          signed_g += grad_out(i, head, ch) * h_src.at(j, head * C + ch);
          if (stored_u > 0)
            terms += std::abs(att.at(head, ch)) * (h_dst_abs.at(i, head * C + ch) + h_src_abs.at(j, head * C + ch));
        }
        logits[static_cast<size_t>(e - begin)] = logit;
        G[static_cast<size_t>(e - begin)] = mag;
        gbar[static_cast<size_t>(e - begin)] = signed_g;
        logit_terms = std::max(logit_terms, steepest * terms);
      }
      // With storage coarser than the sums: ḡ's own storing, and what moving the logits apart does.
      softmax_backward_rounding(logits, G, gamma(d, u) + (stored_u > 0 ? gamma(3, stored_u) : 0.0), delta);
      add_softmax_backward_logit_moves(logits, gbar, unshared_logit_spread(logit_terms, end - begin, stored_u), delta);
      for (index_t e = begin; e < end; ++e) {
        const index_t j = g.col_idx()[e];
        const double delta_e = delta[static_cast<size_t>(e - begin)];
        for (index_t ch = 0; ch < C; ++ch) {
          const index_t m = head * C + ch;
          const double z = h_dst.at(i, m) + h_src.at(j, m);
          floor_att.at(head, ch) += std::abs(z > 0 ? z : slope * z) * delta_e;
          const double through_z = std::abs(att.at(head, ch)) * steepest * delta_e;
          floor_h_src.at(j, m) += through_z;
          floor_h_dst.at(i, m) += through_z;
        }
      }
    }
  }
  const Tensor x_dst_abs = ol::absolute(ol::first_rows(x, g.n_dst()));
  Tensor floor_x = ol::matmul_a_bt(floor_h_src, ol::absolute(w_src));
  ol::add_into_first_rows(floor_x, 1.0, ol::matmul_a_bt(floor_h_dst, ol::absolute(w_dst)));
  Floors floors;
  floors.emplace_back("gradient att", std::move(floor_att));
  floors.emplace_back("gradient weight_src", ol::matmul_at_b(ol::absolute(x), floor_h_src));
  floors.emplace_back("gradient weight_dst", ol::matmul_at_b(x_dst_abs, floor_h_dst));
  floors.emplace_back("gradient x", std::move(floor_x));
  return floors;
}

}  // namespace gnncheck::checks

// gnncheck/checks/gat_floor.h — GAT's rounding floor for the gradients of its attention vectors,
// weight and input, which the measured model's float32 orders and f(|inputs|) do not show where the
// attention's backward cancels (a near one-hot row).
//
// GAT's backward runs edge_softmax's backward on ḡ_e = ⟨grad_out_i, h_j⟩ (per head), then the
// score products: grad_att_src[h,c] = Σ_e h[src(e),h,c]·grad_logit_e[h] (att_dst with h[dst(e)]),
// grad_h += att ⊗ grad_logit, grad_W = xᵀ·grad_h, grad_x = grad_h·Wᵀ. On a near one-hot row
// grad_logit cancels to ~0 in exact arithmetic while float64 keeps a rounding of
// δ_e = γ_(d+4+C)·α_e·(G_e + Σ_row α·G), G_e = Σ_c |grad_out_i|·|h_j| (edge_softmax's floor with
// the dot product's own terms). The chain rule multiplies δ by |h| ~ |x||W| into the attention
// gradients, far above γ·|those gradients|; this adds safety·(δ propagated through |h|, |att|,
// |W| and |x|) to the bounds of att_src, att_dst, weight and x. Attention dropout scales kept
// weights by 1/(1−p): G is multiplied by that (an upper bound). gat_attention_floors computes the
// floors (by label; none without the layer's inputs and output gradient) — it reads only the case,
// so it runs beside the model's evaluations — and add_floors adds safety·floor to the bounds.
//
//   const Floors floors = gat_attention_floors(def, c, unit_roundoff(p));  // reads only the case
//   add_floors(floors, 2.0, bounds.tensors);  // adds to "gradient att_src", "att_dst", "weight", "x"
#pragma once

#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/case.h"
#include "core/tensor.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

// Floors by bound label ("gradient x", …).
using Floors = std::vector<std::pair<std::string, Tensor>>;

// GAT's floors for case c at unit roundoff u; none for a case without the layer's inputs and output
// gradient. stored_u > 0: a system that stores its inputs in a format of that roundoff and computes
// in a finer one (checks/tolerance.md, "Storage and accumulation"); each row's δ then also holds
// what storing the inputs moves the softmax's backward by (add_softmax_backward_logit_moves below).
Floors gat_attention_floors(const oracle::TargetDef& def, const Case& c, double u, double stored_u = 0.0);

// GATv2's floors (checks/gatv2_floor.cpp): the same δ_e per edge and head, with GATv2's logit
// Σ_c att·LeakyReLU(z) and G_e = Σ_c |grad_out_i|·|h_src_j|, carried to att through |LeakyReLU(z)|
// and to h_src and h_dst through |att|·max(1, |slope|), then to weight_src, weight_dst and x; by
// label ("gradient att", …), none without the layer's inputs and output gradient.
Floors gatv2_attention_floors(const oracle::TargetDef& def, const Case& c, double u, double stored_u = 0.0);

// RGAT's floors (checks/rgat_floor.cpp): the same δ_e per edge and head, with G_e = Σ_c
// |grad_out_i|·|out_j[e]| (each edge's message projected by its relation), through the LeakyReLU's
// steepest side max(1, |slope|) to q and k through |out_i| and |out_j|, to out_i and out_j through
// |q| and |k|, then to weight and x through |x| and |W_r|; by label ("gradient q", …), none without
// the layer's inputs and output gradient.
Floors rgat_attention_floors(const oracle::TargetDef& def, const Case& c, double u, double stored_u = 0.0);

// Fused attention (the `attention` target): edge_softmax's backward floor on "gradient logits",
// γ_(d+C+4)·α_k·(G_k + Σ_row α·G) with G_k = Σ_c |grad_y[row_k, h·C + c]|·|x[col_k, h·C + c]| — the
// rounding of ḡ = ⟨grad_y, x⟩ and of the softmax backward's short sum, which a near one-hot row
// cancels to ~0 in exact arithmetic (GAT's δ without the layer around it). None without the case's
// logits, x and output gradient.
Floors attention_logits_floor(const Case& c, double u);

// edge_softmax's backward rounding on one row and head: with α = softmax(logits) and G_k the
// magnitude of the k-th edge's ḡ terms, δ_k = gamma_d·α_k·(G_k + Σ α·G), written into `delta`
// (the three floors above share it; gamma_d = γ_(d+4+C)(u) for a row of d edges and C channels).
void softmax_backward_rounding(std::span<const double> logits, std::span<const double> G, double gamma_d,
                               std::span<double> delta);

// What storing a row's inputs in a format coarser than the sums moves a softmax backward term
// α_k·(ḡ_k − ḡ̄) by (ḡ̄ = Σ α·ḡ). A logit is a sum of products of at most three stored values, so
// storing moves it by at most γ_3(u_s)·(its terms on |inputs|); what the softmax sees is how far two
// logits of the row can move apart, `logit_spread` S (0 on a row of one edge, where α = 1 whatever
// the logit; a part every logit of the row shares cancels). α_k then moves by a factor 1 + η_k,
// |η_k| ≤ e^S − 1, and since Σ α·η = 0 the term by at most (e^(2S) − 1)·α_k·(|ḡ_k − ḡ̄| + Σ α·|ḡ − ḡ̄|):
// nothing where every ḡ of the row is equal. Added to `delta`; gbar holds the row's exact ḡ. (ḡ's
// own storing, a stored output gradient times two stored factors, is γ_3(u_s)·(G_k + Σ α·G), added
// to softmax_backward_rounding's gamma.) One random nudge, the measured model's s, can miss this
// where the term cancels: a bfloat16-stored GAT's att_dst gradient on 2 nodes failed at 1.47×.
// Whatever S, α_k ends at most at min(1, α_k·e^(2S)) and ḡ_k − ḡ̄ moves within the row's range of ḡ,
// which bounds the term too: the smaller bound holds, and where e^(2S) overflows (rows of `large`
// values stored in a half format) the second alone — never ∞·0 where α_k underflowed to 0.
void add_softmax_backward_logit_moves(std::span<const double> logits, std::span<const double> gbar, double logit_spread,
                                  std::span<double> delta);
// S for a row whose logits share no part: 2·γ_3(stored_u)·(the largest logit on |inputs|), 0 for one edge.
double unshared_logit_spread(double largest_logit_terms, index_t row_edges, double stored_u);

// Adds safety·floor to each bound of `tensors` with the floor's label and shape.
void add_floors(const Floors& floors, double safety, std::map<std::string, Tensor>& tensors);

}  // namespace gnncheck::checks

// gnncheck/checks/agnn_floor.h — AGNN's rounding floor for the gradients of beta and x.
//
// AGNN's backward (oracle/layers/agnn.h) runs edge_softmax's backward on ḡ_e = ⟨ȳ_i, x_j⟩, sums
// grad_logit·cos into beta, and sends beta·grad_logit through the cosine and the row normalization
// into x. Where those cancel in exact arithmetic — identical edges (Σ_row grad_logit = 0), a
// one-feature x (x/‖x‖ = ±1 is piecewise constant) — a correct float32 implementation keeps a
// rounding of γ·Σ|terms| that neither the measured model's float32 orders nor f(|inputs|) (a
// difference cancels on |inputs| too) show. The derivation is in checks/tolerance.md ("AGNN's floor").
//
//   add_agnn_attention_floor(c, unit_roundoff(p), 2.0, bounds.tensors);  // adds to "gradient beta", "gradient x"
#pragma once

#include <map>
#include <string>

#include "core/case.h"
#include "core/tensor.h"

namespace gnncheck::checks {

// Adds safety·(the floor) to the bounds labelled "gradient beta" and "gradient x" of an agnn case
// (those present with the floor's shape); a case without x, beta or ȳ is left alone.
void add_agnn_attention_floor(const Case& c, double u, double safety, std::map<std::string, Tensor>& tensors);

}  // namespace gnncheck::checks

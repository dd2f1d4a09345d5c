// gnncheck/checks/segment_softmax_floor.h — the softmax aggregation's backward floor (the
// `segment_softmax` ToleranceFloor of segment_aggregation with aggr = softmax).
//
// PyG's SoftmaxAggregation differentiates y[i, f] = Σ_k α_k·x[k, f], α = softmax_k(t·x[k, f]), by
// autograd through the softmax: the logits' gradient α_k·(G_k − Σ_l α_l·G_l) with G_k =
// grad_y[i, f]·x[k, f]. On a near one-hot segment of large values that difference cancels to ~0 from
// terms of size |grad_y|·|x|, each rounded (edge_softmax's backward rounding, checks/gat_floor.h):
//   δ_k = γ_(d+4)·α_k·(|G_k| + Σ_l α_l·|G_l|)   per segment and feature (d its length),
// carried to t through s = t·x (Σ δ_k·|x[k, f]|) and to x (δ_k·|t|). The oracle's float32 code
// subtracts y from x[k] instead and misses it: PyTorch's CPU and CUDA kernels failed t's gradient by
// 1.38× the measured bound on a 4×5 graph of values near 10³ (docs/campaigns.md).
#pragma once

#include "checks/gat_floor.h"

namespace gnncheck::checks {

// By label ("gradient t", "gradient x"); none for a case without t, x or the output gradient.
Floors segment_softmax_floor(const Case& c, double u);

}  // namespace gnncheck::checks

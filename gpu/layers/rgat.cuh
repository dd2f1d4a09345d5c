// gnncheck/gpu/layers/rgat.cuh — the RGAT layer on the GPU, forward and backward (definition and
// formulas: oracle/layers/rgat.h; PyG's RGATConv, additive self-attention across relations): a
// weight per relation projecting both ends of each edge, one softmax over every in-edge of a
// destination.
//
// Plain float32 kernels, one thread per output element, every sum in a fixed order and no atomics,
// so a run is bit-identical to the next:
//   out_i, out_j   thread per (e, m): x[row_e] · W_r[:, m] and x[col_e] · W_r[:, m], r = type_e
//   z, logits      thread per (e, h): Σ_m out_i[e, m]·q[m, h] + Σ_m out_j[e, m]·k[m, h]; LeakyReLU
//   alpha          thread per (i, h): row i's max, Σ exp, then each edge's share, in edge-id order
//   y              thread per (i, o): Σ_{e ∈ row i} alpha[e, h]·out_j[e, m] (averaged over h with mean)
//                  + bias[o]
//   grad_z         thread per (i, h): ḡ_e = ⟨grad_out[i, h], out_j[e, h]⟩ over row i, the softmax
//                  backward alpha·(ḡ_e − Σ alpha·ḡ), times LeakyReLU′(z) (the slope at z = 0)
//   grad_out_i, grad_out_j  thread per (e, m): grad_z[e]·q[m]ᵀ; alpha[e, h]·grad_out[row_e, m] + grad_z[e]·k[m]ᵀ
//   grad_q, grad_k thread per (m, h) over the edges in order
//   grad_W_r       thread per (r, f, m) over the edges of relation r in order
//   grad_x         thread per (j, f): row j's edges (as destination, j < n_dst) in edge-id order, then
//                  source j's out-edges in CSC order (edge_perm gives each one's edge id)
//   grad_bias      thread per o over the destinations in order
// Each edge's relation is its edge_type value (an integer stored as a float; the case was validated)
// converted to an index. Graph arrays read: row_ptr, col_idx, row_of_edge, col_ptr, edge_perm.
//
//   RgatSaved saved = rgat_forward(ctx, g, shape, d_x, d_types, params, d_y);
//   rgat_backward(ctx, g, shape, d_x, d_types, params, saved, d_grad_y, grads);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

struct RgatShape {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;  // C, per head
  std::int64_t heads = 0;         // H
  std::int64_t relations = 0;
  bool concat = true;             // false: the heads averaged, y [n_dst, C]
  float negative_slope = 0.2f;
};

// Device pointers to the parameters; bias is nullptr without a bias.
struct RgatParameters {
  const float* weight = nullptr;  // [relations, in, H·C]
  const float* q = nullptr;       // [H·C, H]
  const float* k = nullptr;       // [H·C, H]
  const float* bias = nullptr;    // [H·C] (concat) or [C]
};

// What the forward keeps for the backward (device memory from ctx.allocator).
struct RgatSaved {
  DeviceBuffer<float> out_i;  // [E, H·C]
  DeviceBuffer<float> out_j;  // [E, H·C]
  DeviceBuffer<float> z;      // [E, H]: the LeakyReLU's arguments
  DeviceBuffer<float> alpha;  // [E, H]
};

// Device pointers the backward overwrites, each with its parameter's shape; bias nullptr where
// absent. x's gradient is [n_src, in].
struct RgatGradients {
  float* x = nullptr;
  float* weight = nullptr;
  float* q = nullptr;
  float* k = nullptr;
  float* bias = nullptr;
};

// x [n_src, in]; types [E] in edge-id order, integers in [0, relations) stored as floats; y
// [n_dst, H·C] (concat) or [n_dst, C] is overwritten. Needs n_dst ≤ n_src (the caller checks).
RgatSaved rgat_forward(GpuContext& ctx, DeviceGraph& g, const RgatShape& shape, const float* x, const float* types,
                       const RgatParameters& params, float* y);
// grad_y has y's shape; `saved` is what rgat_forward returned for the same inputs.
void rgat_backward(GpuContext& ctx, DeviceGraph& g, const RgatShape& shape, const float* x, const float* types,
                   const RgatParameters& params, const RgatSaved& saved, const float* grad_y,
                   const RgatGradients& grads);

}  // namespace gnncheck::gpu

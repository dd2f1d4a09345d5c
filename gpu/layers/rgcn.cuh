// gnncheck/gpu/layers/rgcn.cuh — the R-GCN layer on the GPU, forward and backward (definition and
// formulas: oracle/layers/rgcn.h; PyG's RGCNConv): a weight per relation of a typed graph, each
// relation's neighbours aggregated apart, optionally the weights decomposed over shared bases.
//
// Plain float32 kernels, one thread per output element, every sum in a fixed order and no atomics,
// so a run is bit-identical to the next:
//   W_r            thread per (r, f, o): Σ_b comp[r, b] · basis[b, f, o] in b order (bases only)
//   c_{i,r}, h     thread per (i, r) counting row i's edges of relation r; thread per (i, r, f) summing
//                  them in edge-id order, then dividing by c_{i,r} (aggr = mean)
//   y              thread per (i, o): Σ_r Σ_f h[i, r, f] · W_r[f, o], then + x[i] · root[:, o], + bias[o]
//   grad_W_r       thread per (r, f, o) over the destinations in order
//   grad_h         thread per (i, r, f): grad_y[i] · W_r[f, :]ᵀ / c_{i,r}
//   grad_x         thread per (j, f) walking source j's out-edges in CSC order (edge_perm gives each
//                  CSC position's edge id, hence its relation), then + grad_y[j] · root[f, :]ᵀ for j < n_dst
//   grad_root, grad_bias, grad_basis[b] = Σ_r comp[r, b] · grad_W_r, grad_comp[r, b] = ⟨grad_W_r, basis[b]⟩
// Each edge's relation is its edge_type value (an integer stored as a float; the case was validated)
// converted to an index. Graph arrays read: row_ptr, col_idx, col_ptr, row_idx, edge_perm.
//
//   RgcnSaved saved = rgcn_forward(ctx, g, shape, d_x, d_types, params, d_y);
//   rgcn_backward(ctx, g, shape, d_x, d_types, params, saved, d_grad_y, grads);
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"

namespace gnncheck::gpu {

struct RgcnShape {
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  std::int64_t relations = 0;
  std::int64_t bases = 0;  // 0: `weight` holds W_r itself; B ≥ 1: `weight` holds B bases and comp is [relations, B]
  bool mean = true;        // aggr = mean (each relation averaged over its own count); false: sum
};

// Device pointers to the parameters; comp, root and bias are nullptr where the attributes switch them off.
struct RgcnParameters {
  const float* weight = nullptr;  // [relations, in, out], or the bases [bases, in, out]
  const float* comp = nullptr;    // [relations, bases]
  const float* root = nullptr;    // [in, out]
  const float* bias = nullptr;    // [out]
};

// What the forward keeps for the backward (device memory from ctx.allocator).
struct RgcnSaved {
  DeviceBuffer<float> relation_weights;  // [relations, in, out]: W_r from the bases; empty without bases
  DeviceBuffer<std::int64_t> count;      // [n_dst, relations]: c_{i,r}, row i's edges of relation r
  DeviceBuffer<float> h;                 // [n_dst, relations, in]: each relation's aggregation
};

// Device pointers the backward overwrites, each with its parameter's shape; nullptr where absent
// (comp, root, bias as in RgcnParameters). x's gradient is [n_src, in].
struct RgcnGradients {
  float* x = nullptr;
  float* weight = nullptr;
  float* comp = nullptr;
  float* root = nullptr;
  float* bias = nullptr;
};

// x [n_src, in]; types [E] in edge-id order, integers in [0, relations) stored as floats; y [n_dst, out]
// is overwritten. Needs n_dst ≤ n_src (destination i's own features are x row i; the caller checks).
RgcnSaved rgcn_forward(GpuContext& ctx, DeviceGraph& g, const RgcnShape& shape, const float* x, const float* types,
                       const RgcnParameters& params, float* y);
// grad_y [n_dst, out]; `saved` is what rgcn_forward returned for the same inputs.
void rgcn_backward(GpuContext& ctx, DeviceGraph& g, const RgcnShape& shape, const float* x, const float* types,
                   const RgcnParameters& params, const RgcnSaved& saved, const float* grad_y, const RgcnGradients& grads);

}  // namespace gnncheck::gpu

#include "gpu/layers/rgcn.cuh"

#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

// An edge's relation: its type is an integer stored as a float (exact below 2^24).
__device__ __forceinline__ std::int64_t relation_of(const float* __restrict__ types, std::int64_t e) {
  return static_cast<std::int64_t>(types[e]);
}

// w[r, v] = Σ_b comp[r, b] · basis[b, v], v = (f, o), in b order.
__global__ void relation_weights_kernel(std::int64_t relations, std::int64_t bases, std::int64_t size,
                                        const float* __restrict__ comp, const float* __restrict__ basis,
                                        float* __restrict__ w) {
  const std::int64_t n = relations * size;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t r = id / size, v = id % size;
    float sum = 0.0f;
    for (std::int64_t b = 0; b < bases; ++b) sum += comp[r * bases + b] * basis[b * size + v];
    w[id] = sum;
  }
}

// count[i, r] = the edges of row i whose relation is r.
__global__ void count_kernel(std::int64_t n_dst, std::int64_t relations, const offset_t* __restrict__ row_ptr,
                             const float* __restrict__ types, std::int64_t* __restrict__ count) {
  const std::int64_t n = n_dst * relations;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t i = id / relations, r = id % relations;
    std::int64_t c = 0;
    for (offset_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) c += relation_of(types, e) == r ? 1 : 0;
    count[id] = c;
  }
}

// h[i, r, f] = (1 / c_{i,r}) Σ_{e ∈ row i, type_e = r} x[col_e, f], in edge-id order; 0 where c_{i,r} = 0.
__global__ void aggregate_kernel(std::int64_t n_dst, std::int64_t relations, std::int64_t in, bool mean,
                                 const offset_t* __restrict__ row_ptr, const node_t* __restrict__ col_idx,
                                 const float* __restrict__ types, const std::int64_t* __restrict__ count,
                                 const float* __restrict__ x, float* __restrict__ h) {
  const std::int64_t n = n_dst * relations * in;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t slot = id / in, f = id % in;
    const std::int64_t i = slot / relations, r = slot % relations;
    float sum = 0.0f;
    if (count[slot] > 0)
      for (offset_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e)
        if (relation_of(types, e) == r) sum += x[static_cast<std::int64_t>(col_idx[e]) * in + f];
    h[id] = mean && count[slot] > 1 ? sum / static_cast<float>(count[slot]) : sum;
  }
}

// y[i, o] = Σ_r Σ_f h[i, r, f] · w[r, f, o]  +  Σ_f x[i, f] · root[f, o]  +  bias[o] (root, bias optional).
__global__ void output_kernel(std::int64_t n_dst, std::int64_t relations, std::int64_t in, std::int64_t out,
                              const float* __restrict__ h, const float* __restrict__ w, const float* __restrict__ x,
                              const float* __restrict__ root, const float* __restrict__ bias, float* __restrict__ y) {
  const std::int64_t n = n_dst * out;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t i = id / out, o = id % out;
    const float* hi = h + i * relations * in;  // [relations · in], the same (r, f) order as w's rows
    float sum = 0.0f;
    for (std::int64_t rf = 0; rf < relations * in; ++rf) sum += hi[rf] * w[rf * out + o];
    if (root) {
      float own = 0.0f;
      for (std::int64_t f = 0; f < in; ++f) own += x[i * in + f] * root[f * out + o];
      sum += own;
    }
    if (bias) sum += bias[o];
    y[id] = sum;
  }
}

// grad_w[r, f, o] = Σ_i h[i, r, f] · grad_y[i, o], over the destinations in order.
__global__ void grad_relation_weights_kernel(std::int64_t n_dst, std::int64_t relations, std::int64_t in,
                                             std::int64_t out, const float* __restrict__ h,
                                             const float* __restrict__ grad_y, float* __restrict__ grad_w) {
  const std::int64_t n = relations * in * out;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t rf = id / out, o = id % out;  // rf = r · in + f, h's column
    float sum = 0.0f;
    for (std::int64_t i = 0; i < n_dst; ++i) sum += h[i * relations * in + rf] * grad_y[i * out + o];
    grad_w[id] = sum;
  }
}

// grad_h[i, r, f] = (Σ_o grad_y[i, o] · w[r, f, o]) / c_{i,r} (aggr = mean; c_{i,r} = 0: no edge reads it, 0).
__global__ void grad_aggregate_kernel(std::int64_t n_dst, std::int64_t relations, std::int64_t in, std::int64_t out,
                                      bool mean, const std::int64_t* __restrict__ count, const float* __restrict__ w,
                                      const float* __restrict__ grad_y, float* __restrict__ grad_h) {
  const std::int64_t n = n_dst * relations * in;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t slot = id / in, i = slot / relations;
    const std::int64_t rf = id % (relations * in);  // r · in + f, w's row
    const std::int64_t c = count[slot];
    float sum = 0.0f;
    if (c > 0)
      for (std::int64_t o = 0; o < out; ++o) sum += grad_y[i * out + o] * w[rf * out + o];
    grad_h[id] = mean && c > 1 ? sum / static_cast<float>(c) : sum;
  }
}

// grad_x[j, f] = Σ_{e: col_e = j} grad_h[row_e, type_e, f] in CSC order, then + Σ_o grad_y[j, o] · root[f, o]
// for j < n_dst (root optional).
__global__ void grad_x_kernel(std::int64_t n_src, std::int64_t n_dst, std::int64_t relations, std::int64_t in,
                              std::int64_t out, const offset_t* __restrict__ col_ptr, const node_t* __restrict__ row_idx,
                              const edge_t* __restrict__ edge_perm, const float* __restrict__ types,
                              const float* __restrict__ grad_h, const float* __restrict__ grad_y,
                              const float* __restrict__ root, float* __restrict__ grad_x) {
  const std::int64_t n = n_src * in;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t j = id / in, f = id % in;
    float sum = 0.0f;
    for (offset_t p = col_ptr[j]; p < col_ptr[j + 1]; ++p) {
      const std::int64_t i = row_idx[p], r = relation_of(types, edge_perm[p]);
      sum += grad_h[(i * relations + r) * in + f];
    }
    if (root && j < n_dst) {
      float own = 0.0f;
      for (std::int64_t o = 0; o < out; ++o) own += grad_y[j * out + o] * root[f * out + o];
      sum += own;
    }
    grad_x[id] = sum;
  }
}

// grad_root[f, o] = Σ_{i < n_dst} x[i, f] · grad_y[i, o], in order.
__global__ void grad_root_kernel(std::int64_t n_dst, std::int64_t in, std::int64_t out, const float* __restrict__ x,
                                 const float* __restrict__ grad_y, float* __restrict__ grad_root) {
  const std::int64_t n = in * out;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t f = id / out, o = id % out;
    float sum = 0.0f;
    for (std::int64_t i = 0; i < n_dst; ++i) sum += x[i * in + f] * grad_y[i * out + o];
    grad_root[id] = sum;
  }
}

// grad_bias[o] = Σ_i grad_y[i, o], in order.
__global__ void grad_bias_kernel(std::int64_t n_dst, std::int64_t out, const float* __restrict__ grad_y,
                                 float* __restrict__ grad_bias) {
  for (std::int64_t o = global_thread(); o < out; o += thread_count()) {
    float sum = 0.0f;
    for (std::int64_t i = 0; i < n_dst; ++i) sum += grad_y[i * out + o];
    grad_bias[o] = sum;
  }
}

// grad_basis[b, v] = Σ_r comp[r, b] · grad_w[r, v], in r order.
__global__ void grad_basis_kernel(std::int64_t relations, std::int64_t bases, std::int64_t size,
                                  const float* __restrict__ comp, const float* __restrict__ grad_w,
                                  float* __restrict__ grad_basis) {
  const std::int64_t n = bases * size;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t b = id / size, v = id % size;
    float sum = 0.0f;
    for (std::int64_t r = 0; r < relations; ++r) sum += comp[r * bases + b] * grad_w[r * size + v];
    grad_basis[id] = sum;
  }
}

// grad_comp[r, b] = Σ_v grad_w[r, v] · basis[b, v], in v order.
__global__ void grad_comp_kernel(std::int64_t relations, std::int64_t bases, std::int64_t size,
                                 const float* __restrict__ grad_w, const float* __restrict__ basis,
                                 float* __restrict__ grad_comp) {
  const std::int64_t n = relations * bases;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t r = id / bases, b = id % bases;
    float sum = 0.0f;
    for (std::int64_t v = 0; v < size; ++v) sum += grad_w[r * size + v] * basis[b * size + v];
    grad_comp[id] = sum;
  }
}

// Launches `kernel` over `threads` grid-stride threads on ctx.stream; nothing for an empty range.
template <class Kernel, class... Args>
void launch(GpuContext& ctx, std::int64_t threads, Kernel kernel, Args... args) {
  if (threads <= 0) return;
  kernel<<<blocks_for_threads(threads), block_threads, 0, ctx.stream>>>(args...);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace

RgcnSaved rgcn_forward(GpuContext& ctx, DeviceGraph& g, const RgcnShape& s, const float* x, const float* types,
                       const RgcnParameters& params, float* y) {
  const std::int64_t n_dst = g.n_dst(), in = s.in_features, out = s.out_features, relations = s.relations;
  const std::int64_t size = in * out;
  RgcnSaved saved;
  const float* w = params.weight;
  if (s.bases > 0) {
    saved.relation_weights = DeviceBuffer<float>(ctx.allocator, relations * size);
    launch(ctx, relations * size, relation_weights_kernel, relations, s.bases, size, params.comp, params.weight,
           saved.relation_weights.data());
    w = saved.relation_weights.data();
  }
  saved.count = DeviceBuffer<std::int64_t>(ctx.allocator, n_dst * relations);
  saved.h = DeviceBuffer<float>(ctx.allocator, n_dst * relations * in);
  launch(ctx, n_dst * relations, count_kernel, n_dst, relations, g.row_ptr(), types, saved.count.data());
  launch(ctx, n_dst * relations * in, aggregate_kernel, n_dst, relations, in, s.mean, g.row_ptr(), g.col_idx(), types,
         static_cast<const std::int64_t*>(saved.count.data()), x, saved.h.data());
  launch(ctx, n_dst * out, output_kernel, n_dst, relations, in, out, static_cast<const float*>(saved.h.data()), w, x,
         params.root, params.bias, y);
  return saved;
}

void rgcn_backward(GpuContext& ctx, DeviceGraph& g, const RgcnShape& s, const float* x, const float* types,
                   const RgcnParameters& params, const RgcnSaved& saved, const float* grad_y,
                   const RgcnGradients& grads) {
  const std::int64_t n_src = g.n_src(), n_dst = g.n_dst(), in = s.in_features, out = s.out_features;
  const std::int64_t relations = s.relations, size = in * out;
  const float* w = s.bases > 0 ? saved.relation_weights.data() : params.weight;

  // grad_W_r: the weight's own gradient, or (bases) a scratch the bases' and comp's gradients read.
  DeviceBuffer<float> grad_relation_weights;
  float* grad_w = grads.weight;
  if (s.bases > 0) {
    grad_relation_weights = DeviceBuffer<float>(ctx.allocator, relations * size);
    grad_w = grad_relation_weights.data();
  }
  if (grad_w)
    launch(ctx, relations * size, grad_relation_weights_kernel, n_dst, relations, in, out, saved.h.data(), grad_y,
           grad_w);

  if (grads.x) {
    DeviceBuffer<float> grad_h(ctx.allocator, n_dst * relations * in);
    launch(ctx, n_dst * relations * in, grad_aggregate_kernel, n_dst, relations, in, out, s.mean, saved.count.data(), w,
           grad_y, grad_h.data());
    const offset_t* col_ptr = g.col_ptr(ctx);
    const node_t* row_idx = g.row_idx(ctx);
    const edge_t* edge_perm = g.edge_perm(ctx);
    launch(ctx, n_src * in, grad_x_kernel, n_src, n_dst, relations, in, out, col_ptr, row_idx, edge_perm, types,
           static_cast<const float*>(grad_h.data()), grad_y, params.root, grads.x);
    ctx.synchronize();  // grad_h is freed on return
  }
  if (grads.root && params.root) launch(ctx, size, grad_root_kernel, n_dst, in, out, x, grad_y, grads.root);
  if (grads.bias && params.bias) launch(ctx, out, grad_bias_kernel, n_dst, out, grad_y, grads.bias);
  if (s.bases > 0) {
    const float* gw = grad_relation_weights.data();
    if (grads.weight)
      launch(ctx, s.bases * size, grad_basis_kernel, relations, s.bases, size, params.comp, gw, grads.weight);
    if (grads.comp)
      launch(ctx, relations * s.bases, grad_comp_kernel, relations, s.bases, size, gw, params.weight, grads.comp);
    ctx.synchronize();  // the scratch grad_W_r is freed on return
  }
}

}  // namespace gnncheck::gpu

#include "gpu/layers/rgat.cuh"

#include "gpu/launch.cuh"

namespace gnncheck::gpu {
namespace {

using namespace detail;

// An edge's relation: its type is an integer stored as a float (exact below 2^24).
__device__ __forceinline__ std::int64_t relation_of(const float* __restrict__ types, std::int64_t e) {
  return static_cast<std::int64_t>(types[e]);
}

// out_i[e, m] = Σ_f x[row_e, f] · W_r[f, m], out_j[e, m] = Σ_f x[col_e, f] · W_r[f, m], in f order.
__global__ void project_kernel(std::int64_t edges, std::int64_t in, std::int64_t width,
                               const node_t* __restrict__ row_of_edge, const node_t* __restrict__ col_idx,
                               const float* __restrict__ types, const float* __restrict__ x,
                               const float* __restrict__ weight, float* __restrict__ out_i,
                               float* __restrict__ out_j) {
  const std::int64_t n = edges * width;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t e = id / width, m = id % width;
    const float* w = weight + relation_of(types, e) * in * width;
    const float* xi = x + static_cast<std::int64_t>(row_of_edge[e]) * in;
    const float* xj = x + static_cast<std::int64_t>(col_idx[e]) * in;
    float si = 0.0f, sj = 0.0f;
    for (std::int64_t f = 0; f < in; ++f) {
      si += xi[f] * w[f * width + m];
      sj += xj[f] * w[f * width + m];
    }
    out_i[id] = si;
    out_j[id] = sj;
  }
}

// z[e, h] = Σ_m out_i[e, m] · q[m, h] + Σ_m out_j[e, m] · k[m, h], in m order.
__global__ void logits_kernel(std::int64_t edges, std::int64_t width, std::int64_t heads,
                              const float* __restrict__ out_i, const float* __restrict__ out_j,
                              const float* __restrict__ q, const float* __restrict__ k, float* __restrict__ z) {
  const std::int64_t n = edges * heads;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t e = id / heads, h = id % heads;
    float sq = 0.0f, sk = 0.0f;
    for (std::int64_t m = 0; m < width; ++m) {
      sq += out_i[e * width + m] * q[m * heads + h];
      sk += out_j[e * width + m] * k[m * heads + h];
    }
    z[id] = sq + sk;
  }
}

__device__ __forceinline__ float leaky_relu(float z, float slope) { return z > 0.0f ? z : slope * z; }

// alpha[e, h] = exp(l_e − max) / Σ_{row i} exp(l − max), l = LeakyReLU(z), per (i, h) in edge-id order.
__global__ void softmax_kernel(std::int64_t n_dst, std::int64_t heads, float slope, const offset_t* __restrict__ row_ptr,
                               const float* __restrict__ z, float* __restrict__ alpha) {
  const std::int64_t n = n_dst * heads;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t i = id / heads, h = id % heads;
    const offset_t begin = row_ptr[i], end = row_ptr[i + 1];
    if (begin == end) continue;
    float top = -INFINITY;
    for (offset_t e = begin; e < end; ++e) top = fmaxf(top, leaky_relu(z[e * heads + h], slope));
    float sum = 0.0f;
    for (offset_t e = begin; e < end; ++e) {
      const float a = expf(leaky_relu(z[e * heads + h], slope) - top);
      alpha[e * heads + h] = a;
      sum += a;
    }
    for (offset_t e = begin; e < end; ++e) alpha[e * heads + h] /= sum;
  }
}

// y[i, o] = Σ_{e ∈ row i} alpha[e, h]·out_j[e, h·C + c] with o = h·C + c (concat), or (1/H)·Σ_h of
// the same with o = c (mean); + bias[o].
__global__ void output_kernel(std::int64_t n_dst, std::int64_t heads, std::int64_t channels, bool concat,
                              const offset_t* __restrict__ row_ptr, const float* __restrict__ alpha,
                              const float* __restrict__ out_j, const float* __restrict__ bias, float* __restrict__ y) {
  const std::int64_t width = heads * channels, out = concat ? width : channels;
  const std::int64_t n = n_dst * out;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t i = id / out, o = id % out;
    const std::int64_t first_head = concat ? o / channels : 0, last_head = concat ? first_head + 1 : heads;
    const std::int64_t c = o % channels;
    float joined = 0.0f;
    for (std::int64_t h = first_head; h < last_head; ++h) {
      float sum = 0.0f;
      for (offset_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e)
        sum += alpha[e * heads + h] * out_j[e * width + h * channels + c];
      joined += concat ? sum : sum / static_cast<float>(heads);
    }
    if (bias) joined += bias[o];
    y[id] = joined;
  }
}

// The gradient at out[i, m] (m = h·C + c): grad_y itself (concat) or grad_y[i, c] / H (mean).
__device__ __forceinline__ float grad_out_at(const float* __restrict__ grad_y, std::int64_t i, std::int64_t m,
                                             std::int64_t heads, std::int64_t channels, bool concat) {
  return concat ? grad_y[i * heads * channels + m] : grad_y[i * channels + m % channels] / static_cast<float>(heads);
}

// grad_z[e, h] = alpha[e, h]·(ḡ_e − Σ_{row i} alpha·ḡ)·LeakyReLU′(z[e, h]), ḡ_e = Σ_c grad_out[i, h·C + c]·out_j[e, h·C + c].
__global__ void grad_logits_kernel(std::int64_t n_dst, std::int64_t heads, std::int64_t channels, bool concat,
                                   float slope, const offset_t* __restrict__ row_ptr, const float* __restrict__ alpha,
                                   const float* __restrict__ out_j, const float* __restrict__ z,
                                   const float* __restrict__ grad_y, float* __restrict__ grad_z) {
  const std::int64_t width = heads * channels;
  const std::int64_t n = n_dst * heads;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t i = id / heads, h = id % heads;
    const offset_t begin = row_ptr[i], end = row_ptr[i + 1];
    auto g_bar = [&](offset_t e) {
      float s = 0.0f;
      for (std::int64_t c = 0; c < channels; ++c)
        s += grad_out_at(grad_y, i, h * channels + c, heads, channels, concat) * out_j[e * width + h * channels + c];
      return s;
    };
    float dot = 0.0f;
    for (offset_t e = begin; e < end; ++e) dot += alpha[e * heads + h] * g_bar(e);
    for (offset_t e = begin; e < end; ++e) {
      const float g = alpha[e * heads + h] * (g_bar(e) - dot);
      grad_z[e * heads + h] = z[e * heads + h] > 0.0f ? g : slope * g;
    }
  }
}

// grad_out_i[e, m] = Σ_h grad_z[e, h]·q[m, h]; grad_out_j[e, m] = alpha[e, h(m)]·grad_out[row_e, m] + Σ_h grad_z[e, h]·k[m, h].
__global__ void grad_projections_kernel(std::int64_t edges, std::int64_t heads, std::int64_t channels, bool concat,
                                        const node_t* __restrict__ row_of_edge, const float* __restrict__ alpha,
                                        const float* __restrict__ grad_z, const float* __restrict__ q,
                                        const float* __restrict__ k, const float* __restrict__ grad_y,
                                        float* __restrict__ grad_out_i, float* __restrict__ grad_out_j) {
  const std::int64_t width = heads * channels;
  const std::int64_t n = edges * width;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t e = id / width, m = id % width;
    float gi = 0.0f, gk = 0.0f;
    for (std::int64_t h = 0; h < heads; ++h) {
      gi += grad_z[e * heads + h] * q[m * heads + h];
      gk += grad_z[e * heads + h] * k[m * heads + h];
    }
    grad_out_i[id] = gi;
    grad_out_j[id] =
        alpha[e * heads + m / channels] * grad_out_at(grad_y, row_of_edge[e], m, heads, channels, concat) + gk;
  }
}

// grad_q[m, h] = Σ_e out_i[e, m]·grad_z[e, h] and grad_k[m, h] = Σ_e out_j[e, m]·grad_z[e, h], in edge order.
__global__ void grad_attention_kernel(std::int64_t edges, std::int64_t width, std::int64_t heads,
                                      const float* __restrict__ out_i, const float* __restrict__ out_j,
                                      const float* __restrict__ grad_z, float* __restrict__ grad_q,
                                      float* __restrict__ grad_k) {
  const std::int64_t n = width * heads;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t m = id / heads, h = id % heads;
    float sq = 0.0f, sk = 0.0f;
    for (std::int64_t e = 0; e < edges; ++e) {
      sq += out_i[e * width + m] * grad_z[e * heads + h];
      sk += out_j[e * width + m] * grad_z[e * heads + h];
    }
    if (grad_q) grad_q[id] = sq;
    if (grad_k) grad_k[id] = sk;
  }
}

// grad_W[r, f, m] = Σ_{e: type_e = r} x[row_e, f]·grad_out_i[e, m] + x[col_e, f]·grad_out_j[e, m], in edge order.
__global__ void grad_weight_kernel(std::int64_t edges, std::int64_t relations, std::int64_t in, std::int64_t width,
                                   const node_t* __restrict__ row_of_edge, const node_t* __restrict__ col_idx,
                                   const float* __restrict__ types, const float* __restrict__ x,
                                   const float* __restrict__ grad_out_i, const float* __restrict__ grad_out_j,
                                   float* __restrict__ grad_w) {
  const std::int64_t n = relations * in * width;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t r = id / (in * width), f = (id / width) % in, m = id % width;
    float sum = 0.0f;
    for (std::int64_t e = 0; e < edges; ++e)
      if (relation_of(types, e) == r)
        sum += x[static_cast<std::int64_t>(row_of_edge[e]) * in + f] * grad_out_i[e * width + m] +
               x[static_cast<std::int64_t>(col_idx[e]) * in + f] * grad_out_j[e * width + m];
    grad_w[id] = sum;
  }
}

// grad_x[j, f] = Σ_{e ∈ row j} grad_out_i[e]·W_r[f]ᵀ (j < n_dst, edge-id order) + Σ_{e: col_e = j}
// grad_out_j[e]·W_r[f]ᵀ (CSC order).
__global__ void grad_x_kernel(std::int64_t n_src, std::int64_t n_dst, std::int64_t in, std::int64_t width,
                              const offset_t* __restrict__ row_ptr, const offset_t* __restrict__ col_ptr,
                              const edge_t* __restrict__ edge_perm, const float* __restrict__ types,
                              const float* __restrict__ weight, const float* __restrict__ grad_out_i,
                              const float* __restrict__ grad_out_j, float* __restrict__ grad_x) {
  const std::int64_t n = n_src * in;
  for (std::int64_t id = global_thread(); id < n; id += thread_count()) {
    const std::int64_t j = id / in, f = id % in;
    auto product = [&](const float* grad, std::int64_t e) {
      const float* w = weight + (relation_of(types, e) * in + f) * width;
      float s = 0.0f;
      for (std::int64_t m = 0; m < width; ++m) s += grad[e * width + m] * w[m];
      return s;
    };
    float sum = 0.0f;
    if (j < n_dst)
      for (offset_t e = row_ptr[j]; e < row_ptr[j + 1]; ++e) sum += product(grad_out_i, e);
    for (offset_t p = col_ptr[j]; p < col_ptr[j + 1]; ++p) sum += product(grad_out_j, edge_perm[p]);
    grad_x[id] = sum;
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

// Launches `kernel` over `threads` grid-stride threads on ctx.stream; nothing for an empty range.
template <class Kernel, class... Args>
void launch(GpuContext& ctx, std::int64_t threads, Kernel kernel, Args... args) {
  if (threads <= 0) return;
  kernel<<<blocks_for_threads(threads), block_threads, 0, ctx.stream>>>(args...);
  GNNCHECK_CHECK_LAUNCH();
}

}  // namespace

RgatSaved rgat_forward(GpuContext& ctx, DeviceGraph& g, const RgatShape& s, const float* x, const float* types,
                       const RgatParameters& params, float* y) {
  const std::int64_t n_dst = g.n_dst(), edges = g.num_edges(), in = s.in_features;
  const std::int64_t heads = s.heads, channels = s.out_features, width = heads * channels;
  RgatSaved saved;
  saved.out_i = DeviceBuffer<float>(ctx.allocator, edges * width);
  saved.out_j = DeviceBuffer<float>(ctx.allocator, edges * width);
  saved.z = DeviceBuffer<float>(ctx.allocator, edges * heads);
  saved.alpha = DeviceBuffer<float>(ctx.allocator, edges * heads);
  const node_t* row_of_edge = edges > 0 ? g.row_of_edge(ctx) : nullptr;
  launch(ctx, edges * width, project_kernel, edges, in, width, row_of_edge, g.col_idx(), types, x, params.weight,
         saved.out_i.data(), saved.out_j.data());
  launch(ctx, edges * heads, logits_kernel, edges, width, heads, static_cast<const float*>(saved.out_i.data()),
         static_cast<const float*>(saved.out_j.data()), params.q, params.k, saved.z.data());
  launch(ctx, n_dst * heads, softmax_kernel, n_dst, heads, s.negative_slope, g.row_ptr(),
         static_cast<const float*>(saved.z.data()), saved.alpha.data());
  launch(ctx, n_dst * (s.concat ? width : channels), output_kernel, n_dst, heads, channels, s.concat, g.row_ptr(),
         static_cast<const float*>(saved.alpha.data()), static_cast<const float*>(saved.out_j.data()), params.bias, y);
  return saved;
}

void rgat_backward(GpuContext& ctx, DeviceGraph& g, const RgatShape& s, const float* x, const float* types,
                   const RgatParameters& params, const RgatSaved& saved, const float* grad_y,
                   const RgatGradients& grads) {
  const std::int64_t n_src = g.n_src(), n_dst = g.n_dst(), edges = g.num_edges(), in = s.in_features;
  const std::int64_t heads = s.heads, channels = s.out_features, width = heads * channels;
  const std::int64_t out = s.concat ? width : channels;
  if (grads.bias && params.bias) launch(ctx, out, grad_bias_kernel, n_dst, out, grad_y, grads.bias);
  DeviceBuffer<float> grad_z(ctx.allocator, edges * heads);
  DeviceBuffer<float> grad_out_i(ctx.allocator, edges * width), grad_out_j(ctx.allocator, edges * width);
  const node_t* row_of_edge = edges > 0 ? g.row_of_edge(ctx) : nullptr;
  launch(ctx, n_dst * heads, grad_logits_kernel, n_dst, heads, channels, s.concat, s.negative_slope, g.row_ptr(),
         saved.alpha.data(), saved.out_j.data(), saved.z.data(), grad_y, grad_z.data());
  launch(ctx, edges * width, grad_projections_kernel, edges, heads, channels, s.concat, row_of_edge,
         saved.alpha.data(), static_cast<const float*>(grad_z.data()), params.q, params.k, grad_y, grad_out_i.data(),
         grad_out_j.data());
  if (grads.q || grads.k)
    launch(ctx, width * heads, grad_attention_kernel, edges, width, heads, saved.out_i.data(), saved.out_j.data(),
           static_cast<const float*>(grad_z.data()), grads.q, grads.k);
  if (grads.weight)
    launch(ctx, s.relations * in * width, grad_weight_kernel, edges, s.relations, in, width, row_of_edge, g.col_idx(),
           types, x, static_cast<const float*>(grad_out_i.data()), static_cast<const float*>(grad_out_j.data()),
           grads.weight);
  if (grads.x) {
    const offset_t* col_ptr = g.col_ptr(ctx);
    const edge_t* edge_perm = edges > 0 ? g.edge_perm(ctx) : nullptr;
    launch(ctx, n_src * in, grad_x_kernel, n_src, n_dst, in, width, g.row_ptr(), col_ptr, edge_perm, types,
           params.weight, static_cast<const float*>(grad_out_i.data()), static_cast<const float*>(grad_out_j.data()),
           grads.x);
  }
  ctx.synchronize();  // the scratch buffers are freed on return
}

}  // namespace gnncheck::gpu

// The `cusparse`, `cusparse_float16` and `cusparse_bfloat16` systems' targets: only what cuSPARSE
// itself computes, every product one cusparseSpMM or cusparseSDDMM call per head, in one
// StorageFormat (gpu/storage_format.cuh). In float16 and bfloat16 each float32 input is rounded
// once to the format on the device, cuSPARSE reads it and writes its result in the format (sums in
// float32), and the result is widened back: no value is stored in the format between two calls,
// since every output and gradient is one call on the case's own tensors. That is the model of
// checks/tolerance.md, "Storage and accumulation" (inputs rounded once to u_s, the sum in u_a, the
// result rounded once to u_s), so these systems declare storage = the format and accumulation =
// float32.
//
// Aᵀ products: float32 uses cuSPARSE's native transpose (opA = TRANSPOSE), which the `cusparse`
// system exists to check. float16 and bfloat16 use a non-transposed SpMM over the CSC (the CSR of
// Aᵀ, A's values permuted by edge_perm): the native transpose in those formats was measured summing
// in a format coarser than float32 (gpu/README.md), so it cannot be the reference of a float32-sum
// declaration. For the same reason every half-precision SpMM uses CSR_ALG3 (gpu/cusparse_ops.cpp):
// the default algorithm rounds partial sums to the format on rows of a few thousand terms.
#include <fmt/format.h>

#include "gpu/cusparse_ops.h"
#include "gpu/eshuffle.cuh"
#include "gpu/gpu_targets.h"
#include "core/graph.h"

namespace gnncheck::gpu {
namespace {

// A float32 device array as cuSPARSE reads it in `format`: the array itself in float32, else a
// copy rounded to nearest.
class StoredOperand {
 public:
  StoredOperand(GpuContext& ctx, StorageFormat format, const float* values, std::int64_t n) : data_(values) {
    if (format == StorageFormat::float32) return;
    copy_ = DeviceBuffer<unsigned char>(ctx.allocator, n * static_cast<std::int64_t>(element_bytes(format)));
    round_to_storage(ctx, format, values, n, copy_.data());
    data_ = copy_.data();
  }
  const void* data() const { return data_; }

 private:
  DeviceBuffer<unsigned char> copy_;
  const void* data_;
};

// Where cuSPARSE writes a result: the float32 tensor itself, or a buffer in `format` that
// finish() widens into it.
class StoredResult {
 public:
  StoredResult(GpuContext& ctx, StorageFormat format, DeviceTensor& out)
      : ctx_(ctx), format_(format), out_(out), data_(out.data()) {
    if (format == StorageFormat::float32) return;
    buffer_ = DeviceBuffer<unsigned char>(ctx.allocator, out.size() * static_cast<std::int64_t>(element_bytes(format)));
    data_ = buffer_.data();
  }
  void* data() { return data_; }
  void finish() {
    if (format_ != StorageFormat::float32) widen_from_storage(ctx_, format_, buffer_.data(), out_.size(), out_.data());
  }

 private:
  GpuContext& ctx_;
  StorageFormat format_;
  DeviceTensor& out_;
  DeviceBuffer<unsigned char> buffer_;
  void* data_;
};

index_t heads_of(const TargetRun& run) { return run.attributes.get_int("heads"); }
index_t features_of(const TargetRun& run) { return run.attributes.get_int("features"); }

// The case's graph as cuSPARSE reads it (32-bit offsets), values in `format` set per call.
CsrView csr_of(TargetRun& run, StorageFormat format) {
  DeviceGraph& g = run.graph();
  return {g.n_dst(), g.n_src(), g.num_edges(), g.cusparse_row_ptr(run.ctx), g.col_idx(), nullptr, format};
}

// Aᵀ as a CSR: the case's CSC (32-bit offsets); its values are A's in CSC order (edge_perm).
CsrView csc_of(TargetRun& run, StorageFormat format) {
  DeviceGraph& g = run.graph();
  return {g.n_src(), g.n_dst(), g.num_edges(), g.cusparse_col_ptr(run.ctx), g.row_idx(run.ctx), nullptr, format};
}

// out = op(A_w) · b per head; w [E, heads], or A's unit values (heads = 1) where w is nullptr.
// Outside float32, op = transpose is computed as CSC · b (the file's opening comment says why).
void product(TargetRun& run, StorageFormat format, SparseOp op, const DeviceTensor* w, index_t heads,
             const DeviceTensor& b, index_t channels, DeviceTensor& out) {
  DeviceGraph& g = run.graph();
  const bool through_csc = op == SparseOp::transpose && format != StorageFormat::float32;
  const float* values = w ? w->data() : g.ones(run.ctx);
  DeviceBuffer<float> values_in_csc_order;
  if (through_csc && w) {  // unit values read the same in either order
    values_in_csc_order = DeviceBuffer<float>(run.ctx.allocator, w->size());
    eshuffle_forward(run.ctx, g, w->data(), heads, values_in_csc_order.data());
    values = values_in_csc_order.data();
  }
  const StoredOperand stored_w(run.ctx, format, values, w ? w->size() : g.num_edges());
  const StoredOperand stored_b(run.ctx, format, b.data(), b.size());
  StoredResult result(run.ctx, format, out);
  if (through_csc)
    csr_spmm_per_head(run.ctx, csc_of(run, format), SparseOp::none, stored_w.data(), w ? heads : 1, stored_b.data(),
                      channels, result.data());
  else
    csr_spmm_per_head(run.ctx, csr_of(run, format), op, stored_w.data(), w ? heads : 1, stored_b.data(), channels,
                      result.data());
  result.finish();
}

// out [E, heads] = ⟨u[row], v[col]⟩ per head.
void sampled_product(TargetRun& run, StorageFormat format, const DeviceTensor& u, const DeviceTensor& v, index_t heads,
                     index_t channels, DeviceTensor& out) {
  const StoredOperand stored_u(run.ctx, format, u.data(), u.size());
  const StoredOperand stored_v(run.ctx, format, v.data(), v.size());
  StoredResult result(run.ctx, format, out);
  csr_sddmm_per_head(run.ctx, csr_of(run, format), stored_u.data(), stored_v.data(), heads, channels, result.data());
  result.finish();
}

// spmm: y = A·x, grad_x = Aᵀ·grad_y.
void spmm_target(TargetRun& run, StorageFormat format) {
  const DeviceTensor& x = run.input("x");
  const index_t f = x.row_size();
  DeviceTensor& y = run.new_output("y", {run.graph().n_dst(), f});
  product(run, format, SparseOp::none, nullptr, 1, x, f, y);
  if (run.backward())
    product(run, format, SparseOp::transpose, nullptr, 1, run.grad_output("y"), f, run.new_gradient("x", x.shape()));
}

// spmm_transposed: z = Aᵀ·y, grad_y = A·grad_z.
void spmm_transposed_target(TargetRun& run, StorageFormat format) {
  const DeviceTensor& y = run.input("y");
  const index_t f = y.row_size();
  DeviceTensor& z = run.new_output("z", {run.graph().n_src(), f});
  product(run, format, SparseOp::transpose, nullptr, 1, y, f, z);
  if (run.backward())
    product(run, format, SparseOp::none, nullptr, 1, run.grad_output("z"), f, run.new_gradient("y", y.shape()));
}

// spmm_ve: y = A_w·x; grad_w = sddmm(grad_y, x), grad_x = A_wᵀ·grad_y.
void spmm_ve_target(TargetRun& run, StorageFormat format) {
  const DeviceTensor& w = run.input("edge_values");
  const DeviceTensor& x = run.input("x");
  const index_t heads = heads_of(run), channels = features_of(run);
  DeviceTensor& y = run.new_output("y", {run.graph().n_dst(), heads * channels});
  product(run, format, SparseOp::none, &w, heads, x, channels, y);
  if (!run.backward()) return;
  const DeviceTensor& gy = run.grad_output("y");
  sampled_product(run, format, gy, x, heads, channels, run.new_gradient("edge_values", w.shape()));
  product(run, format, SparseOp::transpose, &w, heads, gy, channels, run.new_gradient("x", x.shape()));
}

// spmm_ve_transposed: z = A_wᵀ·y; grad_w = sddmm(y, grad_z), grad_y = A_w·grad_z.
void spmm_ve_transposed_target(TargetRun& run, StorageFormat format) {
  const DeviceTensor& w = run.input("edge_values");
  const DeviceTensor& y = run.input("y");
  const index_t heads = heads_of(run), channels = features_of(run);
  DeviceTensor& z = run.new_output("z", {run.graph().n_src(), heads * channels});
  product(run, format, SparseOp::transpose, &w, heads, y, channels, z);
  if (!run.backward()) return;
  const DeviceTensor& gz = run.grad_output("z");
  sampled_product(run, format, y, gz, heads, channels, run.new_gradient("edge_values", w.shape()));
  product(run, format, SparseOp::none, &w, heads, gz, channels, run.new_gradient("y", y.shape()));
}

// sddmm_dot: e = sddmm(u, v); grad_u = A_{grad_e}·v, grad_v = A_{grad_e}ᵀ·u.
void sddmm_dot_target(TargetRun& run, StorageFormat format) {
  const DeviceTensor& u = run.input("u");
  const DeviceTensor& v = run.input("v");
  const index_t heads = heads_of(run), channels = features_of(run);
  sampled_product(run, format, u, v, heads, channels, run.new_output("e", {run.graph().num_edges(), heads}));
  if (!run.backward()) return;
  const DeviceTensor& ge = run.grad_output("e");
  product(run, format, SparseOp::none, &ge, heads, v, channels, run.new_gradient("u", u.shape()));
  product(run, format, SparseOp::transpose, &ge, heads, u, channels, run.new_gradient("v", v.shape()));
}

// A CSR cuSPARSE refuses, or one past its 32-bit indices, is unsupported.
GpuTargetFn only_if_cusparse_accepts(GpuTargetFn fn) {
  return [fn](TargetRun& run) {
    const DeviceGraph& g = run.graph();
    if (g.num_edges() > max_cusparse_edges)
      throw UnsupportedCase(fmt::format("the cusparse systems call cuSPARSE with 32-bit indices: {} edges exceed {} "
                                        "({}); the gpu system computes such graphs with its own kernels",
                                        g.num_edges(), max_cusparse_edges, run.host_graph.summary()));
    if (!g.fits_cusparse())
      throw UnsupportedCase(fmt::format("cuSPARSE refuses a CSR with more stored entries than rows × cols ({}, "
                                        "duplicate edges)",
                                        run.host_graph.summary()));
    fn(run);
  };
}

}  // namespace

std::map<std::string, GpuTargetFn> cusparse_op_targets(StorageFormat format) {
  using Fn = void (*)(TargetRun&, StorageFormat);
  std::map<std::string, Fn> implementations{
      {"spmm", spmm_target},
      {"spmm_transposed", spmm_transposed_target},
  };
  // Every other target needs cusparseSDDMM (a forward, or grad_w), which has no bfloat16.
  if (format != StorageFormat::bfloat16) {
    implementations.emplace("spmm_ve", spmm_ve_target);
    implementations.emplace("spmm_ve_transposed", spmm_ve_transposed_target);
    implementations.emplace("sddmm_dot", sddmm_dot_target);
  }
  std::map<std::string, GpuTargetFn> targets;
  for (const auto& [name, fn] : implementations)
    targets.emplace(name, only_if_cusparse_accepts([fn = fn, format](TargetRun& run) { fn(run, format); }));
  return targets;
}

}  // namespace gnncheck::gpu

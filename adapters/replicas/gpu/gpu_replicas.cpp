// The GPU replicas: the reference's target implementations (gpu/op_targets.cpp) with the one
// kernel call that a published system got wrong replaced by its buggy kernel.
#include "adapters/replicas/gpu/gpu_replicas.h"

#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "adapters/replicas/gpu/replica_kernels.cuh"
#include "gpu/cuda_check.h"
#include "gpu/edge_softmax.cuh"
#include "gpu/gpu_targets.h"
#include "gpu/sddmm.cuh"
#include "gpu/spmm.cuh"
#include "gpu/spmm_ve.cuh"
#include "core/error.h"
#include "core/graph.h"

namespace gnncheck {
namespace {

using gpu::DeviceGraph;
using gpu::DeviceTensor;
using gpu::GpuTargetFn;
using gpu::TargetRun;

void require_square(const TargetRun& run, const std::string& why) {
  if (!run.host_graph.is_square())
    throw gpu::UnsupportedCase(fmt::format("{}; this case's graph is {}", why, run.host_graph.summary()));
}

index_t heads_of(const TargetRun& run) { return run.attributes.get_int("heads"); }
index_t features_of(const TargetRun& run) { return run.attributes.get_int("features"); }

// 1. spmm whose backward walks the forward's CSR: grad_x = A·grad_y.
void spmm_backward_uses_A(TargetRun& run) {
  const DeviceTensor& x = run.input("x");
  const index_t f = x.row_size();
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", {g.n_dst(), f});
  gpu::spmm_forward(run.ctx, g, x.data(), f, y.data());
  if (!run.backward()) return;
  require_square(run, "TC-GNN's kernels assume a square adjacency");
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  gpu_replicas::gather_rows_unweighted(run.ctx, g, run.grad_output("y").data(), f, gx.data());
}

// The reference's spmm_ve forward and its edge-value gradient; returns the pieces a replica needs to
// write its own (buggy) feature gradient, or nothing when the case asks for no backward.
struct SpmmVeBackwardParts {
  const float* w;
  const float* grad_y;
  index_t heads, channels;
  DeviceTensor* grad_x;
};
std::optional<SpmmVeBackwardParts> spmm_ve_reference_except_grad_x(TargetRun& run, const std::string& square_reason) {
  const DeviceTensor& w = run.input("edge_values");
  const DeviceTensor& x = run.input("x");
  const index_t heads = heads_of(run), channels = features_of(run);
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", {g.n_dst(), heads * channels});
  gpu::spmm_ve_forward(run.ctx, g, w.data(), heads, x.data(), channels, y.data());
  if (!run.backward()) return std::nullopt;
  if (!square_reason.empty()) require_square(run, square_reason);
  const float* gy = run.grad_output("y").data();
  DeviceTensor& gw = run.new_gradient("edge_values", w.shape());
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  gpu::spmm_ve_backward(run.ctx, g, w.data(), heads, x.data(), channels, gy, gw.data(), nullptr);
  return SpmmVeBackwardParts{w.data(), gy, heads, channels, &gx};
}

// 5. spmm_ve whose feature gradient walks the CSR with CSR-ordered attention: grad_x = A_α·grad_y.
void spmm_ve_untransposed_attention(TargetRun& run) {
  const auto parts = spmm_ve_reference_except_grad_x(run, "using A_α for A_αᵀ needs a square graph");
  if (!parts) return;
  gpu_replicas::gather_rows_weighted(run.ctx, run.graph(), parts->w, parts->heads, parts->grad_y, parts->channels,
                                     parts->grad_x->data());
}

// 5. sddmm_add whose source-side gradient walks the CSR: grad_b = row sums (= grad_a), not column sums.
void sddmm_add_untransposed_attention(TargetRun& run) {
  const DeviceTensor& a = run.input("a");
  const DeviceTensor& b = run.input("b");
  const index_t heads = heads_of(run);
  DeviceGraph& g = run.graph();
  DeviceTensor& e = run.new_output("e", {g.num_edges(), heads});
  gpu::sddmm_add_forward(run.ctx, g, a.data(), b.data(), heads, e.data());
  if (!run.backward()) return;
  require_square(run, "using A_α for A_αᵀ needs a square graph");
  DeviceTensor& ga = run.new_gradient("a", a.shape());
  DeviceTensor& gb = run.new_gradient("b", b.shape());
  gpu::sddmm_add_backward(run.ctx, g, run.grad_output("e").data(), heads, ga.data(), nullptr);
  if (ga.size() > 0)
    GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(gb.data(), ga.data(), static_cast<std::size_t>(ga.size()) * sizeof(float),
                                        cudaMemcpyDeviceToDevice, run.ctx.stream));
}

// 8. edge_softmax without max subtraction (its backward is the reference's, from the wrong alpha).
void edge_softmax_no_max(TargetRun& run) {
  const DeviceTensor& logits = run.input("logits");
  const index_t heads = heads_of(run);
  DeviceGraph& g = run.graph();
  DeviceTensor& alpha = run.new_output("alpha", logits.shape());
  gpu_replicas::edge_softmax_without_max(run.ctx, g, logits.data(), heads, alpha.data());
  if (!run.backward()) return;
  DeviceTensor& gl = run.new_gradient("logits", logits.shape());
  gpu::edge_softmax_backward(run.ctx, g, alpha.data(), run.grad_output("alpha").data(), heads, gl.data());
}

// 10. spmm whose warps cover whole blocks of 32 columns only, forward and backward.
void spmm_whole_warps(TargetRun& run) {
  const DeviceTensor& x = run.input("x");
  const index_t f = x.row_size();
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", {g.n_dst(), f});
  gpu_replicas::aggregate_whole_warps_forward(run.ctx, g, x.data(), f, y.data());
  if (!run.backward()) return;
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  gpu_replicas::aggregate_whole_warps_backward(run.ctx, g, run.grad_output("y").data(), f, gx.data());
}

// 11. spmm_ve whose CSC walk for the feature gradient reads the attention unshuffled: w[p], not w[edge_perm[p]].
void spmm_ve_missing_eshuffle(TargetRun& run) {
  const auto parts = spmm_ve_reference_except_grad_x(run, "");
  if (!parts) return;
  gpu_replicas::gather_columns_unshuffled(run.ctx, run.graph(), parts->w, parts->heads, parts->grad_y, parts->channels,
                                          parts->grad_x->data());
}

// The buggy kernels of each catalogue entry (gpu_replica_catalogue(), in gpu_replica_catalogue.cpp),
// by target; gpu_replicas_host_test checks that the two lists name the same replicas and targets.
std::map<std::string, std::map<std::string, GpuTargetFn>> replica_kernels() {
  return {
      {"gpu-replica-1", {{"spmm", spmm_backward_uses_A}}},
      {"gpu-replica-5", {{"spmm_ve", spmm_ve_untransposed_attention}, {"sddmm_add", sddmm_add_untransposed_attention}}},
      {"gpu-replica-8", {{"edge_softmax", edge_softmax_no_max}}},
      {"gpu-replica-10", {{"spmm", spmm_whole_warps}}},
      {"gpu-replica-11", {{"spmm_ve", spmm_ve_missing_eshuffle}}},
  };
}

}  // namespace

std::unique_ptr<System> make_gpu_replica(const std::string& name) {
  std::vector<std::string> names;
  auto kernels = replica_kernels();
  for (const auto& info : gpu_replica_catalogue()) {
    if (info.name == name) {
      auto it = kernels.find(name);
      if (it == kernels.end()) throw InternalError(fmt::format("GPU replica '{}' has no kernels", name));
      return gpu::make_gpu_system_from_targets(name, std::move(it->second));
    }
    names.push_back(info.name);
  }
  throw InputError(fmt::format("unknown GPU replica '{}'; known: {}", name, fmt::join(names, ", ")));
}

}  // namespace gnncheck

// The GPU implementations of the sparse ops of oracle/op_targets.cpp (same names, same tensors).
#include <fmt/format.h>

#include "gpu/degree_norm.cuh"
#include "gpu/edge_softmax.cuh"
#include "gpu/eshuffle.cuh"
#include "gpu/gather_mm.cuh"
#include "gpu/gpu_targets.h"
#include "gpu/gsddmm.cuh"
#include "gpu/oracle_conventions.h"
#include "gpu/gspmm.cuh"
#include "gpu/segment_aggregation.cuh"
#include "gpu/segment_mm.cuh"
#include "gpu/sddmm.cuh"
#include "gpu/spmm.cuh"
#include "gpu/spmm_ve.cuh"
#include "oracle/degree_norm.h"
#include "oracle/gsddmm.h"
#include "oracle/gspmm.h"
#include "oracle/segment_aggregation.h"
#include "core/graph.h"

namespace gnncheck::gpu {
namespace {

index_t heads_of(const TargetRun& run) { return run.attributes.get_int("heads"); }
index_t features_of(const TargetRun& run) { return run.attributes.get_int("features"); }

// The reference's methods (gpu/README.md, "Choices"): A·X by the CSR row kernel, Aᵀ·Y by the fused
// CSC kernel. The cuSPARSE systems' targets are gpu/cusparse_targets.cpp.
constexpr ForwardMethod forward_method = ForwardMethod::row_kernel;
constexpr TransposeMethod transpose_method = TransposeMethod::fused_csc_kernel;

// spmm and spmm_transposed: the same two products with the roles swapped.
void spmm_target(TargetRun& run) {
  const DeviceTensor& x = run.input("x");
  const index_t f = x.row_size();
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", {g.n_dst(), f});
  spmm_forward(run.ctx, g, x.data(), f, y.data(), forward_method);
  if (run.backward()) {
    DeviceTensor& gx = run.new_gradient("x", x.shape());
    spmm_backward(run.ctx, g, run.grad_output("y").data(), f, gx.data(), transpose_method);
  }
}

void spmm_transposed_target(TargetRun& run) {
  const DeviceTensor& y = run.input("y");
  const index_t f = y.row_size();
  DeviceGraph& g = run.graph();
  DeviceTensor& z = run.new_output("z", {g.n_src(), f});
  spmm_transposed_forward(run.ctx, g, y.data(), f, z.data(), transpose_method);
  if (run.backward()) {
    DeviceTensor& gy = run.new_gradient("y", y.shape());
    spmm_transposed_backward(run.ctx, g, run.grad_output("z").data(), f, gy.data(), forward_method);
  }
}

// The weighted products.
void spmm_ve_target(TargetRun& run) {
  const DeviceTensor& w = run.input("edge_values");
  const DeviceTensor& x = run.input("x");
  const index_t heads = heads_of(run), channels = features_of(run);
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", {g.n_dst(), heads * channels});
  spmm_ve_forward(run.ctx, g, w.data(), heads, x.data(), channels, y.data(), forward_method);
  if (!run.backward()) return;
  const float* gy = run.grad_output("y").data();
  DeviceTensor& gw = run.new_gradient("edge_values", w.shape());
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  spmm_ve_backward(run.ctx, g, w.data(), heads, x.data(), channels, gy, gw.data(), gx.data(), transpose_method);
}

void spmm_ve_transposed_target(TargetRun& run) {
  const DeviceTensor& w = run.input("edge_values");
  const DeviceTensor& y = run.input("y");
  const index_t heads = heads_of(run), channels = features_of(run);
  DeviceGraph& g = run.graph();
  DeviceTensor& z = run.new_output("z", {g.n_src(), heads * channels});
  spmm_ve_transposed_forward(run.ctx, g, w.data(), heads, y.data(), channels, z.data(), transpose_method);
  if (!run.backward()) return;
  const float* gz = run.grad_output("z").data();
  DeviceTensor& gw = run.new_gradient("edge_values", w.shape());
  DeviceTensor& gy = run.new_gradient("y", y.shape());
  spmm_ve_transposed_backward(run.ctx, g, w.data(), heads, y.data(), channels, gz, gw.data(), gy.data());
}

void sddmm_dot_target(TargetRun& run) {
  const DeviceTensor& u = run.input("u");
  const DeviceTensor& v = run.input("v");
  const index_t heads = heads_of(run), channels = features_of(run);
  DeviceGraph& g = run.graph();
  DeviceTensor& e = run.new_output("e", {g.num_edges(), heads});
  sddmm_dot_forward(run.ctx, g, u.data(), v.data(), heads, channels, e.data());
  if (!run.backward()) return;
  const float* ge = run.grad_output("e").data();
  DeviceTensor& gu = run.new_gradient("u", u.shape());
  DeviceTensor& gv = run.new_gradient("v", v.shape());
  sddmm_dot_backward(run.ctx, g, u.data(), v.data(), heads, channels, ge, gu.data(), gv.data());
}

void sddmm_add_target(TargetRun& run) {
  const DeviceTensor& a = run.input("a");
  const DeviceTensor& b = run.input("b");
  const index_t heads = heads_of(run);
  DeviceGraph& g = run.graph();
  DeviceTensor& e = run.new_output("e", {g.num_edges(), heads});
  sddmm_add_forward(run.ctx, g, a.data(), b.data(), heads, e.data());
  if (!run.backward()) return;
  DeviceTensor& ga = run.new_gradient("a", a.shape());
  DeviceTensor& gb = run.new_gradient("b", b.shape());
  sddmm_add_backward(run.ctx, g, run.grad_output("e").data(), heads, ga.data(), gb.data());
}

void edge_softmax_target(TargetRun& run) {
  const DeviceTensor& logits = run.input("logits");
  const index_t heads = heads_of(run);
  DeviceGraph& g = run.graph();
  DeviceTensor& alpha = run.new_output("alpha", logits.shape());
  edge_softmax_forward(run.ctx, g, logits.data(), heads, alpha.data());
  if (!run.backward()) return;
  DeviceTensor& gl = run.new_gradient("logits", logits.shape());
  edge_softmax_backward(run.ctx, g, alpha.data(), run.grad_output("alpha").data(), heads, gl.data());
}

void eshuffle_target(TargetRun& run, bool inverse) {
  const DeviceTensor& x = run.input("x");
  const index_t heads = heads_of(run);
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", x.shape());
  if (inverse) eshuffle_inverse_forward(run.ctx, g, x.data(), heads, y.data());
  else eshuffle_forward(run.ctx, g, x.data(), heads, y.data());
  if (!run.backward()) return;
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  if (inverse) eshuffle_inverse_backward(run.ctx, g, run.grad_output("y").data(), heads, gx.data());
  else eshuffle_backward(run.ctx, g, run.grad_output("y").data(), heads, gx.data());
}

void normalized_spmm_target(TargetRun& run) {
  const DeviceTensor& x = run.input("x");
  const index_t f = x.row_size();
  const DegreeNorm norm = to_gpu(oracle::parse_degree_norm(run.attributes.get_string("norm")));
  const SourceDegree source_degree = to_gpu(oracle::parse_source_degree(run.attributes.get_string("source_degree")));
  const ZeroDegree zero_degree = to_gpu(oracle::parse_zero_degree(run.attributes.get_string("zero_degree")));
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", {g.n_dst(), f});
  normalized_spmm_forward(run.ctx, g, norm, source_degree, x.data(), f, y.data(), zero_degree);
  if (!run.backward()) return;
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  normalized_spmm_backward(run.ctx, g, norm, source_degree, run.grad_output("y").data(), f, gx.data(), zero_degree);
}

// An input the target's attributes may leave out (gspmm's u under copy_e): its data, or nullptr.
const float* optional_input(const TargetRun& run, const std::string& name) {
  return run.has_input(name) ? run.input(name).data() : nullptr;
}

// A gradient of an input the case carries, zero-filled in its shape; nullptr when it carries none.
float* optional_gradient(TargetRun& run, const std::string& name) {
  return run.has_input(name) ? run.new_gradient(name, run.input(name).shape()).data() : nullptr;
}

// The kernels' copies of the oracle's enumerations (gpu/broadcast.h) list the same values in the same order.
static_assert(static_cast<int>(OperandBroadcast::both) == static_cast<int>(oracle::Broadcast::both) &&
              static_cast<int>(OperandBroadcast::heads) == static_cast<int>(oracle::Broadcast::heads) &&
              static_cast<int>(OperandBroadcast::features) == static_cast<int>(oracle::Broadcast::features));
static_assert(static_cast<int>(ElementwiseOp::div) == static_cast<int>(oracle::BinaryOp::div) &&
              static_cast<int>(ElementwiseOp::mul) == static_cast<int>(oracle::BinaryOp::mul) &&
              static_cast<int>(ElementwiseOp::sub) == static_cast<int>(oracle::BinaryOp::sub) &&
              static_cast<int>(ElementwiseOp::add) == static_cast<int>(oracle::BinaryOp::add) &&
              static_cast<int>(ElementwiseOp::copy_rhs) == static_cast<int>(oracle::BinaryOp::copy_rhs));
static_assert(static_cast<int>(OperandRows::e) == static_cast<int>(oracle::OperandSide::e) &&
              static_cast<int>(OperandRows::v) == static_cast<int>(oracle::OperandSide::v));
static_assert(static_cast<int>(RowReduction::min) == static_cast<int>(oracle::Reduction::min) &&
              static_cast<int>(RowReduction::max) == static_cast<int>(oracle::Reduction::max) &&
              static_cast<int>(RowReduction::mean) == static_cast<int>(oracle::Reduction::mean));

BroadcastOperand operand(const oracle::BroadcastShape& shape, oracle::Broadcast b) {
  return {static_cast<OperandBroadcast>(b), shape.columns(b)};
}

GspmmShape gspmm_shape(const oracle::GspmmConfig& config) {
  GspmmShape s;
  s.heads = config.heads;
  s.features = config.features;
  s.message = static_cast<ElementwiseOp>(oracle::binary_op(config.message));
  s.reduce = static_cast<RowReduction>(config.reduce);
  s.empty_rows_identity = config.empty_rows == oracle::EmptyRows::identity;
  s.u = operand(config, config.u_broadcast);
  s.e = operand(config, config.e_broadcast);
  return s;
}

GsddmmShape gsddmm_shape(const oracle::GsddmmConfig& config) {
  GsddmmShape s;
  s.heads = config.heads;
  s.features = config.features;
  s.op = static_cast<ElementwiseOp>(config.binary());
  s.dot = config.op == oracle::SddmmOp::dot;
  s.lhs_rows = static_cast<OperandRows>(config.lhs);
  s.rhs_rows = static_cast<OperandRows>(config.rhs);
  s.lhs = operand(config, config.lhs_broadcast);
  s.rhs = operand(config, config.rhs_broadcast);
  return s;
}

void gspmm_target(TargetRun& run) {
  const GspmmShape config = gspmm_shape(oracle::gspmm_config(run.attributes));
  const float* u = config.uses_u() ? optional_input(run, "u") : nullptr;
  const float* e = config.uses_e() ? optional_input(run, "e") : nullptr;
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", {g.n_dst(), config.width()});
  gspmm_forward(run.ctx, g, config, u, e, y.data());
  if (!run.backward()) return;
  // By the message, not by the pointer: a 0-element operand has no data but still its (empty) gradient.
  float* gu = config.uses_u() ? optional_gradient(run, "u") : nullptr;
  float* ge = config.uses_e() ? optional_gradient(run, "e") : nullptr;
  gspmm_backward(run.ctx, g, config, u, e, run.grad_output("y").data(), gu, ge);
}

// segment_reduce is gspmm under copy_e on one head (oracle/segment_reduce_target.cpp): the same kernels.
void segment_reduce_target(TargetRun& run) {
  const DeviceTensor& x = run.input("x");
  GspmmShape shape;
  shape.features = x.row_size();
  shape.message = ElementwiseOp::copy_rhs;
  shape.reduce = static_cast<RowReduction>(
      oracle::parse_choice<oracle::Reduction>(run.attributes, "segment_reduce", "reduce", oracle::kReductionNames));
  shape.empty_rows_identity = run.attributes.get_string("empty_rows") == "identity";
  shape.e = {OperandBroadcast::none, shape.features};
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", {g.n_dst(), shape.features});
  gspmm_forward(run.ctx, g, shape, nullptr, x.data(), y.data());
  if (!run.backward()) return;
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  gspmm_backward(run.ctx, g, shape, nullptr, x.data(), run.grad_output("y").data(), nullptr, gx.data());
}

// PyG's var, std, mul and softmax aggregations (oracle/segment_aggregation.h): gpu/segment_aggregation.cu.
void segment_aggregation_target(TargetRun& run) {
  const auto cfg = oracle::SegmentAggregationConfig::from_attributes(run.attributes);
  const auto kind = [&] {
    switch (cfg.aggr) {
      case oracle::SegmentAggregation::var: return SegmentAggregationKind::var;
      case oracle::SegmentAggregation::std: return SegmentAggregationKind::std;
      case oracle::SegmentAggregation::mul: return SegmentAggregationKind::mul;
      case oracle::SegmentAggregation::softmax: break;
    }
    return SegmentAggregationKind::softmax;
  }();
  const DeviceTensor& x = run.input("x");
  const float* t = cfg.has_temperature() ? run.input("t").data() : nullptr;
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", {g.n_dst(), cfg.features});
  segment_aggregation_forward(run.ctx, g, kind, cfg.features, x.data(), t, y.data());
  if (!run.backward()) return;
  float* grad_t = cfg.has_temperature() ? run.new_gradient("t", {1}).data() : nullptr;
  segment_aggregation_backward(run.ctx, g, kind, cfg.features, x.data(), t, run.grad_output("y").data(),
                               run.new_gradient("x", x.shape()).data(), grad_t);
}

// One weight matrix per destination's segment of edge rows (oracle/segment_mm.h): gpu/segment_mm.cu.
void segment_mm_target(TargetRun& run) {
  const DeviceTensor& x = run.input("x");
  const DeviceTensor& w = run.input("weight");
  const index_t in = run.attributes.get_int("in_features"), out = run.attributes.get_int("out_features");
  DeviceGraph& g = run.graph();
  DeviceTensor& y = run.new_output("y", {g.num_edges(), out});
  segment_mm_forward(run.ctx, g, in, out, x.data(), w.data(), y.data());
  if (!run.backward()) return;
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  DeviceTensor& gw = run.new_gradient("weight", w.shape());
  segment_mm_backward(run.ctx, g, in, out, x.data(), w.data(), run.grad_output("y").data(), gx.data(), gw.data());
}

// One weight matrix per row's type (oracle/gather_mm.h): gpu/gather_mm.cu, for gather_mm's edges
// (edge_type, relations) and typed_linear's nodes (node_type, node_types). The graph is not read: the
// row count is x's, so nothing is uploaded for it.
void typed_rows_target(TargetRun& run, const char* types_name, const char* type_count) {
  const DeviceTensor& x = run.input("x");
  const DeviceTensor& types = run.input(types_name);
  const DeviceTensor& w = run.input("weight");  // a parameter slot: run.input holds parameters too
  const index_t type_matrices = run.attributes.get_int(type_count);
  const index_t in = run.attributes.get_int("in_features"), out = run.attributes.get_int("out_features");
  const index_t rows = x.rows();
  DeviceTensor& y = run.new_output("y", {rows, out});
  gather_mm_forward(run.ctx, rows, in, out, x.data(), types.data(), w.data(), y.data());
  if (!run.backward()) return;
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  DeviceTensor& gw = run.new_gradient("weight", w.shape());
  gather_mm_backward(run.ctx, rows, type_matrices, in, out, x.data(), types.data(), w.data(),
                     run.grad_output("y").data(), gx.data(), gw.data());
}

void gsddmm_target(TargetRun& run) {
  const oracle::GsddmmConfig attributes = oracle::gsddmm_config(run.attributes);
  const GsddmmShape config = gsddmm_shape(attributes);
  const std::string lhs_name = oracle::lhs_input_name(attributes), rhs_name = oracle::rhs_input_name(attributes);
  const float* lhs = config.uses_lhs() ? optional_input(run, lhs_name) : nullptr;
  const float* rhs = config.uses_rhs() ? optional_input(run, rhs_name) : nullptr;
  DeviceGraph& g = run.graph();
  DeviceTensor& out = run.new_output("out", {g.num_edges(), config.out_width()});
  gsddmm_forward(run.ctx, g, config, lhs, rhs, out.data());
  if (!run.backward()) return;
  float* gl = config.uses_lhs() ? optional_gradient(run, lhs_name) : nullptr;
  float* gr = config.uses_rhs() ? optional_gradient(run, rhs_name) : nullptr;
  gsddmm_backward(run.ctx, g, config, lhs, rhs, run.grad_output("out").data(), gl, gr);
}

// attention: the edge softmax into a scratch alpha, then the weighted aggregation; the backward
// runs the aggregation's (grad_alpha, grad_x) and then the softmax's. alpha is the kernels' own
// intermediate, never an output.
void attention_target(TargetRun& run) {
  const DeviceTensor& logits = run.input("logits");
  const DeviceTensor& x = run.input("x");
  const index_t heads = heads_of(run), channels = features_of(run);
  DeviceGraph& g = run.graph();
  DeviceTensor alpha(run.ctx, logits.shape());
  edge_softmax_forward(run.ctx, g, logits.data(), heads, alpha.data());
  DeviceTensor& y = run.new_output("y", {g.n_dst(), heads * channels});
  spmm_ve_forward(run.ctx, g, alpha.data(), heads, x.data(), channels, y.data(), ForwardMethod::row_kernel);
  if (!run.backward()) return;
  DeviceTensor grad_alpha(run.ctx, logits.shape());
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  spmm_ve_backward(run.ctx, g, alpha.data(), heads, x.data(), channels, run.grad_output("y").data(), grad_alpha.data(),
                   gx.data(), TransposeMethod::fused_csc_kernel);
  DeviceTensor& gl = run.new_gradient("logits", logits.shape());
  edge_softmax_backward(run.ctx, g, alpha.data(), grad_alpha.data(), heads, gl.data());
}

// sddmm_spmm: the per-head scores into a scratch tensor, then the weighted aggregation; the
// backward runs the aggregation's (grad_s, grad_x) and then the scores' (grad_u, grad_v).
void sddmm_spmm_target(TargetRun& run) {
  const DeviceTensor& u = run.input("u");
  const DeviceTensor& v = run.input("v");
  const DeviceTensor& x = run.input("x");
  const index_t heads = heads_of(run), channels = features_of(run);
  DeviceGraph& g = run.graph();
  DeviceTensor scores(run.ctx, {g.num_edges(), heads});
  sddmm_dot_forward(run.ctx, g, u.data(), v.data(), heads, channels, scores.data());
  DeviceTensor& y = run.new_output("y", {g.n_dst(), heads * channels});
  spmm_ve_forward(run.ctx, g, scores.data(), heads, x.data(), channels, y.data(), ForwardMethod::row_kernel);
  if (!run.backward()) return;
  DeviceTensor grad_scores(run.ctx, {g.num_edges(), heads});
  DeviceTensor& gx = run.new_gradient("x", x.shape());
  spmm_ve_backward(run.ctx, g, scores.data(), heads, x.data(), channels, run.grad_output("y").data(),
                   grad_scores.data(), gx.data(), TransposeMethod::fused_csc_kernel);
  DeviceTensor& gu = run.new_gradient("u", u.shape());
  DeviceTensor& gv = run.new_gradient("v", v.shape());
  sddmm_dot_backward(run.ctx, g, u.data(), v.data(), heads, channels, grad_scores.data(), gu.data(), gv.data());
}

}  // namespace

std::map<std::string, GpuTargetFn> gpu_op_targets(Library library) {
  if (library == Library::cusparse_only) return cusparse_op_targets(StorageFormat::float32);
  std::map<std::string, GpuTargetFn> targets{
      {"spmm", spmm_target},
      {"spmm_transposed", spmm_transposed_target},
      {"spmm_ve", spmm_ve_target},
      {"spmm_ve_transposed", spmm_ve_transposed_target},
      {"sddmm_dot", sddmm_dot_target},
  };
  targets.emplace("sddmm_add", sddmm_add_target);
  targets.emplace("edge_softmax", edge_softmax_target);
  targets.emplace("eshuffle", [](TargetRun& r) { eshuffle_target(r, false); });
  targets.emplace("eshuffle_inverse", [](TargetRun& r) { eshuffle_target(r, true); });
  targets.emplace("normalized_spmm", normalized_spmm_target);
  targets.emplace("gspmm", gspmm_target);
  targets.emplace("gsddmm", gsddmm_target);
  targets.emplace("segment_reduce", segment_reduce_target);
  targets.emplace("segment_mm", segment_mm_target);
  targets.emplace("gather_mm", [](TargetRun& r) { typed_rows_target(r, "edge_type", "relations"); });
  targets.emplace("typed_linear", [](TargetRun& r) { typed_rows_target(r, "node_type", "node_types"); });
  targets.emplace("segment_aggregation", segment_aggregation_target);
  targets.emplace("attention", attention_target);
  targets.emplace("sddmm_spmm", sddmm_spmm_target);
  return targets;
}

}  // namespace gnncheck::gpu

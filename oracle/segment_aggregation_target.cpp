// The catalogue entry of PyG's segment aggregations that are neither a sum nor an extreme (var,
// softmax with a learnable temperature; oracle/segment_aggregation.h). Like segment_reduce,
// each destination row's edges are one contiguous segment of x's rows in edge-id order.
#include "oracle/catalogue_support.h"
#include "oracle/segment_aggregation.h"

namespace gnncheck::oracle {
namespace {

using namespace catalogue;

template <class T>
Evaluation<T> evaluate_aggregation(const Graph& g, const Attributes& a, const TensorMapOf<T>& in,
                                   const TensorMapOf<T>& gout) {
  const auto cfg = SegmentAggregationConfig::from_attributes(a);
  const DenseTensor<T>& x = get(in, "x");
  const DenseTensor<T>* t = optional_tensor(in, "t");
  const DenseTensor<T> none;
  const DenseTensor<T>& temperature = cfg.has_temperature() && t ? *t : none;
  Evaluation<T> ev;
  ev.outputs["y"] = segment_aggregation_forward(g, cfg, x, temperature);
  if (!gout.empty()) {
    auto grads = segment_aggregation_backward(g, cfg, x, temperature, get(gout, "y"));
    ev.gradients["x"] = std::move(grads.grad_x);
    if (cfg.has_temperature()) ev.gradients["t"] = std::move(grads.grad_t);
  }
  return ev;
}

}  // namespace

TargetDef segment_aggregation_target() {
  TargetDef def = make_target(
      {"segment_aggregation", false,
       "y[i] = PyG's var or softmax aggregation of x over the segment of row i (its edges, in edge-id order)",
       {{"x", TensorKind::edges, true}, {"t", TensorKind::parameter, true}},
       {{"y", TensorKind::dst_nodes, true}},
       {drawn_choice("aggr", "var", "the aggregation per segment: var (population variance) or softmax (Σ softmax(t·x)·x)",
                     kSegmentAggregationNames),
        features_attribute()},
       false,
       "n = row i's segment length;  var: y[i, f] = (1/n)·Σ_k x[k, f]² − ((1/n)·Σ_k x[k, f])²;\n"
       "softmax: y[i, f] = Σ_k α[k, f]·x[k, f],  α[k, f] = exp(t·x[k, f]) / Σ_{l ∈ row i} exp(t·x[l, f])   "
       "(k, l ∈ [row_ptr[i], row_ptr[i+1]), f < features)",
       {"x is [E, features]: one row per edge in edge-id order, so row i's edges are the contiguous rows row_ptr[i] … "
        "row_ptr[i+1]−1 of x (duplicate edges counted). Only the graph's row pointers matter; its columns are not read.",
        "An empty segment gives 0 (var and softmax alike, PyG's).",
        "var is the population variance (divided by n, not n − 1), PyG's VarAggregation; the oracle computes it as PyG "
        "does, mean of squares minus the squared mean, whose float64 rounding is far below a float32 bound.",
        "softmax: t is one learnable inverse temperature shared by every feature (PyG's SoftmaxAggregation(learn=True), "
        "channels = 1), [1], present only with aggr = softmax; its gradient is returned."}},
      [](const Graph& g, const Attributes& a) {
        const auto cfg = SegmentAggregationConfig::from_attributes(a);
        Shapes s{{"x", {g.num_edges(), cfg.features}}};
        if (cfg.has_temperature()) s["t"] = {1};
        return s;
      },
      [](const Graph& g, const Attributes& a) {
        return Shapes{{"y", {g.n_dst(), SegmentAggregationConfig::from_attributes(a).features}}};
      },
      []<class T>(const Graph& g, const Attributes& a, const TensorMapOf<T>& in, const TensorMapOf<T>& gout) {
        return evaluate_aggregation(g, a, in, gout);
      });
  // The measured model: var's conditioning (it cancels where the mean dominates) and the softmax's
  // exp are what the float32 evaluation's error over three summation orders shows
  // (checks/tolerance.md); the softmax's backward through autograd cancels on near one-hot segments,
  // which it does not show: its floor (checks/segment_softmax_floor.h).
  def.spec.tolerance = {ToleranceKind::measured, 0, {}, {ToleranceFloor::segment_softmax}};
  // gpu/op_targets.cpp: gpu/segment_aggregation.cu, one thread per (row, feature) over row_ptr.
  def.spec.gpu = {.device_resident = true, .reads_edge_perm = false};
  return def;
}

}  // namespace gnncheck::oracle

// gnncheck/scale/scale_compare.h — how a scale check turns compared tensors into its result
// (internal to scale/: shared by the host check, scale_check.cpp, and the device-resident one,
// device_scale_check.cpp, which hand it the same gathered rows and zero-check summaries).
//
//   ScaleComparer cmp(result, nb);
//   cmp.compare_inside({"output y", oracle::TensorKind::dst_nodes, nb.rows, big_shape}, actual_rows, exact, bounds);
//   cmp.record_outside({"gradient x", oracle::TensorKind::src_nodes, nb.cols, big_shape}, summary);
//   return cmp.conclude();
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "scale/neighbourhood.h"
#include "scale/scale_check.h"

namespace gnncheck::scale {

// One compared tensor of the big case: its label, kind, the big rows the neighbourhood holds, its whole shape.
struct ComparedTensor {
  std::string label;  // "output y" / "gradient x"
  oracle::TensorKind kind = oracle::TensorKind::dst_nodes;
  std::span<const index_t> big_rows;  // neighbourhood row i -> big row (every row, for a parameter)
  std::vector<index_t> big_shape;
};

// A gradient's elements outside the neighbourhood, which must all be exactly 0.
struct OutsideSummary {
  index_t elements = 0;  // elements outside
  index_t nonzero = 0;   // of those, elements that are not ±0 (NaN counts)
  index_t worst_flat = -1;  // flat index into the big tensor of the largest |value| (NaN largest); −1 if none
  double worst_value = 0.0;
};

class ScaleComparer {
 public:
  ScaleComparer(ScaleResult& result, const Neighbourhood& nb) : r_(result), nb_(nb) {}

  // `actual` holds the big tensor's rows big_rows (in that order); `exact` and the tensor `t.label`
  // of `bounds` (with its lower endpoints, where the model gives them) are the neighbourhood's,
  // whose first big_rows.size() rows are compared (padding rows are not).
  void compare_inside(const ComparedTensor& t, const Tensor& actual, const Tensor& exact, const checks::Bounds& bounds);
  void record_outside(const ComparedTensor& t, const OutsideSummary& outside);

  // Marks the result an error with `message` (the system's fault, never a catch of nothing).
  ScaleResult error(std::string message);
  // Pass, fail, or an error when nothing was compared.
  ScaleResult conclude();

 private:
  std::string row_text(index_t sampled) const;
  std::string where_inside(oracle::TensorKind kind, index_t sub_row) const;
  void consider(const WorstElement& w, bool passed);

  ScaleResult& r_;
  const Neighbourhood& nb_;
  bool worst_passed_ = true;
};

// The summary of `big`'s elements outside rows `inside` (a host tensor; the device check computes it on the device).
OutsideSummary summarize_outside(const Tensor& big, std::span<const index_t> inside);

std::vector<index_t> multi_index(index_t flat, const std::vector<index_t>& shape);
// 0 … shape[0] − 1 (one row for a scalar): the rows of a parameter, compared whole.
std::vector<index_t> all_rows(const std::vector<index_t>& shape);

// What a scale check compares of a target, in order: every output, then the gradient of every
// differentiable input the case holds (an optional parameter switched off has no shape and no slot).
struct CompareSlot {
  std::string label;  // "output y", "gradient x"
  std::string name;
  bool is_output = false;
  oracle::TensorKind kind = oracle::TensorKind::dst_nodes;
};
std::vector<CompareSlot> compare_slots(const oracle::TargetDef& def, const std::map<std::string, std::vector<index_t>>& input_shapes);

// InputError for an unsupported target, --rows < 1 or a magnitude that is not positive and finite.
void require_valid_options(const ScaleOptions& options);
// The row sample's options of a check.
SamplingOptions sampling_options(const ScaleOptions& options);
// The neighbourhood's sizes and the tolerance model, into the result.
void record_neighbourhood(ScaleResult& r, const Neighbourhood& nb, const checks::Bounds& bounds);

// The neighbourhood's exact float64 answer and its bounds at r.precision, shared by the host and the
// device paths, evaluated side by side (checks::ToleranceModel::reference_and_bounds): times both
// into r.seconds (exact: the oracle's own evaluation; bounds: the rest of that wall time; and the
// oracle part's total) and records the neighbourhood (record_neighbourhood). InternalError when the
// oracle cannot evaluate it.
struct ExactAnswer {
  Result exact;
  checks::Bounds bounds;
};
ExactAnswer evaluate_neighbourhood(ScaleResult& r, const Neighbourhood& nb, const checks::ToleranceOptions& tolerance);

}  // namespace gnncheck::scale

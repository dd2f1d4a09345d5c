// gnncheck/checks/tolerance_formats.h — facts of the floating-point formats that the tolerance
// model's rules share (tolerance.cpp, softmax_bounds.cpp, the floors): the smallest normal and
// subnormal numbers and the unit roundoff as a message writes it. Internal to checks/.
#pragma once

#include <cmath>
#include <limits>
#include <string>

#include "core/case.h"
#include "checks/case_transforms.h"

namespace gnncheck::checks {

inline // The smallest normal number of the format: below it results flush to zero or lose relative precision.
double smallest_normal(Precision p) {
  switch (p) {
    case Precision::float64: return std::ldexp(1.0, -1022);
    case Precision::float32:
    case Precision::tf32:
    case Precision::bfloat16: return std::ldexp(1.0, -126);
    case Precision::float16: return std::ldexp(1.0, -14);
  }
  return 0.0;
}

// The largest finite number of the format: beyond it (after rounding) a result overflows to ±∞.
inline double largest_finite(Precision p) {
  switch (p) {
    case Precision::float64: return std::numeric_limits<double>::max();
    case Precision::float32:
    case Precision::tf32: return std::numeric_limits<float>::max();
    case Precision::bfloat16: return 3.3895313892515355e38;
    case Precision::float16: return 65504.0;
  }
  return 0.0;
}

inline double smallest_subnormal(Precision p) {
  switch (p) {
    case Precision::float64: return std::ldexp(1.0, -1074);
    case Precision::float32:
    case Precision::tf32: return std::ldexp(1.0, -149);
    case Precision::bfloat16: return std::ldexp(1.0, -133);
    case Precision::float16: return std::ldexp(1.0, -24);
  }
  return 0.0;
}

// u as a power of two, for messages.
inline std::string u_text(Precision p) {
  switch (p) {
    case Precision::float64: return "2^-53";
    case Precision::float32: return "2^-24";
    case Precision::tf32: return "2^-11";
    case Precision::bfloat16: return "2^-8";
    case Precision::float16: return "2^-11";
  }
  return "?";
}

struct Bounds;

// The tensor `nt` of `r`; an InternalError naming `what` when it is missing.
const Tensor& must_find(const Result& r, const NamedTensor& nt, const char* what);

// The number of terms summed into each row of a node tensor: a destination's in-degree, a
// source's out-degree; a parameter sums over the whole graph (nodes and edges).
double node_row_terms(const Graph& g, oracle::TensorKind kind, index_t row);

// The oracle's answer to `c` in `p`; InternalError naming `what` when it cannot evaluate it.
Result must_evaluate(const Case& c, Precision p, const char* what);

}  // namespace gnncheck::checks

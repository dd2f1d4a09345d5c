// gnncheck/checks/stored_values.h — what storing a case's values moves, for a system that stores in
// one format and sums in a wider one (checks/tolerance.md, "Storage and accumulation"): rounding a
// value the storage format holds leaves it as it is, so the measured model charges storing only for
// what moves. Internal to checks/ and properties/ (which draws cases on the common half grid).
#pragma once

#include "checks/tolerance.h"
#include "core/case.h"
#include "core/tensor.h"

namespace gnncheck::checks {

// Whether `p` holds v exactly (NaN counts as held: storing keeps it NaN).
bool value_held_exactly(double v, Precision p);
// Whether `p` holds every element of t exactly: storing such a tensor leaves it as it is.
bool held_exactly(const Tensor& t, Precision p);

// The common grid of the half formats: the values that float16, bfloat16 and TF32 all hold (8
// significant bits within float16's normal range, and 0). Storing a case on it in any half format
// moves nothing, so a two-format system's bound is its sums' format alone there.
bool held_by_every_half_format(double v);
// The value of that grid nearest to v; `otherwise` where the grid has none near v (|v| beyond 65504).
double nearest_on_every_half_grid(double v, double otherwise);
// v, a value of that grid, moved by about delta ≠ 0 and kept on it: the grid value nearest v + delta,
// or v's neighbour on delta's side where that is v itself (delta under half a step of the grid);
// v where the grid ends there (65504).
double moved_on_every_half_grid(double v, double delta);

// What storing the case's value tensors (inputs, parameters, output gradients; not index tensors)
// in the storage format moves, read once per case.
struct StoredValues {
  // With two formats, the value tensors with an element the storage format does not hold (q of the
  // measured model); 0 with one format, whose model counts storing among the computation's roundings.
  double moving_tensors = 0.0;
  // Whether storing moves any value: false only with two formats where every value is held.
  bool moves = true;
  // The floors' storing terms: the storage format's u where storing moves a value with two formats,
  // else 0.
  double stored_u = 0.0;
  // The format whose u the attention floors and the softmax rows past the analysis read: the storage
  // format (with two formats only wider than the sums need), or the accumulation format where no
  // value moves — the computation is then the accumulation format's alone, and only its results are
  // stored.
  Precision floor_format = Precision::float64;
  double floor_u() const { return unit_roundoff(floor_format); }
};
StoredValues stored_values(const Case& c, const Formats& formats);

}  // namespace gnncheck::checks

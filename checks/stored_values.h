// gnncheck/checks/stored_values.h — what storing a case's values moves, for a system that stores in
// one format and sums in a wider one (checks/tolerance.md, "Storage and accumulation"): rounding a
// value the storage format holds leaves it as it is, so the measured model charges storing only for
// what moves. Internal to checks/.
#pragma once

#include "checks/tolerance.h"
#include "core/case.h"
#include "core/tensor.h"

namespace gnncheck::checks {

// Whether `p` holds v exactly (NaN counts as held: storing keeps it NaN).
bool value_held_exactly(double v, Precision p);
// Whether `p` holds every element of t exactly: storing such a tensor leaves it as it is.
bool held_exactly(const Tensor& t, Precision p);

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

#include "checks/stored_values.h"

#include <cmath>

#include "checks/case_transforms.h"
#include "checks/tolerance_formats.h"

namespace gnncheck::checks {

// round_to_precision keeps the significand's width below the normal range; the format's own grid
// there is the multiples of its smallest subnormal.
bool value_held_exactly(double v, Precision p) {
  if (p == Precision::float64 || std::isnan(v)) return true;
  if (round_to_precision(v, p) != v) return false;
  const double subnormal = smallest_subnormal(p);
  return std::abs(v) >= smallest_normal(p) || std::trunc(v / subnormal) == v / subnormal;
}

bool held_exactly(const Tensor& t, Precision p) {
  for (double v : t.values())
    if (!value_held_exactly(v, p)) return false;
  return true;
}

StoredValues stored_values(const Case& c, const Formats& formats) {
  StoredValues s;
  s.floor_format = formats.storage;
  if (!formats.mixed()) return s;
  for (const TensorMap* m : {&c.inputs, &c.parameters, &c.grad_outputs})
    for (const auto& [name, t] : *m)
      if ((m == &c.grad_outputs || !is_index_tensor(c, name)) && !held_exactly(t, formats.storage)) s.moving_tensors += 1.0;
  s.moves = s.moving_tensors > 0.0;
  s.stored_u = s.moves ? unit_roundoff(formats.storage) : 0.0;
  if (!s.moves) s.floor_format = formats.accumulation;
  return s;
}

}  // namespace gnncheck::checks

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

bool held_by_every_half_format(double v) {
  return value_held_exactly(v, Precision::float16) && value_held_exactly(v, Precision::bfloat16);
}

// bfloat16's 8 significant bits, then float16's range: below its smallest normal the nearest
// multiple of it (0 or ±2⁻¹⁴), which both formats hold. TF32 holds everything bfloat16 holds.
double nearest_on_every_half_grid(double v, double otherwise) {
  const double float16_smallest_normal = smallest_normal(Precision::float16);
  double r = round_to_precision(v, Precision::bfloat16);
  if (std::abs(r) < float16_smallest_normal) r = std::round(r / float16_smallest_normal) * float16_smallest_normal;
  return held_by_every_half_format(r) ? r : otherwise;
}

double moved_on_every_half_grid(double v, double delta) {
  const double nearest = nearest_on_every_half_grid(v + delta, v);
  if (nearest != v || delta == 0.0) return nearest;
  const double float16_smallest_normal = smallest_normal(Precision::float16);
  if (v == 0.0) return std::copysign(float16_smallest_normal, delta);
  int exponent = 0;
  std::frexp(std::abs(v), &exponent);  // |v| in [2^(exponent−1), 2^exponent): steps of 2^(exponent−8)
  double step = std::ldexp(1.0, exponent - 8);
  const bool toward_zero = (v > 0.0) != (delta > 0.0);
  if (toward_zero && std::abs(v) == std::ldexp(1.0, exponent - 1)) step /= 2.0;  // the binade below is finer
  const double neighbour = v + std::copysign(step, delta);
  return held_by_every_half_format(neighbour) ? neighbour : v;
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

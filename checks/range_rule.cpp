// The range rule; see range_rule.h.
#include "checks/range_rule.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "checks/case_transforms.h"
#include "checks/tolerance_formats.h"

namespace gnncheck::checks {

void note_range(Bounds& b, const std::string& label, const Tensor& abs_sum, const Tensor& y, double safety_factor) {
  if (!b.no_bound.empty()) return;
  const double largest = largest_finite(b.precision);
  const double largest_sum = largest_finite(b.accumulation);
  double peak = 0.0, peak_sum = 0.0;
  for (index_t i = 0; i < y.size(); ++i) {
    if (std::isnan(y[i])) continue;  // carried from a NaN input: the numerics check's matter
    // ±∞ from terms of finite size is a value the op defines (max's identity on an empty segment),
    // compared as it is; from terms beyond float64's range, the oracle itself overflowed.
    if (std::isinf(y[i]) && std::isfinite(abs_sum[i])) continue;
    peak = std::max(peak, std::abs(y[i]));
    peak_sum = std::max(peak_sum, std::isfinite(abs_sum[i]) ? std::abs(abs_sum[i]) : INFINITY);
  }
  if (b.precision == b.accumulation) {
    peak = std::max(peak, peak_sum);
    if (safety_factor * peak >= largest)
      b.no_bound = fmt::format("beyond {}'s range: the terms of {} reach {:.4g} in magnitude, within a factor {} of "
                               "its largest finite value {:.6g}, where a correct result may overflow to ±∞",
                               to_string(b.precision), label, peak, safety_factor, largest);
    return;
  }
  if (safety_factor * peak >= largest)
    b.no_bound = fmt::format("beyond {}'s range: {} reaches {:.4g} in magnitude, within a factor {} of the storage "
                             "format's largest finite value {:.6g}, where a correct result may overflow to ±∞",
                             to_string(b.precision), label, peak, safety_factor, largest);
  else if (safety_factor * peak_sum >= largest_sum)
    b.no_bound = fmt::format("beyond {}'s range: the terms of {} reach {:.4g} in magnitude, within a factor {} of the "
                             "accumulation format's largest finite value {:.6g}, where a partial sum may overflow to ±∞",
                             to_string(b.accumulation), label, peak_sum, safety_factor, largest_sum);
}

void note_inputs_range(Bounds& b, const Case& c, double safety_factor) {
  if (!b.no_bound.empty() || b.precision == b.accumulation) return;
  const double largest = largest_finite(b.precision);
  for (const TensorMap* m : {&c.inputs, &c.parameters, &c.grad_outputs})
    for (const auto& [name, t] : *m) {
      if (m != &c.grad_outputs && is_index_tensor(c, name)) continue;
      double peak = 0.0;
      for (double v : t.values()) peak = std::max(peak, std::abs(v));
      if (safety_factor * peak >= largest) {
        b.no_bound = fmt::format("beyond {}'s range: {}{} reaches {:.4g} in magnitude, within a factor {} of its "
                                 "largest finite value {:.6g}, where a correct implementation stores ±∞",
                                 to_string(b.precision), m == &c.grad_outputs ? "the output gradient of " : "input ",
                                 name, peak, safety_factor, largest);
        return;
      }
    }
}

}  // namespace gnncheck::checks

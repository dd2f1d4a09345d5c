// gnncheck/checks/range_rule.h — where a correct result may overflow: a case whose elements, or their
// terms, come within the safety factor of the declared format's largest finite value has no bound
// (Bounds::no_bound), since a correct implementation may answer ±∞ there (float16's 65504 is reached
// by ordinary inputs). checks/tolerance.md, "Beyond the format's range".
#pragma once

#include <string>

#include "checks/tolerance.h"
#include "core/case.h"
#include "core/tensor.h"

namespace gnncheck::checks {

// Notes in b.no_bound where an element of `label` lies beyond the format's range. Every partial
// sum of an element lies within its terms' magnitude Σ|terms| (`abs_sum`, the target on |inputs|)
// times (1 + γ_n); with the safety factor on that, an element whose Σ|terms| or exact value reaches
// half the largest finite value may overflow to ±∞ in a correct implementation (float16's 65504 is
// reached by ordinary inputs). Elements whose exact value is not finite (an empty row's identity)
// are left out.
//
// With a wider accumulation format (float16 stored, float32 summed) the partial sums live in the
// accumulation format and only the result is stored: Σ|terms| is held to the accumulation format's
// largest value, |exact| to the storage format's.
void note_range(Bounds& b, const std::string& label, const Tensor& abs_sum, const Tensor& y, double safety_factor);

// With a wider accumulation format, an input is still rounded to the storage format: one beyond its
// range is stored as ±∞ by a correct implementation (the sums' check above sees only the terms).
void note_inputs_range(Bounds& b, const Case& c, double safety_factor);

}  // namespace gnncheck::checks

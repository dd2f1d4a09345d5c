#include "oracle/kink_arguments.h"

#include <fmt/format.h>

#include "core/error.h"
#include "oracle/targets.h"

namespace gnncheck::oracle {

KinkArguments kink_arguments(const Case& c) {
  KinkArguments k;
  const TargetDef& def = entry_of(c);
  if (def.kinks.arguments) def.kinks.arguments(c, with_defaults(def.spec, c.attributes), k);
  if (!k.units.empty() && k.units.size() != k.offsets.size())
    throw InternalError(fmt::format("kink_arguments of '{}': {} units for {} arguments", c.target, k.units.size(),
                                    k.offsets.size()));
  if (!k.jump_elements.empty() && (k.jump_elements.size() != k.offsets.size() || !k.jump_values))
    throw InternalError(fmt::format("kink_arguments of '{}': {} jump elements for {} arguments{}", c.target,
                                    k.jump_elements.size(), k.offsets.size(), k.jump_values ? "" : ", and no jump_values"));
  return k;
}

bool kink_between(const Case& a, const Case& b) {
  const KinkArguments ka = kink_arguments(a), kb = kink_arguments(b);
  if (ka.offsets.size() != kb.offsets.size())
    throw InternalError(fmt::format("kink_between: {} and {} kink arguments for '{}': not the same case shape",
                                    ka.offsets.size(), kb.offsets.size(), a.target));
  for (std::size_t n = 0; n < ka.offsets.size(); ++n) {
    const double x = ka.offsets[n], y = kb.offsets[n];
    if (x == y) continue;  // an argument the step does not move keeps its side
    if (x == 0 || y == 0 || (x < 0) != (y < 0)) return true;
  }
  return false;
}

}  // namespace gnncheck::oracle

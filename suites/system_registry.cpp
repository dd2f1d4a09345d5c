#include "suites/system_registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "adapters/cpu_systems.h"
#include "oracle/error.h"

namespace gnncheck::suites {

SystemRegistry SystemRegistry::with_builtins() {
  SystemRegistry r;
  r.add({.name = "oracle",
         .kind = "builtin",
         .summary = "float64 ground truth: every op and layer, forward and backward",
         .bug = "",
         .availability = {},
         .make = [] { return make_oracle_system(); }});
  r.add({.name = "cpu_float32",
         .kind = "builtin",
         .summary = "the oracle's code in float32: a second correct implementation the bounds must accept",
         .bug = "",
         .availability = {},
         .make = [] { return make_cpu_float32_system(); }});
#ifdef GNNCHECK_SUITES_HAVE_CUDA
#else
  r.add({.name = "gpu",
         .kind = "gpu",
         .summary = "CUDA/cuSPARSE float32 reference (GraphPy style)",
         .bug = "",
         .availability = {false, "this build has no CUDA (nvcc was not found at configure time; see GNNCHECK_CUDA)"},
         .make = nullptr});
#endif
  return r;
}

void SystemRegistry::add(SystemEntry entry) {
  if (contains(entry.name))
    throw InputError(fmt::format("system '{}' is defined twice ({} and {})", entry.name, find(entry.name).kind, entry.kind));
  entries_.push_back(std::move(entry));
}

bool SystemRegistry::contains(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return true;
  return false;
}

const SystemEntry& SystemRegistry::find(const std::string& name) const {
  std::vector<std::string> names;
  for (const auto& e : entries_) {
    if (e.name == name) return e;
    names.push_back(e.name);
  }
  throw InputError(fmt::format("unknown system '{}'; known systems: {}", name, fmt::join(names, ", ")));
}

}  // namespace gnncheck::suites

#include "oracle/layers/layer_config.h"

#include <fmt/format.h>

namespace gnncheck::oracle::layers {

index_t positive_attribute(const Attributes& attrs, const std::string& name, const std::string& layer) {
  const index_t value = attrs.get_int(name);
  if (value < 1)
    throw InputError(fmt::format("layer '{}': attribute '{}' must be a positive integer, got {}", layer, name, value));
  return value;
}

double attribute_in_range(const Attributes& attrs, const std::string& name, const std::string& layer, double lo,
                          double hi) {
  const double value = attrs.get_double(name);
  if (!(value >= lo && value < hi))
    throw InputError(fmt::format("layer '{}': attribute '{}' must be in [{}, {}), got {}", layer, name, lo, hi, value));
  return value;
}

}  // namespace gnncheck::oracle::layers

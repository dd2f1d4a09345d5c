// gnncheck/oracle/layers/layer_config.h — reading a layer's configuration from case attributes.
//
// Every layer has a Config struct with a from_attributes() that reads the attributes the target
// catalogue declares (oracle/<layer>_target.cpp) and rejects values that make no sense, naming the
// layer, the attribute and what was expected.
//
//   index_t in = layers::positive_attribute(attrs, "in_features", "gcn");
#pragma once

#include <string>

#include "core/case.h"

namespace gnncheck::oracle::layers {

// attrs.get_int(name), throwing InputError unless it is ≥ 1.
index_t positive_attribute(const Attributes& attrs, const std::string& name, const std::string& layer);

// attrs.get_double(name), throwing InputError unless lo ≤ value < hi.
double attribute_in_range(const Attributes& attrs, const std::string& name, const std::string& layer, double lo,
                          double hi);

}  // namespace gnncheck::oracle::layers

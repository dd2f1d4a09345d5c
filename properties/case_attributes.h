// gnncheck/properties/case_attributes.h — the attributes of a case of arbitrary_case()
// (generators.h), drawn as the target's spec lists them: heads, feature widths, normalization,
// slopes, dropout, relations and bases, flags, and the spec's own choices; a suite's pins
// (CaseOptions::attribute_values) are drawn from their values only. Each shrinks toward its first
// (simplest) value.
#pragma once

#include <string>
#include <vector>

#include "core/case.h"
#include "oracle/targets.h"
#include "properties/generators.h"

namespace gnncheck::properties {

struct DrawnAttributes {
  Attributes attributes;
  std::vector<std::string> open_widths;  // width attributes the suite left open: where a shape may be drawn
  bool free_heads = false;               // heads drawn here (not pinned), with max_heads ≥ 2
  bool bias_open = false;                // a bias flag drawn here (not pinned)
};

DrawnAttributes draw_attributes(const oracle::TargetSpec& spec, const CaseOptions& options);

}  // namespace gnncheck::properties

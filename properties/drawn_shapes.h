// gnncheck/properties/drawn_shapes.h — the shapes where kernels change path (a width at a warp,
// tile or block boundary; a dimension coincidence), drawn into a case of arbitrary_case()
// (generators.h). Their fixed fractions are in properties/README.md.
#pragma once

#include <string>
#include <vector>

#include "core/case.h"
#include "properties/generators.h"

namespace gnncheck::properties {

// The shapes where kernels change path (properties/README.md, "Fixed fractions"), drawn into a case whose
// attributes are drawn already. `widths` are the case's width attributes a suite left open,
// `free_heads` whether heads is open too. Returns what was drawn, for the counterexample ("" when
// the case keeps its ordinary shape: half the cases, and a shape that would exceed the size limit).
std::string draw_shape(const GraphSpec& g, const CaseOptions& options, const std::vector<std::string>& widths,
                       bool free_heads, bool bias_open, Attributes& a);

}  // namespace gnncheck::properties

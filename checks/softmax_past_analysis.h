// gnncheck/checks/softmax_past_analysis.h — where the measured model does not hold through a softmax.
//
// The measured model (checks/tolerance.md) scales float32's observed error linearly in u. A softmax
// inside a layer (GAT's attention; the target declares its rows, oracle/softmax_rows.h) keeps that
// true while every exp's relative error is first order. In a format coarser than float32 a row whose
// largest |logit| L gives ρ = (6 + 4.8·L + 2.4·ln d)·u > 1/2 is past the softmax analysis
// (checks/softmax.md): one exp's argument may move by L·u ≈ 1, a factor e on its term, and no bound is
// known. The case is then inconclusive (Bounds::no_bound), as edge_softmax's own rule leaves such a
// row. u is the storage format's: the logits come from inputs stored there, whatever the sums use —
// unless storing moves no value (checks/stored_values.h, StoredValues::floor_u).
#pragma once

#include "checks/tolerance.h"
#include "core/case.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

// Sets b.no_bound, with the figures, where `def` declares softmax rows and one of them is past the
// analysis in `format` (StoredValues::floor_format of the case); leaves b as it is otherwise (and
// in float32 or finer).
void note_softmax_past_analysis(const oracle::TargetDef& def, const Case& c, Precision format, Bounds& b);

}  // namespace gnncheck::checks

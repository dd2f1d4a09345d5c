// gnncheck/checks/softmax_past_analysis.h — where the measured model does not hold through a softmax.
//
// The measured model (checks/tolerance.md) scales float32's observed error linearly in u. A softmax
// inside a layer (GAT's attention; the target declares its rows, oracle/softmax_rows.h) keeps that
// true while every exp's relative error is first order. In a format coarser than float32 a row whose
// largest |logit| L gives ρ = (6 + 4.8·L + 2.4·ln d)·u > 1/2 is past the softmax analysis
// (checks/softmax.md): one exp's argument may move by L·u ≈ 1, a factor e on its term, and no bound is
// known. The bound is then none (Bounds::no_bound), as edge_softmax's own rule leaves such a row, and
// the checks move the case within the analysis before they compare (moved_within_softmax_analysis,
// called by run_check). u is the storage format's: the logits come from inputs stored there, whatever the sums use —
// unless storing moves no value (checks/stored_values.h, StoredValues::floor_u).
#pragma once

#include <optional>
#include <string>

#include "checks/tolerance.h"
#include "core/case.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

// Sets b.no_bound, with the figures, where `def` declares softmax rows and one of them is past the
// analysis in `format` (StoredValues::floor_format of the case); leaves b as it is otherwise (and
// in float32 or finer).
void note_softmax_past_analysis(const oracle::TargetDef& def, const Case& c, Precision format, Bounds& b);

// Whether a row of largest |logit| L and length d ≥ 1 is past the analysis at unit roundoff u:
// ρ = (6 + 4.8·L + 2.4·ln d)·u > 1/2, or not finite. A row without entries never is.
bool past_softmax_analysis(const oracle::SoftmaxRow& row, double u);

// Such a case moved within the analysis, so that a half format still gets a verdict: every tensor of
// the target's logit_scales (oracle/targets.h) multiplied by 2^−halvings, the fewest halvings that
// bring every logit's own rounding to L·u ≤ 2^−6 — well within, where exp's rounding is far inside
// first order and the measured model is the one the campaigns hold it to. The logits scale with them exactly
// and the layer's kinks keep their sides (a LeakyReLU's argument scales too); a power of two keeps
// every value a format held held. The checks then compare under the unchanged bound, on a case the
// measured model is known to hold on, where past the analysis no comparison was possible at all
// (checks/softmax.md).
struct SoftmaxAnalysisMove {
  Case moved;
  int halvings = 0;
  double largest_logit_before = 0.0, largest_logit_after = 0.0;
  // One clause for the verdict's tolerance model: what was scaled, by how much, and why.
  std::string note;
};
// nullopt where `format` is float32 or finer, `def` declares no softmax rows, no row is past, or no
// scale brings every row within (a logit not finite; a length alone past it: d > e^50 in bfloat16).
std::optional<SoftmaxAnalysisMove> moved_within_softmax_analysis(const oracle::TargetDef& def, const Case& c,
                                                                 Precision format);

}  // namespace gnncheck::checks

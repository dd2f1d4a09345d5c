// gnncheck/oracle/softmax_rows.h — the softmax rows inside a target, at a case: for each row (a
// destination and head) its length and the largest |logit| it exponentiates, evaluated in float64.
//
// The measured tolerance model scales float32's observed error linearly in the unit roundoff. Through
// a softmax that holds while every exp's relative error is first order; in a format coarser than
// float32 a row with large logits breaks it (rounding an argument of 300 in bfloat16 moves the term
// by a factor e^1.2), and no bound is known there (checks/softmax.md, "Past the analysis"). A target
// whose forward holds such a softmax declares these rows (ToleranceRule::softmax_rows), and the model
// has no bound for a case past the analysis, as edge_softmax's own rule has none; the target also
// declares the tensors its logits scale with (ToleranceRule::logit_scales), and the checks compare
// such a case with them scaled within the analysis (checks/softmax_past_analysis.h).
//
//   gat       LeakyReLU(s_dst[i] + s_src[j]) per edge of Ã and head
//   gatv2     Σ_c att[h, c]·LeakyReLU(z[e, h·C + c]) per edge of Ã and head
//   rgat      LeakyReLU(x[i]·W_r·q + x[j]·W_r·k) per edge and head
//   agnn      β·cos(x_i, x_j) per edge of Ã: at most |β|
//   attention the logits input, per edge and head
#pragma once

#include <vector>

#include "core/case.h"
#include "oracle/kink_arguments.h"

namespace gnncheck::oracle {

struct SoftmaxRow {
  double largest_logit = 0.0;  // L: the largest |logit| of the row
  double length = 0.0;         // d: its entries (duplicate edges and self-loops counted)
};

// What the entries' softmax-rows hooks (ToleranceRule::softmax_rows, in oracle/<target>_target.cpp)
// share.
using KinkArgumentsFn = void (*)(const Case&, const Attributes&, KinkArguments&);
// The LeakyReLU's argument at every unit (edge and head, or edge and channel), in float64: what the
// layer's kink hook lists, asked at a slope of 0 (at a slope of 1 it lists nothing: LeakyReLU is
// then the identity; the argument does not depend on the slope).
std::vector<double> leaky_relu_arguments(KinkArgumentsFn kink_arguments_of, const Case& c, Attributes attrs);
double leaky_relu(double z, double slope);
// Each (row of g, head): its length and its largest |logit|, for logits [E, heads] in edge-id order.
std::vector<SoftmaxRow> softmax_rows_of(const Graph& g, const std::vector<double>& logits, index_t heads);

}  // namespace gnncheck::oracle

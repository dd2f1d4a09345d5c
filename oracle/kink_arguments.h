// gnncheck/oracle/kink_arguments.h — the arguments of the kinks in a target's forward, at a case.
//
// Seven layers apply a function with a kink (each entry's KinkHooks in oracle/targets.h says so); the oracle's backward takes the derivative on one
// side of it (oracle/layers/dense.h: the kink counts as negative, as PyTorch does):
//
//   gin   ReLU of z₁ = ((1+ε)·x_i + Σ_j x_j)·W₁ + b₁          kink at z₁ = 0
//   gine  ReLU of each message x[col_e] + edge_attr[e], and of z₁ (its h sums those ReLUs)
//   sage  aggr = max: a tie of two sources' messages in a row and column; project: ReLU of
//         z = x·W_pool + b_pool at every source an edge reads
//   gat   LeakyReLU of the logits s_dst[i] + s_src[j] per edge and head (A + I with self-loops)
//                                                             kink at 0 unless negative_slope = 1
//   gatv2 LeakyReLU of z = h_dst[i] + h_src[j] per edge and channel (A + I with self-loops)
//   rgat  LeakyReLU of z = x[i]·W_r·q + x[j]·W_r·k per edge and head (A itself)
//   agnn  x / max(‖x_i‖, 10⁻¹²)                              kink at ‖x_i‖ = 10⁻¹²
//   segment_aggregation, aggr = std: √var, 0 where var ≤ 10⁻⁵  a jump at var = 10⁻⁵ (its entry's
//         KinkHooks::jumping_outputs: the value y is screened there too; var is quadratic in each
//         input, so a sign test at a step's ends misses only a step across the parabola's floor)
//
// kink_arguments() evaluates every such argument in float64: its signed offset from the kink, the
// same expression on |inputs| (Σ|terms|, what rounding in a lower precision scales with) and the
// count of its terms and roundings. Two users: checks/kinks.h (is a case's nearest kink within a
// precision's rounding?) and oracle/gradcheck.h (does a finite-difference step cross one? each
// argument is affine in every single input, so a step crosses a kink iff an offset changes sign).
//
//   const KinkArguments k = kink_arguments(c);
//   for (size_t n = 0; n < k.offsets.size(); ++n) ... k.offsets[n], k.abs_terms[n], k.describe(n)
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/case.h"

namespace gnncheck::oracle {

struct KinkUnit {
  int site = -1;
  index_t index = 0;
};

struct KinkArguments {
  std::vector<double> offsets;    // argument − kink, one per argument (empty: no kink in this target)
  std::vector<double> abs_terms;  // the argument computed on |inputs|
  std::vector<double> terms;      // terms and roundings that make up the argument
  // Per argument, where storing the inputs moves it less than abs_terms says: the first-order change
  // per unit roundoff of the stored inputs, with their second order (std's variance: a segment of
  // equal values keeps a variance of 0 however its values are stored). Empty: abs_terms for every
  // argument. Read only for a storage format with a finer accumulation (checks/kinks.h).
  std::vector<double> stored_terms;
  // The inputs whose gradients the side of a kink changes (the ones before it in the layer):
  // gin x, weight1, bias1, eps (not weight2, bias2); gine those and edge_attr; sage x, weight_pool,
  // bias_pool; gat x, weight, att_src, att_dst (not bias); gatv2 x, weight_src, weight_dst, att; agnn x;
  // rgat x, weight, q, k.
  std::vector<std::string> upstream;
  std::function<std::string(std::size_t)> describe;  // "ReLU pre-activation z1[3, 5]", …
  // Per argument, the unit of a one-sided kink it is (layers::KinkFlips: a site of the layer and a
  // flat index into it), which KinkHooks::evaluate_f64_flipped can take to its other side; site −1
  // for an argument that is no such unit (a tie of a max, AGNN's norm floor). Empty: none is.
  //   gin, gine  site 0 GINE's message ReLU [E, in] (layers::kGineMessageSite), 1 the MLP's ReLU
  //              z1 [n_dst, hidden] (kGinMlpSite);  sage  0 the projection's ReLU z [n_src, in];
  //   gat  0 the logits [E of Ã, heads];  gatv2  0 z [E of Ã, heads·C];  rgat  0 z [E, heads].
  std::vector<KinkUnit> units;
  // The inputs whose gradients a unit of a site changes, where that is fewer than `upstream`: GINE's
  // message ReLU changes x's and edge_attr's, not weight1's, bias1's or eps's (they are read before
  // the aggregation). A site not listed changes every input of `upstream`.
  std::map<int, std::vector<std::string>> site_inputs;
  // Per argument whose kink is a jump of the value (KinkHooks::jumping_outputs): the flat index of the
  // one element of each jumping output whose value jumps with it, and whose derivative alone its side
  // changes (std's y[i, f] for segment i, feature f). Near such a jump the checks compare that element
  // with every value either side may give (jump_values) and give it no output gradient, so the rest
  // of the case is decided (checks/jumps_within_rounding.h). Empty: no argument declares its element,
  // and a jump within rounding leaves the whole outputs and their upstream gradients undetermined.
  // Non-empty: one per argument, with jump_values set (kink_arguments() checks both).
  std::vector<index_t> jump_elements;
  // The least and largest value a correct implementation may return at argument n's element when
  // the argument may lie anywhere within `reach` of its float64 value, before the element's own
  // rounding (std: 0 below the floor, up to √(var + reach) above it).
  std::function<std::pair<double, double>(std::size_t n, double reach)> jump_values;
};

// The arguments of the kinks of c's target (its catalogue entry's KinkHooks::arguments); empty
// offsets for a target without kinks.
KinkArguments kink_arguments(const Case& c);

// True when some kink argument that differs between `a` and `b` (two cases of the same target and
// graph) has a different sign at the two, or is exactly at its kink at either: the forward between
// them is not one smooth piece.
bool kink_between(const Case& a, const Case& b);

}  // namespace gnncheck::oracle

// gnncheck/checks/kinks.h — where a target's forward is not differentiable, and how close a case is.
//
// The kinks of the three targets that have them (gin, gat, agnn) are listed in oracle/kink_arguments.h,
// which evaluates their arguments.
//
// At (or within rounding of) such a point a correct implementation may take the other side — a
// derivative of 1 at ReLU's 0, or a float32 pre-activation of −10⁻⁹ where the exact one is +10⁻⁹ —
// and its gradient then differs from the oracle's by O(1) in the affected terms, although both are
// valid one-sided derivatives. nearest_kink() finds the kink argument closest to its kink relative
// to the rounding a correct implementation in precision p may make in computing it,
// margin = 2·γ_n(u_p)·Σ|terms| (n the number of terms and roundings of that argument, Σ|terms| its
// value on |inputs| in float64): `near` means the side of the kink, and so the derivative, is not
// determined by the declared precision. The checks then hold gradients to nothing there
// (inconclusive, with this reason); the property generators move their cases off such points.
//
//   if (auto k = gnncheck::checks::nearest_kink(c, Precision::float32); k && k->near) ... k->description
//
// A check that reads the kinks twice (decide_near_kinks, then screen_kinks) shares one evaluation
// of the arguments through CaseKinks.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/case.h"
#include "oracle/kink_arguments.h"

namespace gnncheck::checks {

struct NearestKink {
  std::string what;         // "ReLU pre-activation z1[3, 5]", "LeakyReLU logit of edge 7, head 1", …
  double distance = 0;      // |argument − kink|
  double margin = 0;        // 2·γ_n(u_p)·Σ|terms| for that argument
  bool near = false;        // distance ≤ margin
  // The inputs whose gradients the side of the kink changes (the ones before it in the layer):
  // gin x, weight1, bias1, eps (not weight2, bias2); gat x, weight, att_src, att_dst (not bias); agnn x.
  std::vector<std::string> upstream;
  std::string description;  // one sentence with the numbers
  // The kink is a tie of a max or min (oracle::KinkHooks::ties): even at distance 0 a correct
  // implementation may choose differently from one call to the next.
  bool tie = false;
  // The outputs whose value jumps at this kink (oracle::KinkHooks::jumping_outputs): near it
  // they are as undetermined as the gradients.
  std::vector<std::string> jumping_outputs;
};

// The kink arguments of one case (oracle::kink_arguments), evaluated on the first call to
// arguments() and kept: the steps of a check that read them share one evaluation, and a step that
// returns before reading them costs none. The case must outlive it.
class CaseKinks {
 public:
  explicit CaseKinks(const Case& c) : case_(c) {}
  const Case& kink_case() const { return case_; }
  const oracle::KinkArguments& arguments();
  // Whether `storage` holds every value of the arguments' upstream inputs and parameters: storing
  // them then moves no argument (read once per format).
  bool upstream_held(Precision storage);

 private:
  const Case& case_;
  std::optional<oracle::KinkArguments> arguments_;
  std::optional<std::pair<Precision, bool>> upstream_held_;
};

// The kink argument of `c` with the smallest distance/margin; nullopt for a target without kinks
// (or a case with no kink argument at all, e.g. an edgeless GAT without self-loops).
std::optional<NearestKink> nearest_kink(const Case& c, Precision p);
// The same from arguments evaluated once for the case (CaseKinks).
std::optional<NearestKink> nearest_kink(CaseKinks& kinks, Precision p);
// For a system that stores in one format and accumulates in another (checks/tolerance.h, Formats):
// the argument's terms are products of at most kKinkFactors stored inputs (GAT's a·W·x, GIN's
// (1 + ε)·x·W₁), each rounded once to storage, and the rest of its roundings are the accumulation
// format's: margin = 2·((1 + γ_3(u_s))·(1 + γ_n(u_a)) − 1)·Σ|terms|. One format: the margin above.
// Where the argument declares how far storing its inputs moves it (KinkArguments::stored_terms, S),
// the storage part reads that: 2·(γ_3(u_s)·(1 + γ_n(u_a))·S + γ_n(u_a)·Σ|terms|), which is the margin
// above for S = Σ|terms|.
struct Formats;
inline constexpr double kKinkFactors = 3.0;
double kink_margin(double terms, double abs_terms, const Formats& formats);
double kink_margin(double terms, double abs_terms, double stored_terms, const Formats& formats);
// The margin of argument n of the case's kinks: its stored_terms where it declares them, and none
// where the storage format holds every upstream value (storing moves nothing; the argument is then
// the accumulation format's sums alone).
double kink_margin(CaseKinks& kinks, std::size_t n, const Formats& formats);
std::optional<NearestKink> nearest_kink(CaseKinks& kinks, const Formats& formats);

// What a comparison reads of the case, for the kinks it must heed. A jump that declares its element
// (oracle::KinkArguments::jump_elements) is covered in the outputs' bounds wherever it is
// (checks/jumps_within_rounding.h), and determines no gradient once that element's ȳ is 0.
enum class KinkReading {
  every,      // every argument (the two overloads above)
  outputs,    // not the jumps that declare their element: the bounds hold both their sides
  gradients,  // not the jumps whose element's ȳ is 0: the backward does not read their side
};
std::optional<NearestKink> nearest_kink(CaseKinks& kinks, const Formats& formats, KinkReading reading);

}  // namespace gnncheck::checks

// gnncheck/checks/checks.h — every check of DESIGN.md, each a function of (system, case) -> Verdict.
//
// A check evaluates the system on one case (and on variants of it it derives: relabeled, reordered,
// perturbed, repeated) and says whether the system computed the right function, with the metric and
// the bound it was held to (checks/tolerance.h says where bounds come from). Checks never throw for a
// fault of the system under test: an error, crash or malformed answer is a failed Verdict naming the
// status. They throw InputError when the case itself is invalid (the oracle rejects it).
//
//   differential            system vs the float64 oracle, every output and every gradient, element-wise.
//   gradient                the system's backward vs central finite differences of its own forward, via
//                           oracle/gradcheck (full Jacobian on small cases, random directions on large
//                           ones); for systems declaring float64 (not applicable otherwise).
//   adjoint                 ⟨ȳ, J·u⟩ = ⟨Jᵀȳ, u⟩ per differentiable input, J·u from the system's own
//                           forward at x ± s·u; the float64 oracle at the same points supplies the
//                           true function's own truncation and the bound (the differential check's
//                           bounds there), never the expected value (checks/adjoint.cpp).
//   op_order                the differential check on the case's graph augmented so that in- and
//                           out-degrees differ (hub nodes), where normalizing on the wrong side shows;
//                           for normalized_spmm the detail names the wrong formula the answer matches.
//   metamorphic_relabel     relabeling nodes permutes the outputs and gradients accordingly.
//   metamorphic_edge_order  permuting the edges inside each row changes nothing.
//   metamorphic_linearity   gradients for 1.5·ȳ₁ − 0.75·ȳ₂ equal 1.5·g(ȳ₁) − 0.75·g(ȳ₂).
//   state_interleaved       A with gradients; A forward; B forward; B with gradients; A with gradients:
//                           the last must equal the first (no state leaks between evaluations).
//   state_repeat            evaluating A twice gives the same answer within the non-determinism
//                           tolerance (default 2× the differential bound: two correct runs may err in
//                           opposite directions).
//   numerics                the case scaled so its largest input is 1e3 (large attention logits): where
//                           the exact result is finite and representable, the system returns no NaN/Inf.
//   resources               N evaluations of the same case: live_bytes() and peak_bytes must not grow
//                           after the warm-up evaluations; device memory as the driver counts it
//                           (measured_device_bytes(), gnncheck's own reading, and a reported
//                           reported_device_bytes()) not by more than one 2 MiB driver page.
//
//   auto sys = gnncheck::make_cpu_float32_system();
//   gnncheck::checks::Verdict v = gnncheck::checks::run_check(gnncheck::checks::CheckKind::adjoint, *sys, c);
//   fmt::print("{}\n", gnncheck::checks::one_line(v));
#pragma once

#include <cstdint>

#include "core/system.h"
#include "checks/tolerance.h"
#include "checks/verdict.h"

namespace gnncheck::checks {

struct CheckOptions {
  ToleranceOptions tolerance;
  // State/metamorphic: how many differential bounds two correct answers may differ by.
  double nondeterminism_factor = 2.0;
  // Numerics: the largest |input| after scaling.
  double numerics_magnitude = 1e3;
  // Resources: evaluations in all, of which the first `resource_warmup` may allocate caches.
  int resource_evaluations = 6;
  int resource_warmup = 2;
  std::int64_t resource_allowance_bytes = 0;
  // Gradient: use the full Jacobian when (input elements + output elements) is at most this.
  std::int64_t gradient_full_jacobian_limit = 600;
  // Copied into every verdict (the driver fills it with the command that re-runs the case).
  std::string rerun_command;
};

Verdict differential(System& system, const Case& c, const CheckOptions& options = {});
Verdict gradient(System& system, const Case& c, const CheckOptions& options = {});
Verdict adjoint(System& system, const Case& c, const CheckOptions& options = {});
Verdict op_order(System& system, const Case& c, const CheckOptions& options = {});
Verdict metamorphic_relabel(System& system, const Case& c, const CheckOptions& options = {});
Verdict metamorphic_edge_order(System& system, const Case& c, const CheckOptions& options = {});
Verdict metamorphic_linearity(System& system, const Case& c, const CheckOptions& options = {});
Verdict state_interleaved(System& system, const Case& c, const CheckOptions& options = {});
Verdict state_repeat(System& system, const Case& c, const CheckOptions& options = {});
Verdict numerics(System& system, const Case& c, const CheckOptions& options = {});
Verdict resources(System& system, const Case& c, const CheckOptions& options = {});

// Dispatches on `kind`.
Verdict run_check(CheckKind kind, System& system, const Case& c, const CheckOptions& options = {});

// The case with the graph augmented so that in- and out-degrees differ: destination 0 gains an edge
// from every source and every destination one from the last source (two hubs), appended at the ends of rows.
// Only for targets without edge inputs or outputs (their edge tensors would need values for the new
// edges); nullopt when not applicable, with the reason in `why_not`.
std::optional<Case> with_degree_asymmetry(const Case& c, std::string* why_not = nullptr);

}  // namespace gnncheck::checks

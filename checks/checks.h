// gnncheck/checks/checks.h — every check of DESIGN.md, each a function of (system, case) -> Verdict.
//
// A check evaluates the system on one case (and on variants of it it derives: relabeled, reordered,
// perturbed, repeated) and says whether the system computed the right function, with the metric and
// the bound it was held to (checks/tolerance.h says where bounds come from). Checks never throw for a
// fault of the system under test: an error, crash or malformed answer is a failed Verdict naming the
// status. They throw InputError when the case itself is invalid (the oracle rejects it).
// The checks, one line each with their bounds: checks/README.md.
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
  // Resources: evaluations of one case, of which the first `resource_warmup` may allocate anything
  // (caches, library workspaces, lazily loaded kernels). `resource_evaluations` when only what the
  // system reports is compared; `resource_device_evaluations` when there is a device series (gnncheck
  // measures the system's device memory, or it reports device_bytes), so that a per-call leak of
  // ⌈2·page / (n − warm-up − 1)⌉ (64 KiB here) always grows it past one driver page (checks/resources.h).
  int resource_evaluations = 6;
  int resource_device_evaluations = 67;
  int resource_warmup = 2;
  std::int64_t resource_allowance_bytes = 0;
  // What a correct process's resident set may gain over one case's series (System::
  // measured_host_bytes()): its allocators' caches creep by a few pages a call (checks/resources.md,
  // "Host memory"); a leak of more than this over the window fails.
  std::int64_t resource_host_allowance_bytes = std::int64_t{1} << 20;
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

// The cases state_interleaved evaluates: A with gradients (c, with output gradients drawn when it
// has none), A forward, B forward, B with gradients — B has A's graph and attributes and fresh
// values in A's range. Its answers to A alone, after both forwards and after B are compared.
struct StateCases {
  Case a, a_forward, b_forward, b_full;
};
StateCases state_interleaved_cases(const Case& c);

// The case with every input and parameter scaled so that the largest |value| is `magnitude` (the
// numerics check's case); nullopt when every input is zero.
std::optional<Case> with_large_inputs(const Case& c, double magnitude);

}  // namespace gnncheck::checks

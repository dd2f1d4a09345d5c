// gnncheck/checks/diagnosis.h — naming the bug behind a failure, not only the tensor.
//
// A failing check says which tensor is wrong, where and by how much. The diagnosis says what the
// system computed instead: it evaluates the target's known-wrong variants (oracle::WrongVariant:
// the catalogue entry's generic transforms, then the bug replicas of the target, passed in by the
// caller) in float64 on the counterexample, and names the simplest one that reproduces the
// system's answer. A variant is named only when
//   * its answer agrees with the system's on every compared element within the bound the
//     differential check holds that element to, and
//   * it disagrees with the oracle beyond that bound on every element where the system does,
// so a correct answer never gets a diagnosis (there is no wrong element), and a variant that
// equals the correct answer on the case cannot be named. When none matches, the diagnosis says so
// and what the wrong elements share in graph terms (only nodes whose in- and out-degree differ, only
// rows with duplicate edges, only the last row, only heads > 0, …), each predicate true on every
// wrong element it speaks about and false on some correct one; and, where two or more wrong
// elements of a tensor are all one factor c ≠ 1 of their exact values within (1 + |c|)·bound, that
// factor ("gradient x: the wrong values are 2× the exact ones": a scale applied twice or left out).
//
// It runs once per failure, on the shrunk counterexample (the suite runner's record of a failure),
// never on passing cases or shrinking attempts; past 5 s (a large case of a fixed family, which is not
// shrunk) it tries no further variant and says so.
//
//   std::optional<Diagnosis> d = diagnose_failure(CheckKind::differential, sys, counterexample,
//                                                 gnncheck::replica_variants("spmm"), options);
//   if (d) fmt::print("{}\n", d->text);   // "Diagnosis: matches: backward uses A where Aᵀ is needed …"
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "checks/checks.h"
#include "checks/tolerance.h"
#include "oracle/targets.h"

namespace gnncheck::checks {

struct Diagnosis {
  bool matched = false;
  std::string variant;                     // the simplest matching variant's name
  std::string bug_class;                   // its class ("a_for_at")
  std::string description;                 // its mistake in words
  std::vector<std::string> also_matching;  // the other matching variants' names, simplest first
  // The variants that fit the minimal case only, set aside by the case as drawn (diagnose_failure).
  std::vector<std::string> ruled_out_as_drawn;
  std::vector<std::string> matching_classes;  // the bug classes of every matching variant, distinct, the named one first
  std::vector<std::string> shared;         // none matched: what every wrong element shares, in graph terms
  int variants_tried = 0;                  // variants that applied to the case and were evaluated
  bool stopped_at_budget = false;          // the variants were cut short at 5 s (a large case that was not shrunk)
  double seconds = 0.0;                    // what the diagnosis cost
  std::string text;                        // the sentence messages carry: "Diagnosis: matches: …"
};

// The case whose answer check `kind` compares with the oracle for counterexample `c`: op_order's
// graph with hubs, numerics' scaled inputs, `c` itself for the others; nullopt where there is none.
std::optional<Case> compared_case(CheckKind kind, const Case& c, const CheckOptions& options);

// The diagnosis of `answer`, a system's answer to `c` in declared `precision`: nullopt when it
// agrees with the oracle on every compared element (nothing to name) or the oracle rejects the case.
// `extra`: variants beyond the target's catalogue entry (the replicas of the target); `previous`:
// the case the system evaluated just before `c`, where state may be involved (null otherwise).
std::optional<Diagnosis> diagnose_answer(const Case& c, const Result& answer, const Formats& formats,
                                         const std::vector<oracle::WrongVariant>& extra, const CheckOptions& options,
                                         const Case* previous = nullptr);

// The one entry point for a failure: evaluates `system` once on compared_case(kind, counterexample)
// — for state_interleaved, A after A's and B's forwards, B's forward then being the previous case —
// and diagnoses its answer; nullopt when the system does not answer it or the answer is correct
// there (a failure that needs repeats or memory readings).
//
// Where several variants fit the (shrunk) counterexample — a minimal case often has a zero where a
// transposed product or a dropped term would put one — and the case it was shrunk from
// (`as_drawn`) is given, the system's answer there decides among them: the variants that fit both
// are kept, the simplest named ("fits the case as drawn too"); when none fits both, the minimal
// case's own matches stand.
std::optional<Diagnosis> diagnose_failure(CheckKind kind, System& system, const Case& counterexample,
                                          const std::vector<oracle::WrongVariant>& extra, const CheckOptions& options,
                                          const std::optional<Case>& as_drawn = std::nullopt);

}  // namespace gnncheck::checks

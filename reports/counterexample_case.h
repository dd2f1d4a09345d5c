// gnncheck/reports/counterexample_case.h — a failing case in the form the reports draw it.
//
// The runner calls this once per saved counterexample; the record then carries the graph's edges and
// the worst element, so that summary.md and index.html show the counterexample from report.json alone
// (the writers stay pure functions of the report, and `gnncheck report DIR` redraws it).
//
//   std::optional<reports::CounterexampleElement> worst;
//   if (v.worst) worst = {.tensor = v.tensor, .index = v.worst->index, .got = v.worst->actual,
//                         .expected = v.worst->expected, .bound = v.worst->bound};
//   r.counterexample_case = reports::describe_counterexample(*failing.graph, failing.target, worst);
#pragma once

#include <optional>
#include <string>

#include "core/graph.h"
#include "reports/run_report.h"

namespace gnncheck::reports {

// The graph (its edges only up to CounterexampleCase::kMaxRecordedEdges) and, when given, the worst
// element placed on it: `place` and `mark` are filled from the target's catalogue entry, which says
// whether the tensor lives on destinations, sources or edges (an eShuffled tensor's CSC position is
// mapped to its edge id). A tensor the catalogue does not name, a parameter, or a scalar stays unplaced.
CounterexampleCase describe_counterexample(const Graph& g, const std::string& target,
                                           std::optional<CounterexampleElement> element);

}  // namespace gnncheck::reports

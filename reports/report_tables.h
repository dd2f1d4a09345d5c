// gnncheck/reports/report_tables.h — the tables every human-readable report shows, computed once.
//
// SystemMatrix: for one system, its targets (rows) × checks (columns) and the results in each cell.
// ReplicaRow: for one bug replica, which checks caught it. The Markdown and HTML writers render them.
//
//   for (const auto& m : gnncheck::reports::build_matrices(run))
//     for (const auto& t : m.targets) ...  m.cells.at({t, check}) ...
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reports/run_report.h"

namespace gnncheck::reports {

struct SystemMatrix {
  std::string system;
  // Row labels in the order results first mention them: the target, or "entry · target" when the
  // system was tested in more than one entry.
  std::vector<std::string> targets;
  std::vector<std::string> checks;
  std::map<std::pair<std::string, std::string>, std::vector<const ResultRecord*>> cells;  // (row label, check)
};

// "seed N", or "seed N, share P/K" for a run that drew one part of the cases: what every human-readable
// report says the run was.
std::string seed_label(const RunReport& run);

// `s` made safe inside XML/HTML text and attributes (quoted with ' or "): & < > " ' are escaped and
// the control characters XML 1.0 forbids even escaped become '?'. Used by the JUnit and HTML writers.
std::string markup_escape(const std::string& s);

// One matrix per system, in the order the results mention them. Pointers refer into `run`.
std::vector<SystemMatrix> build_matrices(const RunReport& run);

// True when some result of the matrix expects `pass`: the system is under test (a bug replica named
// as the system under test too) and gets its own matrix; replicas expected to be caught do not.
bool has_own_results(const SystemMatrix& m);

// The text of a cell holding these records: the most alarming of their matrix_cell()s.
std::string combined_cell(const std::vector<const ResultRecord*>& records);

struct ReplicaRow {
  std::string name;
  std::string bug;
  std::vector<std::string> caught_by;  // checks whose verdict failed (an error catches nothing)
  std::vector<std::string> tried;      // checks that ran on it
  bool ran = false;
  bool caught = false;
  // Its failures' diagnoses (checks/diagnosis.h): how many failed, how many a known-wrong variant
  // named, and the bug classes named, by how many failures.
  int failures = 0;
  int named = 0;
  std::map<std::string, int> named_classes{};
};

// "a_for_at (4 of 4 failures)", "none named (0 of 3 failures)"; "—" without failures.
std::string diagnosis_summary(const ReplicaRow& row);

// One row per system of kind "replica" in run.systems.
std::vector<ReplicaRow> replica_rows(const RunReport& run);

// Unmet expectations as a reader wants them: each failing result on its own, but a replica that no
// check caught once (all its results are unmet then, and they all say the same thing).
struct MissedReplica {
  std::string system;
  std::vector<std::string> checks;  // the checks that ran on it and passed
  int results = 0;
  std::string repro;
};
struct UnmetSummary {
  std::vector<const ResultRecord*> results;
  std::vector<MissedReplica> missed_replicas;
  bool empty() const { return results.empty() && missed_replicas.empty(); }
};
UnmetSummary unmet_summary(const RunReport& run);

// "40 results: 20 passed, 12 failed, …" — every outcome that occurred, and the replicas caught.
std::string totals_sentence(const RunReport::Totals& t);

// The worst error / bound over a result's conclusive cases, as matrix cells show it ("0.31"); empty
// when the result has no finite metric and positive bound.
std::string worst_ratio_text(const ResultRecord& r);

// The counterexample as text, for summary.md and the HTML page.
// "2 × 2 (square), 1 edge" / "9 × 14 block, 30 edges".
std::string graph_summary_text(const CounterexampleCase& c);
// "e0 0←1, e1 2←0, …": every edge (destination ← source) in edge-id order, at most `max_edges` of
// them (then "… and N more"); "(edges not recorded: see graph.mtx)" when the record holds none.
std::string edge_list_text(const CounterexampleCase& c, std::size_t max_edges);
// "gradient x [0, 0] at source node 0", "output y [3, 1] at node 3", "gradient edge_values [5, 0] on
// edge e5 (2 ← 1)", or why the element is on no node or edge.
std::string element_where_text(const CounterexampleElement& e, const CounterexampleCase* c = nullptr);

}  // namespace gnncheck::reports

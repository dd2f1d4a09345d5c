#include "suites/failure_record.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "adapters/replicas/replicas.h"
#include "checks/diagnosis.h"
#include "core/error.h"
#include "properties/counterexample.h"
#include "properties/driver.h"
#include "reports/counterexample_case.h"

namespace gnncheck::suites {
namespace {

using reports::Outcome;
using reports::ResultRecord;

std::optional<reports::DiagnosisRecord> diagnose(checks::CheckKind kind, System& system, const Case& c,
                                                        const std::optional<Case>& as_drawn,
                                                        const checks::CheckOptions& options) {
  std::optional<checks::Diagnosis> d;
  try {
    d = checks::diagnose_failure(kind, system, c, replica_variants(c.target), options, as_drawn);
  } catch (const std::exception&) {  // the diagnosis adds to a failure; it never turns it into an error
    return std::nullopt;
  }
  if (!d) return std::nullopt;
  return reports::DiagnosisRecord{.matched = d->matched, .variant = d->variant, .bug_class = d->bug_class,
                                  .description = d->description, .also_matching = d->also_matching,
                                  .matching_classes = d->matching_classes,
                                  .shared = d->shared, .variants_tried = d->variants_tried, .text = d->text};
}

// DIR/system.json: which system failed and how to start it again, for `gnncheck repro DIR`.
void write_system_record(const std::filesystem::path& dir, const SystemEntry& entry, const std::string& rerun) {
  nlohmann::ordered_json j;
  j["name"] = entry.name;
  j["kind"] = system_kind_name(entry.kind);
  if (!entry.adapter_command.empty()) j["adapter"] = entry.adapter_command;
  if (!entry.plugin_library.empty()) j["plugin"] = entry.plugin_library;
  if (entry.limits.case_timeout_s) j["case_timeout_s"] = *entry.limits.case_timeout_s;
  if (entry.limits.startup_timeout_s) j["startup_timeout_s"] = *entry.limits.startup_timeout_s;
  j["rerun"] = rerun;
  std::ofstream out(dir / "system.json");
  out << j.dump(2) << "\n";
  if (!out) throw InputError(fmt::format("{}: cannot write", (dir / "system.json").string()));
}

}  // namespace

void fill_from_verdict(ResultRecord& r, const checks::Verdict& v) {
  r.metric_name = v.metric_name;
  r.metric = v.metric;
  r.bound = v.bound;
  r.tolerance_model = v.tolerance_model;
}

// The diagnosis is made here, once per failure, on the shrunk case: the system's answer to it against
// the target's known-wrong variants and its replicas (the case as drawn decides among several that fit).
void record_failure(const Task& t, const properties::CaseFailure& failure, System& sys, const RunContext& run,
                    ResultRecord& r) {
  checks::Verdict v = failure.verdict;
  const Case& failing = failure.c;
  const bool system_answered = v.system_status == Status::ok && v.conclusion == checks::Conclusion::fail;
  r.outcome = system_answered ? Outcome::fail : Outcome::error;
  std::string note;
  bool reproduces_fresh = true;
  const SystemEntry& entry = run.systems.find(t.label.system);
  std::unique_ptr<System> fresh;
  if (entry.make && system_answered && !run.stopping()) {
    // The saved case alone on a new instance (a new process for an adapter or plugin).
    fresh = entry.make();
    const checks::Verdict again = properties::check_case(v.check, *fresh, failing, run.check_options(t));
    reproduces_fresh = !again.passed();
    if (!reproduces_fresh)
      note = "The saved case passes on a fresh instance of the system: the failure needs the evaluations that came "
             "before it (state kept between calls). The re-run line repeats the run's whole sequence in one order.";
  }
  if (system_answered && !run.stopping()) {
    if (const auto d = diagnose(v.check, fresh ? *fresh : sys, failing, failure.as_drawn, run.check_options(t))) {
      r.diagnosis = *d;
      v.detail = v.detail.empty() ? d->text : v.detail + " " + d->text;
    }
  }
  fill_from_verdict(r, v);
  std::string rerun;
  if (!run.cases_root().empty()) {
    const std::filesystem::path dir =
        run.cases_root() / properties::counterexample_name(t.label.system, t.label.target, v.check, t.seed);
    rerun = run.rerun_failure(t, dir, !reproduces_fresh);
    properties::CounterexampleProvenance provenance = failure.provenance;
    provenance.rerun = rerun;
    properties::write_counterexample(dir, failing, v, provenance);
    write_system_record(dir, entry, rerun);
    r.counterexample = std::filesystem::relative(dir, run.options.report_dir).string();
  } else {
    rerun = run.rerun_failure(t, {}, !reproduces_fresh);
  }
  r.repro = rerun;
  if (failing.graph) {  // the graph and the worst element, for the reports' drawing of the case
    std::optional<reports::CounterexampleElement> worst;
    if (v.worst)
      worst = reports::CounterexampleElement{.tensor = v.tensor, .index = v.worst->index, .got = v.worst->actual,
                                             .expected = v.worst->expected, .bound = v.worst->bound};
    r.counterexample_case = reports::describe_counterexample(*failing.graph, failing.target, worst);
  }
  // The record carries the counterexample and the one re-run line; the message does not repeat them.
  v.rerun_command.clear();
  v.counterexample_path.clear();
  r.message = failure.how_found.empty() ? checks::failure_message(v) : failure.how_found + "\n" + checks::failure_message(v);
  if (!note.empty()) r.message += "\n" + note;
}

}  // namespace gnncheck::suites

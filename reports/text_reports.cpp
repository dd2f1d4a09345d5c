// junit.xml and summary.md, and what both share with the HTML page: the matrix cells and the
// replica catch table.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "oracle/error.h"
#include "reports/report_tables.h"
#include "reports/writers.h"

namespace gnncheck::reports {

std::string matrix_cell(const ResultRecord& r) {
  if (r.outcome == Outcome::skipped) return "skip";
  if (r.expectation == Expectation::caught) return r.outcome == Outcome::pass ? "·" : "caught";
  switch (r.outcome) {
    case Outcome::pass: return "pass";
    case Outcome::fail: return "FAIL";
    case Outcome::error: return "ERROR";
    case Outcome::skipped: return "skip";
  }
  return "?";
}

std::vector<SystemMatrix> build_matrices(const RunReport& run) {
  std::vector<SystemMatrix> out;
  std::map<std::string, std::size_t> index;
  for (const auto& r : run.results) {
    auto [it, fresh] = index.emplace(r.system, out.size());
    if (fresh) out.push_back({r.system, {}, {}, {}});
    SystemMatrix& m = out[it->second];
    if (std::find(m.targets.begin(), m.targets.end(), r.target) == m.targets.end()) m.targets.push_back(r.target);
    if (std::find(m.checks.begin(), m.checks.end(), r.check) == m.checks.end()) m.checks.push_back(r.check);
    m.cells[{r.target, r.check}].push_back(&r);
  }
  return out;
}

std::string combined_cell(const std::vector<const ResultRecord*>& records) {
  // Several records for one cell (the same system/target/check in two entries): show the worst.
  std::string cell;
  int rank = -1;
  for (const ResultRecord* r : records) {
    const std::string c = matrix_cell(*r);
    const int this_rank = !r->expectation_held ? 3 : (c == "caught" ? 2 : (c == "skip" ? 0 : 1));
    if (this_rank > rank) {
      rank = this_rank;
      cell = c;
    }
  }
  return cell;
}

std::vector<ReplicaRow> replica_rows(const RunReport& run) {
  std::vector<ReplicaRow> rows;
  for (const auto& s : run.systems) {
    if (s.kind != "replica") continue;
    ReplicaRow row{s.name, s.bug, {}, {}, false, false};
    std::set<std::string> caught, tried;
    for (const auto& r : run.results) {
      if (r.system != s.name || r.outcome == Outcome::skipped) continue;
      // A required replica that is unavailable here is an error the runner marks unmet: it did not
      // run, so it caught nothing (any other error of a replica is a crash or a bad answer: caught).
      if (r.outcome == Outcome::error && !r.expectation_held) continue;
      tried.insert(r.check);
      if (r.outcome == Outcome::fail || r.outcome == Outcome::error) caught.insert(r.check);
    }
    row.caught_by.assign(caught.begin(), caught.end());
    row.tried.assign(tried.begin(), tried.end());
    row.ran = !tried.empty();
    row.caught = !caught.empty();
    rows.push_back(std::move(row));
  }
  return rows;
}

UnmetSummary unmet_summary(const RunReport& run) {
  UnmetSummary out;
  for (const auto& r : run.results) {
    if (r.expectation_held) continue;
    if (r.expectation == Expectation::caught && r.outcome != Outcome::error) {
      auto it = std::find_if(out.missed_replicas.begin(), out.missed_replicas.end(), [&](const auto& m) { return m.system == r.system; });
      if (it == out.missed_replicas.end()) it = out.missed_replicas.insert(out.missed_replicas.end(), MissedReplica{r.system, {}, 0, r.repro});
      if (std::find(it->checks.begin(), it->checks.end(), r.check) == it->checks.end()) it->checks.push_back(r.check);
      ++it->results;
      continue;
    }
    out.results.push_back(&r);
  }
  return out;
}

std::string markup_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even when escaped.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') out += '?';
        else out += ch;
    }
  }
  return out;
}

namespace {

std::string md_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n') out += ' ';
    else out += ch;
  }
  return out;
}

std::string format_number(std::optional<double> v) {
  if (!v) return "—";
  return fmt::format("{:.3g}", *v);
}

}  // namespace

std::string junit_xml(const RunReport& run) {
  // One <testsuite> per system, one <testcase> per result; an unmet expectation is a <failure>,
  // a skip is <skipped> with its reason. A replica that was caught is a passing test case.
  std::map<std::string, std::vector<const ResultRecord*>> by_system;
  std::vector<std::string> order;
  for (const auto& r : run.results) {
    if (!by_system.count(r.system)) order.push_back(r.system);
    by_system[r.system].push_back(&r);
  }
  const auto t = run.totals();
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"gnncheck {}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                     markup_escape(run.suite_name), t.results, t.expectations_unmet, t.skipped, run.seconds);
  for (const auto& system : order) {
    const auto& records = by_system[system];
    int failures = 0, skipped = 0;
    double seconds = 0;
    for (const auto* r : records) {
      failures += r->expectation_held ? 0 : 1;
      skipped += r->outcome == Outcome::skipped ? 1 : 0;
      seconds += r->seconds;
    }
    out += fmt::format("  <testsuite name=\"{}.{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3f}\">\n",
                       markup_escape(run.suite_name), markup_escape(system), records.size(), failures, skipped, seconds);
    for (const auto* r : records) {
      out += fmt::format("    <testcase classname=\"{}.{}\" name=\"{}.{}\" time=\"{:.3f}\">", markup_escape(run.suite_name),
                         markup_escape(system), markup_escape(r->target), markup_escape(r->check), r->seconds);
      if (r->outcome == Outcome::skipped) {
        out += fmt::format("<skipped message=\"{}\"/>", markup_escape(r->message));
      } else if (!r->expectation_held) {
        const std::string what = r->expectation == Expectation::caught
                                     ? "bug replica not caught by this check"
                                     : fmt::format("{}: metric {} > bound {}", to_string(r->outcome), format_number(r->metric),
                                                   format_number(r->bound));
        out += fmt::format("<failure message=\"{}\" type=\"{}\">{}\nseed: {}\nrepro: {}\ncounterexample: {}</failure>",
                           markup_escape(what), to_string(r->outcome), markup_escape(r->message), r->seed, markup_escape(r->repro),
                           markup_escape(r->counterexample.empty() ? "(none)" : r->counterexample));
      } else if (!r->message.empty()) {
        out += fmt::format("<system-out>{}</system-out>", markup_escape(r->message));
      }
      out += "</testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

std::string markdown_summary(const RunReport& run) {
  const auto t = run.totals();
  std::string out = fmt::format("# gnncheck report: suite `{}`\n\n", run.suite_name);
  out += fmt::format("{} — seed {} — {} results: {} passed, {} failed, {} errors, {} skipped — {:.1f} s\n\n",
                     t.expectations_unmet == 0 ? "**All expectations held**" : fmt::format("**{} expectation(s) not met**", t.expectations_unmet),
                     run.seed, t.results, t.passed, t.failed, t.errors, t.skipped, run.seconds);
  out += "Cells: `pass` within bound, `FAIL` exceeded it, `ERROR` the system errored, `skip` not run here; for bug\n"
         "replicas `caught` means the check detected the bug and `·` that this check did not.\n\n";

  out += "## Systems\n\n| system | kind | available |\n|---|---|---|\n";
  for (const auto& s : run.systems)
    out += fmt::format("| {} | {} | {} |\n", s.name, s.kind, s.available ? "yes" : "no: " + md_escape(s.reason));

  out += "\n## System × target × check\n";
  for (const auto& m : build_matrices(run)) {
    const bool replica = std::any_of(run.systems.begin(), run.systems.end(),
                                     [&](const SystemRecord& s) { return s.name == m.system && s.kind == "replica"; });
    if (replica) continue;  // summarized in the replica table
    out += fmt::format("\n### {}\n\n| target |", m.system);
    for (const auto& c : m.checks) out += fmt::format(" {} |", c);
    out += "\n|---|";
    for (std::size_t i = 0; i < m.checks.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& target : m.targets) {
      out += fmt::format("| {} |", target);
      for (const auto& check : m.checks) {
        auto it = m.cells.find({target, check});
        out += fmt::format(" {} |", it == m.cells.end() ? "" : combined_cell(it->second));
      }
      out += "\n";
    }
  }

  const auto replicas = replica_rows(run);
  if (!replicas.empty()) {
    out += "\n## Bug replicas\n\n| replica | bug | caught by | verdict |\n|---|---|---|---|\n";
    int caught = 0, ran = 0;
    for (const auto& r : replicas) {
      if (!r.ran) {
        out += fmt::format("| {} | {} | — | not run |\n", r.name, md_escape(r.bug));
        continue;
      }
      ++ran;
      caught += r.caught ? 1 : 0;
      out += fmt::format("| {} | {} | {} | {} |\n", r.name, md_escape(r.bug), r.caught ? fmt::format("{}", fmt::join(r.caught_by, ", ")) : "—",
                         r.caught ? "caught" : "**MISSED**");
    }
    out += fmt::format("\n{} of {} replicas run were caught.\n", caught, ran);
  }

  const UnmetSummary unmet = unmet_summary(run);
  if (!unmet.empty()) {
    out += "\n## Expectations not met\n\n";
    for (const auto& m : unmet.missed_replicas)
      out += fmt::format("- **{}**: bug replica not caught by any of {} ({} results); re-run: `{}`\n", m.system,
                         fmt::join(m.checks, ", "), m.results, m.repro);
    for (const auto* r : unmet.results) {
      out += fmt::format("- **{} / {} / {}** ({}, expected {}): {}\n", r->system, r->target, r->check, to_string(r->outcome),
                         to_string(r->expectation), md_escape(r->message));
      if (!r->counterexample.empty()) out += fmt::format("  - counterexample: `{}`\n", r->counterexample);
      if (!r->repro.empty()) out += fmt::format("  - re-run: `{}`\n", r->repro);
    }
  }
  return out;
}

namespace {

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw InputError(fmt::format("{}: cannot write the report file", path.string()));
}

}  // namespace

void write_all(const RunReport& run, const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create the report directory: {}", dir.string(), ec.message()));
  write_text(dir / "report.json", json_report(run));
  write_text(dir / "junit.xml", junit_xml(run));
  write_text(dir / "summary.md", markdown_summary(run));
  write_text(dir / "index.html", html_report(run));
}

}  // namespace gnncheck::reports

#include "suites/cli/final_table.h"

#include <map>

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include "reports/report_tables.h"
#include "reports/writers.h"
#include "suites/cli/progress.h"
#include "suites/system_registry.h"

namespace gnncheck::suites {
namespace {

// Display width of UTF-8 text (every code point counts as one column; the tables use no wide ones).
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad(const std::string& s, std::size_t w) { return s + std::string(w > width(s) ? w - width(s) : 0, ' '); }

void print_grid(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (widths.size() <= i) widths.push_back(0);
      widths[i] = std::max(widths[i], width(row[i]));
    }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string line = "  ";
    for (std::size_t i = 0; i < rows[r].size(); ++i) line += pad(rows[r][i], widths[i]) + (i + 1 < rows[r].size() ? "  " : "");
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
    if (r == 0) {
      std::string rule = "  ";
      for (std::size_t i = 0; i < widths.size(); ++i) rule += std::string(widths[i], '-') + (i + 1 < widths.size() ? "  " : "");
      out << rule << "\n";
    }
  }
}

}  // namespace

void print_final_table(std::ostream& out, const reports::RunReport& run, const std::filesystem::path& report_dir) {
  fmt::print(out, "\ngnncheck {} — suite '{}' — {}\n", run.gnncheck_version, run.suite_name, reports::seed_label(run));
  for (const auto& m : reports::build_matrices(run)) {
    const auto sys = std::find_if(run.systems.begin(), run.systems.end(), [&](const auto& s) { return s.name == m.system; });
    const bool replica = sys != run.systems.end() && system_kind_named(sys->kind) == SystemKind::replica;
    const bool expected_to_pass = std::any_of(run.results.begin(), run.results.end(), [&](const auto& r) {
      return r.system == m.system && r.expectation == reports::Expectation::pass;
    });
    if (replica && !expected_to_pass) continue;  // replicas expected caught get their own table below
    fmt::print(out, "\n{}{}\n", m.system, sys != run.systems.end() && !sys->available ? " (not available here: " + sys->reason + ")" : "");
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> header = {"target"};
    header.insert(header.end(), m.checks.begin(), m.checks.end());
    rows.push_back(header);
    for (const auto& target : m.targets) {
      std::vector<std::string> row = {target};
      for (const auto& check : m.checks) {
        auto it = m.cells.find({target, check});
        row.push_back(it == m.cells.end() ? "" : reports::combined_cell(it->second));
      }
      rows.push_back(row);
    }
    print_grid(out, rows);
  }

  const auto replicas = reports::replica_rows(run);
  if (!replicas.empty()) {
    fmt::print(out, "\nBug replicas (each must be caught by at least one check)\n");
    std::vector<std::vector<std::string>> rows = {{"replica", "caught by", "verdict"}};
    int caught = 0, ran = 0;
    for (const auto& r : replicas) {
      ran += r.ran ? 1 : 0;
      caught += r.caught ? 1 : 0;
      rows.push_back({r.name, r.caught ? fmt::format("{}", fmt::join(r.caught_by, ", ")) : "—",
                      !r.ran ? "not run" : (r.caught ? "caught" : "MISSED")});
    }
    print_grid(out, rows);
    fmt::print(out, "  {} of {} replicas caught\n", caught, ran);
  }

  const reports::UnmetSummary unmet = reports::unmet_summary(run);
  if (!unmet.empty()) {
    fmt::print(out, "\nExpectations not met ({} results):\n", run.totals().expectations_unmet);
    for (const auto& m : unmet.missed_replicas) {
      fmt::print(out, "\n  {}: bug replica NOT caught by any of {} ({} results)\n", m.system, fmt::join(m.checks, ", "), m.results);
      if (!m.repro.empty()) fmt::print(out, "    re-run: {}\n", m.repro);
    }
    // A message shared by several results (a system that could not start: one cause for every check
    // of every entry) is printed once; the others point at it.
    std::map<std::string, const reports::ResultRecord*> printed;
    for (const auto* r : unmet.results) {
      fmt::print(out, "\n  {}: {}/{}/{}: {} (expected {})\n", r->entry, r->system, r->target, r->check,
                 reports::to_string(r->outcome), reports::to_string(r->expectation));
      if (const auto first = printed.find(r->message); first != printed.end() && !r->message.empty()) {
        const auto* p = first->second;
        fmt::print(out, "    the same message as {}: {}/{}/{} above\n", p->entry, p->system, p->target, p->check);
      } else {
        printed.emplace(r->message, r);
        std::string indented = "    ";
        for (char ch : r->message) indented += ch == '\n' ? std::string("\n    ") : std::string(1, ch);
        out << indented << "\n";
      }
      if (!r->counterexample.empty()) fmt::print(out, "    counterexample: {}\n", (report_dir / r->counterexample).string());
      if (!r->repro.empty()) fmt::print(out, "    re-run: {}\n", r->repro);
    }
  }

  const auto t = run.totals();
  fmt::print(out, "\n{} — {}\n", reports::totals_sentence(t), format_duration(run.seconds));
  if (!report_dir.empty()) fmt::print(out, "Report: {}/index.html (also report.json, junit.xml, summary.md)\n", report_dir.string());
  if (!run.interrupted_by.empty())
    fmt::print(out, "Interrupted by {}: the run did not finish, so it verified less than the suite asks.\n", run.interrupted_by);
  else
    fmt::print(out, "{}\n", t.expectations_unmet == 0 ? "All expectations held." : fmt::format("{} expectation(s) NOT met.", t.expectations_unmet));
}

}  // namespace gnncheck::suites

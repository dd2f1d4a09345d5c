// junit.xml and summary.md, and what both share with the HTML page: the matrix cells and the
// replica catch table.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "reports/report_tables.h"
#include "reports/writers.h"

namespace gnncheck::reports {

std::string worst_ratio_text(const ResultRecord& r) {
  if (!r.metric || !r.bound || !std::isfinite(*r.metric) || !(*r.bound > 0) || !std::isfinite(*r.bound)) return {};
  return fmt::format("{:.2g}", *r.metric / *r.bound);
}

std::string matrix_cell(const ResultRecord& r) {
  switch (r.outcome) {
    case Outcome::skipped: return "skip";
    case Outcome::not_applicable: return "n/a";
    case Outcome::not_tested: return "NOT TESTED";
    case Outcome::inconclusive: return r.expectation == Expectation::caught ? "inconclusive" : "INCONCLUSIVE";
    default: break;
  }
  if (r.expectation == Expectation::caught)
    return r.outcome == Outcome::fail ? "caught" : (r.outcome == Outcome::error ? "error" : "·");
  switch (r.outcome) {
    case Outcome::pass: {
      const std::string ratio = worst_ratio_text(r);
      return ratio.empty() ? "pass" : "pass " + ratio;
    }
    case Outcome::fail: return "FAIL";
    case Outcome::error: return "ERROR";
    default: return std::string(to_string(r.outcome));
  }
}

std::vector<SystemMatrix> build_matrices(const RunReport& run) {
  // A system tested in several entries gets one row per entry and target ("bipartite · spmm"), so
  // that a cell never merges results of different graphs or settings.
  std::map<std::string, std::set<std::string>> entries_of;
  for (const auto& r : run.results) entries_of[r.system].insert(r.entry);
  std::vector<SystemMatrix> out;
  std::map<std::string, std::size_t> index;
  for (const auto& r : run.results) {
    auto [it, fresh] = index.emplace(r.system, out.size());
    if (fresh) out.push_back({r.system, {}, {}, {}});
    SystemMatrix& m = out[it->second];
    const std::string row = entries_of[r.system].size() > 1 ? fmt::format("{} · {}", r.entry, r.target) : r.target;
    if (std::find(m.targets.begin(), m.targets.end(), row) == m.targets.end()) m.targets.push_back(row);
    if (std::find(m.checks.begin(), m.checks.end(), r.check) == m.checks.end()) m.checks.push_back(r.check);
    m.cells[{row, r.check}].push_back(&r);
  }
  return out;
}

bool has_own_results(const SystemMatrix& m) {
  for (const auto& [key, cell] : m.cells)
    for (const ResultRecord* r : cell)
      if (r->expectation == Expectation::pass) return true;
  return false;
}

std::string combined_cell(const std::vector<const ResultRecord*>& records) {
  // Several records for one cell (the same system/target/check in two entries): show the worst.
  std::string cell;
  int rank = -1;
  for (const ResultRecord* r : records) {
    const std::string c = matrix_cell(*r);
    const bool neutral = r->outcome == Outcome::skipped || r->outcome == Outcome::not_applicable;
    const int this_rank = !r->expectation_held ? 3 : (c == "caught" ? 2 : (neutral ? 0 : 1));
    if (this_rank > rank) {
      rank = this_rank;
      cell = c;
    }
  }
  return cell;
}

std::string diagnosis_summary(const ReplicaRow& row) {
  if (row.failures == 0) return "—";
  if (row.named == 0) return fmt::format("none named (0 of {} failures)", row.failures);
  std::vector<std::string> classes;
  for (const auto& [name, n] : row.named_classes) classes.push_back(fmt::format("{} ({})", name, n));
  return fmt::format("{} — {} of {} failures named", fmt::join(classes, ", "), row.named, row.failures);
}

std::vector<ReplicaRow> replica_rows(const RunReport& run) {
  std::vector<ReplicaRow> rows;
  for (const auto& s : run.systems) {
    if (s.kind != "replica") continue;
    ReplicaRow row{s.name, s.bug, {}, {}, false, false};
    std::set<std::string> caught, tried;
    bool expected_caught = false;
    for (const auto& r : run.results) {
      // Only entries that expect the replica caught judge it: one whose fault no check can see (a
      // race only a sanitizer shows) is run with `expect: pass` to prove exactly that.
      if (r.system != s.name || r.expectation != Expectation::caught) continue;
      expected_caught = true;
      // A replica that could not run here (not tested) caught nothing; an error (a crash, a timeout,
      // an unreadable answer) is a broken system, not a wrong answer found: tried, not caught.
      if (r.system != s.name || r.outcome == Outcome::skipped || r.outcome == Outcome::not_tested ||
          r.outcome == Outcome::not_applicable)
        continue;
      tried.insert(r.check);
      if (r.outcome == Outcome::fail) {
        caught.insert(r.check);
        ++row.failures;
        if (r.diagnosis && r.diagnosis->matched) {
          ++row.named;
          ++row.named_classes[r.diagnosis->bug_class];
        }
      }
    }
    row.caught_by.assign(caught.begin(), caught.end());
    row.tried.assign(tried.begin(), tried.end());
    row.ran = !tried.empty();
    row.caught = !caught.empty();
    if (expected_caught) rows.push_back(std::move(row));
  }
  return rows;
}

UnmetSummary unmet_summary(const RunReport& run) {
  UnmetSummary out;
  for (const auto& r : run.results) {
    if (r.expectation_held) continue;
    if (r.expectation == Expectation::caught && r.outcome != Outcome::not_tested) {
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

std::string totals_sentence(const RunReport::Totals& t) {
  std::vector<std::string> parts;
  auto add = [&](std::int64_t n, const char* what) {
    if (n > 0) parts.push_back(fmt::format("{} {}", n, what));
  };
  add(t.passed, "passed");
  add(t.failed, "failed");
  add(t.errors, "errors");
  add(t.inconclusive, "inconclusive");
  add(t.not_tested, "not tested");
  add(t.not_applicable, "not applicable");
  add(t.skipped, "skipped");
  const std::int64_t own = t.results - t.replica_results;
  std::string out = fmt::format("{} results{}{}", own, parts.empty() ? "" : ": ", fmt::join(parts, ", "));
  if (t.replicas_caught + t.replicas_missed > 0)
    out += fmt::format("; bug replicas: {} of {} caught ({} results)", t.replicas_caught, t.replicas_caught + t.replicas_missed,
                       t.replica_results);
  return out;
}

std::string graph_summary_text(const CounterexampleCase& c) {
  return fmt::format("{} × {} {}, {} edge{}", c.n_dst, c.n_src, c.square() ? "(square)" : "block", c.n_edges, c.n_edges == 1 ? "" : "s");
}

std::string edge_list_text(const CounterexampleCase& c, std::size_t max_edges) {
  if (!c.edges_recorded()) return "(edges not recorded: see graph.mtx)";
  if (c.edges.empty()) return "(no edges)";
  std::vector<std::string> parts;
  for (std::size_t e = 0; e < c.edges.size() && e < max_edges; ++e)
    parts.push_back(fmt::format("e{} {}←{}", e, c.edges[e].first, c.edges[e].second));
  std::string out = fmt::format("{}", fmt::join(parts, ", "));
  if (c.edges.size() > max_edges) out += fmt::format(", … and {} more", c.edges.size() - max_edges);
  return out;
}

std::string element_where_text(const CounterexampleElement& e, const CounterexampleCase* c) {
  if (e.index.empty()) return fmt::format("{}: a scalar over the whole case, on no single node or edge", e.tensor);
  const std::string element = fmt::format("{} [{}]", e.tensor, fmt::join(e.index, ", "));
  const bool square = c && c->square();
  switch (e.place) {
    case ElementPlace::destination:
      return fmt::format("{} at {} {}", element, square ? "node" : "destination node", e.mark);
    case ElementPlace::source:
      return fmt::format("{} at {} {}", element, square ? "node" : "source node", e.mark);
    case ElementPlace::edge:
      if (c && c->edges_recorded() && e.mark >= 0 && e.mark < c->n_edges)
        return fmt::format("{} on edge e{} ({} ← {})", element, e.mark, c->edges[static_cast<std::size_t>(e.mark)].first,
                           c->edges[static_cast<std::size_t>(e.mark)].second);
      return fmt::format("{} on edge e{}", element, e.mark);
    case ElementPlace::none: break;
  }
  return element + " (on no single node or edge, e.g. a parameter)";
}

std::string seed_label(const RunReport& run) {
  if (!run.share) return fmt::format("seed {}", run.seed);
  return fmt::format("seed {}, share {}/{}", run.seed, run.share->part, run.share->of);
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

// A pull-request comment stays readable: longer edge lists are cut (graph.mtx has every edge).
constexpr std::size_t kMarkdownEdges = 40;

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
  // One <testsuite> per (entry, system), one <testcase> per result, so that (classname, name) is
  // unique: the same target and check in two entries are two test cases. An unmet expectation is a
  // <failure>; a neutral result (skipped, not applicable) is <skipped> with its reason. A replica
  // that was caught is a passing test case.
  std::map<std::pair<std::string, std::string>, std::vector<const ResultRecord*>> by_suite;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& r : run.results) {
    const std::pair key{r.entry, r.system};
    if (!by_suite.count(key)) order.push_back(key);
    by_suite[key].push_back(&r);
  }
  const auto t = run.totals();
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"gnncheck {}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                     markup_escape(run.suite_name), t.results, t.expectations_unmet, t.skipped + t.not_applicable, run.seconds);
  for (const auto& key : order) {
    const auto& records = by_suite[key];
    int failures = 0, skipped = 0;
    double seconds = 0;
    for (const auto* r : records) {
      const bool neutral = r->outcome == Outcome::skipped || r->outcome == Outcome::not_applicable;
      failures += r->expectation_held ? 0 : 1;
      skipped += r->expectation_held && neutral ? 1 : 0;
      seconds += r->seconds;
    }
    const std::string classname =
        markup_escape(key.first.empty() ? fmt::format("{}.{}", run.suite_name, key.second)
                                        : fmt::format("{}.{}.{}", run.suite_name, key.first, key.second));
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{:.3f}\">\n",
                       classname, records.size(), failures, skipped, seconds);
    for (const auto* r : records) {
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}.{}\" time=\"{:.3f}\">", classname, markup_escape(r->target),
                         markup_escape(r->check), r->seconds);
      const bool neutral = r->outcome == Outcome::skipped || r->outcome == Outcome::not_applicable;
      if (!r->expectation_held) {
        std::string what;
        if (r->expectation == Expectation::caught) what = "bug replica not caught";
        else if (r->outcome == Outcome::fail)
          what = fmt::format("fail: metric {} > bound {}", format_number(r->metric), format_number(r->bound));
        else what = std::string(to_string(r->outcome));
        out += fmt::format("<failure message=\"{}\" type=\"{}\">{}\nseed: {}\nre-run: {}\ncounterexample: {}</failure>",
                           markup_escape(what), markup_escape(std::string(to_string(r->outcome))), markup_escape(r->message), r->seed,
                           markup_escape(r->repro), markup_escape(r->counterexample.empty() ? "(none)" : r->counterexample));
      } else if (neutral) {
        out += fmt::format("<skipped message=\"{}: {}\"/>", markup_escape(std::string(to_string(r->outcome))),
                           markup_escape(r->message));
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
  if (!run.interrupted_by.empty())
    out += fmt::format("**Interrupted by {}**: the results below are those finished before it; the run verified less than "
                       "the suite asks.\n\n",
                       run.interrupted_by);
  out += fmt::format("{} — {} — {} — {:.1f} s\n\n",
                     run.all_expectations_held() ? "**All expectations held**"
                                                 : fmt::format("**{} expectation(s) not met**", t.expectations_unmet),
                     seed_label(run), totals_sentence(t), run.seconds);
  out += "Cells: `pass r` within bound (r = worst error / bound over the conclusive cases), `FAIL` exceeded it, `ERROR` the\n"
         "system errored, `INCONCLUSIVE` no case could decide, `NOT TESTED` a required system did not start or answered no\n"
         "case, `n/a` the check does not apply, `skip` not run here; for bug replicas `caught` means the check detected the\n"
         "bug and `·` that this check did not.\n\n";

  out += "## Systems\n\n| system | kind | available |\n|---|---|---|\n";
  for (const auto& s : run.systems)
    out += fmt::format("| {} | {} | {} |\n", s.name, s.kind, s.available ? "yes" : "no: " + md_escape(s.reason));

  out += "\n## System × target × check\n";
  for (const auto& m : build_matrices(run)) {
    if (!has_own_results(m)) continue;  // a replica expected to be caught: summarized in the replica table
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
    out += "\n## Bug replicas\n\n| replica | bug | caught by | verdict | diagnosis |\n|---|---|---|---|---|\n";
    int caught = 0, ran = 0;
    for (const auto& r : replicas) {
      if (!r.ran) {
        out += fmt::format("| {} | {} | — | not run | — |\n", r.name, md_escape(r.bug));
        continue;
      }
      ++ran;
      caught += r.caught ? 1 : 0;
      out += fmt::format("| {} | {} | {} | {} | {} |\n", r.name, md_escape(r.bug), r.caught ? fmt::format("{}", fmt::join(r.caught_by, ", ")) : "—",
                         r.caught ? "caught" : "**MISSED**", md_escape(diagnosis_summary(r)));
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
      if (const auto& c = r->counterexample_case) {
        out += fmt::format("  - graph: {}; edges (destination ← source, in edge-id order): {}\n", graph_summary_text(*c),
                           edge_list_text(*c, kMarkdownEdges));
        if (c->element)
          out += fmt::format("  - failing element: {}: got {}, expected {}, bound {:.3g}\n", md_escape(element_where_text(*c->element, &*c)),
                             fmt::format("{:.9g}", c->element->got), fmt::format("{:.9g}", c->element->expected), c->element->bound);
      }
      if (r->diagnosis) out += fmt::format("  - diagnosis: {}\n", md_escape(r->diagnosis->text));
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

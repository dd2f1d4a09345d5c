// index.html: one self-contained page (inline CSS and SVG, no scripts, no network). In order: the
// verdict, every unmet expectation with its counterexample drawn, per system the target × check
// matrix (worst error / bound in each cell) with its margin plot, the loss curves of every accuracy
// gate, the bug-replica catch table, and the systems. Links stay inside the report directory and
// are relative, so a moved or downloaded report still works.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "reports/html_figures.h"
#include "reports/report_tables.h"
#include "reports/writers.h"

namespace gnncheck::reports {
namespace {

// The style of a matrix cell, by its text (matrix_cell): every outcome its own look.
std::string cell_class(const std::string& cell) {
  if (cell.rfind("pass", 0) == 0) return "c-pass";
  if (cell == "caught") return "c-caught";
  if (cell == "FAIL") return "c-fail";
  if (cell == "ERROR" || cell == "error") return "c-error";  // "error": a replica that broke (caught nothing)
  if (cell == "INCONCLUSIVE") return "c-inconclusive";
  if (cell == "inconclusive") return "c-inconclusive-replica";
  if (cell == "NOT TESTED") return "c-not-tested";
  if (cell == "n/a") return "c-na";
  if (cell == "skip") return "c-skip";
  if (cell == "·") return "c-not-caught";
  return "";
}

// A check name as a column header: it may break after each underscore, so columns stay narrow.
std::string header_text(const std::string& name) {
  std::string out;
  for (char ch : markup_escape(name)) {
    out += ch;
    if (ch == '_') out += "<wbr>";
  }
  return out;
}

std::string anchor_of(const RunReport& run, const ResultRecord* r) { return fmt::format("result-{}", r - run.results.data()); }

const char* kStyle = R"(
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:20px auto;max-width:1200px;color:#222;padding:0 16px;line-height:1.4}
h1{font-size:22px;margin-bottom:4px} h2{font-size:18px;margin-top:30px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px;overflow-wrap:anywhere}
nav{font-size:13px;margin:6px 0} nav a{margin-right:10px}
.banner{padding:10px 14px;border-radius:6px;font-weight:600;margin:12px 0}
.banner.ok{background:#e6f4ea;color:#1e6b34}.banner.bad{background:#fce8e6;color:#a50e0e}
.tablebox{max-width:100%;overflow-x:auto;margin:6px 0}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f5f5f5;font-weight:600}
table.matrix td{text-align:center;white-space:nowrap;padding:3px 5px}
table.matrix th.row{white-space:nowrap;font-weight:500}
table.matrix tr.group th{background:#e8eaed;font-weight:600;padding-top:5px}
td a{color:inherit}
.c-pass,.c-caught{background:#e6f4ea;color:#1e6b34}
.c-fail{background:#fce8e6;color:#a50e0e;font-weight:700}
.c-error{background:#a50e0e;color:#fff;font-weight:700}
.c-inconclusive{background:#fff3cd;color:#7a4d00;font-weight:700;outline:2px dashed #d39e00;outline-offset:-3px}
.c-inconclusive-replica{background:#fff8e1;color:#7a4d00}
.c-not-tested{background:repeating-linear-gradient(135deg,#f6d5d1 0 5px,#fff 5px 10px);color:#8b0000;font-weight:700}
.c-na{background:#fff;color:#888;font-style:italic}
.c-skip{background:#eceff1;color:#666}
.c-not-caught{color:#999}
.chip{display:inline-block;padding:0 6px;border:1px solid #ddd;border-radius:3px;margin:0 2px}
.legend-line{font-size:13px;color:#444;margin:6px 0 10px}
table.matrix td.bug{min-width:14em;max-width:34em;font-size:12px;color:#444;white-space:normal;text-align:left}
.meta{color:#555;font-size:13px;overflow-wrap:anywhere}
code,pre{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
code{overflow-wrap:anywhere}
pre{background:#f6f8fa;padding:8px;white-space:pre-wrap;overflow-wrap:anywhere;max-width:100%}
figure{margin:8px 0 16px;max-width:100%}
figure.curves{display:inline-block;vertical-align:top;margin-right:16px;max-width:560px}
figcaption{font-size:12px;color:#555;max-width:1000px}
figcaption .msg{display:block;white-space:pre-wrap;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px;margin-top:4px;overflow-wrap:anywhere}
svg{max-width:100%;height:auto;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
.failure{border:1px solid #f1c0bb;border-radius:6px;padding:4px 14px 10px;margin:14px 0}
.failure p{font-size:13px}
.cex{display:flex;flex-wrap:wrap;gap:12px 24px;align-items:flex-start}
.cex svg.graph{border:1px solid #eee;background:#fff;flex:none}
.cex-detail{flex:1 1 380px;min-width:0;font-size:13px}
.cex-detail table.element th{width:9em}
.cex-large{font-style:italic;color:#555;max-width:380px}
)";

std::string matrix_legend() {
  auto chip = [](const char* cls, const char* text) { return fmt::format("<span class='chip {}'>{}</span>", cls, text); };
  return fmt::format(
      "<p class='legend-line'>{} within the bound, 0.31 = the worst error / bound over the conclusive cases · {} exceeded it · {} the "
      "system errored · {} no case could decide · {} a required system did not start or answered no case · {} the check does not "
      "apply · {} not run here · for bug replicas {} this check detected the bug, {} it did not. A failing cell links to its "
      "counterexample.</p>\n",
      chip("c-pass", "pass 0.31"), chip("c-fail", "FAIL"), chip("c-error", "ERROR"), chip("c-inconclusive", "INCONCLUSIVE"),
      chip("c-not-tested", "NOT TESTED"), chip("c-na", "n/a"), chip("c-skip", "skip"), chip("c-caught", "caught"),
      chip("c-not-caught", "·"));
}

std::string matrix_table(const RunReport& run, const SystemMatrix& m) {
  std::string h = "<div class='tablebox'><table class='matrix'><tr><th>target</th>";
  for (const auto& c : m.checks) h += fmt::format("<th>{}</th>", header_text(c));
  h += "</tr>\n";
  std::string group;
  for (const auto& target : m.targets) {
    // A system tested in several entries has rows "entry · target": the entry becomes a group row,
    // so that the first column stays narrow.
    const std::size_t dot = target.find(" · ");
    std::string label = target;
    if (dot != std::string::npos) {
      if (target.substr(0, dot) != group) {
        group = target.substr(0, dot);
        h += fmt::format("<tr class='group'><th colspan='{}'>{}</th></tr>\n", m.checks.size() + 1, markup_escape(group));
      }
      label = target.substr(dot + std::string(" · ").size());
    }
    h += fmt::format("<tr><th class='row'>{}</th>", markup_escape(label));
    for (const auto& check : m.checks) {
      auto it = m.cells.find({target, check});
      if (it == m.cells.end()) {
        h += "<td></td>";
        continue;
      }
      const std::string cell = combined_cell(it->second);
      std::string tip;
      const ResultRecord* unmet = nullptr;
      for (const auto* r : it->second) {
        tip += fmt::format("{} (metric {}, bound {}) {}\n", to_string(r->outcome), r->metric ? fmt::format("{:.3g}", *r->metric) : "—",
                           r->bound ? fmt::format("{:.3g}", *r->bound) : "—", r->message);
        if (!r->expectation_held && !unmet) unmet = r;
      }
      const std::string text = unmet && unmet->expectation == Expectation::pass
                                   ? fmt::format("<a href='#{}'>{}</a>", anchor_of(run, unmet), markup_escape(cell))
                                   : markup_escape(cell);
      h += fmt::format("<td class='{}' title='{}'>{}</td>", cell_class(cell), markup_escape(tip), text);
    }
    h += "</tr>\n";
  }
  return h + "</table></div>\n";
}

std::string replica_table(const RunReport& run) {
  const auto replicas = replica_rows(run);
  if (replicas.empty()) return "";
  std::vector<std::string> checks;
  for (const auto& r : replicas)
    for (const auto& c : r.tried)
      if (std::find(checks.begin(), checks.end(), c) == checks.end()) checks.push_back(c);
  // Where a replica was caught, its first saved case for that check.
  std::map<std::pair<std::string, std::string>, std::string> case_of;
  for (const auto& r : run.results)
    if (r.expectation == Expectation::caught && !r.counterexample.empty()) case_of.emplace(std::pair{r.system, r.check}, r.counterexample);
  std::string h = "<h2 id='replicas'>Bug replicas</h2><p class='meta'>Each replica is a correct system with one published bug put back; a "
                  "suite must catch every one. <b>caught</b>: the check failed on at least one target (the link opens a saved case); "
                  "<b>·</b>: it passed everywhere.</p><div class='tablebox'><table class='matrix replicas'><tr><th>replica</th>";
  for (const auto& c : checks) h += fmt::format("<th>{}</th>", header_text(c));
  h += "<th>verdict</th><th>bug</th><th>diagnosis</th></tr>\n";
  for (const auto& r : replicas) {
    const std::string verdict = !r.ran ? "not run" : (r.caught ? "caught" : "MISSED");
    h += fmt::format("<tr><th class='row'>{}</th>", markup_escape(r.name));
    for (const auto& c : checks) {
      const bool tried = std::find(r.tried.begin(), r.tried.end(), c) != r.tried.end();
      const bool caught = std::find(r.caught_by.begin(), r.caught_by.end(), c) != r.caught_by.end();
      std::string text = caught ? "caught" : (tried ? "·" : "");
      if (auto it = case_of.find({r.name, c}); caught && it != case_of.end())
        text = fmt::format("<a href='{}'>caught</a>", figures::relative_href(it->second + "/"));
      h += fmt::format("<td class='{}'>{}</td>", caught ? "c-caught" : (tried ? "c-not-caught" : "c-skip"), text);
    }
    h += fmt::format("<td class='{}'>{}</td><td class='bug'>{}</td><td class='bug'>{}</td></tr>\n",
                     !r.ran ? "c-skip" : (r.caught ? "c-caught" : "c-fail"), verdict, markup_escape(r.bug),
                     markup_escape(diagnosis_summary(r)));
  }
  return h + "</table></div>\n";
}

std::string unmet_section(const RunReport& run) {
  std::string unmet;
  const UnmetSummary summary = unmet_summary(run);
  for (const auto& m : summary.missed_replicas)
    unmet += fmt::format("<div class='failure'><h3>{} — bug replica not caught</h3>\n<p>None of {} caught it ({} results).</p>{}</div>\n",
                         markup_escape(m.system), markup_escape(fmt::format("{}", fmt::join(m.checks, ", "))), m.results,
                         m.repro.empty() ? "" : fmt::format("<p>Re-run: <code class='rerun'>{}</code></p>", markup_escape(m.repro)));
  for (const auto* r : summary.results) {
    unmet += fmt::format("<div class='failure' id='{}'><h3>{} / {} / {} — {} (expected {})</h3>\n", anchor_of(run, r), markup_escape(r->system),
                         markup_escape(r->target), markup_escape(r->check), to_string(r->outcome), to_string(r->expectation));
    if (!r->curves.empty()) unmet += figures::loss_curve_plot(*r);
    if (r->counterexample_case || !r->counterexample.empty()) {
      unmet += figures::counterexample_figure(*r);
    } else if (!r->repro.empty()) {
      unmet += fmt::format("<p>Re-run: <code class='rerun'>{}</code></p>\n", markup_escape(r->repro));
    }
    if (r->diagnosis) unmet += fmt::format("<p class='diagnosis'>{}</p>\n", markup_escape(r->diagnosis->text));
    // An accuracy gate's plot caption carries its message already.
    if (!r->message.empty() && r->curves.empty()) unmet += fmt::format("<pre>{}</pre>\n", markup_escape(r->message));
    unmet += "</div>\n";
  }
  return unmet;
}

}  // namespace

std::string html_report(const RunReport& run) {
  const auto t = run.totals();
  std::string h = "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
                  "<meta name='viewport' content='width=device-width, initial-scale=1'>";
  h += fmt::format("<title>gnncheck — {}</title><style>{}</style></head><body>\n", markup_escape(run.suite_name), kStyle);
  h += fmt::format("<h1>gnncheck report: suite <code>{}</code></h1>\n", markup_escape(run.suite_name));
  h += fmt::format("<div class='meta'>gnncheck {} · {} · started {} · {:.1f} s · {}</div>\n", markup_escape(run.gnncheck_version),
                   seed_label(run), markup_escape(run.started_utc), run.seconds, markup_escape(run.suite_path));
  if (!run.interrupted_by.empty())
    h += fmt::format("<div class='banner bad'>Interrupted by {}: only the results finished before it are shown</div>\n",
                     markup_escape(run.interrupted_by));
  h += fmt::format("<div class='banner {}'>{} — {}</div>\n", run.all_expectations_held() ? "ok" : "bad",
                   run.all_expectations_held() ? std::string("All expectations held")
                                               : fmt::format("{} expectation(s) not met", t.expectations_unmet),
                   markup_escape(totals_sentence(t)));

  const auto matrices = build_matrices(run);
  const std::string unmet = unmet_section(run);
  std::string curves;
  for (const auto& r : run.results)
    if (!r.curves.empty()) curves += figures::loss_curve_plot(r);
  const std::string replicas = replica_table(run);

  std::vector<std::string> contents;
  if (!unmet.empty()) contents.push_back("<a href='#unmet'>expectations not met</a>");
  contents.push_back("<a href='#matrix'>system × target × check</a>");
  if (!curves.empty()) contents.push_back("<a href='#accuracy'>accuracy gates</a>");
  if (!replicas.empty()) contents.push_back("<a href='#replicas'>bug replicas</a>");
  contents.push_back("<a href='#systems'>systems</a>");
  h += fmt::format("<nav>{}</nav>\n", fmt::join(contents, " "));

  if (!unmet.empty())
    h += "<h2 id='unmet'>Expectations not met</h2>\n<p class='meta'>Each failure with its counterexample (shrunk when it came from "
         "random graphs): the graph, the element that broke its bound, and the one command that re-runs it.</p>\n" +
         unmet;

  h += "<h2 id='matrix'>System × target × check</h2>\n" + matrix_legend();
  for (const auto& m : matrices) {
    if (!has_own_results(m)) continue;  // the replica table below shows them compactly
    h += fmt::format("<h3>{}</h3>\n", markup_escape(m.system));
    h += matrix_table(run, m);
    h += figures::margin_plot(m);
  }

  if (!curves.empty())
    h += "<h2 id='accuracy'>Accuracy gates: loss curves of system, oracle and float32 reference</h2>\n<p class='meta'>Each gate trains "
         "the model from one initialization with the system, the oracle (float64) and the float32 reference; the system's loss must "
         "stay within a bound of the oracle's at every epoch.</p>\n" +
         curves + "\n";

  h += replicas;

  h += "<h2 id='systems'>Systems</h2><div class='tablebox'><table><tr><th>system</th><th>kind</th><th>available here</th></tr>\n";
  for (const auto& s : run.systems)
    h += fmt::format("<tr><td>{}</td><td>{}</td><td class='{}'>{}</td></tr>\n", markup_escape(s.name), markup_escape(s.kind),
                     s.available ? "c-pass" : "c-skip", s.available ? "yes" : "no: " + markup_escape(s.reason));
  h += "</table></div>\n";
  h += "</body></html>\n";
  return h;
}

}  // namespace gnncheck::reports

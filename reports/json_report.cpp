// report.json: the run as data (layout: reports/SCHEMA.md; JSON Schema: reports/report.schema.json).
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "reports/writers.h"

namespace gnncheck::reports {
namespace {

using Json = nlohmann::ordered_json;

// JSON has no NaN/Inf: a non-finite metric (a NaN the system produced) is written as a string.
Json number_or_text(std::optional<double> v) {
  if (!v) return nullptr;
  if (std::isfinite(*v)) return *v;
  return std::isnan(*v) ? "nan" : (*v > 0 ? "inf" : "-inf");
}

std::optional<double> read_number_or_text(const Json& j) {
  if (j.is_null()) return std::nullopt;
  if (j.is_number()) return j.get<double>();
  const std::string s = j.get<std::string>();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  throw InputError(fmt::format("expected a number, null, \"nan\", \"inf\" or \"-inf\", got \"{}\"", s));
}

Json to_json(const CounterexampleCase& c) {
  Json j;
  j["n_dst"] = c.n_dst;
  j["n_src"] = c.n_src;
  j["n_edges"] = c.n_edges;
  Json edges = Json::array();
  for (const auto& [dst, src] : c.edges) edges.push_back(Json::array({dst, src}));
  j["edges"] = edges;
  if (c.element) {
    const CounterexampleElement& e = *c.element;
    j["element"] = {{"tensor", e.tensor},
                    {"index", e.index},
                    {"place", std::string(to_string(e.place))},
                    {"mark", e.mark},
                    {"got", number_or_text(e.got)},
                    {"expected", number_or_text(e.expected)},
                    {"bound", number_or_text(e.bound)}};
  } else {
    j["element"] = nullptr;
  }
  return j;
}

CounterexampleCase read_counterexample_case(const Json& j) {
  CounterexampleCase c;
  c.n_dst = j.at("n_dst").get<std::int64_t>();
  c.n_src = j.at("n_src").get<std::int64_t>();
  c.n_edges = j.at("n_edges").get<std::int64_t>();
  for (const auto& e : j.at("edges")) c.edges.emplace_back(e.at(0).get<std::int64_t>(), e.at(1).get<std::int64_t>());
  if (!j.at("element").is_null()) {
    const Json& e = j.at("element");
    c.element = CounterexampleElement{.tensor = e.at("tensor").get<std::string>(),
                                      .index = e.at("index").get<std::vector<std::int64_t>>(),
                                      .place = parse_element_place(e.at("place").get<std::string>()),
                                      .mark = e.at("mark").get<std::int64_t>(),
                                      .got = read_number_or_text(e.at("got")).value_or(0),
                                      .expected = read_number_or_text(e.at("expected")).value_or(0),
                                      .bound = read_number_or_text(e.at("bound")).value_or(0)};
  }
  return c;
}

Json to_json(const DiagnosisRecord& d) {
  return {{"matched", d.matched},
          {"variant", d.matched ? Json(d.variant) : Json(nullptr)},
          {"bug_class", d.matched ? Json(d.bug_class) : Json(nullptr)},
          {"description", d.matched ? Json(d.description) : Json(nullptr)},
          {"also_matching", d.also_matching},
          {"matching_classes", d.matching_classes},
          {"shared", d.shared},
          {"variants_tried", d.variants_tried},
          {"text", d.text}};
}

DiagnosisRecord read_diagnosis(const Json& j) {
  DiagnosisRecord d;
  d.matched = j.at("matched").get<bool>();
  if (d.matched) {
    d.variant = j.at("variant").get<std::string>();
    d.bug_class = j.at("bug_class").get<std::string>();
    d.description = j.at("description").get<std::string>();
  }
  d.also_matching = j.at("also_matching").get<std::vector<std::string>>();
  d.matching_classes = j.at("matching_classes").get<std::vector<std::string>>();
  d.shared = j.at("shared").get<std::vector<std::string>>();
  d.variants_tried = j.at("variants_tried").get<std::int64_t>();
  d.text = j.at("text").get<std::string>();
  return d;
}

std::string_view to_string(ChunkEnd e) {
  switch (e) {
    case ChunkEnd::failure: return "failure";
    case ChunkEnd::source_error: return "source_error";
    case ChunkEnd::stopped: return "stopped";
    default: return "none";
  }
}

ChunkEnd parse_chunk_end(const std::string& name) {
  for (ChunkEnd e : {ChunkEnd::none, ChunkEnd::failure, ChunkEnd::source_error, ChunkEnd::stopped})
    if (to_string(e) == name) return e;
  throw InputError(fmt::format("unknown chunk end '{}'", name));
}

Json to_json(const ChunkReason& r) { return Json::array({r.chunk, r.text}); }
ChunkReason read_chunk_reason(const Json& j) { return {j.at(0).get<std::int64_t>(), j.at(1).get<std::string>()}; }

// A shard's chunks of one check task; "ran" rows are [index, drawn, conclusive, unsupported,
// not_applicable, inconclusive, points, moved] (shards of earlier versions: without moved).
Json to_json(const ChunkedCases& c) {
  Json ran = Json::array();
  for (const auto& k : c.ran)
    ran.push_back(Json::array({k.index, k.drawn, k.conclusive, k.unsupported, k.not_applicable, k.inconclusive, k.points, k.moved}));
  Json causes = Json::array();
  for (const auto& cause : c.inconclusive_causes) causes.push_back(Json::array({cause.chunk, cause.cases, cause.text}));
  return {{"of", c.of},
          {"ran", ran},
          {"ended_at", c.ended_at},
          {"end", std::string(to_string(c.end))},
          {"end_text", c.end_text},
          {"worst_chunk", c.worst_chunk},
          {"first_unsupported", to_json(c.first_unsupported)},
          {"first_not_applicable", to_json(c.first_not_applicable)},
          {"first_inconclusive", to_json(c.first_inconclusive)},
          {"inconclusive_causes", causes},
          {"notes", c.notes}};
}

ChunkedCases read_chunked_cases(const Json& j) {
  ChunkedCases c;
  c.of = j.at("of").get<std::int64_t>();
  for (const auto& k : j.at("ran")) {
    const auto v = k.get<std::vector<std::int64_t>>();
    if (v.size() != 7 && v.size() != 8) throw InputError("chunks.ran: expected rows of 8 integers (7 from earlier versions)");
    c.ran.push_back({v[0], v[1], v[2], v[3], v[4], v[5], v[6], v.size() == 8 ? v[7] : 0});
  }
  c.ended_at = j.at("ended_at").get<std::int64_t>();
  c.end = parse_chunk_end(j.at("end").get<std::string>());
  c.end_text = j.at("end_text").get<std::string>();
  c.worst_chunk = j.at("worst_chunk").get<std::int64_t>();
  c.first_unsupported = read_chunk_reason(j.at("first_unsupported"));
  c.first_not_applicable = read_chunk_reason(j.at("first_not_applicable"));
  c.first_inconclusive = read_chunk_reason(j.at("first_inconclusive"));
  if (j.contains("inconclusive_causes"))  // absent from the shards of earlier versions
    for (const auto& cause : j.at("inconclusive_causes"))
      c.inconclusive_causes.push_back({cause.at(0).get<std::int64_t>(), cause.at(1).get<std::int64_t>(), cause.at(2).get<std::string>()});
  c.notes = j.at("notes").get<std::string>();
  return c;
}

Json to_json(const ResultRecord& r) {
  Json j;
  j["entry"] = r.entry;
  j["system"] = r.system;
  j["target"] = r.target;
  j["check"] = r.check;
  j["verdict"] = std::string(to_string(r.outcome));
  j["expectation"] = std::string(to_string(r.expectation));
  j["expectation_held"] = r.expectation_held;
  j["precision"] = r.precision;
  j["metric_name"] = r.metric_name;
  j["metric"] = number_or_text(r.metric);
  j["bound"] = number_or_text(r.bound);
  j["tolerance_model"] = r.tolerance_model;
  j["seed"] = r.seed;
  j["cases"] = r.cases;
  j["conclusive"] = r.conclusive;
  j["message"] = r.message;
  j["counterexample"] = r.counterexample.empty() ? Json(nullptr) : Json(r.counterexample);
  j["repro"] = r.repro;
  j["seconds"] = r.seconds;
  Json points = Json::array();
  for (const auto& p : r.error_vs_bound) points.push_back(Json::array({number_or_text(p.metric), number_or_text(p.bound)}));
  j["error_vs_bound"] = points;
  Json curves = Json::array();
  for (const auto& c : r.curves) {
    Json values = Json::array();
    for (double v : c.values) values.push_back(number_or_text(v));
    curves.push_back({{"name", c.name}, {"values", values}});
  }
  j["curves"] = curves;
  j["counterexample_case"] = r.counterexample_case ? to_json(*r.counterexample_case) : Json(nullptr);
  j["diagnosis"] = r.diagnosis ? to_json(*r.diagnosis) : Json(nullptr);
  if (r.chunked) j["chunks"] = to_json(*r.chunked);
  return j;
}

}  // namespace

std::string json_report(const RunReport& run) {
  Json j;
  j["schema_version"] = run.schema_version;
  j["gnncheck_version"] = run.gnncheck_version;
  j["suite"] = {{"name", run.suite_name}, {"path", run.suite_path}};
  j["seed"] = run.seed;
  if (run.share) {
    Json plan = Json::array();
    for (const auto& t : run.plan)
      plan.push_back({{"entry", t.entry}, {"system", t.system}, {"target", t.target}, {"check", t.check},
                      {"units", t.units}, {"overridden", t.overridden},
                      {"expectation", std::string(to_string(t.expectation))}, {"seed", t.seed}});
    j["share"] = {{"part", run.share->part}, {"of", run.share->of}, {"plan", plan}, {"override_systems", run.override_systems}};
  } else {
    j["share"] = nullptr;
  }
  j["started_utc"] = run.started_utc;
  j["seconds"] = run.seconds;
  const auto t = run.totals();
  j["totals"] = {{"results", t.results},
                 {"passed", t.passed},
                 {"failed", t.failed},
                 {"errors", t.errors},
                 {"not_applicable", t.not_applicable},
                 {"inconclusive", t.inconclusive},
                 {"not_tested", t.not_tested},
                 {"skipped", t.skipped},
                 {"expectations_unmet", t.expectations_unmet},
                 {"replica_results", t.replica_results},
                 {"replicas_caught", t.replicas_caught},
                 {"replicas_missed", t.replicas_missed}};
  j["interrupted_by"] = run.interrupted_by.empty() ? Json(nullptr) : Json(run.interrupted_by);
  j["all_expectations_held"] = run.all_expectations_held();
  Json systems = Json::array();
  for (const auto& s : run.systems)
    systems.push_back({{"name", s.name}, {"kind", s.kind}, {"available", s.available}, {"reason", s.reason}, {"bug", s.bug}});
  j["systems"] = systems;
  Json results = Json::array();
  for (const auto& r : run.results) results.push_back(to_json(r));
  j["results"] = results;
  return j.dump(2) + "\n";
}

RunReport read_json_report(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open the report", path.string()));
  Json j;
  try {
    j = Json::parse(in);
  } catch (const Json::parse_error& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", path.string(), e.what()));
  }
  std::string field = "schema_version";
  try {
    RunReport run;
    run.schema_version = j.at("schema_version").get<int>();
    if (run.schema_version != kReportSchemaVersion)
      throw InputError(fmt::format("{}: schema_version {} is not supported (this gnncheck reads version {})", path.string(),
                                   run.schema_version, kReportSchemaVersion));
    field = "gnncheck_version";
    run.gnncheck_version = j.at(field).get<std::string>();
    field = "suite";
    run.suite_name = j.at("suite").at("name").get<std::string>();
    run.suite_path = j.at("suite").at("path").get<std::string>();
    field = "seed";
    run.seed = j.at(field).get<std::uint64_t>();
    field = "share";
    if (j.contains(field) && !j.at(field).is_null())
    {
      const Json& share = j.at(field);
      run.share = RunShare{share.at("part").get<int>(), share.at("of").get<int>()};
      if (share.contains("plan"))
        for (const auto& t : share.at("plan"))
          run.plan.push_back({t.at("entry").get<std::string>(), t.at("system").get<std::string>(),
                              t.at("target").get<std::string>(), t.at("check").get<std::string>(),
                              t.at("units").get<std::int64_t>(), t.at("overridden").get<bool>(),
                              parse_expectation(t.at("expectation").get<std::string>()), t.at("seed").get<std::uint64_t>()});
      if (share.contains("override_systems")) run.override_systems = share.at("override_systems").get<std::vector<std::string>>();
    }
    field = "started_utc";
    run.started_utc = j.at(field).get<std::string>();
    field = "seconds";
    run.seconds = j.at(field).get<double>();
    field = "interrupted_by";
    if (j.contains(field) && !j.at(field).is_null()) run.interrupted_by = j.at(field).get<std::string>();
    field = "systems";
    for (const auto& s : j.at("systems"))
      run.systems.push_back({s.at("name").get<std::string>(), s.at("kind").get<std::string>(), s.at("available").get<bool>(),
                             s.at("reason").get<std::string>(), s.at("bug").get<std::string>()});
    std::size_t i = 0;
    for (const auto& r : j.at("results")) {
      field = fmt::format("results[{}]", i++);
      ResultRecord rec;
      rec.entry = r.at("entry").get<std::string>();
      rec.system = r.at("system").get<std::string>();
      rec.target = r.at("target").get<std::string>();
      rec.check = r.at("check").get<std::string>();
      rec.outcome = parse_outcome(r.at("verdict").get<std::string>());
      rec.expectation = parse_expectation(r.at("expectation").get<std::string>());
      rec.expectation_held = r.at("expectation_held").get<bool>();
      rec.precision = r.at("precision").get<std::string>();
      rec.metric_name = r.at("metric_name").get<std::string>();
      rec.metric = read_number_or_text(r.at("metric"));
      rec.bound = read_number_or_text(r.at("bound"));
      rec.tolerance_model = r.at("tolerance_model").get<std::string>();
      rec.seed = r.at("seed").get<std::uint64_t>();
      rec.cases = r.at("cases").get<std::int64_t>();
      rec.conclusive = r.at("conclusive").get<std::int64_t>();
      rec.message = r.at("message").get<std::string>();
      if (!r.at("counterexample").is_null()) rec.counterexample = r.at("counterexample").get<std::string>();
      rec.repro = r.at("repro").get<std::string>();
      rec.seconds = r.at("seconds").get<double>();
      for (const auto& p : r.at("error_vs_bound"))
        rec.error_vs_bound.push_back({read_number_or_text(p.at(0)).value_or(0), read_number_or_text(p.at(1)).value_or(0)});
      for (const auto& c : r.at("curves")) {
        Curve curve{c.at("name").get<std::string>(), {}};
        for (const auto& v : c.at("values")) curve.values.push_back(read_number_or_text(v).value_or(0));
        rec.curves.push_back(std::move(curve));
      }
      // Absent in reports written before it existed (same schema version: the field is optional).
      if (r.contains("counterexample_case") && !r.at("counterexample_case").is_null())
        rec.counterexample_case = read_counterexample_case(r.at("counterexample_case"));
      if (r.contains("diagnosis") && !r.at("diagnosis").is_null()) rec.diagnosis = read_diagnosis(r.at("diagnosis"));
      if (r.contains("chunks")) rec.chunked = read_chunked_cases(r.at("chunks"));
      run.results.push_back(std::move(rec));
    }
    return run;
  } catch (const Json::exception& e) {
    throw InputError(fmt::format("{}: {}: {}", path.string(), field, e.what()));
  }
}

}  // namespace gnncheck::reports

// What a system declares it implements of a target's attributes (core/system.h) is what its cases
// are drawn from, on fixed and random graph families alike, and every result says what that left
// out. The system here is adapters/tests/one_degree_adapter.py: a correct normalized_spmm with one
// degree per node (PyG's gcn_norm) that errs on any case outside that convention.
#include <unistd.h>

#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "suites/tests/command_runner.h"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

using ::gnncheck::testing::CommandResult;

CommandResult shell(const std::string& line, const fs::path& dir) {
  return ::gnncheck::testing::run_as_user(line, dir, GNNCHECK_EXE);
}

fs::path scratch(const std::string& name) { return ::gnncheck::testing::scratch_folder("declared", name); }

std::string read_file(const fs::path& p) { return ::gnncheck::testing::file_text(p); }

std::string one_degree_adapter(const std::string& flags = "") {
  return fmt::format("{} {}/adapters/tests/one_degree_adapter.py{}", GNNCHECK_TEST_PYTHON, GNNCHECK_TEST_SOURCE_DIR, flags);
}

// Every attribute set the adapter was asked for (its --log file), one JSON object per case.
std::vector<nlohmann::json> drawn(const fs::path& log) {
  std::vector<nlohmann::json> out;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(DeclaredAttributes, ACorrectSystemOfOneConventionPassesCiWhichSaysWhatItLeftOut) {
  const auto dir = scratch("ci");
  const CommandResult r =
      shell(fmt::format("gnncheck run ci --adapter \"{}\" --progress plain --report out", one_degree_adapter(" --log drawn.jsonl")),
            dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("All expectations held"));
  const auto cases = drawn(dir / "drawn.jsonl");
  ASSERT_GT(cases.size(), 50u);
  for (const auto& a : cases) EXPECT_EQ(a.at("source_degree"), "in") << a.dump();
  EXPECT_THAT(read_file(dir / "out" / "report.json"),
              HasSubstr("cases drawn within what 'one_degree' implements of 'normalized_spmm': source_degree ∈ {in}, "
                        "zero_degree ∈ {zero} (not covered: source_degree = {out}; zero_degree = {one})"));
  fs::remove_all(dir);
}

TEST(DeclaredAttributes, WithoutItsDeclarationTheSameSystemIsAskedForWhatItDoesNotImplement) {
  const auto dir = scratch("undeclared");
  const CommandResult r = shell(
      fmt::format("gnncheck run ci --entry op-order --adapter \"{}\" --progress plain --report out", one_degree_adapter(" --undeclared")),
      dir);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr("this system implements source_degree = in, zero_degree = zero only"));
  fs::remove_all(dir);
}

std::string sage_mean_adapter(const std::string& flags = "") {
  return fmt::format("{} {}/adapters/tests/sage_mean_adapter.py{}", GNNCHECK_TEST_PYTHON, GNNCHECK_TEST_SOURCE_DIR, flags);
}

// sage's aggr and project came after adapters were written against sage (opt-in attributes): a
// correct SAGE-mean that never heard of them passes ci, asked the mean only, and the results say
// so; declaring aggr = [mean, max] gets it max cases too.
TEST(DeclaredAttributes, AnOptInAttributeIsAskedOnlyOfASystemThatDeclaresIt) {
  const auto dir = scratch("opt-in");
  const CommandResult r = shell(fmt::format("gnncheck run ci --target sage --adapter \"{}\" --progress plain --report out",
                                            sage_mean_adapter(" --log drawn.jsonl")),
                                dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto cases = drawn(dir / "drawn.jsonl");
  ASSERT_GT(cases.size(), 20u);
  for (const auto& a : cases) {
    EXPECT_EQ(a.at("aggr"), "mean") << a.dump();
    EXPECT_EQ(a.at("project"), false) << a.dump();
  }
  EXPECT_THAT(read_file(dir / "out" / "report.json"),
              HasSubstr("aggr and project added to 'sage' after systems were written against it: asked only the "
                        "default unless 'sage_mean' declares them (PROTOCOL.md §2)"));
  fs::remove(dir / "drawn.jsonl");
  const CommandResult declared = shell(
      fmt::format("gnncheck run ci --target sage --adapter \"{}\" --progress plain --report out2",
                  sage_mean_adapter(" --declare-max --log drawn.jsonl")),
      dir);
  EXPECT_EQ(declared.exit_code, 0) << declared.output;
  cases = drawn(dir / "drawn.jsonl");
  int max = 0;
  for (const auto& a : cases) {
    max += a.at("aggr") == "max" ? 1 : 0;
    EXPECT_EQ(a.at("project"), false) << a.dump();
  }
  EXPECT_GT(max, 5) << "a system that declares max is asked max";
  fs::remove_all(dir);
}

std::string segment_var_softmax_adapter(const std::string& flags) {
  return fmt::format("{} {}/adapters/tests/segment_var_softmax_adapter.py{}", GNNCHECK_TEST_PYTHON,
                     GNNCHECK_TEST_SOURCE_DIR, flags);
}

// segment_aggregation's std and mul came after adapters were written against var and softmax
// (opt-in choices): a correct var and softmax that never heard of them passes, asked those two only,
// and the results say so; declaring aggr = [std] gets it std cases, and nothing else.
TEST(DeclaredAttributes, ChoicesAddedLaterAreAskedOnlyOfASystemThatDeclaresTheAttribute) {
  const auto dir = scratch("opt-in-choices");
  const CommandResult r = shell(fmt::format("gnncheck check --adapter \"{}\" --target segment_aggregation --cases 20 "
                                            "--report out",
                                            segment_var_softmax_adapter(" --log drawn.jsonl")),
                                dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto cases = drawn(dir / "drawn.jsonl");
  ASSERT_GT(cases.size(), 20u);
  std::set<std::string> asked;
  for (const auto& a : cases) asked.insert(a.at("aggr").get<std::string>());
  EXPECT_EQ(asked, (std::set<std::string>{"var", "softmax"}));
  EXPECT_THAT(read_file(dir / "out" / "report.json"),
              HasSubstr("aggr = std and mul added to 'segment_aggregation' after systems were written against it: asked "
                        "only where 'segment_var_softmax' declares the attribute (PROTOCOL.md §2)"));
  fs::remove(dir / "drawn.jsonl");
  const CommandResult declared = shell(fmt::format("gnncheck check --adapter \"{}\" --target segment_aggregation "
                                                   "--cases 20 --report out2",
                                                   segment_var_softmax_adapter(" --declare-std --log drawn.jsonl")),
                                       dir);
  EXPECT_EQ(declared.exit_code, 0) << declared.output;
  cases = drawn(dir / "drawn.jsonl");
  ASSERT_GT(cases.size(), 20u);
  for (const auto& a : cases) EXPECT_EQ(a.at("aggr"), "std") << a.dump();
  fs::remove_all(dir);
}

TEST(DeclaredAttributes, AttributesPinnedOnTheRandomFamilyAreTheOnlyOnesDrawn) {
  const auto dir = scratch("random-pins");
  std::ofstream(dir / "pins.yaml") << R"(name: pins
seed: 3
cases_per_property: 12
entries:
  - name: row-mean-only
    systems: cpu_float32
    targets:
      - {name: normalized_spmm, attributes: {norm: [row_mean], features: [3, 33]}}
    checks: [differential, adjoint]
    graphs: small
)";
  const CommandResult r = shell(
      fmt::format("gnncheck run pins.yaml --adapter \"{}\" --progress plain --report out", one_degree_adapter(" --log drawn.jsonl")),
      dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const auto cases = drawn(dir / "drawn.jsonl");
  ASSERT_GE(cases.size(), 24u);
  for (const auto& a : cases) {
    EXPECT_EQ(a.at("norm"), "row_mean") << a.dump();
    EXPECT_TRUE(a.at("features") == 3 || a.at("features") == 33) << a.dump();
    EXPECT_EQ(a.at("source_degree"), "in") << a.dump();
  }
  fs::remove_all(dir);
}

TEST(DeclaredAttributes, AnEntryAskingOnlyForValuesTheSystemDoesNotImplementIsSkippedNamingBoth) {
  const auto dir = scratch("disjoint");
  std::ofstream(dir / "out_only.yaml") << R"(name: out_only
entries:
  - name: out-degree
    systems: cpu_float32
    targets:
      - {name: normalized_spmm, attributes: {source_degree: [out]}}
    checks: differential
    graphs: skewed
)";
  const CommandResult r = shell(fmt::format("gnncheck run out_only.yaml --adapter \"{}\" --report out", one_degree_adapter()), dir);
  const std::string json = read_file(dir / "out" / "report.json");
  EXPECT_THAT(json, HasSubstr("system 'one_degree' implements source_degree {in} of target 'normalized_spmm'; this entry asks "
                              "{out}: no case to draw"));
  // The system the user named tested nothing at all in this run: not tested, never a success.
  EXPECT_THAT(json, HasSubstr("\"verdict\": \"not tested\""));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  fs::remove_all(dir);
}

TEST(DeclaredAttributes, ListShowsWhatAnAdapterImplementsAndWhatThatLeavesOut) {
  const auto dir = scratch("list");
  const CommandResult r = shell(fmt::format("gnncheck list --adapter \"{}\"", one_degree_adapter()), dir);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("normalized_spmm        float64   implements source_degree ∈ {in}, zero_degree ∈ {zero}"));
  EXPECT_THAT(r.output, HasSubstr("not covered: source_degree = out, zero_degree = one"));
  const CommandResult one = shell(fmt::format("gnncheck list gcn --adapter \"{}\"", one_degree_adapter()), dir);
  EXPECT_THAT(one.output, HasSubstr("does not compute 'gcn'"));
  // ops and layers narrow the list; a section that is not about declarations is refused, naming
  // what is accepted and, for systems, the command that lists them.
  const CommandResult ops = shell(fmt::format("gnncheck list ops --adapter \"{}\"", one_degree_adapter()), dir);
  EXPECT_EQ(ops.exit_code, 0) << ops.output;
  EXPECT_THAT(ops.output, HasSubstr("normalized_spmm"));
  const CommandResult layers = shell(fmt::format("gnncheck list layers --adapter \"{}\"", one_degree_adapter()), dir);
  EXPECT_THAT(layers.output, HasSubstr("(no layers)"));
  const CommandResult systems = shell(fmt::format("gnncheck list systems --adapter \"{}\"", one_degree_adapter()), dir);
  EXPECT_EQ(systems.exit_code, 2) << systems.output;
  EXPECT_THAT(systems.output, HasSubstr("its section may be targets, ops, layers or a target (spmm, "));
  EXPECT_THAT(systems.output, HasSubstr("(`gnncheck list systems` without them lists every system)"));
  fs::remove_all(dir);
}

TEST(DeclaredAttributes, PinsOutsideAnAttributesValuesAreRefusedWhenTheSuiteIsPlanned) {
  const auto dir = scratch("bad-pin");
  std::ofstream(dir / "bad.yaml") << R"(name: bad
entries:
  - name: typo
    systems: cpu_float32
    targets:
      - {name: normalized_spmm, attributes: {source_degree: [inn]}}
    checks: differential
)";
  // Whatever the system declares: the suite's own systems, or one named on the command line.
  for (const std::string& systems : {std::string(), fmt::format(" --adapter \"{}\"", one_degree_adapter())}) {
    const CommandResult r = shell(fmt::format("gnncheck run bad.yaml{} --report out", systems), dir);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("bad.yaml:6: entry 'typo': target 'normalized_spmm', attribute 'source_degree': 'inn' is "
                                    "not one of its values (out, in)"));
  }
  fs::remove_all(dir);
}

}  // namespace

// What a user learns from the command alone: `gnncheck list TARGET` states the exact formula and
// every convention, adapters/PROTOCOL.md's target table is exactly what the catalogue prints, and
// `gnncheck skeleton` writes adapters and plugins that run as they are and are never a pass.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/target_listing.h"
#include "oracle/targets.h"
#include "suites/tests/command_runner.h"

namespace {

using ::gnncheck::testing::CommandResult;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

CommandResult gnncheck(const std::string& args) {
  return ::gnncheck::testing::run_command(fmt::format("'{}' {} 2>&1", GNNCHECK_EXE, args));
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path scratch(const std::string& name) {
  auto dir = fs::temp_directory_path() / fmt::format("gnncheck-discoverability-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(ListTest, EveryTargetHasAFormulaAndConventions) {
  for (const auto& def : gnncheck::oracle::all_targets()) {
    EXPECT_FALSE(def.spec.formula.empty()) << def.spec.name;
    EXPECT_FALSE(def.spec.conventions.empty()) << def.spec.name;
    const CommandResult r = gnncheck("list " + def.spec.name);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output, gnncheck::oracle::describe_target(def));
    EXPECT_THAT(r.output, HasSubstr("Formula"));
    for (const auto& c : def.spec.conventions) EXPECT_THAT(r.output, HasSubstr(c));
  }
}

TEST(ListTest, LayersStateTheirConventions) {
  const std::string gcn = gnncheck("list gcn").output;
  EXPECT_THAT(gcn, HasSubstr("Self-loops: edge (i, i) is appended to every destination row i, on a non-square graph too"));
  EXPECT_THAT(gcn, HasSubstr("a source's out-degree (its column length)"));
  EXPECT_THAT(gcn, HasSubstr("bias is [out_features]"));
  EXPECT_THAT(gcn, HasSubstr("n_dst ≤ n_src"));
  const std::string gat = gnncheck("list gat").output;
  EXPECT_THAT(gat, HasSubstr("att_dst pairs with the destination"));
  EXPECT_THAT(gat, HasSubstr("bias is [heads·C] with concat = true and [C] with concat = false"));
  EXPECT_THAT(gnncheck("list agnn").output, HasSubstr("A zero row of x stays zero"));
  EXPECT_THAT(gnncheck("list sage").output, HasSubstr("an empty row aggregates 0"));
  EXPECT_THAT(gnncheck("list gin").output, HasSubstr("Destination i's own features are x[i]"));
}

TEST(ListTest, ProtocolTargetTableIsWhatTheCataloguePrints) {
  const CommandResult r = gnncheck("list --markdown");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, gnncheck::oracle::targets_markdown());
  const std::string protocol = read_file(fs::path(GNNCHECK_TEST_SOURCE_DIR) / "adapters" / "PROTOCOL.md");
  const std::string begin(gnncheck::oracle::kTargetsMarkdownBegin), end(gnncheck::oracle::kTargetsMarkdownEnd);
  const auto from = protocol.find("\n" + begin);
  const auto to = protocol.find("\n" + end + "\n");
  ASSERT_NE(from, std::string::npos) << "adapters/PROTOCOL.md lacks the line " << begin;
  ASSERT_NE(to, std::string::npos) << "adapters/PROTOCOL.md lacks the line " << end;
  const std::string in_protocol = protocol.substr(from + 1, to + end.size() + 2 - (from + 1));
  EXPECT_TRUE(in_protocol == r.output)
      << "adapters/PROTOCOL.md §10 differs from `gnncheck list --markdown`: regenerate it with the command §10 gives";
  EXPECT_EQ(gnncheck("list --markdown gcn").exit_code, 2);
}

// ---- gnncheck skeleton ----

// Every result of a `gnncheck check` of a skeleton is `not tested` (fail closed), and it says why.
void expect_all_not_tested(const CommandResult& r, const std::string& target) {
  EXPECT_EQ(r.exit_code, 1) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"((\d+) results: (\d+) not tested)"))) << r.output;
  EXPECT_EQ(m[1], m[2]) << r.output;
  EXPECT_GT(std::stoi(m[1]), 3) << r.output;
  EXPECT_THAT(r.output, HasSubstr(target + " is not implemented yet"));
  EXPECT_THAT(r.output, Not(HasSubstr("crashed")));
}

TEST(SkeletonTest, PythonAdapterRunsAndIsNotTested) {
  const fs::path dir = scratch("python");
  // gsddmm: inputs its attributes switch on and off (lhs_v only with lhs = v), read with .get.
  for (const std::string target : {"spmm", "gcn", "gsddmm"}) {
    const fs::path file = dir / (target + "_adapter.py");
    const CommandResult w = gnncheck(fmt::format("skeleton --target {} --lang python --output '{}'", target, file.string()));
    ASSERT_EQ(w.exit_code, 0) << w.output;
    const std::string text = read_file(file);
    EXPECT_THAT(text, HasSubstr("kit.serve(name=\"" + target + "_skeleton\""));
    expect_all_not_tested(
        gnncheck(fmt::format("check --adapter \"{} '{}'\" --target {} --cases 3", GNNCHECK_TEST_PYTHON, file.string(), target)),
        target);
  }
  // Every tensor, attribute and shape of the target is named.
  const std::string gat = gnncheck("skeleton --target gat --lang python").output;
  for (const char* s : {"x = case.inputs[\"x\"]  # [n_src, in_features] on src_nodes", "att_dst = case.parameters[\"att_dst\"]",
                        "bias = case.parameters.get(\"bias\")", "absent when bias = false", "negative_slope = case.attributes",
                        "answer[\"gradients\"][\"att_src\"] = ...  # [heads, out_features]", "att_dst pairs with the destination"})
    EXPECT_THAT(gat, HasSubstr(s));
  EXPECT_THAT(gnncheck("skeleton --target gsddmm --lang python").output,
              HasSubstr("lhs_v = case.inputs.get(\"lhs_v\")  # (depends on the attributes) on dst_nodes; absent when lhs = u or e"));
  // An existing file is never overwritten.
  const CommandResult again = gnncheck(fmt::format("skeleton --target spmm --lang python --output '{}'", (dir / "spmm_adapter.py").string()));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_THAT(again.output, HasSubstr("the file exists; it is not overwritten"));
  EXPECT_EQ(gnncheck("skeleton --target spmmm --lang c").exit_code, 2);
  EXPECT_EQ(gnncheck("skeleton --target spmm --lang rust").exit_code, 2);
  fs::remove_all(dir);
}

TEST(SkeletonTest, CPluginCompilesForEveryTargetAndIsNotTested) {
  const fs::path dir = scratch("c");
  for (const auto& def : gnncheck::oracle::all_targets()) {
    const std::string& target = def.spec.name;
    const fs::path source = dir / (target + "_plugin.c"), library = dir / ("lib" + target + "_plugin.so");
    const CommandResult w = gnncheck(fmt::format("skeleton --target {} --lang c --output '{}'", target, source.string()));
    ASSERT_EQ(w.exit_code, 0) << w.output;
    const CommandResult cc = ::gnncheck::testing::run_command(
        fmt::format("'{}' -std=c99 -Wall -Wextra -Werror -shared -fPIC -I'{}/adapters/include' '{}' -o '{}' 2>&1", GNNCHECK_TEST_C_COMPILER,
                    GNNCHECK_TEST_SOURCE_DIR, source.string(), library.string()));
    ASSERT_EQ(cc.exit_code, 0) << target << ":\n" << cc.output;
    if (target == "spmm") {
      // The commented-out accumulation declaration compiles as it is once uncommented.
      std::ifstream in(source);
      std::string line, declaration;
      while (std::getline(in, line))
        if (line.rfind(" * static const gnncheck_accumulation_decl", 0) == 0 ||
            line.rfind(" * static const gnncheck_plugin_accumulation", 0) == 0 ||
            line.rfind(" * GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin_accumulation*", 0) == 0)
          declaration += line.substr(3) + "\n";
      ASSERT_EQ(std::count(declaration.begin(), declaration.end(), '\n'), 3) << declaration;
      std::ofstream(source, std::ios::app) << declaration;
      const CommandResult with = ::gnncheck::testing::run_command(
          fmt::format("'{}' -std=c99 -Wall -Wextra -Werror -shared -fPIC -I'{}/adapters/include' '{}' -o '{}' 2>&1",
                      GNNCHECK_TEST_C_COMPILER, GNNCHECK_TEST_SOURCE_DIR, source.string(), library.string()));
      ASSERT_EQ(with.exit_code, 0) << with.output;
    }
    if (target == "spmm_ve" || target == "gcn")
      expect_all_not_tested(gnncheck(fmt::format("check --plugin '{}' --target {} --cases 3", library.string(), target)), target);
  }
  fs::remove_all(dir);
}

}  // namespace

// `gnncheck scale` as a user meets it: a correct system passes, a replica is caught, the report
// holds one "scale" result with its re-run line, and bad arguments name their flag (exit 2).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/tests/command_runner.h"
#include <nlohmann/json.hpp>

namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

using ::gnncheck::testing::CommandResult;

CommandResult gnncheck(const std::string& args) {
  return ::gnncheck::testing::run_command(fmt::format("'{}' {} 2>&1", GNNCHECK_EXE, args));
}

TEST(ScaleCommand, CorrectSystemPassesAndWritesAReport) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("gnncheck-scale-cli-{}", ::getpid());
  fs::remove_all(dir);
  const auto r = gnncheck(fmt::format("scale --system cpu_float32 --target spmm_ve --graph rmat:12,8 --rows 200 --seed 3 --heads 2 --report '{}'",
                                      dir.string()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("PASS scale cpu_float32/spmm_ve"));
  EXPECT_THAT(r.output, HasSubstr("highest in-degree"));
  const std::string rerun = "gnncheck scale --system cpu_float32 --target spmm_ve --graph rmat:12,8 --rows 200 --seed 3 --heads 2";
  EXPECT_THAT(r.output, HasSubstr("re-run: " + rerun));
  std::ifstream in(dir / "report.json");
  ASSERT_TRUE(in) << r.output;
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["results"].size(), 1u);
  const auto& res = j["results"][0];
  EXPECT_EQ(res["check"], "scale");
  EXPECT_EQ(res["verdict"], "pass");
  EXPECT_EQ(res["seed"], 3);
  EXPECT_EQ(res["repro"], rerun);
  EXPECT_TRUE(fs::exists(dir / "junit.xml"));
  std::ifstream rows_in(dir / "scale_rows.json");
  ASSERT_TRUE(rows_in);
  const auto rows = nlohmann::json::parse(rows_in);
  EXPECT_EQ(rows["rows"].size(), 200u);
  EXPECT_EQ(rows["strata"]["highest in-degree"], 50);
  EXPECT_EQ(rows["rows"][0]["stratum"], "first row");
  EXPECT_EQ(rows["rerun"], rerun);
  fs::remove_all(dir);
}

TEST(ScaleCommand, ReplicaIsCaught) {
  const auto fail = gnncheck("scale --system tcgnn_backward_uses_A --target spmm --graph rmat:10 --rows 100");
  EXPECT_EQ(fail.exit_code, 1) << fail.output;
  EXPECT_THAT(fail.output, HasSubstr("FAIL scale tcgnn_backward_uses_A/spmm"));
  EXPECT_THAT(fail.output, HasSubstr("re-run: gnncheck scale --system tcgnn_backward_uses_A --target spmm --graph rmat:10"));
  EXPECT_EQ(fail.output.find("e-run:"), fail.output.rfind("e-run:")) << "one re-run line:\n" << fail.output;
  const auto caught = gnncheck("scale --system tcgnn_backward_uses_A --target spmm --graph rmat:10 --rows 100 --expect caught");
  EXPECT_EQ(caught.exit_code, 0) << caught.output;
}

// --features is a layer's input width; --hidden-features and --out-features reach the layers that have them.
TEST(ScaleCommand, WidthFlagsReachTheLayers) {
  const auto gin = gnncheck("scale --system cpu_float32 --target gin --graph kronecker:8 --rows 20 --features 5 --hidden-features 3 "
                            "--out-features 2");
  EXPECT_EQ(gin.exit_code, 0) << gin.output;
  EXPECT_THAT(gin.output, ContainsRegex("gradient weight1 +ok +15 elements"));
  EXPECT_THAT(gin.output, ContainsRegex("gradient weight2 +ok +6 elements"));
  EXPECT_THAT(gin.output, HasSubstr("--features 5 --hidden-features 3 --out-features 2"));
  const auto gcn = gnncheck("scale --system cpu_float32 --target gcn --graph kronecker:8 --rows 20 --features 6 --out-features 7");
  EXPECT_EQ(gcn.exit_code, 0) << gcn.output;
  EXPECT_THAT(gcn.output, ContainsRegex("gradient weight +ok +42 elements"));
}

// --hub-edges and --hub-sources bound the highest in-degree rows' edges and distinct sources: below
// the largest row's own, that row alone. The summary shows both budgets and the re-run line keeps a
// non-default one.
TEST(ScaleCommand, HubBudgetsReachTheSampleAndTheRerunLine) {
  for (const auto& [flag, budgets] : {std::pair{"--hub-edges 1", "(edge budget 1, source budget 1048576)"},
                                      std::pair{"--hub-sources 1", "(edge budget 16777216, source budget 1)"}}) {
    const auto r = gnncheck(std::string("scale --system cpu_float32 --target spmm --graph rmat:10 --rows 100 ") + flag);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr(" 1 highest in-degree")) << flag;
    EXPECT_THAT(r.output, HasSubstr(budgets));
    EXPECT_THAT(r.output, HasSubstr(std::string("--rows 100 --seed 1 ") + flag));
  }
  const auto fallback = gnncheck("scale --system cpu_float32 --target spmm --graph rmat:10 --rows 100");
  EXPECT_THAT(fallback.output, HasSubstr(" 25 highest in-degree"));
  EXPECT_THAT(fallback.output, Not(HasSubstr("--hub-edges")));
  EXPECT_THAT(fallback.output, Not(HasSubstr("--hub-sources")));
}

// --oracle-evaluations changes how many of the tolerance model's evaluations run at once, never a
// value: the tensors' lines and the worst element are the same with 1 and with 6, and the re-run
// line (which reproduces the verdict) does not carry it.
TEST(ScaleCommand, OracleEvaluationsSideBySideChangeNoValue) {
  auto figures = [](const std::string& output) {
    std::string kept;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);)
      if (line.find("elements, worst") != std::string::npos || line.find("worst:") != std::string::npos ||
          line.find("re-run:") != std::string::npos)
        kept += line + "\n";
    return kept;
  };
  // Large enough (rmat:14, 2000 rows) that the evaluations run as tasks (core/parallel.h).
  const std::string command = "scale --system cpu_float32 --target gat --graph rmat:14 --rows 2000 --heads 2";
  const auto one = gnncheck(command + " --oracle-evaluations 1");
  const auto six = gnncheck(command + " --oracle-evaluations 6");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  ASSERT_EQ(six.exit_code, 0) << six.output;
  EXPECT_THAT(figures(one.output), HasSubstr("gradient att_src"));
  EXPECT_EQ(figures(one.output), figures(six.output));
  EXPECT_THAT(one.output, Not(HasSubstr("--oracle-evaluations")));
}

TEST(ScaleCommand, BadArgumentsNameTheFlag) {
  struct Bad {
    std::string args, message;
  };
  const Bad bad[] = {
      {"--system cpu_float32 --target eshuffle --graph rmat:8", "--target eshuffle: not supported by gnncheck scale; supported targets: spmm, "},
      {"--system cpu_float32 --target nope --graph rmat:8", "unknown target 'nope'"},
      {"--system cpu_float32 --target spmm --graph rmat:eight", "--graph 'rmat:eight'"},
      {"--system cpu_float32 --target spmm --graph /no/such.mtx", "--graph '/no/such.mtx': not a file"},
      {"--system cpu_float32 --target spmm --graph rmat:8 --rows 0", "--rows must be at least 1"},
      {"--system cpu_float32 --target spmm --graph rmat:8 --hub-edges -1", "--hub-edges must be at least 0"},
      {"--system cpu_float32 --target spmm --graph rmat:8 --hub-sources -1", "--hub-sources must be at least 0"},
      {"--system cpu_float32 --target spmm --graph rmat:8 --heads 2", "--heads: target spmm has no 'heads' attribute"},
      {"--system cpu_float32 --target normalized_spmm --graph rmat:8 --norm sideways",
       "--norm sideways: unknown degree normalization 'sideways': expected symmetric or row_mean"},
      {"--system cpu_float32 --target gat --graph rmat:8 --heads 0", "--heads 0: layer 'gat': attribute 'heads' must be a positive integer"},
      {"--system cpu_float32 --target spmm --graph rmat:8 --features 0", "--features 0: target 'spmm': attribute 'features' must be at least 1"},
      {"--system no_such_system --target spmm --graph rmat:8", "unknown system 'no_such_system'"},
      {"--target spmm --graph rmat:8", "name exactly one system with --system, --adapter or --plugin"},
      {"--system cpu_float32 --graph rmat:8", "--target is required"},
      {"--system cpu_float32 --target spmm --graph rmat:8 --magnitude -1", "--magnitude must be a positive finite number"},
      {"--system cpu_float32 --target gcn --graph rmat:8 --hidden-features 8", "--hidden-features: target gcn has no 'hidden_features' attribute"},
      {"--system cpu_float32 --target spmm --graph rmat:8 --out-features 8", "--out-features: target spmm has no 'out_features' attribute"},
      {"--system cpu_float32 --target spmm --graph kronecker:0", "kronecker SCALE must be in 1..30"},
      {"--system cpu_float32 --target gat --graph rmat:8 --oracle-evaluations 0", "--oracle-evaluations must be at least 1, got 0"},
  };
  for (const auto& b : bad) {
    const auto r = gnncheck("scale " + b.args);
    EXPECT_EQ(r.exit_code, 2) << b.args << "\n" << r.output;
    EXPECT_THAT(r.output, HasSubstr(b.message)) << b.args;
  }
}

}  // namespace

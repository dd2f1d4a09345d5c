// `--sanitize` on `gnncheck check` and `gnncheck run` where it cannot run: a CPU system, an unknown
// tool, no compute-sanitizer or no device — each a usage error (exit 2) that says why, before any
// case runs. The runs under the sanitizer themselves need a GPU: adapters/replicas/gpu/device_checks.sh.
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/tests/command_runner.h"

namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::gnncheck::testing::CommandResult;

// gnncheck with compute-sanitizer hidden: $GNNCHECK_COMPUTE_SANITIZER names a missing file and PATH
// has no folder with it (only the toolkit's default place can still be found).
CommandResult gnncheck_without_sanitizer(const std::string& args) {
  return ::gnncheck::testing::run_command(fmt::format(
      "env GNNCHECK_COMPUTE_SANITIZER=/nonexistent/compute-sanitizer PATH=/nonexistent '{}' {} 2>&1", GNNCHECK_EXE, args));
}

TEST(SanitizeFlag, CheckRefusesACpuSystemSayingWhy) {
  const CommandResult r = gnncheck_without_sanitizer("check --system cpu_float32 --target spmm --sanitize racecheck");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("system 'cpu_float32' (builtin) runs no GPU kernels")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("name a GPU system")) << r.output;
}

TEST(SanitizeFlag, CheckRefusesAnUnknownTool) {
  const CommandResult r = gnncheck_without_sanitizer("check --system gpu --target spmm --sanitize synccheck");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_THAT(r.output, HasSubstr("--sanitize")) << r.output;
  EXPECT_THAT(r.output, HasSubstr("synccheck")) << r.output;
}

// Without compute-sanitizer the message names every place looked at; where the toolkit sits in its
// default place it is found there, and then a machine without a device says that instead.
TEST(SanitizeFlag, CheckAndRunSayWhatIsMissingForAGpuSystem) {
  for (const std::string args : {"check --system gpu --target spmm --check differential --sanitize racecheck",
                                 "run ci --system gpu --report '' --sanitize memcheck"}) {
    const CommandResult r = gnncheck_without_sanitizer(args);
    if (r.exit_code == 0 || r.exit_code == 1) GTEST_SKIP() << "compute-sanitizer and a GPU are present: it ran\n" << r.output;
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_THAT(r.output, AnyOf(HasSubstr("NVIDIA compute-sanitizer (part of the CUDA toolkit) was not found; looked at: "
                                          "$GNNCHECK_COMPUTE_SANITIZER = /nonexistent/compute-sanitizer"),
                                HasSubstr("no NVIDIA GPU can be used here")))
        << args << "\n" << r.output;
  }
}

}  // namespace

// gnncheck/suites/tests/command_runner.h — runs a shell command line and keeps what it printed, for
// the tests of the `gnncheck` command as a user meets it, and the scratch folders and files they use.
//
//   const CommandResult r = run_command("'/path/gnncheck' list 2>&1");
//   EXPECT_EQ(r.exit_code, 0) << r.output;
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gnncheck::testing {

struct CommandResult {
  int exit_code = -1;  // -1 when the command could not be started or was killed by a signal
  std::string output;  // what it printed on stdout (redirect stderr into it with 2>&1)
};

inline CommandResult run_command(const std::string& command_line) {
  CommandResult r;
  FILE* pipe = popen(command_line.c_str(), "r");
  if (!pipe) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe)) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `line` run by a shell in `dir` with the folder of the built `gnncheck` first on PATH, as a user's
// shell would run it; stderr goes into the output.
inline CommandResult run_as_user(const std::string& line, const std::filesystem::path& dir, const std::filesystem::path& gnncheck) {
  return run_command("cd '" + dir.string() + "' && PATH='" + gnncheck.parent_path().string() + "':\"$PATH\" " + line + " 2>&1");
}

// A fresh, empty folder under the temporary directory, named by the test file and the test.
inline std::filesystem::path scratch_folder(const std::string& file, const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gnncheck-" + file + "-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// The whole file as text (empty when it cannot be read).
inline std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace gnncheck::testing

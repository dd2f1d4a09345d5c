// gnncheck/adapters/sanitizer.h — running systems under NVIDIA's compute-sanitizer and reading what it found.
//
// `gnncheck run SUITE --sanitize memcheck|racecheck|initcheck` (and `gnncheck check … --sanitize`)
// starts every GPU system under test as a process under compute-sanitizer: adapters and plugin
// hosts with the sanitizer in front of their command, the built-in GPU systems as `gnncheck
// serve-system NAME` (system_server.h). Each
// process writes its own plain-text log (--log-file DIR/sanitizer.%p.log); at the end of the run
// the logs are parsed here and each finding is attributed: a kernel of the system under test
// counts, a kernel launched by a vendor library (cuSPARSE, cuBLAS, …) is listed and not counted.
//
//   const auto program = gnncheck::sanitizer::find_program();          // InputError when missing
//   argv = gnncheck::sanitizer::wrapper(program, Tool::racecheck, log_dir);  // put before the command
//   gnncheck::sanitizer::LogReport r = gnncheck::sanitizer::parse_log(text);
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gnncheck::sanitizer {

enum class Tool { memcheck, racecheck, initcheck };
std::string_view to_string(Tool t);
// Throws InputError "unknown sanitizer tool 'x'; expected memcheck, racecheck or initcheck".
Tool parse_tool(std::string_view name);

// The exit code the sanitized process is given when the sanitizer found anything (--error-exitcode);
// chosen to differ from every code gnncheck and the adapters use.
inline constexpr int kErrorExitCode = 86;
// Findings printed per process (--print-limit); a process with more says so in its summary and the
// ones not printed are counted against the system (they cannot be attributed).
inline constexpr int kPrintLimit = 10000;

// compute-sanitizer's path: $GNNCHECK_COMPUTE_SANITIZER, else `compute-sanitizer` on PATH, else
// /usr/local/cuda/bin/compute-sanitizer. Throws InputError naming every place it looked.
std::filesystem::path find_program();

// Throws InputError when no NVIDIA device can be used here, with the driver's reason: a sanitized
// run without a device would test nothing.
void require_device();

// The argv prefix that runs a command under `tool`, logging to `log_dir`/sanitizer.<pid>.log.
std::vector<std::string> wrapper(const std::filesystem::path& program, Tool tool, const std::filesystem::path& log_dir);

// One finding of one log.
struct Finding {
  std::string headline;       // the finding's first line, e.g. "Invalid __global__ read of size 4 bytes"
  bool warning = false;       // racecheck's "Warning:" hazards (counted like errors for the system's own kernels)
  std::string kernel;         // the device function it names ("" for host API errors)
  std::string location;       // "file.cu:42" where the kernel has line information
  std::string host_library;   // the first host frame outside the CUDA driver and runtime (e.g. libcusparse.so.12)
  bool vendor = false;        // inside a vendor library: listed, not counted
  std::string text;           // the whole finding, without the sanitizer's line prefix
};

// Everything one log says.
struct LogReport {
  std::vector<Finding> findings;
  // From "ERROR SUMMARY: N errors" or "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)".
  std::optional<std::int64_t> summary_count;
  bool complete = false;  // a summary line was seen (the process ended normally under the sanitizer)
  std::vector<std::string> tool_messages;  // the sanitizer's own complaints ("Error: ... unable to ...")
};
LogReport parse_log(std::string_view text);

// Whether a finding in `kernel` (demangled name), launched from `host_library`, is a vendor
// library's: kernels in the cusparse/cublas/cublasLt/cutlass/curand/cufft/cudnn/cusolver/nccl
// namespaces or families, or launched from one of those libraries.
bool is_vendor(std::string_view kernel, std::string_view host_library);

// What the logs of one system say, ready for a report.
struct SystemFindings {
  int logs = 0;                 // log files read (one per process started)
  std::int64_t own = 0;         // findings in the system's own kernels (what fails it)
  std::int64_t vendor = 0;      // findings inside vendor libraries (listed)
  std::int64_t unattributed = 0;  // counted by a summary but not printed (over the print limit)
  std::vector<std::string> problems;  // a log without its summary, no log at all, the sanitizer's own errors
  std::string details;          // every finding, own ones first, for the report message
  bool clean() const { return own == 0 && unattributed == 0 && problems.empty() && logs > 0; }
};
// Reads every sanitizer.*.log in `log_dir`. `process_end` says how the last process ended (its
// exit code `kErrorExitCode` with no finding parsed is a problem: output gnncheck could not read).
SystemFindings read_logs(const std::filesystem::path& log_dir, Tool tool, std::optional<int> last_exit_code);

}  // namespace gnncheck::sanitizer

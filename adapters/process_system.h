// gnncheck/adapters/process_system.h — a System answered by an external adapter process.
//
// The adapter (any language) speaks the protocol of adapters/PROTOCOL.md: gnncheck starts it once
// (without a shell, in its own process group), reads its hello line (name, targets, precisions),
// then for every case writes a fresh mkdtemp directory, sends its path on stdin and waits for the
// answer with a timeout. A crash (signal or exit), a hang (killed, restarted for the next case),
// a missing/garbage/truncated file, or a wrong shape or dtype each become their own Status with a
// message that ends with the adapter's stderr tail (NaN or Inf values are an answer, which the checks
// compare with the exact result: a failure where that is finite); the next case
// starts a fresh adapter when the last one died. Calls from several threads are serialized (one
// adapter process answers one case at a time); make one system per thread to run cases in parallel.
//
// Resource faults, device-memory readings, start-up and interrupts: adapters/README.md.
//
//   auto scipy = gnncheck::make_process_system("/usr/bin/python3 adapters/python/scipy_adapter.py");
//   if (!scipy->availability().available) fmt::print("{}\n", scipy->availability().reason);
//   gnncheck::Result r = scipy->evaluate(c);   // r.status == Status::timeout after 60 s of silence
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/command_line.h"
#include "core/system.h"

namespace gnncheck {

struct ProcessSystemOptions {
  std::string name;  // the system's name; empty: the name of the adapter's hello line
  // How messages name the system, e.g. "plugin '/x/libk.so'"; empty: "adapter '<the command>'".
  std::string description;
  // Per case, from sending the path to its answer (CLI --case-timeout, suite case_timeout_s).
  std::chrono::milliseconds case_timeout{60'000};
  // From starting the program to its hello line, imports included (CLI --startup-timeout, suite
  // startup_timeout_s). Applies to every (re)start and to nothing else.
  std::chrono::milliseconds startup_timeout{120'000};
  std::filesystem::path work_dir;  // where case directories are made; empty: $TMPDIR, else /tmp
  // The directory the adapter is started in (relative paths of its command are relative to it);
  // empty: gnncheck's own. A suite's adapters start in the suite file's folder.
  std::filesystem::path working_directory;
  bool keep_case_dirs = false;     // keep every case directory (to debug an adapter)
  std::size_t stderr_tail_bytes = 4000;  // how much of the adapter's stderr a message quotes
  // Restarts in a row that fail (after the adapter died or was stopped) after which the system is
  // unavailable. The first start is tried once: an adapter that never started is unavailable at once.
  int max_failed_starts = 2;
  // Bytes the adapter may add to a case directory (outputs, gradients, result.json, anything else).
  // 0: automatic, kDefaultAnswerSlackBytes + 4 × the answer's expected size (its tensors' bytes).
  std::int64_t max_answer_bytes = 0;
  std::int64_t max_stderr_bytes_per_case = std::int64_t{64} << 20;  // 64 MiB
  std::int64_t max_rss_bytes = 0;  // the adapter's resident memory limit; 0: none (GPU stacks map GBs)
  // Put before the adapter's command when it is started (e.g. compute-sanitizer and its options,
  // adapters/sanitizer.h); empty: the command alone.
  std::vector<std::string> wrapper;
  // Whether gnncheck measures the adapter's device memory itself (measured_device_bytes()). Off
  // under compute-sanitizer, whose own device memory would count.
  bool measure_device_memory = true;
  // At the end of the run: how long the adapter may take to exit after its stdin closed before it
  // is killed (a sanitized process writes its report on exit).
  std::chrono::milliseconds exit_grace{1000};
};

// How an adapter process ended when stop_process_system() stopped it.
struct ProcessEnd {
  std::string how;                 // "exited with code 0", "was killed by signal 9 (Killed)", "was not running"
  std::optional<int> exit_code;    // when it exited by itself
};

// Ends the adapter process of `system` now (stdin closed, exit_grace to exit, then SIGKILL) and
// says how it ended; nullopt when `system` is not a process system. The next evaluate() starts a
// fresh adapter.
std::optional<ProcessEnd> stop_process_system(System& system);

// The automatic max_answer_bytes allows this much beyond 4 × the expected answer (headers, result.json,
// an adapter's own small log files).
inline constexpr std::int64_t kDefaultAnswerSlackBytes = std::int64_t{64} << 20;

// The adapter process is started lazily, on the first call that needs its hello line.
std::unique_ptr<System> make_process_system(std::vector<std::string> argv, ProcessSystemOptions options = {});
std::unique_ptr<System> make_process_system(const std::string& command, ProcessSystemOptions options = {});

}  // namespace gnncheck

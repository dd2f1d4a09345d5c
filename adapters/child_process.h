// gnncheck/adapters/child_process.h — a program run as a child in a process group of its own, with
// stdin, stdout and stderr connected to gnncheck: what an adapter or a plugin host runs as. No
// protocol here (adapters/protocol.h): lines in and out, stderr kept as a tail, the group killed and
// reaped on stop, and registered with adapters/interrupt.h while it lives, so that a Ctrl-C kills it.
//
//   ChildProcess child(/*tail_limit=*/4096);
//   if (std::string why = child.start({"python3", "adapter.py"}, {}); !why.empty()) give_up(why);
//   child.send_line("hello");
//   std::string line;
//   const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
//   if (child.read_line(deadline, line) == ChildProcess::ReadOutcome::line) use(line);
//   child.stop();  // closes stdin, waits a second, then kills the group
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gnncheck {

// Why `program` (argv[0]) cannot be started, looked up the way posix_spawnp does: as a path when
// it contains '/', else in each directory of $PATH (/bin:/usr/bin when PATH is unset); nullopt when
// it can be tried. Names the cause: not found (naming PATH), a directory, not executable, a script
// whose #! interpreter is missing.
std::optional<std::string> program_problem(const std::string& program);

// The last line of `text` that is not blank, cut to `limit` bytes, for a one-line message.
std::string last_line(const std::string& text, std::size_t limit = 300);

class ChildProcess {
  using Clock = std::chrono::steady_clock;

 public:
  enum class ReadOutcome { line, closed, timed_out, interrupted };

  explicit ChildProcess(std::size_t tail_limit) : tail_limit_(tail_limit) {}
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() { stop(); }

  // Starts the program in `working_directory` (empty: this one) with this process's environment,
  // where `environment` ("NAME=value" entries) replaces or adds variables; returns an empty string
  // or why it could not be started.
  std::string start(const std::vector<std::string>& argv, const std::filesystem::path& working_directory,
                    const std::vector<std::string>& environment = {});

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // The next complete stdout line (without '\n'), collecting stderr meanwhile. Returns `interrupted`
  // as soon as a stop is requested (adapters/interrupt.h), whatever is buffered.
  ReadOutcome read_line(Clock::time_point deadline, std::string& line);

  // False when the adapter is gone (its end of stdin is closed).
  bool send_line(const std::string& text);

  // Reads what stderr holds now, without waiting, but at most 1 MiB per call: an adapter flooding
  // stderr faster than it is read must not keep gnncheck in this loop (the caller checks the flood).
  void drain_stderr();

  std::string stderr_tail();
  void clear_stderr();
  // Bytes read from stderr since clear_stderr().
  std::int64_t stderr_bytes() const { return stderr_bytes_; }

  // The adapter's resident set size (Linux /proc/<pid>/statm), or nullopt when it cannot be read.
  std::optional<std::int64_t> resident_bytes() const;

  // The adapter closed stdout: give it a moment to finish dying, then reap it (killing if needed).
  std::string reap_after_close();

  // SIGKILL to the whole process group, then reap.
  std::string kill_and_reap();

  // End of the run: closing stdin asks the adapter to exit (PROTOCOL.md §1); it gets a second,
  // none after an interrupt.
  std::string stop(std::chrono::milliseconds grace = std::chrono::milliseconds(1000));
  // The exit code of the last process reaped, when it exited by itself.
  std::optional<int> last_exit_code() const { return last_exit_code_; }

 private:
  // Whether the adapter has ended, without reaping it (its zombie keeps the group id reserved).
  bool exited() const;

  // For an adapter that has ended or was sent SIGKILL: kills what it left in its group, takes the
  // group off the interrupt list while the zombie still reserves its id, then reaps it.
  std::string reap();
  void close_fds();

  std::size_t tail_limit_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1, stdout_fd_ = -1, stderr_fd_ = -1;
  std::string stdout_buffer_, stderr_tail_;
  std::size_t stdout_start_ = 0;  // where the unread part of stdout_buffer_ begins
  std::int64_t stderr_bytes_ = 0;
  std::optional<int> last_exit_code_;
};

}  // namespace gnncheck

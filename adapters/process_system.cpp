#include "adapters/process_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "adapters/child_process.h"
#include "adapters/interrupt.h"
#include "adapters/protocol.h"
#include "platform/device_memory.h"

namespace gnncheck {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string seconds_text(std::chrono::milliseconds ms) { return fmt::format("{:g} s", ms.count() / 1000.0); }

std::string bytes_text(std::int64_t bytes) {
  if (bytes < (std::int64_t{1} << 20)) return fmt::format("{} bytes", bytes);
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

// How often the resource limits are checked while the adapter works on a case.
constexpr auto kWatchInterval = std::chrono::milliseconds(50);

// Bytes of the regular files under `dir` (symbolic links are not followed). One lstat per entry:
// it runs twice per evaluation, and where every system call is trapped (gVisor) a
// recursive_directory_iterator's two stats per file were a visible part of a small case's cost.
std::int64_t directory_bytes(const fs::path& dir) {
  std::int64_t total = 0;
  std::vector<fs::path> pending{dir};
  while (!pending.empty()) {
    const fs::path current = std::move(pending.back());
    pending.pop_back();
    DIR* d = ::opendir(current.c_str());
    if (!d) continue;
    while (const dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      struct stat st {};
      if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISREG(st.st_mode)) total += static_cast<std::int64_t>(st.st_size);
      else if (S_ISDIR(st.st_mode)) pending.push_back(current / e->d_name);
    }
    ::closedir(d);
  }
  return total;
}

// Bytes of the tensors an answer to `manifest` holds.
std::int64_t expected_answer_bytes(const protocol::CaseManifest& manifest) {
  std::int64_t total = 0;
  for (const auto* list : {&manifest.outputs, &manifest.gradients})
    for (const auto& entry : *list) {
      const std::int64_t element = entry.dtype == NpyDType::float64 || entry.dtype == NpyDType::int64 ? 8 : 4;
      total += shape_size(entry.shape) * element;
    }
  return total;
}

class ProcessSystem final : public System {
 public:
  ProcessSystem(std::vector<std::string> argv, ProcessSystemOptions options)
      : argv_(std::move(argv)), options_(std::move(options)), process_(options_.stderr_tail_bytes) {
    if (argv_.empty()) throw InputError("adapter command is empty: expected a program and its arguments");
    if (options_.work_dir.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      options_.work_dir = tmp && *tmp ? fs::path(tmp) : fs::path("/tmp");
    }
  }

  std::string name() const override {
    std::lock_guard lock(mutex_);
    if (!options_.name.empty()) return options_.name;
    if (ensure_started() && !hello_name_.empty()) return hello_name_;
    return fs::path(argv_.back()).stem().string();
  }

  Availability availability() const override {
    std::lock_guard lock(mutex_);
    if (ensure_started()) return {};
    return {false, start_failure_};
  }

  bool supports(const std::string& target) const override {
    std::lock_guard lock(mutex_);
    return ensure_started() && declared_.count(target) != 0;
  }

  Precision precision(const std::string& target) const override {
    std::lock_guard lock(mutex_);
    ensure_started();
    auto it = declared_.find(target);
    return it == declared_.end() ? Precision::float64 : it->second;
  }

  Precision accumulation(const std::string& target) const override {
    std::lock_guard lock(mutex_);
    ensure_started();
    auto it = accumulation_.find(target);
    if (it != accumulation_.end()) return it->second;
    auto declared = declared_.find(target);
    return declared == declared_.end() ? Precision::float64 : declared->second;
  }

  ImplementedAttributes implemented_attributes(const std::string& target) const override {
    std::lock_guard lock(mutex_);
    ensure_started();
    auto it = implemented_.find(target);
    return it == implemented_.end() ? ImplementedAttributes{} : it->second;
  }

  double startup_seconds() const override {
    std::lock_guard lock(mutex_);
    return startup_seconds_;
  }

  // The live_bytes the adapter's last answer whose figures were read reported (device memory,
  // which its RSS does not show), while the process that gave it still runs.
  std::optional<std::int64_t> live_bytes() const override {
    std::lock_guard lock(mutex_);
    return answer_live_bytes_pid_ == process_.pid() ? answer_live_bytes_ : std::nullopt;
  }

  // The adapter's resident set size as it is now, read by gnncheck (/proc/<pid>/statm). Compared
  // within one case's series only: allocator caches that creep across thousands of cases never add up
  // in it (a dead band held across cases turned a few hundred bytes of creep per call into a 1 MiB step).
  std::optional<std::int64_t> measured_host_bytes() const override {
    std::lock_guard lock(mutex_);
    return process_.resident_bytes();
  }

  Result evaluate(const Case& c) override {
    std::lock_guard lock(mutex_);  // one adapter process answers one case at a time
    if (stop_requested()) return interrupted("the case was not started");
    if (!ensure_started()) {
      if (stop_requested()) return interrupted("the case was not started");
      if (unavailable_) return with_tail(Status::error, "not evaluated: the system is unavailable: " + start_failure_, "");
      return with_tail(Status::crashed, "the adapter could not be restarted: " + start_failure_, "");
    }
    if (!declared_.count(c.target)) {
      std::vector<std::string> names;
      for (const auto& [t, p] : declared_) names.push_back(t);
      Result r;
      r.status = Status::unsupported;
      r.message = fmt::format("the adapter does not declare target '{}'; it declares: {}", c.target, fmt::join(names, ", "));
      return r;
    }

    std::string pattern = (options_.work_dir / "gnncheck-case-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      return failure(Status::error, fmt::format("cannot create a case directory under {}: {}", options_.work_dir.string(),
                                                std::strerror(errno)), false);
    const fs::path dir = pattern;
    // Registered before the stop check: a stop requested in between removes it (interrupt.h).
    register_case_directory(dir);
    Result r = stop_requested() ? interrupted("the case was not started") : measured_case(c, dir);
    if (!options_.keep_case_dirs || stop_requested()) {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    } else if (!r.ok()) {
      r.message += fmt::format("\n(case directory kept: {})", dir.string());
    }
    unregister_case_directory(dir);
    return r;
  }

 private:
  // How messages name the system: "adapter '<command>'" or the options' description.
  std::string described() const {
    return options_.description.empty() ? fmt::format("adapter '{}'", fmt::join(argv_, " ")) : options_.description;
  }

  // The answer to a case cut short by SIGINT/SIGTERM; the adapter, if running, is killed.
  Result interrupted(std::string_view what) {
    if (process_.running()) process_.kill_and_reap();
    Result r;
    r.status = Status::error;
    r.message = fmt::format("{}: {}", interrupt_message(), what);
    return r;
  }

  // run_case with gnncheck's own device-memory measurement (process_system.h): per process group
  // after the answer, or the device's memory in use around the case while no GPU work of this
  // process runs.
  // Only the resources check's evaluations are measured (Case::memory_figures); the reading of the
  // last measured one stays until the next. A process group's reading is absolute, so a `counted`
  // evaluation needs none while the last reading was that of this adapter process: whatever the
  // evaluation leaves behind shows in the next one read.
  Result measured_case(const Case& c, const fs::path& dir) {
    if (!options_.measure_device_memory || c.memory_figures == MemoryFigures::unread) return run_case(c, dir);
    const pid_t before_pid = process_.pid();
    if (c.memory_figures == MemoryFigures::counted && device_reading_ && !device_reading_->whole_device &&
        device_reading_pid_ == before_pid)
      return run_case(c, dir);
    std::unique_lock device_lock(device_memory::in_process_device_lock(), std::defer_lock);
    std::optional<device_memory::Reading> device_before;
    // Without NVML nothing can be read, and nothing is held off.
    if (!device_memory::nvml_problem() && (before_pid <= 0 || !device_memory::process_group_memory(before_pid))) {
      device_lock.lock();
      device_before = device_memory::device_used();
    }
    Result r = run_case(c, dir);
    if (!r.ok() || !process_.running()) return r;
    device_reading_pid_ = process_.pid();
    if (auto group = device_memory::process_group_memory(process_.pid())) {
      device_reading_ = group;
    } else if (device_before && process_.pid() == before_pid) {
      if (auto after = device_memory::device_used()) {
        device_retained_.add(*device_before, *after);
        device_reading_ = device_retained_.total();
        if (device_reading_) device_reading_->source += fmt::format(" (adapter process {})", process_.pid());
      }
    } else {
      device_reading_.reset();
    }
    return r;
  }

 public:
  std::optional<device_memory::Reading> measured_device_bytes() const override {
    std::lock_guard lock(mutex_);
    return device_reading_;
  }

  std::optional<std::int64_t> reported_device_bytes() const override {
    std::lock_guard lock(mutex_);
    return answer_live_bytes_pid_ == process_.pid() ? answer_device_bytes_ : std::nullopt;
  }

  ProcessEnd stop_now() {
    std::lock_guard lock(mutex_);
    ProcessEnd end;
    end.how = process_.stop(options_.exit_grace);
    end.exit_code = process_.last_exit_code();
    return end;
  }

 private:
  Result run_case(const Case& c, const fs::path& dir) {
    protocol::CaseManifest manifest;
    try {
      manifest = protocol::write_case(c, protocol::case_dtype(declared_.at(c.target)), dir);
    } catch (const InputError& e) {
      if (stop_requested()) return interrupted("the case was not started");  // the directory went away under it
      return failure(Status::error, fmt::format("the case could not be written: {}", e.what()), false);
    }
    process_.clear_stderr();
    if (!process_.send_line(dir.string())) {
      // The adapter died after its previous answer: start a fresh one and send again.
      const std::string how = process_.reap_after_close();
      if (!ensure_started()) {
        if (stop_requested()) return interrupted("the case was not started");
        return with_tail(Status::crashed, fmt::format("the adapter {} between cases and could not be restarted: {}", how,
                                                      start_failure_), "");
      }
      process_.clear_stderr();
      if (!process_.send_line(dir.string()))
        return failure(Status::crashed, "the adapter closed its stdin before reading the case", true);
    }
    // After any restart: the case timeout covers the case, never a start-up.
    const auto start = Clock::now();
    const auto deadline = start + options_.case_timeout;
    const CaseWatch watch{dir, directory_bytes(dir),
                          options_.max_answer_bytes > 0 ? options_.max_answer_bytes
                                                        : kDefaultAnswerSlackBytes + 4 * expected_answer_bytes(manifest)};
    std::int64_t stdout_chatter_bytes = 0;
    stray_lines_.clear();
    auto next_watch = Clock::now() + kWatchInterval;
    std::string line;
    while (true) {
      // Wake at least every kWatchInterval to check the resource limits, and check them once more
      // when the answer comes (an adapter can write a lot between two checks).
      const auto wake = std::min(deadline, next_watch);
      const ChildProcess::ReadOutcome outcome = process_.read_line(wake, line);
      if (outcome == ChildProcess::ReadOutcome::interrupted || stop_requested())
        return interrupted("the adapter was killed during the case");
      // A done line may follow chatter printed without a newline (PROTOCOL.md §1).
      const bool is_line = outcome == ChildProcess::ReadOutcome::line;
      const bool answered = is_line && protocol::is_done_line_for(line, dir.string());
      const std::optional<std::string_view> answered_other =
          is_line && !answered ? protocol::done_payload(line) : std::nullopt;
      const bool done = answered || answered_other.has_value();
      if (outcome != ChildProcess::ReadOutcome::closed && (done || Clock::now() >= next_watch)) {
        if (auto fault = resource_fault(watch, stdout_chatter_bytes)) return stop_for(std::move(*fault));
        next_watch = Clock::now() + kWatchInterval;
      }
      if (outcome != ChildProcess::ReadOutcome::closed && Clock::now() >= deadline && !done) {
        // Also reached by an adapter that prints lines forever without answering.
        return case_timed_out();
      }
      switch (outcome) {
        case ChildProcess::ReadOutcome::interrupted:  // handled above
        case ChildProcess::ReadOutcome::timed_out:
          if (Clock::now() < deadline) continue;  // a watch wake-up, not the case's deadline
          return case_timed_out();
        case ChildProcess::ReadOutcome::closed: {
          const std::string tail = process_.stderr_tail();
          const std::string how = process_.reap_after_close();
          return with_tail(Status::crashed, fmt::format("the adapter {} while evaluating the case", how), tail);
        }
        case ChildProcess::ReadOutcome::line:
          if (!done) {  // chatter on stdout is allowed, within the flood limit
            stdout_chatter_bytes += static_cast<std::int64_t>(line.size()) + 1;
            keep_stray_line(line);
            continue;
          }
          if (answered_other)
            return failure(Status::invalid_output,
                           fmt::format("the adapter answered for '{}' while the case was '{}'", *answered_other,
                                       dir.string()), true);
          protocol::Answer answer = protocol::read_answer(dir, manifest);
          Result r = std::move(answer.result);
          if (c.memory_figures == MemoryFigures::read) {  // an answer whose figures are not read need not report them
            answer_live_bytes_ = answer.live_bytes;
            answer_device_bytes_ = answer.device_bytes;
            answer_live_bytes_pid_ = process_.pid();
          }
          if (r.seconds == 0.0) r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
          if (!r.ok() && r.status != Status::unsupported) r.message = with_tail(r.status, r.message, process_.stderr_tail()).message;
          return r;
      }
    }
  }

  Result case_timed_out() {
    Result r = failure(Status::timeout, "", true);
    r.message = fmt::format("no answer within {} (the case timeout: --case-timeout, case_timeout_s); the adapter {} and "
                            "is restarted for the next case{}{}",
                            seconds_text(options_.case_timeout), process_.kill_and_reap(), stray_lines_quote(), r.message);
    return r;
  }

  // The last lines the adapter printed on stdout during the case that were not protocol lines: an
  // adapter that prints something else in place of its done line is seen doing so, not only timing out.
  void keep_stray_line(const std::string& line) {
    constexpr std::size_t kKeptLines = 5, kKeptChars = 200;
    if (line.find_first_not_of(" \t\r") == std::string::npos) return;
    stray_lines_.push_back(line.size() > kKeptChars ? line.substr(0, kKeptChars) + "…" : line);
    if (stray_lines_.size() > kKeptLines) stray_lines_.erase(stray_lines_.begin());
  }

  std::string stray_lines_quote() const {
    if (stray_lines_.empty()) return {};
    return fmt::format("; it printed {} on stdout that {} not a protocol line (no 'done' line for the case; "
                       "adapters/PROTOCOL.md)\n--- adapter stdout, not protocol lines (last {}) ---\n{}",
                       stray_lines_.size() == 1 ? "a line" : "lines", stray_lines_.size() == 1 ? "is" : "are",
                       stray_lines_.size(), fmt::join(stray_lines_, "\n"));
  }

  // What run_case watches while the adapter works: the case directory and its size before the answer.
  struct CaseWatch {
    fs::path dir;
    std::int64_t input_bytes;   // what gnncheck wrote
    std::int64_t answer_limit;  // bytes the adapter may add
  };
  struct ResourceFault {
    Status status;
    std::string what;  // "<fault name>: <measured> … <limit>"
  };

  // The first resource limit the adapter has passed, if any.
  std::optional<ResourceFault> resource_fault(const CaseWatch& watch, std::int64_t stdout_chatter_bytes) const {
    const std::int64_t added = directory_bytes(watch.dir) - watch.input_bytes;
    if (added > watch.answer_limit)
      return ResourceFault{Status::invalid_output,
                           fmt::format("output too large: the adapter wrote {} into the case directory; an answer to "
                                       "this case may take {} ({})",
                                       bytes_text(added), bytes_text(watch.answer_limit),
                                       options_.max_answer_bytes > 0 ? "max_answer_bytes"
                                                                     : "4 × its tensors' size + 64 MiB")};
    if (process_.stderr_bytes() > options_.max_stderr_bytes_per_case)
      return ResourceFault{Status::crashed, fmt::format("stderr flood: the adapter wrote more than {} to stderr during "
                                                        "this case (max_stderr_bytes_per_case)",
                                                        bytes_text(options_.max_stderr_bytes_per_case))};
    if (stdout_chatter_bytes > options_.max_stderr_bytes_per_case)
      return ResourceFault{Status::crashed, fmt::format("stdout flood: the adapter printed more than {} of lines that "
                                                        "are not protocol lines during this case "
                                                        "(max_stderr_bytes_per_case)",
                                                        bytes_text(options_.max_stderr_bytes_per_case))};
    if (options_.max_rss_bytes > 0) {
      if (auto rss = process_.resident_bytes(); rss && *rss > options_.max_rss_bytes)
        return ResourceFault{Status::crashed, fmt::format("memory limit: the adapter's resident memory reached {}; the "
                                                          "limit is {} (max_rss_bytes)",
                                                          bytes_text(*rss), bytes_text(options_.max_rss_bytes))};
    }
    return std::nullopt;
  }

  // Stops the adapter for a resource fault: the message names the fault and quotes the stderr tail.
  Result stop_for(ResourceFault fault) {
    const std::string tail = process_.stderr_tail();
    const std::string how = process_.kill_and_reap();
    return with_tail(fault.status, fmt::format("{}; the adapter was stopped ({}) and is restarted for the next case",
                                               fault.what, how), tail);
  }

  Result failure(Status status, std::string message, bool quote_stderr) {
    return with_tail(status, std::move(message), quote_stderr ? process_.stderr_tail() : std::string());
  }

  static Result with_tail(Status status, std::string message, const std::string& tail) {
    Result r;
    r.status = status;
    r.message = std::move(message);
    if (!tail.empty()) r.message += fmt::format("\n--- adapter stderr (tail) ---\n{}", tail);
    return r;
  }

  // Starts the adapter and reads its hello line; remembers why when it cannot. The first start is
  // tried once; after the adapter has run, max_failed_starts restarts in a row may fail.
  bool ensure_started() const {
    if (process_.running()) return true;
    if (unavailable_) return false;
    if (stop_requested()) {  // no new child after a stop; not a failure of the adapter, so not counted
      start_failure_ = fmt::format("{}: not started: {}", described(), interrupt_message());
      return false;
    }
    const auto begin = Clock::now();
    std::vector<std::string> command = options_.wrapper;
    command.insert(command.end(), argv_.begin(), argv_.end());
    std::string problem = process_.start(command, options_.working_directory,
                                                   {fmt::format("GNNCHECK_PROTOCOL_VERSION={}", protocol::kVersion)});
    if (problem.empty()) problem = read_hello();
    if (!problem.empty() && process_.running()) problem += fmt::format("; it was stopped ({})", process_.kill_and_reap());
    startup_seconds_ += std::chrono::duration<double>(Clock::now() - begin).count();
    if (problem.empty()) {
      started_once_ = true;
      failed_restarts_ = 0;
      return true;
    }
    if (stop_requested()) {
      start_failure_ = fmt::format("{}: not started: {}", described(), interrupt_message());
      return false;
    }
    const std::string tail = process_.stderr_tail();
    start_failure_ = fmt::format("{}: {}{}", described(), problem,
                                 tail.empty() ? "" : "\n--- adapter stderr (tail) ---\n" + tail);
    if (!started_once_) {
      unavailable_ = true;
    } else if (++failed_restarts_ >= options_.max_failed_starts) {
      unavailable_ = true;
      start_failure_ = fmt::format("{}: could not be restarted {} times in a row (max_failed_starts); the last "
                                   "attempt: {}{}",
                                   described(), failed_restarts_, problem,
                                   tail.empty() ? "" : "\n--- adapter stderr (tail) ---\n" + tail);
    }
    return false;
  }

  // Reads the hello line; returns why it did not come, or an empty string.
  std::string read_hello() const {
    const auto deadline = Clock::now() + options_.startup_timeout;
    std::string line, last_output;
    while (true) {
      switch (process_.read_line(deadline, line)) {
        case ChildProcess::ReadOutcome::interrupted:
          return interrupt_message();
        case ChildProcess::ReadOutcome::timed_out:
          return fmt::format("no hello line ('{}{{…}}') within {} (the startup timeout: --startup-timeout, "
                             "startup_timeout_s); {}",
                             protocol::kHelloPrefix, seconds_text(options_.startup_timeout),
                             last_output.empty() ? std::string("it printed nothing on stdout")
                                                 : fmt::format("the last thing it printed on stdout: '{}'", last_output));
        case ChildProcess::ReadOutcome::closed: {
          const std::string how = process_.reap_after_close();
          const std::string said = last_line(process_.stderr_tail());
          return fmt::format("it {} before its hello line{}", how, said.empty() ? "" : ": " + said);
        }
        case ChildProcess::ReadOutcome::line:
          if (const auto payload = protocol::hello_payload(line)) {
            try {
              protocol::Hello hello = protocol::parse_hello(*payload);
              hello_name_ = std::move(hello.name);
              declared_ = std::move(hello.targets);
              implemented_ = std::move(hello.implemented);
              accumulation_ = std::move(hello.accumulation);
              return {};
            } catch (const InputError& e) {
              return e.what();
            }
          }
          if (std::string said = last_line(line); !said.empty()) last_output = std::move(said);
      }
    }
  }

  std::vector<std::string> argv_;
  ProcessSystemOptions options_;
  mutable std::mutex mutex_;
  // Starting lazily from const queries (name, supports) is what makes these mutable.
  mutable ChildProcess process_;
  mutable std::map<std::string, Precision> declared_;
  mutable std::map<std::string, ImplementedAttributes> implemented_;
  mutable std::map<std::string, Precision> accumulation_;  // where it differs from declared_
  mutable std::string hello_name_;
  mutable std::string start_failure_;
  std::vector<std::string> stray_lines_;  // the current case's last non-protocol stdout lines
  mutable bool started_once_ = false;  // a hello was read at least once
  mutable bool unavailable_ = false;   // for good: never started, or too many failed restarts
  mutable int failed_restarts_ = 0;    // in a row
  mutable double startup_seconds_ = 0.0;
  std::optional<device_memory::Reading> device_reading_;  // gnncheck's own, after the last answer
  pid_t device_reading_pid_ = -1;                          // the adapter process it was taken of
  device_memory::RetainedCounter device_retained_;        // the device-wide fallback's running total
  std::optional<std::int64_t> answer_live_bytes_;  // result.json's live_bytes of the last answer
  std::optional<std::int64_t> answer_device_bytes_;  // and its device_bytes
  pid_t answer_live_bytes_pid_ = -1;                // the process that gave it
};

}  // namespace

std::optional<ProcessEnd> stop_process_system(System& system) {
  auto* process = dynamic_cast<ProcessSystem*>(&system);
  if (!process) return std::nullopt;
  return process->stop_now();
}

std::unique_ptr<System> make_process_system(std::vector<std::string> argv, ProcessSystemOptions options) {
  return std::make_unique<ProcessSystem>(std::move(argv), std::move(options));
}

std::unique_ptr<System> make_process_system(const std::string& command, ProcessSystemOptions options) {
  return make_process_system(split_command_line(command), std::move(options));
}

}  // namespace gnncheck

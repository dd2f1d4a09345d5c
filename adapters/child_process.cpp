#include "adapters/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "adapters/interrupt.h"

extern char** environ;

namespace gnncheck {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// Why the file `path`, found as the program to run, cannot be executed; nullopt when it can.
std::optional<std::string> executable_problem(const fs::path& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return fmt::format("'{}' does not exist", path.string());
  if (S_ISDIR(st.st_mode)) return fmt::format("'{}' is a directory, not a program", path.string());
  if (!S_ISREG(st.st_mode)) return fmt::format("'{}' is not a regular file", path.string());
  if (access(path.c_str(), X_OK) != 0) return fmt::format("'{}' is not executable (no execute permission)", path.string());
  // A script runs its #! interpreter; exec reports a missing interpreter as ENOENT of the script itself.
  std::ifstream in(path, std::ios::binary);
  std::string first(256, '\0');
  in.read(first.data(), static_cast<std::streamsize>(first.size()));
  first.resize(static_cast<size_t>(in.gcount()));
  if (first.rfind("#!", 0) == 0) {
    const size_t begin = first.find_first_not_of(" \t", 2);
    const size_t end = begin == std::string::npos ? begin : first.find_first_of(" \t\r\n", begin);
    const std::string interpreter = begin == std::string::npos ? "" : first.substr(begin, end - begin);
    if (interpreter.empty()) return fmt::format("'{}' starts with '#!' but names no interpreter", path.string());
    if (access(interpreter.c_str(), X_OK) != 0)
      return fmt::format("'{}' is a script for '{}', which {}", path.string(), interpreter,
                         fs::exists(interpreter) ? "is not executable" : "does not exist");
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> program_problem(const std::string& program) {
  if (program.empty()) return "the program name is empty";
  if (program.find('/') != std::string::npos) return executable_problem(program);
  const char* env = std::getenv("PATH");
  const std::string path = env ? env : "/bin:/usr/bin";
  std::optional<std::string> found_but_unusable;
  for (size_t begin = 0; begin <= path.size();) {
    const size_t end = std::min(path.find(':', begin), path.size());
    const fs::path dir = end == begin ? fs::path(".") : fs::path(path.substr(begin, end - begin));
    const fs::path candidate = dir / program;
    struct stat st {};
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      std::optional<std::string> problem = executable_problem(candidate);
      if (!problem) return std::nullopt;
      if (!found_but_unusable) found_but_unusable = std::move(problem);
    }
    begin = end + 1;
  }
  if (found_but_unusable) return fmt::format("program '{}' was found on PATH, but {}", program, *found_but_unusable);
  return fmt::format("program '{}' was not found on PATH ({})", program, path.empty() ? "PATH is empty" : path);
}

std::string last_line(const std::string& text, std::size_t limit) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return {};
  const size_t begin = text.rfind('\n', end);
  std::string line = text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
  if (line.size() > limit) line = line.substr(0, limit) + "…";
  return line;
}

namespace {

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status))
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  return fmt::format("ended with wait status {}", status);
}

}  // namespace

std::string ChildProcess::start(const std::vector<std::string>& argv, const fs::path& working_directory,
                                const std::vector<std::string>& environment) {
  int stdin_pair[2], out_pipe[2], err_pipe[2];
  // stdin is a socket so that writing to a dead adapter gives EPIPE (send with MSG_NOSIGNAL)
  // instead of a SIGPIPE that would kill gnncheck.
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, stdin_pair) != 0)
    return fmt::format("socketpair failed: {}", std::strerror(errno));
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)
    return fmt::format("pipe2 failed: {}", std::strerror(errno));

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, stdin_pair[1], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], 2);
  if (!working_directory.empty()) posix_spawn_file_actions_addchdir_np(&actions, working_directory.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Own process group (so a timeout kills the adapter's children too); default signal handling
  // and an empty mask whatever gnncheck itself has set.
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);

  std::vector<std::string> env_strings;
  const auto replaced = [&](const char* entry) {
    const char* eq = std::strchr(entry, '=');
    const std::size_t n = eq ? static_cast<std::size_t>(eq - entry) + 1 : std::strlen(entry);
    return std::any_of(environment.begin(), environment.end(),
                       [&](const std::string& e) { return e.size() >= n && e.compare(0, n, entry, n) == 0; });
  };
  for (char** e = environ; e && *e; ++e)
    if (!replaced(*e)) env_strings.emplace_back(*e);
  env_strings.insert(env_strings.end(), environment.begin(), environment.end());
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  const int rc = posix_spawnp(&pid_, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(stdin_pair[1]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(stdin_pair[0]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    pid_ = -1;
    const std::optional<std::string> why = program_problem(argv[0]);
    return fmt::format("cannot start '{}': {}", argv[0], why ? *why : std::string(std::strerror(rc)));
  }
  stdin_fd_ = stdin_pair[0];
  stdout_fd_ = out_pipe[0];
  stderr_fd_ = err_pipe[0];
  fcntl(stdout_fd_, F_SETFL, fcntl(stdout_fd_, F_GETFL) | O_NONBLOCK);
  fcntl(stderr_fd_, F_SETFL, fcntl(stderr_fd_, F_GETFL) | O_NONBLOCK);
  stdout_buffer_.clear();
  stdout_start_ = 0;
  stderr_tail_.clear();
  // From here on a SIGINT/SIGTERM kills the adapter's group (adapters/interrupt.h).
  if (!register_child_process_group(pid_)) {
    kill_and_reap();
    return "too many adapter processes at once (4096) to stop them all on an interrupt";
  }
  return {};
}



ChildProcess::ReadOutcome ChildProcess::read_line(Clock::time_point deadline, std::string& line) {
  // A runaway line without '\n' is cut at kMaxLine, but its last kKeptTail bytes stay for the next
  // line: a protocol line glued to megabytes of chatter is still found (PROTOCOL.md §1).
  constexpr std::size_t kMaxLine = 1 << 20, kKeptTail = 64 << 10;
  while (true) {
    if (stop_requested()) return ReadOutcome::interrupted;
    // Lines are taken from stdout_start_ on; the buffer is compacted once per read, not per line, so
    // that thousands of short lines per read cost no more than copying the read once.
    if (const size_t nl = stdout_buffer_.find('\n', stdout_start_);
        nl != std::string::npos || stdout_buffer_.size() - stdout_start_ > kMaxLine) {
      const size_t end = nl == std::string::npos ? stdout_buffer_.size() - kKeptTail : nl;
      line = stdout_buffer_.substr(stdout_start_, end - stdout_start_);
      stdout_start_ = nl == std::string::npos ? end : end + 1;
      return ReadOutcome::line;
    }
    stdout_buffer_.erase(0, stdout_start_);
    stdout_start_ = 0;
    if (stdout_fd_ < 0) return ReadOutcome::closed;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return ReadOutcome::timed_out;
    pollfd fds[3] = {{stdout_fd_, POLLIN, 0}, {stop_wake_fd(), POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
    const int n = poll(fds, stderr_fd_ >= 0 ? 3 : 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno != EINTR) return ReadOutcome::closed;
    if (fds[1].revents) return ReadOutcome::interrupted;
    if (stderr_fd_ >= 0 && fds[2].revents) drain_stderr();
    if (fds[0].revents) {
      char buf[65536];
      const ssize_t got = read(stdout_fd_, buf, sizeof buf);
      if (got > 0) stdout_buffer_.append(buf, static_cast<size_t>(got));
      else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(stdout_fd_);
        stdout_fd_ = -1;
      }
    }
  }
}

bool ChildProcess::send_line(const std::string& text) {
  const std::string data = text + "\n";
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = send(stdin_fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void ChildProcess::drain_stderr() {
  constexpr std::size_t kMaxPerCall = 1 << 20;
  std::size_t read_now = 0;
  while (stderr_fd_ >= 0 && read_now < kMaxPerCall) {
    char buf[65536];
    const ssize_t got = read(stderr_fd_, buf, sizeof buf);
    if (got > 0) {
      stderr_tail_.append(buf, static_cast<size_t>(got));
      if (stderr_tail_.size() > 2 * tail_limit_) stderr_tail_.erase(0, stderr_tail_.size() - tail_limit_);
      stderr_bytes_ += got;
      read_now += static_cast<std::size_t>(got);
      continue;
    }
    if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      close(stderr_fd_);
      stderr_fd_ = -1;
    }
    if (got < 0 && errno == EINTR) continue;
    return;
  }
}

std::string ChildProcess::stderr_tail() {
  drain_stderr();
  if (stderr_tail_.size() <= tail_limit_) return stderr_tail_;
  return "…" + stderr_tail_.substr(stderr_tail_.size() - tail_limit_);
}

void ChildProcess::clear_stderr() {
  drain_stderr();
  stderr_tail_.clear();
  stderr_bytes_ = 0;
}


std::optional<std::int64_t> ChildProcess::resident_bytes() const {
  if (pid_ <= 0) return std::nullopt;
  std::ifstream statm(fmt::format("/proc/{}/statm", pid_));
  std::int64_t total_pages = 0, resident_pages = 0;
  if (!(statm >> total_pages >> resident_pages)) return std::nullopt;
  return resident_pages * static_cast<std::int64_t>(sysconf(_SC_PAGESIZE));
}

std::string ChildProcess::reap_after_close() {
  if (pid_ <= 0) return "was not running";
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  while (Clock::now() < deadline && !stop_requested()) {
    if (exited()) return reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return kill_and_reap() + " after closing its stdout";
}

std::string ChildProcess::kill_and_reap() {
  if (pid_ <= 0) return "was not running";
  kill(-pid_, SIGKILL);
  return reap();
}

std::string ChildProcess::stop(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return "was not running";
  shutdown(stdin_fd_, SHUT_WR);
  const auto deadline = Clock::now() + grace;
  while (Clock::now() < deadline && !stop_requested()) {
    if (exited()) return reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return kill_and_reap();
}


bool ChildProcess::exited() const {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
}

std::string ChildProcess::reap() {
  kill(-pid_, SIGKILL);
  unregister_child_process_group(pid_);
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  drain_stderr();
  close_fds();
  pid_ = -1;
  last_exit_code_ = r >= 0 && WIFEXITED(status) ? std::optional<int>(WEXITSTATUS(status)) : std::nullopt;
  return r < 0 ? "ended (its exit status could not be collected)" : describe_wait_status(status);
}

void ChildProcess::close_fds() {
  for (int* fd : {&stdin_fd_, &stdout_fd_, &stderr_fd_}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

}  // namespace gnncheck

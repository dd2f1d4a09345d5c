#include "adapters/interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

namespace gnncheck {
namespace fs = std::filesystem;

namespace {

static_assert(std::atomic<int>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free,
              "the signal handler may only touch lock-free atomics");

constexpr std::size_t kMaxGroups = 4096;
std::atomic<pid_t> g_groups[kMaxGroups];  // 0: a free slot
std::atomic<int> g_signal{0};
std::atomic<int> g_signals_seen{0};
std::atomic<bool> g_second_deferred{false};
std::atomic<int> g_wake_read{-1}, g_wake_write{-1};
std::atomic<int> g_now_read{-1}, g_now_write{-1};

void make_wake_pipe() {
  static std::once_flag once;
  std::call_once(once, [] {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {  // else stop_wake_fd() stays -1: polls just do not wake early
      g_wake_read = fds[0];
      g_wake_write = fds[1];
    }
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) {
      g_now_read = fds[0];
      g_now_write = fds[1];
    }
  });
}

void wake(const std::atomic<int>& write_end) {
  if (const int fd = write_end.load(); fd >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t ignored = write(fd, &byte, 1);
  }
}

void kill_registered_groups() {
  for (auto& slot : g_groups)
    if (const pid_t pgid = slot.load(); pgid > 0) kill(-pgid, SIGKILL);
}

extern "C" void on_stop_signal(int sig) {
  const int saved_errno = errno;
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  const int seen = ++g_signals_seen;
  kill_registered_groups();
  if (seen == 1) {
    wake(g_wake_write);
  } else if (seen == 2 && g_second_deferred.load() && g_now_write.load() >= 0) {
    wake(g_now_write);  // the caller writes what it has and exits
  } else {
    _exit(128 + g_signal.load());  // the caller did not get to its next poll in time, or asked for no second chance
  }
  errno = saved_errno;
}

// The case directories, and the generation that reset_stop_request_for_testing() advances. Never
// destroyed: the watcher thread may still wait on it while the program exits.
struct CaseDirectories {
  std::mutex mutex;
  std::set<fs::path> live;
  std::condition_variable reset;
  unsigned generation = 0;
};
CaseDirectories& case_directories() {
  static auto* dirs = new CaseDirectories;
  return *dirs;
}

// Under the lock: after a stop, no new directory is registered for long (evaluate() checks
// stop_requested() right after registering), so one sweep leaves none behind.
void remove_live_case_directories(CaseDirectories& dirs) {
  for (const fs::path& dir : dirs.live) {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  dirs.live.clear();
}

void watch_for_stop() {
  CaseDirectories& dirs = case_directories();
  while (true) {
    pollfd wake{g_wake_read.load(), POLLIN, 0};
    if (poll(&wake, 1, -1) <= 0) continue;
    std::unique_lock lock(dirs.mutex);
    if (g_signal.load() == 0) continue;  // a stop that a test cleared (and swept) before this thread woke
    kill_registered_groups();
    remove_live_case_directories(dirs);
    // The wake pipe stays readable until a test clears the stop: wait for that, not for the pipe.
    const unsigned generation = dirs.generation;
    dirs.reset.wait(lock, [&] { return dirs.generation != generation; });
  }
}

}  // namespace

void install_interrupt_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    make_wake_pipe();
    if (g_wake_read.load() >= 0) std::thread(watch_for_stop).detach();
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigfillset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // code that is not watching for a stop is not disturbed by it
    sigaction(SIGINT, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
  });
}

int stop_requested() { return g_signal.load(); }

void reset_stop_request_for_testing() {
  CaseDirectories& dirs = case_directories();
  std::lock_guard lock(dirs.mutex);
  if (g_signal.load() != 0) {  // do what the watcher would have done, so that a test sees a settled state
    kill_registered_groups();
    remove_live_case_directories(dirs);
  }
  g_signal = 0;
  g_signals_seen = 0;
  for (const int fd : {g_wake_read.load(), g_now_read.load()}) {
    if (fd < 0) continue;
    char buf[256];
    while (read(fd, buf, sizeof buf) > 0) {
    }
  }
  ++dirs.generation;
  dirs.reset.notify_all();
}

std::string interrupt_message() {
  switch (const int sig = stop_requested()) {
    case 0: return {};
    case SIGINT: return "interrupted by SIGINT";
    case SIGTERM: return "interrupted by SIGTERM";
    default: return fmt::format("interrupted by signal {}", sig);
  }
}

int stop_wake_fd() {
  make_wake_pipe();
  return g_wake_read.load();
}

void defer_second_interrupt(bool deferred) {
  make_wake_pipe();
  g_second_deferred = deferred;
}

int stop_now_wake_fd() {
  make_wake_pipe();
  return g_now_read.load();
}

bool register_child_process_group(pid_t pgid) {
  for (auto& slot : g_groups) {
    pid_t free_slot = 0;
    if (slot.compare_exchange_strong(free_slot, pgid)) return true;
  }
  return false;
}

void unregister_child_process_group(pid_t pgid) {
  for (auto& slot : g_groups) {
    pid_t expected = pgid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void register_case_directory(const fs::path& dir) {
  CaseDirectories& dirs = case_directories();
  std::lock_guard lock(dirs.mutex);
  dirs.live.insert(dir);
}

void unregister_case_directory(const fs::path& dir) {
  CaseDirectories& dirs = case_directories();
  std::lock_guard lock(dirs.mutex);
  dirs.live.erase(dir);
}

}  // namespace gnncheck

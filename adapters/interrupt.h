// gnncheck/adapters/interrupt.h — SIGINT/SIGTERM: stop promptly and leave no adapter process behind.
//
// Adapters and plugin hosts run in process groups of their own (so that a timeout can kill whatever
// they started), which also means a Ctrl-C on the terminal never reaches them: without help they
// would outlive gnncheck, holding host and device memory. So every such child is registered here
// while it lives, and so is every case directory. The handlers record the signal and SIGKILL every
// registered process group at once (kill() is async-signal-safe); a watcher thread woken by them
// removes the registered case directories. Every poll of an adapter includes stop_wake_fd(), so an
// evaluate() in flight returns at once with Status::error "interrupted by SIGINT" instead of
// waiting for its timeout, and no new adapter is started once a stop was requested. The caller (the
// runner) polls stop_requested() between tasks, writes its report marked interrupted and exits
// 128 + the signal. A second signal exits at once (_exit(128 + signal)) after killing the groups
// again, for a caller that does not get to its next poll — unless the caller deferred it
// (defer_second_interrupt): then the second signal wakes stop_now_wake_fd(), the caller writes
// what it has and exits itself, and only a third signal exits at once.
//
//   int main() {
//     gnncheck::install_interrupt_handlers();
//     for (auto& task : tasks) {
//       if (int sig = gnncheck::stop_requested()) return 128 + sig;   // 130 for SIGINT, 143 for SIGTERM
//       task.run();
//     }
//   }
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

namespace gnncheck {

// Installs SIGINT/SIGTERM handlers that record the signal (async-signal-safe) and kill every live child process group.
void install_interrupt_handlers();
// 0 when no stop was requested, else the signal number (SIGINT → exit 130, SIGTERM → 143).
int stop_requested();
// For tests: clears the recorded signal.
void reset_stop_request_for_testing();

// "interrupted by SIGINT" (or SIGTERM, …) for the signal stop_requested() returns; empty when none.
std::string interrupt_message();

// A file descriptor that becomes readable, and stays readable, once a stop is requested: add it to
// a poll() set to wake up at once. Never read from it. Valid for the life of the process.
int stop_wake_fd();

// For a caller that can write what it has from a thread of its own (`gnncheck run`'s report): a
// second signal then only makes stop_now_wake_fd() readable, and a third one exits at once.
void defer_second_interrupt(bool deferred);
int stop_now_wake_fd();

// The process groups that a stop kills: register a child's group right after starting it, and
// unregister it only while the child is still unreaped (a zombie keeps its group id from being reused,
// so the handler can never kill a stranger's group). Returns false when the table (4096 groups) is full.
bool register_child_process_group(pid_t pgid);
void unregister_child_process_group(pid_t pgid);

// The case directories that a stop removes (by the watcher thread, with everything in them).
void register_case_directory(const std::filesystem::path& dir);
void unregister_case_directory(const std::filesystem::path& dir);

}  // namespace gnncheck

// gnncheck/platform/device_memory.h — device memory as gnncheck measures it itself, not as a system reports it.
//
// The resources check must see device memory that no allocator of the system under test counts (a
// library handle or a cudaMalloc per call, never freed). These helpers read it from the driver:
//   - per process, through NVML's list of processes running on each device (used GPU memory by PID),
//     loaded with dlopen("libnvidia-ml.so.1") so that a build or a machine without the driver still
//     works (every function then says why it measured nothing);
//   - for the whole device, through NVML's memory info (what every process on it uses together),
//     the fallback where the driver does not list the process (e.g. a PID namespace it does not see).
// Nothing here needs the CUDA toolkit: it is built into every configuration and links only libdl.
//
//   auto reading = gnncheck::device_memory::process_memory(adapter_pid);
//   if (reading) fmt::print("{} bytes ({})\n", reading->bytes, reading->source);
//
// In-process GPU systems measure around their own evaluations (gpu/gpu_systems.cpp, RetainedMeter)
// and hold in_process_device_lock() while they do, so that another thread's GPU work in the same
// process never reads as their growth.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "core/memory_figures.h"

namespace gnncheck::device_memory {

// The driver maps device memory in pages of this size (cudaMalloc rounds small allocations into
// them and its sub-allocator may keep a partly used page after cudaFree): the granularity of every
// per-process and device-wide reading, and the resources check's allowance for them.
inline constexpr std::int64_t kDriverPageBytes = std::int64_t{2} << 20;

// Reading (one figure and how it was taken) is vocabulary: core/memory_figures.h.

// Why NVML cannot be used here (library missing, nvmlInit failed: its error string); nullopt when it can.
std::optional<std::string> nvml_problem();

// Devices NVML sees; nullopt with `why` set when NVML cannot be used or sees none.
std::optional<unsigned> device_count(std::string* why = nullptr);

// Used GPU memory of process `pid` summed over every device, per NVML's running-process lists.
// When NVML does not list the process: 0 bytes if it cannot hold device memory — it has not loaded
// the CUDA driver (libcuda is not in its memory map), or NVML lists other processes, all of this PID
// namespace, so an unlisted one has no CUDA context —, otherwise nullopt (the driver may not
// attribute its memory here: the caller falls back to device_used()).
std::optional<Reading> process_memory(pid_t pid);

// The same for every process of process group `pgid` (an adapter started under a wrapper such as
// compute-sanitizer, or one that runs its kernels in a child): NVML's entries whose process belongs
// to the group, summed. When none is listed: 0 bytes on the same grounds as process_memory(),
// otherwise nullopt.
std::optional<Reading> process_group_memory(pid_t pgid);

// Memory in use on every device together (NVML: total − free, all processes), or nullopt when NVML
// cannot be used.
std::optional<Reading> device_used();

// Whether process `pid` has the CUDA driver library (libcuda.so) mapped (/proc/<pid>/maps).
bool maps_cuda_driver(pid_t pid);

// Held by in-process GPU systems (and by process systems measured device-wide) around an
// evaluation and its readings, and by the resources check across a device series. Recursive, and
// it counts how often it was taken by a thread that did not hold it already: a thread that reads
// the same holds() twice has held it all along, so no other thread did GPU work in between.
class DeviceLock {
 public:
  void lock();
  void unlock();
  std::uint64_t holds() const;  // call it with the lock held

 private:
  std::recursive_mutex mutex_;
  int depth_ = 0;            // under mutex_
  std::uint64_t holds_ = 0;  // under mutex_
};
DeviceLock& in_process_device_lock();

// A running total of the device memory a system gained during its own evaluations: each evaluation
// is measured before and after (under in_process_device_lock()) and its difference added. Used where
// only a device-wide or whole-process figure exists, so that what other threads or processes do
// between evaluations is not counted. The source changes (and the check then refuses to compare)
// when the measurement changes kind.
class RetainedCounter {
 public:
  void add(const Reading& before, const Reading& after);
  std::optional<Reading> total() const;  // whole_device when any reading added was

 private:
  std::int64_t bytes_ = 0;
  std::string source_;
  bool whole_device_ = false;
  bool any_ = false;
};

// An in-process system's RetainedCounter, fed as each evaluation's MemoryFigures ask: run() takes
// the evaluation under in_process_device_lock() and `read` (this process's memory, nullopt before
// it has any context) around it —
//   - unread: no reading, and the next one starts afresh;
//   - read, counted: the growth since the last reading when that reading was of this process alone
//     and the lock has been held since (the resources check holds it across its series), so a
//     counted evaluation takes no reading at all and the next read one's covers it; otherwise the
//     growth from a reading just before the evaluation to one just after.
// No growth of another thread's work enters the total either way; only fewer driver calls are made.
//
//   meter.run(c.memory_figures, [&] { return own_device_memory(); }, [&] { r = evaluate_unmeasured(c); });
class RetainedMeter {
 public:
  void run(MemoryFigures figures, const std::function<std::optional<Reading>()>& read,
           const std::function<void()>& evaluate);
  std::optional<Reading> total() const;  // under in_process_device_lock()

 private:
  RetainedCounter counter_;
  std::optional<Reading> anchor_;  // the last reading, while the next growth may start from it
  std::uint64_t anchor_holds_ = 0;  // in_process_device_lock().holds() when it was taken
};

}  // namespace gnncheck::device_memory

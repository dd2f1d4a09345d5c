#include "platform/device_memory.h"

#include <dlfcn.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#ifdef GNNCHECK_HAVE_NVML_H
#include <nvml.h>
#endif

namespace gnncheck::device_memory {
namespace {

// The few NVML declarations used here, as nvml.h (CUDA 12/13) has them. The header is not needed to
// build: where it is found at configure time, the layouts are checked against it below.
using NvmlReturn = int;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlInsufficientSize = 7;
using NvmlDevice = struct NvmlDeviceOpaque*;
struct NvmlProcessInfo {  // nvmlProcessInfo_t (the _v2/_v3 layout)
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
struct NvmlMemory {  // nvmlMemory_t
  unsigned long long total, free, used;
};
constexpr unsigned long long kNvmlValueNotAvailable = ~0ull;

#ifdef GNNCHECK_HAVE_NVML_H
static_assert(sizeof(NvmlProcessInfo) == sizeof(nvmlProcessInfo_t) &&
                  offsetof(NvmlProcessInfo, used_gpu_memory) == offsetof(nvmlProcessInfo_t, usedGpuMemory),
              "NvmlProcessInfo must have nvmlProcessInfo_t's layout");
static_assert(sizeof(NvmlMemory) == sizeof(nvmlMemory_t), "NvmlMemory must have nvmlMemory_t's layout");
#endif

class Nvml {
 public:
  static const Nvml& get() {
    static const Nvml nvml;
    return nvml;
  }
  const std::optional<std::string>& problem() const { return problem_; }
  unsigned count() const { return static_cast<unsigned>(devices_.size()); }

  // Every (pid, bytes) on every device; nullopt when a list could not be read.
  std::optional<std::vector<NvmlProcessInfo>> processes() const {
    std::vector<NvmlProcessInfo> all;
    for (NvmlDevice d : devices_) {
      std::vector<NvmlProcessInfo> list(64);
      unsigned n = static_cast<unsigned>(list.size());
      NvmlReturn rc = running_processes_(d, &n, list.data());
      for (int attempt = 0; rc == kNvmlInsufficientSize && attempt < 4; ++attempt) {
        list.resize(n + 64);
        n = static_cast<unsigned>(list.size());
        rc = running_processes_(d, &n, list.data());
      }
      if (rc != kNvmlSuccess) return std::nullopt;
      all.insert(all.end(), list.begin(), list.begin() + n);
    }
    return all;
  }

  std::optional<std::int64_t> used() const {
    std::int64_t total = 0;
    for (NvmlDevice d : devices_) {
      NvmlMemory m{};
      if (memory_info_(d, &m) != kNvmlSuccess) return std::nullopt;
      total += static_cast<std::int64_t>(m.total - m.free);
    }
    return total;
  }

 private:
  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* err = dlerror();
      problem_ = fmt::format("the NVIDIA driver's NVML library cannot be loaded ({})", err ? err : "libnvidia-ml.so.1");
      return;
    }
    auto init = reinterpret_cast<NvmlReturn (*)()>(dlsym(lib, "nvmlInit_v2"));
    auto count = reinterpret_cast<NvmlReturn (*)(unsigned*)>(dlsym(lib, "nvmlDeviceGetCount_v2"));
    auto handle = reinterpret_cast<NvmlReturn (*)(unsigned, NvmlDevice*)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    error_string_ = reinterpret_cast<const char* (*)(NvmlReturn)>(dlsym(lib, "nvmlErrorString"));
    memory_info_ = reinterpret_cast<NvmlReturn (*)(NvmlDevice, NvmlMemory*)>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
    running_processes_ = reinterpret_cast<NvmlReturn (*)(NvmlDevice, unsigned*, NvmlProcessInfo*)>(
        dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
    if (!running_processes_)
      running_processes_ = reinterpret_cast<NvmlReturn (*)(NvmlDevice, unsigned*, NvmlProcessInfo*)>(
          dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v2"));
    if (!init || !count || !handle || !memory_info_ || !running_processes_) {
      problem_ = "the NVML library lacks nvmlInit_v2, nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2, "
                 "nvmlDeviceGetMemoryInfo or nvmlDeviceGetComputeRunningProcesses_v2/_v3 (driver too old)";
      return;
    }
    if (const NvmlReturn rc = init(); rc != kNvmlSuccess) {
      problem_ = fmt::format("nvmlInit failed: {} (error {})", error_string_ ? error_string_(rc) : "?", rc);
      return;
    }
    unsigned n = 0;
    if (const NvmlReturn rc = count(&n); rc != kNvmlSuccess) {
      problem_ = fmt::format("nvmlDeviceGetCount failed: {} (error {})", error_string_ ? error_string_(rc) : "?", rc);
      return;
    }
    for (unsigned i = 0; i < n; ++i) {
      NvmlDevice d = nullptr;
      if (handle(i, &d) == kNvmlSuccess) devices_.push_back(d);
    }
    if (devices_.empty()) problem_ = "NVML sees no NVIDIA device";
    // The library stays loaded and initialized for the life of the process (one reading per case).
  }

  std::optional<std::string> problem_;
  std::vector<NvmlDevice> devices_;
  const char* (*error_string_)(NvmlReturn) = nullptr;
  NvmlReturn (*memory_info_)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*running_processes_)(NvmlDevice, unsigned*, NvmlProcessInfo*) = nullptr;
};

// Whether a process NVML does not list holds no device memory: true when NVML lists at least one
// process and every listed PID is a process visible here that has the CUDA driver loaded (the
// driver reports PIDs of this namespace, so an unlisted process has no CUDA context). An empty list,
// or PIDs of another namespace, prove nothing.
bool unlisted_means_no_context(const std::vector<NvmlProcessInfo>& processes) {
  if (processes.empty()) return false;
  for (const NvmlProcessInfo& p : processes)
    if (!maps_cuda_driver(static_cast<pid_t>(p.pid))) return false;
  return true;
}

}  // namespace

std::optional<std::string> nvml_problem() { return Nvml::get().problem(); }

std::optional<unsigned> device_count(std::string* why) {
  const Nvml& nvml = Nvml::get();
  if (nvml.problem()) {
    if (why) *why = *nvml.problem();
    return std::nullopt;
  }
  return nvml.count();
}

bool maps_cuda_driver(pid_t pid) {
  std::ifstream maps(fmt::format("/proc/{}/maps", pid));
  std::string line;
  while (std::getline(maps, line))
    if (line.find("/libcuda.so") != std::string::npos) return true;
  return false;
}

namespace {

// NVML's used GPU memory summed over the listed processes that `belongs` accepts: bytes, or 0 bytes
// with `listed` false when none is listed; nullopt when the driver withholds a figure of one of them.
template <class Belongs>
std::optional<std::int64_t> listed_bytes(const std::vector<NvmlProcessInfo>& processes, Belongs belongs, bool& listed) {
  listed = false;
  std::int64_t bytes = 0;
  for (const NvmlProcessInfo& p : processes) {
    if (!belongs(static_cast<pid_t>(p.pid))) continue;
    if (p.used_gpu_memory == kNvmlValueNotAvailable) return std::nullopt;
    listed = true;
    bytes += static_cast<std::int64_t>(p.used_gpu_memory);
  }
  return bytes;
}

}  // namespace

std::optional<Reading> process_memory(pid_t pid) {
  const Nvml& nvml = Nvml::get();
  if (nvml.problem()) return std::nullopt;
  const auto processes = nvml.processes();
  if (!processes) return std::nullopt;
  bool listed = false;
  const auto summed = listed_bytes(*processes, [&](pid_t p) { return p == pid; }, listed);
  if (!summed) return std::nullopt;
  const std::int64_t bytes = *summed;
  if (listed) return Reading{bytes, fmt::format("NVML: used GPU memory of process {}", pid)};
  if (!maps_cuda_driver(pid) || unlisted_means_no_context(*processes))
    return Reading{0, fmt::format("NVML: process {} holds no CUDA context (no device memory)", pid)};
  return std::nullopt;
}

namespace {

// The process group of `pid` (/proc/<pid>/stat, the field after the state), or -1.
pid_t process_group_of(pid_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(text.substr(close + 1));
  std::string state;
  long ppid = 0, pgrp = -1;
  if (!(rest >> state >> ppid >> pgrp)) return -1;
  return static_cast<pid_t>(pgrp);
}

}  // namespace

std::optional<Reading> process_group_memory(pid_t pgid) {
  const Nvml& nvml = Nvml::get();
  if (nvml.problem()) return std::nullopt;
  const auto processes = nvml.processes();
  if (!processes) return std::nullopt;
  bool listed = false;
  const auto summed =
      listed_bytes(*processes, [&](pid_t pid) { return pid == pgid || process_group_of(pid) == pgid; }, listed);
  if (!summed) return std::nullopt;
  const std::int64_t bytes = *summed;
  if (listed) return Reading{bytes, fmt::format("NVML: used GPU memory of process group {}", pgid)};
  if (unlisted_means_no_context(*processes))
    return Reading{0, fmt::format("NVML: no process of group {} holds a CUDA context (no device memory)", pgid)};
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (process_group_of(pid) == pgid && maps_cuda_driver(pid)) return std::nullopt;
  }
  return Reading{0, fmt::format("NVML: no process of group {} has loaded the CUDA driver (no device memory)", pgid)};
}

std::optional<Reading> device_used() {
  const Nvml& nvml = Nvml::get();
  if (nvml.problem()) return std::nullopt;
  const auto used = nvml.used();
  if (!used) return std::nullopt;
  return Reading{*used, "NVML: memory in use on the whole device (every process on it counts)", true};
}

void DeviceLock::lock() {
  mutex_.lock();
  if (depth_++ == 0) ++holds_;
}

void DeviceLock::unlock() {
  --depth_;
  mutex_.unlock();
}

std::uint64_t DeviceLock::holds() const { return holds_; }

DeviceLock& in_process_device_lock() {
  static DeviceLock lock;
  return lock;
}

void RetainedCounter::add(const Reading& before, const Reading& after) {
  const std::string source = before.source == after.source
                                 ? fmt::format("growth during its own evaluations; {}", after.source)
                                 : fmt::format("growth during its own evaluations; mixed: {} / {}", before.source,
                                               after.source);
  if (any_ && source != source_) {  // a new kind of measurement starts a new total
    bytes_ = 0;
    whole_device_ = false;
  }
  source_ = source;
  bytes_ += after.bytes - before.bytes;
  whole_device_ = whole_device_ || before.whole_device || after.whole_device;
  any_ = true;
}

std::optional<Reading> RetainedCounter::total() const {
  if (!any_) return std::nullopt;
  return Reading{bytes_, source_, whole_device_};
}

void RetainedMeter::run(MemoryFigures figures, const std::function<std::optional<Reading>()>& read,
                        const std::function<void()>& evaluate) {
  DeviceLock& lock = in_process_device_lock();
  std::lock_guard guard(lock);
  if (figures == MemoryFigures::unread) {
    evaluate();
    anchor_.reset();
    return;
  }
  const bool held_since_anchor = anchor_ && !anchor_->whole_device && lock.holds() == anchor_holds_;
  if (figures == MemoryFigures::counted && held_since_anchor) {
    evaluate();
    return;
  }
  const std::optional<Reading> before = held_since_anchor ? anchor_ : read();
  evaluate();
  anchor_ = read();
  anchor_holds_ = lock.holds();
  if (before && anchor_) counter_.add(*before, *anchor_);
}

std::optional<Reading> RetainedMeter::total() const { return counter_.total(); }

}  // namespace gnncheck::device_memory

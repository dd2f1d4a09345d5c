// gnncheck/core/memory_figures.h — the vocabulary of memory figures: when an evaluation's are read
// (Case::memory_figures) and what one device-memory reading is (System::measured_device_bytes).
//
// Memory readings are driver calls (NVML, a device synchronization) that cost more than a small
// case's arithmetic, and only the resources check uses them. It asks for them on the evaluations
// whose figures its criteria compare (checks/resources.h) and marks the others of its series
// `counted`: their readings may be skipped, but whatever memory they leave behind must still show
// in the next figures read. How the figures are taken is platform/device_memory.h's business.
#pragma once

#include <cstdint>
#include <string>

namespace gnncheck {

enum class MemoryFigures {
  unread,   // no check reads them: take no reading
  counted,  // an evaluation of a resources series whose figures are not read
  read,     // read after this evaluation: live_bytes(), peak_bytes, device memory
};

namespace device_memory {

// One reading and how it was taken ("NVML: used GPU memory of process 1234", …): readings with
// different sources are not comparable, and the resources check refuses to compare them.
struct Reading {
  std::int64_t bytes = 0;
  std::string source;
  bool whole_device = false;  // every process on the device counts in it, not this one alone
};

}  // namespace device_memory
}  // namespace gnncheck

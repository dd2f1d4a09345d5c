// gnncheck/core/memory_figures.h — what an evaluation's memory figures are for (Case::memory_figures).
//
// Memory readings are driver calls (NVML, a device synchronization) that cost more than a small
// case's arithmetic, and only the resources check uses them. It asks for them on the evaluations
// whose figures its criteria compare (checks/resources.h) and marks the others of its series
// `counted`: their readings may be skipped, but whatever memory they leave behind must still show
// in the next figures read (core/device_memory.h, RetainedMeter).
#pragma once

namespace gnncheck {

enum class MemoryFigures {
  unread,   // no check reads them: take no reading
  counted,  // an evaluation of a resources series whose figures are not read
  read,     // read after this evaluation: live_bytes(), peak_bytes, device memory
};

}  // namespace gnncheck

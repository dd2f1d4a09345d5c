// gnncheck/core/process_memory.h — how a program's heap is kept and backed.
//
// Evaluating many cases allocates and frees the same large tensors over and over; glibc serves
// blocks that large with mmap and unmaps them on free, so each evaluation faults them in again
// (measured: 2.4× the CPU time of a Cora GCN training run, 4× the selfcheck on a virtual machine).
// retain_freed_memory_in_process() tells glibc never to mmap and to keep up to 1 GiB of freed heap
// mapped. It changes malloc for the whole process, so only a program's main() (or a test program)
// calls it, never a library function; results are unaffected. A no-op outside glibc.
//
//   int main() { gnncheck::retain_freed_memory_in_process(); ... }
//
// LargeTensorsOnHugePages: while one is alive (in any thread), every DenseTensor of at least
// kHugePageTensorBytes asks the kernel for transparent huge pages (madvise MADV_HUGEPAGE) before its
// first touch, so zero-filling or copying it takes one page fault per 2 MiB instead of per 4 KiB.
// The scale check's oracle part — fresh tensors of a neighbourhood with 10^7 edges, filled mostly on
// one thread — spends much of its time in those faults (scale/README.md, "Huge pages for the
// oracle's tensors"). Values never change; where transparent huge pages are off (or not Linux) the
// advice is ignored.
//
//   { gnncheck::LargeTensorsOnHugePages scope; evaluate(...); }
#pragma once

#include <cstddef>

namespace gnncheck {

void retain_freed_memory_in_process();

inline constexpr std::size_t kHugePageTensorBytes = std::size_t{8} << 20;

class LargeTensorsOnHugePages {
 public:
  LargeTensorsOnHugePages();
  ~LargeTensorsOnHugePages();
  LargeTensorsOnHugePages(const LargeTensorsOnHugePages&) = delete;
  LargeTensorsOnHugePages& operator=(const LargeTensorsOnHugePages&) = delete;
};

// Whether a LargeTensorsOnHugePages is alive now.
bool large_tensors_on_huge_pages();

// The whole 2 MiB pages inside [data, data + bytes) marked MADV_HUGEPAGE, when a
// LargeTensorsOnHugePages is alive and bytes ≥ kHugePageTensorBytes; otherwise nothing.
void advise_huge_pages(void* data, std::size_t bytes);

}  // namespace gnncheck

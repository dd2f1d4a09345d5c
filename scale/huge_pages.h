// gnncheck/scale/huge_pages.h — the scale check's oracle tensors on transparent huge pages.
//
// LargeTensorsOnHugePages: while one is alive (in any thread), every DenseTensor of at least
// kHugePageTensorBytes asks the kernel for transparent huge pages (madvise MADV_HUGEPAGE) before its
// first touch, so zero-filling or copying it takes one page fault per 2 MiB instead of per 4 KiB.
// The scale check's oracle part — fresh tensors of a neighbourhood with 10^7 edges, filled mostly on
// one thread — spends much of its time in those faults (docs/scale-figures.md, "Huge pages for the
// oracle's tensors"). It reaches the tensors through core's fresh-memory hook (core/tensor.h),
// which the first scope sets. Values never change; where transparent huge pages are off (or not
// Linux) the advice is ignored.
//
//   { gnncheck::LargeTensorsOnHugePages scope; evaluate(...); }
#pragma once

#include <cstddef>

namespace gnncheck {

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

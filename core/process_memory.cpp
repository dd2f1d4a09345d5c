#include "core/process_memory.h"

#include <atomic>
#include <cstdint>

#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gnncheck {

void retain_freed_memory_in_process() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

namespace {
std::atomic<int> huge_page_scopes{0};
}  // namespace

LargeTensorsOnHugePages::LargeTensorsOnHugePages() { huge_page_scopes.fetch_add(1, std::memory_order_relaxed); }
LargeTensorsOnHugePages::~LargeTensorsOnHugePages() { huge_page_scopes.fetch_sub(1, std::memory_order_relaxed); }

bool large_tensors_on_huge_pages() { return huge_page_scopes.load(std::memory_order_relaxed) > 0; }

void advise_huge_pages(void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < kHugePageTensorBytes || !large_tensors_on_huge_pages()) return;
  constexpr std::uintptr_t page = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t first = (begin + page - 1) & ~(page - 1), last = (begin + bytes) & ~(page - 1);
  // Advice only: a kernel without transparent huge pages refuses it, and the tensor is the same.
  if (last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace gnncheck

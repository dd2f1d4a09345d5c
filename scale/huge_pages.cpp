#include "scale/huge_pages.h"

#include <atomic>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/tensor.h"

namespace gnncheck {

namespace {
std::atomic<int> huge_page_scopes{0};
}  // namespace

// The first scope sets core's fresh-memory hook and it stays set: it does nothing while no scope is
// alive, so a scope costs no more than a counter.
LargeTensorsOnHugePages::LargeTensorsOnHugePages() {
  huge_page_scopes.fetch_add(1, std::memory_order_relaxed);
  static const FreshMemoryHook hooked = (set_fresh_memory_hook(&advise_huge_pages), &advise_huge_pages);
  (void)hooked;
}
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

#include "platform/process_heap.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace gnncheck {

void retain_freed_memory_in_process() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

}  // namespace gnncheck

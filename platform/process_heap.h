// gnncheck/platform/process_heap.h — how a program's heap keeps freed memory.
//
// Evaluating many cases allocates and frees the same large tensors over and over; glibc serves
// blocks that large with mmap and unmaps them on free, so each evaluation faults them in again
// (measured: 2.4× the CPU time of a Cora GCN training run, 4× the selfcheck on a virtual machine).
// retain_freed_memory_in_process() tells glibc never to mmap and to keep up to 1 GiB of freed heap
// mapped. It changes malloc for the whole process, so only a program's main() (or a test program)
// calls it, never a library function; results are unaffected. A no-op outside glibc.
//
//   int main() { gnncheck::retain_freed_memory_in_process(); ... }
#pragma once

namespace gnncheck {

void retain_freed_memory_in_process();

}  // namespace gnncheck

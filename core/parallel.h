// gnncheck/core/parallel.h — when a loop is worth an OpenMP parallel region.
//
// Below kParallelMinWork units of work a loop runs on one thread: starting a parallel region costs
// more than the work, and on a busy machine waiting for a descheduled thread costs far more. The
// decision never changes any element's arithmetic, so results stay bit-identical.
//
//   #pragma omp parallel for schedule(static) if (gnncheck::worth_parallel(n))
#pragma once

#include "core/tensor.h"

namespace gnncheck {

inline constexpr index_t kParallelMinWork = index_t{1} << 15;
inline constexpr bool worth_parallel(index_t work) { return work >= kParallelMinWork; }

}  // namespace gnncheck

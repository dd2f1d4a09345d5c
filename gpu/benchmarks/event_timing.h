// gnncheck/gpu/benchmarks/event_timing.h — device time of repeated calls, measured with CUDA events.
//
// event_times_ms runs `work` `warmup` times untimed, then `runs` times, each between two events on
// `stream` (synchronized after each call), and returns the `runs` durations in milliseconds, sorted
// ascending; each benchmark takes its median from them.
//
//   const auto ms = gnncheck::gpu::event_times_ms(ctx.stream, [&] { spmm_forward(...); }, 3, 10);
//   const double median = ms[ms.size() / 2];
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "gpu/cuda_check.h"

namespace gnncheck::gpu {

inline std::vector<float> event_times_ms(cudaStream_t stream, const std::function<void()>& work, int warmup, int runs) {
  for (int i = 0; i < warmup; ++i) work();
  cudaEvent_t start, stop;
  GNNCHECK_CUDA_CHECK(cudaEventCreate(&start));
  GNNCHECK_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int i = 0; i < runs; ++i) {
    GNNCHECK_CUDA_CHECK(cudaEventRecord(start, stream));
    work();
    GNNCHECK_CUDA_CHECK(cudaEventRecord(stop, stream));
    GNNCHECK_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    GNNCHECK_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  GNNCHECK_CUDA_CHECK(cudaEventDestroy(start));
  GNNCHECK_CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return ms;
}

}  // namespace gnncheck::gpu

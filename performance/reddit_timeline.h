// gnncheck/performance/reddit_timeline.h — framework overhead as the paper measures it: per
// iteration, wall time (host clock, device barrier at the end) against GPU-busy time (CUDA events
// recorded around every op region on the one stream), and the share of wall time the GPU is idle.
//
// All work runs on one stream, so the regions do not overlap and their sum is the busy time. A
// region's events bracket the op's kernels and library calls; launch gaps between regions, host
// work and host-side synchronizations are what the idle share measures. Disabled timelines record
// nothing (the timed epochs run without events; the overhead epochs with them).
//
//   OpTimeline t(ctx.stream, /*enabled=*/true);
//   t.begin_iteration();
//   t.region("spmm", [&] { spmm_forward(ctx, g, x, f, y); });
//   IterationTiming it = t.end_iteration();   // synchronizes
//   it.idle_share();
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "gpu/cuda_check.h"

namespace gnncheck::perf {

struct IterationTiming {
  double wall_ms = 0;
  double busy_ms = 0;                        // Σ of the regions (0 when the timeline is disabled)
  std::map<std::string, double> busy_by_op;  // per op kind
  double idle_share() const { return wall_ms > 0 ? 1.0 - busy_ms / wall_ms : 0.0; }
};

class OpTimeline {
 public:
  OpTimeline(cudaStream_t stream, bool enabled) : stream_(stream), enabled_(enabled) {}
  ~OpTimeline() {
    for (auto& [start, stop] : pool_) {
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
    }
  }
  OpTimeline(const OpTimeline&) = delete;
  OpTimeline& operator=(const OpTimeline&) = delete;

  bool enabled() const { return enabled_; }

  // Waits for the device, then starts the host clock.
  void begin_iteration() {
    GNNCHECK_CUDA_CHECK(cudaStreamSynchronize(stream_));
    used_ = 0;
    kinds_.clear();
    start_ = std::chrono::steady_clock::now();
  }

  template <class Work>
  void region(const char* kind, Work&& work) {
    if (!enabled_) {
      work();
      return;
    }
    if (used_ == pool_.size()) {
      std::pair<cudaEvent_t, cudaEvent_t> events;
      GNNCHECK_CUDA_CHECK(cudaEventCreate(&events.first));
      GNNCHECK_CUDA_CHECK(cudaEventCreate(&events.second));
      pool_.push_back(events);
    }
    auto& [start, stop] = pool_[used_++];
    kinds_.push_back(kind);
    GNNCHECK_CUDA_CHECK(cudaEventRecord(start, stream_));
    work();
    GNNCHECK_CUDA_CHECK(cudaEventRecord(stop, stream_));
  }

  // Synchronizes the stream (the device barrier) and reads the clock and the events.
  IterationTiming end_iteration() {
    GNNCHECK_CUDA_CHECK(cudaStreamSynchronize(stream_));
    IterationTiming t;
    t.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    for (size_t k = 0; k < used_; ++k) {
      float ms = 0;
      GNNCHECK_CUDA_CHECK(cudaEventElapsedTime(&ms, pool_[k].first, pool_[k].second));
      t.busy_ms += ms;
      t.busy_by_op[kinds_[k]] += ms;
    }
    return t;
  }

 private:
  cudaStream_t stream_;
  bool enabled_;
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> pool_;
  std::vector<std::string> kinds_;
  size_t used_ = 0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace gnncheck::perf

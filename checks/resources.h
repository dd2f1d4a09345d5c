// gnncheck/checks/resources.h — the growth criterion of the `resources` check, for memory series
// that move in whole driver pages (device memory as NVML or cudaMemGetInfo count it).
//
// A series of readings, one after each evaluation of the same case; the first `warmup` evaluations
// may allocate anything. The growth is the last reading minus the first one after warm-up, held to
// one page: a correct system's device memory stays within it after warm-up, and a per-call leak of
// at least detectable_leak_bytes() exceeds it whatever the phase of the driver's pages (derivation:
// checks/README.md, "resources").
//
//   const checks::PageGrowthCriterion criterion{.evaluations = 67, .warmup = 2, .page_bytes = 2 << 20};
//   criterion.detectable_leak_bytes();            // 65536: 64 KiB per call is always caught
//   const checks::SeriesGrowth g = criterion.assess(readings);
//   if (g.exceeds()) fmt::print("grew {} bytes (allowed {})\n", g.growth, g.allowance);
#pragma once

#include <cstdint>
#include <vector>

namespace gnncheck::checks {

// The growth of one series over the evaluations after warm-up.
struct SeriesGrowth {
  std::int64_t first = 0;      // the reading after the first evaluation after warm-up
  std::int64_t last = 0;       // the reading after the last evaluation
  std::int64_t growth = 0;     // last − first
  std::int64_t allowance = 0;  // what a correct system may gain (one page)
  bool exceeds() const { return growth > allowance; }
};

struct PageGrowthCriterion {
  int evaluations = 0;          // n: readings in the series
  int warmup = 0;               // w: the first w evaluations may allocate anything
  std::int64_t page_bytes = 0;  // the readings' granularity, and the allowance

  // Evaluations between the first reading after warm-up and the last: n − w − 1.
  int window() const { return evaluations - warmup - 1; }
  // The smallest leak per call that always makes the growth exceed one page: ⌈2·page / window⌉. A
  // leak L leaves at least L·window − s more bytes mapped at the end, s < one page being the room the
  // driver had left in its pages at the first reading; the readings move in whole pages, so growth
  // > L·window − page ≥ page once L·window ≥ 2·page. 0 when the window is empty.
  std::int64_t detectable_leak_bytes() const;
  // The growth of `readings` (evaluations entries; InputError otherwise, or when window() < 1).
  SeriesGrowth assess(const std::vector<std::int64_t>& readings) const;
};

}  // namespace gnncheck::checks

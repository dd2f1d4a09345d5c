// gnncheck/checks/resources.h — the growth criteria of the `resources` check: for memory series
// that move in whole driver pages (device memory as NVML or cudaMemGetInfo count it), and for the
// exact counters a system reports about itself (live_bytes(), peak_bytes).
//
// A series of readings, one after each evaluation of the same case; the first `warmup` evaluations
// may allocate anything. The growth is the last reading minus the first one after warm-up, held to
// one page: a correct system's device memory stays within it after warm-up, and a per-call leak of
// at least detectable_leak_bytes() exceeds it whatever the phase of the driver's pages (derivation:
// checks/resources.md).
//
//   const checks::PageGrowthCriterion criterion{.evaluations = 67, .warmup = 2, .page_bytes = 2 << 20};
//   criterion.detectable_leak_bytes();            // 65536: 64 KiB per call is always caught
//   const checks::SeriesGrowth g = criterion.assess(readings);
//   if (g.exceeds()) fmt::print("grew {} bytes (allowed {})\n", g.growth, g.allowance);
//
// CounterGrowthCriterion compares the least of the first `block()` readings after warm-up with the
// least of the last ones: a counter read while the system's own threads are still releasing the
// evaluation's memory (torch's autograd device threads) reads high, never low, so a single high
// reading is not growth — and a counter that grows by any byte per call still grows between the
// two blocks. On a long series a third block in the middle splits the window in two halves, and
// growth must show in both: a leak grows every half, while a one-time allocation after warm-up (a
// lazily built cache, a library's handle) steps once (checks/resources.md, "Steps are not
// leaks").
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace gnncheck::checks {

// A series: one entry per evaluation, a value where its figures were read (Case::memory_figures).
// assess() needs the readings its uses_reading() names, and no other.
using Readings = std::vector<std::optional<std::int64_t>>;

// The growth of one series over the evaluations after warm-up.
struct SeriesGrowth {
  std::int64_t first = 0;      // the reading after the first evaluation after warm-up
  std::int64_t last = 0;       // the reading after the last evaluation
  std::int64_t growth = 0;     // last − first
  std::int64_t allowance = 0;  // what a correct system may gain (one page)
  // The reading between them where the criterion splits the window in halves; then growth exceeds
  // the allowance only when each half gains more than half of it (a step inside one half does not).
  std::optional<std::int64_t> middle;
  // The most the readings moved inside one block (largest max − min of a block; 0 for blocks of
  // one reading): how far a reading may stray from its block's floor without any growth.
  std::int64_t spread = 0;
  std::int64_t first_half() const { return middle ? *middle - first : growth; }
  std::int64_t second_half() const { return middle ? last - *middle : growth; }
  bool exceeds() const {
    if (!middle) return growth > allowance;
    return 2 * first_half() > allowance && 2 * second_half() > allowance;
  }
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
  // Whether assess() reads reading k: the first after warm-up and the last.
  bool uses_reading(int k) const { return k == warmup || k == evaluations - 1; }
  // The growth of `readings` (evaluations entries, each one uses_reading() names present; InputError
  // otherwise, or when window() < 1).
  SeriesGrowth assess(const Readings& readings) const;
  SeriesGrowth assess(const std::vector<std::int64_t>& readings) const;
};

struct CounterGrowthCriterion {
  int evaluations = 0;  // n: readings in the series
  int warmup = 0;       // w

  static constexpr int kBlock = 8;
  // k: kBlock readings at each end when the n − w readings after warm-up hold two whole blocks,
  // else 1 (the short series: the last reading against the first after warm-up).
  int block() const { return evaluations - warmup >= 2 * kBlock ? kBlock : 1; }
  // Calls between the first block's first reading and the last block's first: n − w − k. A counter
  // that gains L > 0 bytes per call grows by at least L times this between the two minima.
  int window() const { return evaluations - warmup - block(); }
  // A middle block when the readings after warm-up hold three whole blocks of kBlock: it starts
  // window() / 2 calls after the first, so the halves span ⌊window/2⌋ and ⌈window/2⌉ calls.
  bool has_middle() const { return block() > 1 && evaluations - warmup >= 3 * block(); }
  int middle_start() const { return warmup + window() / 2; }
  // The calls the shorter half spans (the whole window without a middle block): a counter gaining
  // L bytes per call gains at least L times this in each half.
  int half_window() const { return has_middle() ? window() / 2 : window(); }
  // Whether assess() reads reading k: the blocks.
  bool uses_reading(int k) const {
    return (k >= warmup && k < warmup + block()) || (k >= evaluations - block() && k < evaluations) ||
           (has_middle() && k >= middle_start() && k < middle_start() + block());
  }
  // first = min(r_w … r_(w+k−1)), last = min(r_(n−k) … r_(n−1)), middle = the least of the middle
  // block where there is one, growth = last − first, spread = the largest max − min of a block,
  // allowance 0 (the caller may set another).
  // InputError for a count of readings other than n, a reading of the blocks missing, or window() < 1.
  SeriesGrowth assess(const Readings& readings) const;
  SeriesGrowth assess(const std::vector<std::int64_t>& readings) const;
};

}  // namespace gnncheck::checks

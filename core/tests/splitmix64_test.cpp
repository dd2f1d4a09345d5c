#include "core/splitmix64.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

namespace gnncheck {
namespace {

// The first outputs of the reference generator (Vigna, splitmix64.c) from seed 0.
TEST(SplitMix64, MatchesTheReferenceStream) {
  SplitMix64 rng(0);
  EXPECT_EQ(rng(), 0xE220A8397B1DCDAFULL);
  EXPECT_EQ(rng(), 0x6E789E6AA1B965F4ULL);
  EXPECT_EQ(rng(), 0x06C45D188009454FULL);
}

TEST(SplitMix64, HashIsOneStepOfTheStream) {
  for (std::uint64_t x : {0ULL, 1ULL, 42ULL, ~0ULL}) {
    SplitMix64 rng(x);
    EXPECT_EQ(rng(), splitmix64(x));
    EXPECT_EQ(splitmix64(x), mix64(x + kSplitMix64Gamma));
  }
  static_assert(splitmix64(0) == 0xE220A8397B1DCDAFULL, "usable in constant expressions");
}

TEST(SplitMix64, BelowIsInRangeAndHitsEveryValue) {
  SplitMix64 rng(7);
  std::array<int, 5> seen{};
  for (int k = 0; k < 1000; ++k) {
    const std::uint64_t v = rng.below(5);
    ASSERT_LT(v, 5u);
    ++seen[v];
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n > 0; }));
  EXPECT_EQ(SplitMix64(3).below(1), 0u);
}

TEST(SplitMix64, IsAUniformRandomBitGenerator) {
  std::array<int, 8> values{};
  std::iota(values.begin(), values.end(), 0);
  SplitMix64 a(11), b(11);
  std::array<int, 8> shuffled_a = values, shuffled_b = values;
  std::shuffle(shuffled_a.begin(), shuffled_a.end(), a);
  std::shuffle(shuffled_b.begin(), shuffled_b.end(), b);
  EXPECT_EQ(shuffled_a, shuffled_b);
}

}  // namespace
}  // namespace gnncheck

// gnncheck/core/splitmix64.h — the one 64-bit hash and counter-based random stream gnncheck uses.
//
// SplitMix64 (Steele, Lea & Flood 2014). mix64 is its finalizer, a bijection on 64-bit words;
// splitmix64(x) = mix64(x + γ) is one step from state x; SplitMix64 is the stream itself, a
// UniformRandomBitGenerator. Written once here and callable from CUDA device code, so a seed gives
// the same numbers in every part (host, device, oracle and system under test).
//
//   std::uint64_t h = gnncheck::splitmix64(seed ^ index);   // a counter-based hash
//   gnncheck::SplitMix64 rng(seed);  std::uint64_t k = rng.below(n);   // exact uniform in [0, n)
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GNNCHECK_HOST_DEVICE __host__ __device__
#else
#define GNNCHECK_HOST_DEVICE
#endif

namespace gnncheck {

// γ, the golden-ratio increment of the stream (2^64 / φ, odd).
inline constexpr std::uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ULL;

GNNCHECK_HOST_DEVICE constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

GNNCHECK_HOST_DEVICE constexpr std::uint64_t splitmix64(std::uint64_t x) { return mix64(x + kSplitMix64Gamma); }

class SplitMix64 {
 public:
  using result_type = std::uint64_t;
  GNNCHECK_HOST_DEVICE constexpr explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  GNNCHECK_HOST_DEVICE constexpr result_type operator()() {
    state_ += kSplitMix64Gamma;
    return mix64(state_);
  }
  // Uniform in [0, n) for n ≥ 1, exactly (rejection of the biased tail of the 64-bit range).
  GNNCHECK_HOST_DEVICE constexpr std::uint64_t below(std::uint64_t n) {
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
    std::uint64_t r = (*this)();
    while (r >= limit) r = (*this)();
    return r % n;
  }

 private:
  std::uint64_t state_;
};

}  // namespace gnncheck

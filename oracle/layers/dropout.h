// gnncheck/oracle/layers/dropout.h — deterministic dropout masks any system can reproduce.
//
// A mask element is a pure function of (seed, index): no generator state, no dependence on thread
// count or on the order elements are visited, so a GPU kernel, an external process and the oracle
// all draw the same mask for the same seed. The uniform variate is SplitMix64 applied twice:
//   u(seed, i) = (splitmix64(seed + splitmix64(i)) >> 11) · 2^-53 ∈ [0, 1)
// and the element is kept when u ≥ p, then scaled by 1 / (1 − p) (inverted dropout).
//
//   if (layers::dropout_keeps(seed, e * heads + h, 0.6)) alpha *= layers::dropout_scale(0.6);
#pragma once

#include <cstdint>

#include "core/splitmix64.h"

namespace gnncheck::oracle::layers {

// Uniform in [0, 1) from (seed, index), 53 random bits.
constexpr double dropout_uniform(std::uint64_t seed, std::uint64_t index) {
  return static_cast<double>(splitmix64(seed + splitmix64(index)) >> 11) * 0x1.0p-53;
}

// Whether element `index` survives dropout with drop probability p (p = 0 keeps everything).
constexpr bool dropout_keeps(std::uint64_t seed, std::uint64_t index, double p) {
  return p <= 0.0 || dropout_uniform(seed, index) >= p;
}

// The factor a kept element is multiplied by.
constexpr double dropout_scale(double p) { return 1.0 / (1.0 - p); }

// A seed for one use of dropout (e.g. epoch 7, layer 1) derived from a base seed.
constexpr std::uint64_t derive_seed(std::uint64_t base, std::uint64_t a, std::uint64_t b = 0) {
  return splitmix64(splitmix64(base ^ splitmix64(a)) ^ splitmix64(b + 0x632BE59BD9B4E019ULL));
}

}  // namespace gnncheck::oracle::layers

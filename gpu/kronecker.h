// gnncheck/gpu/kronecker.h — the definition of the Graph500 Kronecker graph, one per-edge function
// that the device generator (gpu/kronecker.cuh) and the host (scale/graph_spec.h) both run, so the
// same (scale, edge factor, a, b, c, seed) gives the same graph on either side.
//
// 2^scale nodes, edge_factor·2^scale generated edges; edge k descends `scale` levels of the 2×2
// initiator [a b; c d] (d = 1 − a − b − c) with draws that are a hash of (seed, k, level) — no
// generator state, so neither thread order nor host/device changes a draw; node labels are then
// scrambled by a seeded bijection of [0, 2^scale). The graph keeps every edge in both directions,
// drops self-loops and duplicates, and lists each row's columns in ascending order.
// Header-only and free of CUDA includes: compiled by nvcc (host and device) and by the host compiler.
//
//   gnncheck::gpu::KroneckerEdge e = gnncheck::gpu::kronecker_edge({.scale = 20, .seed = 1}, 17);
#pragma once

#include <cstdint>

#include "core/splitmix64.h"  // also defines GNNCHECK_HOST_DEVICE

namespace gnncheck::gpu {

struct KroneckerParams {
  int scale = 10;
  std::int64_t edge_factor = 16;
  double a = 0.57, b = 0.19, c = 0.19;
  std::uint64_t seed = 1;
};

// The k-th generated edge (before symmetrizing) as (source, destination) labels after the scramble.
struct KroneckerEdge {
  std::uint32_t src = 0, dst = 0;
};

namespace kronecker_detail {

// A seeded bijection of [0, 2^scale): odd multipliers and xor-shifts are each invertible mod 2^scale.
GNNCHECK_HOST_DEVICE inline std::uint64_t scramble(std::uint64_t x, int scale, std::uint64_t seed) {
  const std::uint64_t mask = (std::uint64_t{1} << scale) - 1;
  const int shift = (scale + 1) / 2;
  const std::uint64_t m1 = splitmix64(seed ^ 0x5851F42D4C957F2Dull) | 1, c1 = splitmix64(seed ^ 0x14057B7EF767814Full);
  const std::uint64_t m2 = splitmix64(seed ^ 0x2545F4914F6CDD1Dull) | 1, c2 = splitmix64(seed ^ 0x9E3779B97F4A7C15ull);
  x = (x * m1 + c1) & mask;
  x ^= x >> shift;
  x = (x * m2 + c2) & mask;
  x ^= x >> shift;
  return x;
}

}  // namespace kronecker_detail

GNNCHECK_HOST_DEVICE inline KroneckerEdge kronecker_edge(const KroneckerParams& params, std::uint64_t k) {
  // Quadrant thresholds on a 32-bit uniform draw.
  const double two32 = 4294967296.0;
  const std::uint64_t t_a = static_cast<std::uint64_t>(params.a * two32);
  const std::uint64_t t_ab = static_cast<std::uint64_t>((params.a + params.b) * two32);
  const std::uint64_t t_abc = static_cast<std::uint64_t>((params.a + params.b + params.c) * two32);
  const std::uint64_t edge_key = splitmix64(params.seed ^ splitmix64(k));
  std::uint64_t row = 0, col = 0, bits = 0;
  for (int level = 0; level < params.scale; ++level) {
    if (level % 2 == 0) bits = splitmix64(edge_key + static_cast<std::uint64_t>(level));  // two 32-bit draws
    const std::uint64_t r = level % 2 == 0 ? (bits & 0xFFFFFFFFull) : (bits >> 32);
    const std::uint64_t row_bit = r >= t_ab ? 1 : 0;
    const std::uint64_t col_bit = (r >= t_a && r < t_ab) || r >= t_abc ? 1 : 0;
    row = (row << 1) | row_bit;
    col = (col << 1) | col_bit;
  }
  const std::uint64_t label_seed = splitmix64(params.seed + 0xA5A5A5A5A5A5A5A5ull);
  return {static_cast<std::uint32_t>(kronecker_detail::scramble(row, params.scale, label_seed)),
          static_cast<std::uint32_t>(kronecker_detail::scramble(col, params.scale, label_seed))};
}

}  // namespace gnncheck::gpu

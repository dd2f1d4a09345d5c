// gnncheck/gpu/kronecker.cuh — a deterministic Graph500 Kronecker (R-MAT) graph generated on the
// device, for training at scales beyond what the host can build (scale 27: 134M nodes, ~4.3
// billion directed edges).
//
// Definition (the one of the PyG figures in ../shared/device/README.md): 2^scale nodes,
// edge_factor·2^scale generated edges; each edge descends `scale` levels of the 2×2 initiator
// [a b; c d] (a, b, c = .57, .19, .19, d = 1 − a − b − c); node labels are then scrambled by a
// seeded bijection of [0, 2^scale) (as Graph500 does, so that degree does not follow the id);
// every edge is stored in both directions; self-loops and duplicates are removed. The result is
// a symmetric CSR (A = Aᵀ) with sorted rows.
//
// Same graph for the same (scale, edge_factor, a, b, c, seed): every random draw is a hash of
// (seed, edge index, level) — no generator state, so the order threads run in does not matter —
// and the sort and unique that follow are deterministic. The per-edge function lives in
// gpu/kronecker.h, which the host runs too (scale::build_graph builds the same CSR on the CPU).
//
// Memory: the generation holds 2 × 2·edge_factor·2^scale 8-byte keys (sort double buffer) plus
// CUB's temporary storage, all from ctx.allocator, and frees them before returning; what is kept
// is row_ptr (8 bytes per node) and col_idx (4 bytes per edge). Scale ≤ 30 (keys pack two node
// ids of `scale` bits into 64 bits).
//
//   gnncheck::gpu::KroneckerGraph k = gnncheck::gpu::generate_kronecker(ctx, {.scale = 20, .seed = 1});
//   gnncheck::gpu::DeviceGraph g(ctx, k.nodes, k.nodes, std::move(k.row_ptr), std::move(k.col_idx));
#pragma once

#include <cstdint>

#include "gpu/context.h"
#include "gpu/device_graph.h"
#include "gpu/kronecker.h"  // KroneckerParams, kronecker_edge: the definition, shared with the host

namespace gnncheck::gpu {

struct KroneckerGraph {
  std::int64_t nodes = 0;
  std::int64_t generated_edges = 0;  // edge_factor · 2^scale draws, before symmetrizing and removals
  DeviceBuffer<offset_t> row_ptr;    // [nodes + 1]
  DeviceBuffer<node_t> col_idx;      // [row_ptr[nodes]] sorted within each row
  std::int64_t num_edges() const { return col_idx.size(); }
};

// Seconds spent in each phase of one generation, each ended by a device synchronization (so they
// add up to the whole generation).
struct KroneckerTimings {
  double draw_s = 0;    // hashing every edge's `scale` levels into 2·generated 64-bit keys
  double sort_s = 0;    // CUB radix sort of the keys over 2·scale bits
  double unique_s = 0;  // CUB unique (duplicates) and dropping the self-loop sentinel
  double csr_s = 0;     // col_idx from the keys, row_ptr by binary search, freeing the keys
};

// Throws InputError for scale outside [1, 30], edge_factor < 1, or a, b, c that are not
// probabilities summing to at most 1. `timings`, if given, receives the phase times.
KroneckerGraph generate_kronecker(GpuContext& ctx, const KroneckerParams& params,
                                  KroneckerTimings* timings = nullptr);

}  // namespace gnncheck::gpu

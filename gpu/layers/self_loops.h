// gnncheck/gpu/layers/self_loops.h — A + I for the GPU layers, written here rather than borrowed
// from the oracle, so that a mistake in either shows in the gpu-vs-oracle comparisons
// (gpu_host_test holds the two to the same graph).
//
//   const Graph a_plus_i = gpu::append_self_loops(g);   // (i, i) after row i's edges, n_dst ≤ n_src
#pragma once

#include "core/graph.h"

namespace gnncheck::gpu {

// Row i of the result is row i of g followed by the edge (i, i), for every destination i; existing
// self-loops are kept (Kipf & Welling add I whatever A holds). Needs n_dst ≤ n_src (the block
// convention: destination i is source i); the layers check that before calling.
Graph append_self_loops(const Graph& g);

}  // namespace gnncheck::gpu

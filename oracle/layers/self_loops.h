// gnncheck/oracle/layers/self_loops.h — how layers relate destination nodes to source nodes.
//
// Layers that use a node's own features (GCN and GAT with self-loops, GIN's (1+ε)·x_i, SAGE's
// W_self·x_i, AGNN) follow the convention of sampled message-flow blocks (DGL, PyG's NeighborLoader):
// the n_dst destinations are the first n_dst sources, so destination i's own features are x[i].
// A square graph satisfies it trivially; a block with n_dst ≤ n_src does too; n_dst > n_src is an
// InputError naming the layer.
//
//   layers::require_destinations_are_sources(g, "gcn");
//   Graph with_loops = layers::with_destination_self_loops(g);  // (i, i) appended to every row
//   AggregationGraph a(g, cfg.self_loops);                        // g itself, or A + I (shared)
//   spmm_ve_forward(*a, values, h);
#pragma once

#include <memory>
#include <string>

#include "core/graph.h"

namespace gnncheck::oracle::layers {

// Throws InputError unless n_dst ≤ n_src.
void require_destinations_are_sources(const Graph& g, const std::string& layer);

// A + I for the block convention: edge (i, i) appended at the end of every row i. On a square
// graph this is exactly Graph::with_self_loops(); existing self-loops are kept (Kipf & Welling add
// I regardless of what A holds).
Graph with_destination_self_loops(const Graph& g);

// with_destination_self_loops(g), shared while it is in use: evaluations of one large case that
// run side by side (the float64 reference, the measured model's float32 and |inputs| evaluations,
// the GAT and AGNN floors: checks/tolerance.h) aggregate over the same A + I, and building it —
// its CSC included — is a pass that allocates ~40 bytes per edge. A graph of at least
// kSharedSelfLoopsMinEdges edges gets the A + I another caller built from the graph at the same
// address, if that one is still alive (or being built) and row for row g's rows with their loops
// appended — checked, so a new graph at a freed graph's address never receives the old one's; any
// other graph gets its own. The same values either way.
inline constexpr index_t kSharedSelfLoopsMinEdges = index_t{1} << 20;
std::shared_ptr<const Graph> shared_destination_self_loops(const Graph& g);

// The graph a layer aggregates over: the caller's graph itself when no self-loops are added (not a
// copy: at Reddit scale a copy is 3 GB of index arrays per forward and per backward), or A + I
// (shared_destination_self_loops). Moving it keeps the graph where it is.
class AggregationGraph {
 public:
  AggregationGraph(const Graph& g, bool self_loops)
      : looped_(self_loops ? shared_destination_self_loops(g) : nullptr), graph_(self_loops ? looped_.get() : &g) {}
  const Graph& operator*() const { return *graph_; }
  const Graph* operator->() const { return graph_; }
 private:
  std::shared_ptr<const Graph> looped_;
  const Graph* graph_;
};

}  // namespace gnncheck::oracle::layers

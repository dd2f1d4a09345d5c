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
//   AggregationGraph a(g, cfg.self_loops);                        // g itself, or A + I built once
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

// The graph a layer aggregates over: the caller's graph itself when no self-loops are added (not a
// copy: at Reddit scale a copy is 3 GB of index arrays per forward and per backward), or A + I,
// built once and owned here. Moving it keeps the graph where it is.
class AggregationGraph {
 public:
  AggregationGraph(const Graph& g, bool self_loops)
      : owned_(self_loops ? std::make_unique<const Graph>(with_destination_self_loops(g)) : nullptr),
        graph_(self_loops ? owned_.get() : &g) {}
  const Graph& operator*() const { return *graph_; }
  const Graph* operator->() const { return graph_; }

 private:
  std::unique_ptr<const Graph> owned_;
  const Graph* graph_;
};

}  // namespace gnncheck::oracle::layers

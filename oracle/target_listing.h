// gnncheck/oracle/target_listing.h — a target's tensors as a user writing an adapter needs them.
//
// For every input, parameter and output of a catalogue entry: its name, where it lives (source or
// destination nodes, edges in edge-id or CSC order, a parameter), whether it is differentiable, and
// its shape in terms of n_dst, n_src, E and the target's attributes ("[n_src, heads·features]").
// The shapes are read off the catalogue's own shape functions (never written twice), evaluated on
// a probe graph and attribute values chosen so that every dimension can be told apart.
//
//   for (const auto& t : gnncheck::oracle::list_tensors(gnncheck::oracle::find_target("gat")))
//     fmt::print("{} {} {}\n", t.name, t.role, t.shape);
#pragma once

#include <string>
#include <vector>

#include "oracle/targets.h"

namespace gnncheck::oracle {

struct TensorListing {
  std::string name;
  std::string role;   // "input", "parameter" or "output"
  std::string lives;  // "src_nodes", "dst_nodes", "edges", "edges_csc", "parameter"
  bool differentiable = false;  // inputs: the system returns its gradient; outputs: it receives ȳ
  std::string shape;  // "[n_src, features]", "[E, heads]", …
};

// Every tensor of `def`, inputs and parameters first (in the catalogue's order), then outputs.
std::vector<TensorListing> list_tensors(const TargetDef& def);

}  // namespace gnncheck::oracle

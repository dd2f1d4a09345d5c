// gnncheck/scale/graph_spec.h — the graphs `gnncheck scale` checks on, named by one string.
//
//   kronecker:SCALE          Graph500's Kronecker graph as gpu/kronecker.h defines it (the device
//                            generator's definition, run here on the host): a, b, c = .57, .19, .19,
//                            2^SCALE nodes, 16·2^SCALE generated edges, labels scrambled, both
//                            directions, self-loops and duplicates dropped; SCALE 1..30
//   rmat:SCALE[,EDGE_FACTOR] the fixtures' R-MAT defaults: directed, simple, permuted; EDGE_FACTOR 16
//   FILE                     a MatrixMarket file (.mtx) or an edge list (any other name)
// Every graph here is built on the CPU and is a function of the spec and the seed alone; a system
// that generates the Kronecker graph on its device (scale/device_scale_check.h) gets the same graph.
//
//   gnncheck::Graph g = gnncheck::scale::build_graph(gnncheck::scale::parse_graph_spec("rmat:20,10"), 7);
#pragma once

#include <cstdint>
#include <string>

#include "fixtures/generators.h"
#include "core/graph.h"

namespace gnncheck::scale {

struct GraphSpec {
  enum class Kind { kronecker, rmat, file };
  Kind kind = Kind::rmat;
  RmatParams rmat;   // kronecker and rmat
  std::string path;  // file
  std::string text;  // the spec as given (for messages and re-run lines)
};

// Throws InputError naming --graph and what is accepted.
GraphSpec parse_graph_spec(const std::string& text);
// Throws InputError naming --graph when the file cannot be read or parsed.
Graph build_graph(const GraphSpec& spec, std::uint64_t seed);

}  // namespace gnncheck::scale

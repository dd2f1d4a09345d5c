// Fuzz target: edge-list files (fixtures/edge_list.h). The first byte picks the options (symmetrize,
// 1-based ids, a declared node count, a bipartite shape) so that every code path is reached.
#include "fixtures/edge_list.h"
#include "fuzz/fuzz_support.h"

using namespace gnncheck;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t choice = data[0];
  EdgeListOptions options;
  options.symmetrize = (choice & 1) != 0;
  options.first_id = (choice & 2) != 0 ? 1 : 0;
  switch ((choice >> 2) & 3) {
    case 1: options.num_nodes = choice >> 4; break;
    case 2:
      options.num_dst_nodes = (choice >> 4) & 3;
      options.num_src_nodes = choice >> 6;
      break;
    default: break;
  }
  fuzz::refuse_or_check([&] {
    const LoadedGraph loaded = parse_edge_list(fuzz::text(data + 1, size - 1), "fuzz.txt", options);
    fuzz::check_graph(loaded.graph);
    if (options.num_nodes) fuzz::expect(loaded.graph.n_dst() == *options.num_nodes, "the declared node count");
    if (loaded.edge_values)
      fuzz::expect(loaded.edge_values->size() == loaded.graph.num_edges(), "one value per edge");
  });
  return 0;
}

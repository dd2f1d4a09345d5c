// Fuzz target: MatrixMarket graphs and dense matrices (fixtures/matrix_market.h).
#include "fixtures/matrix_market.h"
#include "fuzz/fuzz_support.h"

using namespace gnncheck;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes = fuzz::text(data, size);
  fuzz::refuse_or_check([&] {
    const LoadedGraph loaded = parse_matrix_market_graph(bytes, "fuzz.mtx");
    fuzz::check_graph(loaded.graph);
    if (loaded.edge_values) {
      fuzz::check_tensor(*loaded.edge_values);
      fuzz::expect(loaded.edge_values->size() == loaded.graph.num_edges(), "one value per edge");
    }
  });
  fuzz::refuse_or_check([&] { fuzz::check_tensor(parse_matrix_market_dense(bytes, "fuzz.mtx")); });
  return 0;
}

// Fuzz target: the dataset folder loader (fixtures/dataset.h, load_dataset_folder). The input is the
// folder's six files separated by lines "@@" in the order adjacency.mtx, features.mtx, labels.txt,
// train.txt, val.txt, test.txt; files past the last separator are absent (a missing file must be
// refused as clearly as a malformed one).
#include <array>

#include "fixtures/dataset.h"
#include "fuzz/fuzz_support.h"

using namespace gnncheck;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::ScratchDir scratch;
  static const std::array<const char*, 6> files = {"adjacency.mtx", "features.mtx", "labels.txt",
                                                    "train.txt",     "val.txt",      "test.txt"};
  const std::filesystem::path folder = scratch.path() / "fuzzset";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directory(folder);

  std::string_view rest = fuzz::text(data, size);
  for (std::size_t k = 0; k < files.size() && !rest.empty(); ++k) {
    const std::size_t cut = rest.find("\n@@\n");
    fuzz::write_file(folder / files[k], rest.substr(0, cut));
    rest = cut == std::string_view::npos ? std::string_view{} : rest.substr(cut + 4);
  }
  fuzz::refuse_or_check([&] {
    const Dataset d = load_dataset_folder(folder);
    fuzz::check_graph(d.graph);
    fuzz::check_tensor(d.features);
    fuzz::expect(d.features.rows() == d.num_nodes(), "one feature row per node");
    fuzz::expect(d.labels.size() == static_cast<std::size_t>(d.num_nodes()), "one label per node");
    for (const auto* split : {&d.train_nodes, &d.val_nodes, &d.test_nodes})
      for (index_t v : *split) fuzz::expect(v >= 0 && v < d.num_nodes(), "split ids are node ids");
  });
  return 0;
}

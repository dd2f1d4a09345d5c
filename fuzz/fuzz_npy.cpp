// Fuzz target: .npy files (fixtures/npy.h). The reader takes a path, so the bytes go to a scratch file.
#include <variant>

#include "fixtures/npy.h"
#include "fuzz/fuzz_support.h"

using namespace gnncheck;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::ScratchDir scratch;
  const auto file = scratch.path() / "fuzz.npy";
  fuzz::write_file(file, fuzz::text(data, size));
  fuzz::refuse_or_check([&] {
    const NpyHeader header = read_npy_header(file);
    fuzz::expect(header.data_offset > 0 && static_cast<std::size_t>(header.data_offset) <= size,
                 "the data starts inside the file");
  });
  fuzz::refuse_or_check([&] {
    const NpyArray array = read_npy(file);
    std::visit([](const auto& t) { fuzz::check_tensor(t); }, array.tensor);
  });
  fuzz::refuse_or_check([&] { fuzz::check_tensor(read_npy_f64(file)); });
  return 0;
}

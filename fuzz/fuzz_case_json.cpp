// Fuzz target: case.json as the adapter's side reads it (adapters/protocol.h, read_case). The
// tensors next to it are those of a valid SpMM case, so a case.json that names them with the right
// shapes loads, and every other one must be refused with an InputError naming the file and field.
#include "fuzz/protocol_fixture.h"

using namespace gnncheck;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::ProtocolFixture fixture(NpyDType::float64);
  fuzz::write_file(fixture.dir() / "case.json", fuzz::text(data, size));
  fuzz::refuse_or_check([&] {
    const protocol::LoadedCase loaded = protocol::read_case(fixture.dir());
    fuzz::expect(loaded.c.graph != nullptr, "a loaded case has a graph");
    fuzz::check_graph(*loaded.c.graph);
    for (const auto* tensors : {&loaded.c.inputs, &loaded.c.parameters, &loaded.c.grad_outputs})
      for (const auto& [name, t] : *tensors) fuzz::check_tensor(t);
  });
  return 0;
}

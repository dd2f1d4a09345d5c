// Fuzz target: result.json as gnncheck reads an adapter's answer (adapters/protocol.h, read_result).
// Its contract is stricter than the parsers': it never throws for a problem of the answer (every
// problem becomes Status::invalid_output), so here any exception at all is a finding.
#include "fuzz/protocol_fixture.h"

using namespace gnncheck;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::ProtocolFixture fixture(NpyDType::float64);
  fuzz::write_file(fixture.dir() / "result.json", fuzz::text(data, size));
  const Result r = protocol::read_result(fixture.dir(), fixture.manifest());
  fuzz::expect(fuzz::is_answer_status(r.status), "an answer's status is ok, unsupported, error or invalid_output");
  fuzz::expect(r.ok() || !r.message.empty(), "a status other than ok carries a message");
  if (r.ok()) {
    fuzz::expect(r.outputs.size() == fixture.manifest().outputs.size(), "an ok answer has every output");
    for (const auto& e : fixture.manifest().outputs)
      fuzz::expect(r.outputs.count(e.name) && r.outputs.at(e.name).shape() == e.shape, "outputs have their shapes");
  }
  return 0;
}

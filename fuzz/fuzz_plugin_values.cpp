// Fuzz target: the values a C plugin returns (adapters/include/gnncheck/plugin.h), on their way back
// to gnncheck. gnncheck-plugin-host turns what evaluate() left behind — a status code, the error
// buffer, peak_bytes and the output and gradient buffers it filled — into a Result, writes it with
// protocol::write_result and gnncheck reads it with protocol::read_result. This target builds that
// Result from the fuzzer's bytes as the host does (adapters/plugin_host.cpp, evaluate_with_plugin)
// and runs both halves in process, so any bit pattern a plugin can leave is covered: NaN, infinities,
// subnormals, any status number, a message with any bytes. Neither half may throw; an ok answer must
// read back ok with the same values, NaN and infinities included (the checks judge those).
//
// Layout of the input: byte 0 picks float32 or float64 buffers; bytes 1..4 the status (int32);
// 5..12 peak_bytes (int64); 13 the message length L; then L message bytes; the rest fills the output
// and gradient buffers in manifest order (zeros when short).
#include <cmath>
#include <cstring>

#include "fuzz/protocol_fixture.h"
#include "gnncheck/plugin.h"

using namespace gnncheck;

namespace {

template <class T>
T take(const std::uint8_t*& data, std::size_t& size) {
  T value{};
  const std::size_t n = std::min(size, sizeof(T));
  std::memcpy(&value, data, n);
  data += n;
  size -= n;
  return value;
}

// A tensor of `shape` whose elements are the next bytes read as `Element` and widened to double,
// as the host's CTensors::to_tensor does.
template <class Element>
Tensor take_tensor(const std::vector<index_t>& shape, const std::uint8_t*& data, std::size_t& size) {
  std::vector<double> values(static_cast<std::size_t>(shape_size(shape)));
  for (double& v : values) v = static_cast<double>(take<Element>(data, size));
  return Tensor(shape, std::move(values));
}

// Equal names, shapes and values, where NaN equals NaN.
bool same_values(const TensorMap& a, const TensorMap& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    const auto it = b.find(name);
    if (it == b.end() || it->second.shape() != t.shape()) return false;
    for (index_t i = 0; i < t.size(); ++i)
      if (!(t[i] == it->second[i] || (std::isnan(t[i]) && std::isnan(it->second[i])))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::ProtocolFixture fixture64(NpyDType::float64);
  static const fuzz::ProtocolFixture fixture32(NpyDType::float32);
  if (size == 0) return 0;
  const bool f32 = (data[0] & 1) != 0;
  ++data;
  --size;
  const fuzz::ProtocolFixture& fixture = f32 ? fixture32 : fixture64;
  const protocol::CaseManifest& m = fixture.manifest();

  const auto status = take<std::int32_t>(data, size);
  const auto peak_bytes = take<std::int64_t>(data, size);
  const std::size_t message_length = std::min<std::size_t>(take<std::uint8_t>(data, size), size);
  const std::string message(reinterpret_cast<const char*>(data), message_length);
  data += message_length;
  size -= message_length;

  // As evaluate_with_plugin: the error buffer is a C string (cut at its first NUL).
  Result r;
  if (peak_bytes >= 0) r.peak_bytes = peak_bytes;
  const std::string c_message = message.c_str();
  if (status == GNNCHECK_UNSUPPORTED || status == GNNCHECK_ERROR) {
    r.status = status == GNNCHECK_ERROR ? Status::error : Status::unsupported;
    r.message = c_message.empty() ? "the plugin gave no reason" : c_message;
  } else if (status != GNNCHECK_OK) {
    r.status = Status::error;
    r.message = "the plugin's evaluate returned a number that is not a gnncheck_status";
  } else {
    for (const auto* list : {&m.outputs, &m.gradients})
      for (const auto& e : *list) {
        Tensor t = f32 ? take_tensor<float>(e.shape, data, size) : take_tensor<double>(e.shape, data, size);
        (list == &m.outputs ? r.outputs : r.gradients).emplace(e.name, std::move(t));
      }
  }

  std::filesystem::remove(fixture.dir() / "result.json");
  protocol::write_result(fixture.dir(), m, r);
  const Result back = protocol::read_result(fixture.dir(), m);
  if (r.status != Status::ok) {
    fuzz::expect(back.status == r.status, "a plugin's unsupported/error status reads back as itself");
    fuzz::expect(!back.message.empty(), "and carries a message");
  } else {
    fuzz::expect(back.ok(), "an ok answer reads back ok, whatever its values");
    fuzz::expect(same_values(back.outputs, r.outputs) && same_values(back.gradients, r.gradients),
                 "its values read back unchanged, NaN and infinities included");
  }
  return 0;
}

#include "scale/graph_spec.h"

#include <charconv>
#include <filesystem>

#include <fmt/format.h>

#include "fixtures/edge_list.h"
#include "fixtures/matrix_market.h"
#include "core/error.h"

namespace gnncheck::scale {
namespace {

constexpr const char* kAccepted = "kronecker:SCALE, rmat:SCALE[,EDGE_FACTOR] or the path of a .mtx or edge-list file";

std::int64_t parse_int(const std::string& spec, const std::string& part, const char* what) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
  if (ec != std::errc() || end != part.data() + part.size() || part.empty())
    throw InputError(fmt::format("--graph '{}': {} '{}' is not an integer (expected {})", spec, what, part, kAccepted));
  return value;
}

}  // namespace

GraphSpec parse_graph_spec(const std::string& text) {
  GraphSpec spec;
  spec.text = text;
  if (text.empty()) throw InputError(fmt::format("--graph: empty (expected {})", kAccepted));
  const auto colon = text.find(':');
  const std::string family = colon == std::string::npos ? "" : text.substr(0, colon);
  if (family == "kronecker" || family == "rmat") {
    const std::string rest = text.substr(colon + 1);
    const auto comma = rest.find(',');
    const std::int64_t scale = parse_int(text, rest.substr(0, comma), "SCALE");
    if (scale < 0 || scale > 30) throw InputError(fmt::format("--graph '{}': SCALE must be in 0..30, got {}", text, scale));
    spec.rmat.scale = static_cast<int>(scale);
    if (family == "kronecker") {
      if (comma != std::string::npos)
        throw InputError(fmt::format("--graph '{}': kronecker takes SCALE only (its edge factor is Graph500's 16)", text));
      spec.kind = GraphSpec::Kind::kronecker;
      spec.rmat.edge_factor = 16;
      spec.rmat.symmetrize = true;
      spec.rmat.simple = false;
    } else {
      spec.kind = GraphSpec::Kind::rmat;
      if (comma != std::string::npos) {
        const std::int64_t factor = parse_int(text, rest.substr(comma + 1), "EDGE_FACTOR");
        if (factor < 1) throw InputError(fmt::format("--graph '{}': EDGE_FACTOR must be at least 1, got {}", text, factor));
        spec.rmat.edge_factor = factor;
      }
    }
    return spec;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(text, ec))
    throw InputError(fmt::format("--graph '{}': not a file, and not {}", text, kAccepted));
  spec.kind = GraphSpec::Kind::file;
  spec.path = text;
  return spec;
}

Graph build_graph(const GraphSpec& spec, std::uint64_t seed) {
  try {
    switch (spec.kind) {
      case GraphSpec::Kind::kronecker:
      case GraphSpec::Kind::rmat: return rmat(spec.rmat, seed);
      case GraphSpec::Kind::file:
        if (std::filesystem::path(spec.path).extension() == ".mtx") return read_matrix_market_graph(spec.path).graph;
        return read_edge_list(spec.path).graph;
    }
  } catch (const InputError& e) {
    throw InputError(fmt::format("--graph '{}': {}", spec.text, e.what()));
  }
  throw InternalError("scale::build_graph: unknown graph kind");
}

}  // namespace gnncheck::scale

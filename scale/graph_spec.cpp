#include "scale/graph_spec.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <vector>

#include <fmt/format.h>

#include "fixtures/edge_list.h"
#include "fixtures/matrix_market.h"
#include "core/error.h"
#include "gpu/kronecker.h"

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

// The graph of gpu/kronecker.h built on the host: the same per-edge draws as the device generator,
// every edge in both directions, self-loops and duplicates dropped, columns ascending in each row.
Graph kronecker_graph(int scale, std::int64_t edge_factor, std::uint64_t seed) {
  const gpu::KroneckerParams params{.scale = scale, .edge_factor = edge_factor, .seed = seed};
  const std::int64_t nodes = std::int64_t{1} << scale;
  const std::int64_t generated = edge_factor << scale;
  std::vector<std::uint64_t> keys;  // (row << scale) | column, so sorted keys are CSR order
  keys.reserve(static_cast<size_t>(2 * generated));
  for (std::int64_t k = 0; k < generated; ++k) {
    const gpu::KroneckerEdge e = gpu::kronecker_edge(params, static_cast<std::uint64_t>(k));
    if (e.src == e.dst) continue;
    keys.push_back((std::uint64_t{e.dst} << scale) | e.src);
    keys.push_back((std::uint64_t{e.src} << scale) | e.dst);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  const std::uint64_t mask = (std::uint64_t{1} << scale) - 1;
  std::vector<index_t> row_ptr(static_cast<size_t>(nodes) + 1, 0), col_idx(keys.size());
  for (size_t p = 0; p < keys.size(); ++p) {
    ++row_ptr[static_cast<size_t>(keys[p] >> scale) + 1];
    col_idx[p] = static_cast<index_t>(keys[p] & mask);
  }
  for (size_t i = 0; i < static_cast<size_t>(nodes); ++i) row_ptr[i + 1] += row_ptr[i];
  return Graph::from_csr(nodes, nodes, std::move(row_ptr), std::move(col_idx));
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
      if (scale < 1) throw InputError(fmt::format("--graph '{}': kronecker SCALE must be in 1..30, got {}", text, scale));
      if (comma != std::string::npos)
        throw InputError(fmt::format("--graph '{}': kronecker takes SCALE only (its edge factor is Graph500's 16)", text));
      spec.kind = GraphSpec::Kind::kronecker;
      spec.rmat.edge_factor = 16;
      spec.rmat.symmetrize = true;  // as gpu/kronecker.h defines it: both directions, simple
      spec.rmat.simple = true;
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
      case GraphSpec::Kind::kronecker: return kronecker_graph(spec.rmat.scale, spec.rmat.edge_factor, seed);
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

// The bugs that live on shapes (10, 23–25): columns a feature loop never reaches past a path
// boundary, and node inputs read in another layout where the shape cannot tell the two apart.
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "adapters/replicas/replica_system.h"

namespace gnncheck::replicas {
namespace {

using oracle::TensorKind;

bool is_node_kind(TensorKind kind) { return kind == TensorKind::dst_nodes || kind == TensorKind::src_nodes; }

// 10 and 23: in every node output and node gradient with rows wider than `wider_than` values, the
// last (width mod tile) columns — the partial last tile — are never written.
class PartialTileNotWritten final : public Bug {
 public:
  PartialTileNotWritten(index_t tile, index_t wider_than) : tile_(tile), wider_than_(wider_than) {}
  void inject(BugContext& ctx) override {
    for (const auto& slot : ctx.def.spec.outputs)
      if (is_node_kind(slot.kind))
        if (auto it = ctx.result.outputs.find(slot.name); it != ctx.result.outputs.end()) zero_partial_tile(it->second);
    for (const auto& slot : ctx.def.spec.inputs)
      if (is_node_kind(slot.kind))
        if (auto it = ctx.result.gradients.find(slot.name); it != ctx.result.gradients.end()) zero_partial_tile(it->second);
  }

 private:
  void zero_partial_tile(Tensor& t) const {
    const index_t width = t.row_size(), tail = width % tile_;
    if (t.rank() < 2 || width <= wider_than_ || tail == 0) return;
    for (index_t r = 0; r < t.rows(); ++r)
      for (index_t col = width - tail; col < width; ++col) t.at(r, col) = 0.0;
  }
  index_t tile_, wider_than_;
};

// How a kernel that tells layouts apart by shape reads a node input: the tensor as it reads it, or
// nullopt where the shape is unambiguous. Each misreading is its own inverse.
using Misread = std::function<std::optional<Tensor>(const Tensor&, const Attributes&)>;

// 24: a square [n, n] node matrix taken for the feature-major layout [width, n], read transposed.
std::optional<Tensor> square_read_transposed(const Tensor& t, const Attributes&) {
  if (t.rank() < 2 || t.rows() < 2 || t.rows() != t.row_size()) return std::nullopt;
  Tensor read = t;
  for (index_t r = 0; r < t.rows(); ++r)
    for (index_t c = 0; c < t.row_size(); ++c) read.at(r, c) = t.at(c, r);
  return read;
}

// 25: rows of heads·features values with heads = features, read as [features, heads] per row.
std::optional<Tensor> heads_and_features_swapped(const Tensor& t, const Attributes& a) {
  if (!a.has("heads") || !a.has("features")) return std::nullopt;
  const index_t heads = a.get_int("heads"), features = a.get_int("features");
  if (heads < 2 || heads != features || t.rank() < 2 || t.row_size() != heads * features) return std::nullopt;
  Tensor read = t;
  for (index_t r = 0; r < t.rows(); ++r)
    for (index_t h = 0; h < heads; ++h)
      for (index_t f = 0; f < features; ++f) read.at(r, h * features + f) = t.at(r, f * heads + h);
  return read;
}

// 24 and 25: every node input the kernel misreads is read so for the whole evaluation, forward and
// backward (the float64 oracle on what was read), and its gradient is written back in the layout it
// was read in — a consistent function of the wrong input, which only the forward comparison shows.
class LayoutFromShape final : public Bug {
 public:
  explicit LayoutFromShape(Misread misread) : misread_(std::move(misread)) {}
  void inject(BugContext& ctx) override {
    Case read = ctx.c;
    std::vector<std::string> misread;
    for (const auto& slot : ctx.def.spec.inputs) {
      if (!is_node_kind(slot.kind)) continue;
      auto it = read.inputs.find(slot.name);
      if (it == read.inputs.end()) continue;
      if (auto other = misread_(it->second, ctx.attributes)) {
        it->second = std::move(*other);
        misread.push_back(slot.name);
      }
    }
    if (misread.empty()) return;
    Result wrong = oracle::evaluate(read);
    if (!wrong.ok()) throw InternalError(fmt::format("the misread case does not evaluate: {}", wrong.message));
    for (const auto& name : misread)
      if (auto g = wrong.gradients.find(name); g != wrong.gradients.end()) g->second = *misread_(g->second, ctx.attributes);
    ctx.result.outputs = std::move(wrong.outputs);
    ctx.result.gradients = std::move(wrong.gradients);
  }

 private:
  Misread misread_;
};

}  // namespace

std::unique_ptr<Bug> make_shape_bug(int number) {
  switch (number) {
    case 10: return std::make_unique<PartialTileNotWritten>(32, 0);
    case 23: return std::make_unique<PartialTileNotWritten>(64, 64);
    case 24: return std::make_unique<LayoutFromShape>(square_read_transposed);
    case 25: return std::make_unique<LayoutFromShape>(heads_and_features_swapped);
  }
  return nullptr;
}

}  // namespace gnncheck::replicas

// The relational replicas (28 to 30, 33 and 34): the bug classes of kernels that pick a weight per edge
// type or per segment (R-GCN's and HGT's gather_mm and segment_mm; README.md's table), and of
// attention over the edges of a typed graph (RGAT).
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "adapters/replicas/replica_system.h"
#include "core/error.h"

namespace gnncheck::replicas {
namespace {

// 28. A relation's weight gradient summed into the next relation (mod R): a type id off by one in
// the scatter of the weight gradient. The per-relation gradient is `weight`'s, or `comp`'s where
// R-GCN's bases share the matrices (comp holds one row per relation).
class RelationGradientToNextRelation final : public Bug {
  void inject(BugContext& ctx) override {
    if (!ctx.wants_gradients()) return;
    const bool bases = ctx.attributes.get_int("bases", 0) > 0;
    auto it = ctx.result.gradients.find(bases ? "comp" : "weight");
    if (it == ctx.result.gradients.end()) return;
    const Tensor& correct = it->second;
    const index_t relations = correct.rows(), width = correct.row_size();
    Tensor moved(correct.shape(), 0.0);
    for (index_t r = 0; r < relations; ++r)
      std::copy_n(correct.row(r), width, moved.row((r + 1) % relations));
    it->second = std::move(moved);
  }
};

// A replica that is its target's own catalogue variant (oracle/wrong_variants.h), so that the
// diagnosis names its bug class: the variant's answer for what the bug touches, the correct rest.
class CatalogueVariant final : public Bug {
 public:
  enum class Takes { gradient_x, output_y, outputs_and_gradients };
  CatalogueVariant(int number, std::string variant, Takes takes)
      : number_(number), variant_(std::move(variant)), takes_(takes) {}

  void inject(BugContext& ctx) override {
    if (takes_ == Takes::gradient_x && !ctx.wants_gradients()) return;
    const auto& variants = ctx.def.wrong_variants;
    const auto it = std::find_if(variants.begin(), variants.end(), [&](const auto& v) { return v.name == variant_; });
    if (it == variants.end())
      throw InternalError(fmt::format("replica {}: target '{}' has no variant {}", number_, ctx.c.target, variant_));
    std::optional<Result> wrong = it->evaluate(ctx.c, {});
    if (!wrong) return;  // the variant does not apply to this case
    switch (takes_) {
      case Takes::gradient_x: ctx.result.gradients["x"] = wrong->gradients.at("x"); break;
      case Takes::output_y: ctx.result.outputs["y"] = wrong->outputs.at("y"); break;
      case Takes::outputs_and_gradients:
        ctx.result.outputs = std::move(wrong->outputs);
        if (ctx.wants_gradients()) ctx.result.gradients = std::move(wrong->gradients);
        break;
    }
  }

 private:
  int number_;
  std::string variant_;
  Takes takes_;
};

// 30. segment_mm with every segment boundary one row late: row k takes the weight of row k − 1's
// segment (row 0 its own), in forward and backward alike — the first row of each segment is
// multiplied by the previous segment's matrix, and its gradient lands there.
class SegmentBoundaryOffByOne final : public Bug {
  void inject(BugContext& ctx) override {
    const Graph& g = ctx.graph();
    const Tensor& x = ctx.input("x");
    const Tensor& w = ctx.input("weight");
    const index_t in = x.row_size(), out = w.shape()[2];
    const auto segment = [&](index_t k) { return g.row_of_edge()[std::max<index_t>(k - 1, 0)]; };
    Tensor& y = ctx.result.outputs.at("y");
    for (index_t k = 0; k < g.num_edges(); ++k)
      for (index_t o = 0; o < out; ++o) {
        double sum = 0.0;
        for (index_t f = 0; f < in; ++f) sum += x.at(k, f) * w[(segment(k) * in + f) * out + o];
        y.at(k, o) = sum;
      }
    if (!ctx.wants_gradients()) return;
    const Tensor& gy = ctx.output_gradient();
    Tensor gx(x.shape(), 0.0), gw(w.shape(), 0.0);
    for (index_t k = 0; k < g.num_edges(); ++k)
      for (index_t f = 0; f < in; ++f)
        for (index_t o = 0; o < out; ++o) {
          gx.at(k, f) += gy.at(k, o) * w[(segment(k) * in + f) * out + o];
          gw[(segment(k) * in + f) * out + o] += x.at(k, f) * gy.at(k, o);
        }
    ctx.result.gradients["x"] = std::move(gx);
    ctx.result.gradients["weight"] = std::move(gw);
  }
};

}  // namespace

std::unique_ptr<Bug> make_relational_bug(int number) {
  using Takes = CatalogueVariant::Takes;
  switch (number) {
    case 28: return std::make_unique<RelationGradientToNextRelation>();
    // 29. grad_x from the forward weight where its transpose is needed (in = out only keeps the
    // shapes): the catalogue variant `weight_not_transposed_in_backward`.
    case 29: return std::make_unique<CatalogueVariant>(29, "weight_not_transposed_in_backward", Takes::gradient_x);
    case 30: return std::make_unique<SegmentBoundaryOffByOne>();
    // 33. RGAT's attention normalized within each relation where it runs across all of a
    // destination's in-edges: the softmax segmented by (destination, relation), as a kernel that
    // reuses a per-relation grouping (R-GCN's) for the attention does; forward and backward alike.
    case 33: return std::make_unique<CatalogueVariant>(33, "softmax_within_relation", Takes::outputs_and_gradients);
    // 34. Rows sorted by their type for a segment matmul (PyG's HeteroLinear over pyg-lib's
    // segment_matmul, R-GCN's grouped path) and y returned in that sorted order: the permutation
    // back to the rows' own order is never applied; gradients exact.
    case 34: return std::make_unique<CatalogueVariant>(34, "rows_left_sorted_by_type", Takes::output_y);
  }
  return nullptr;
}

}  // namespace gnncheck::replicas

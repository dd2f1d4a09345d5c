// The relational replicas (28 to 30, 33 and 34): the bug classes of kernels that pick a weight per edge
// type or per segment (R-GCN's and HGT's gather_mm and segment_mm; README.md's table), and of
// attention over the edges of a typed graph (RGAT).
#include <algorithm>

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

// 29. grad_x from the forward weight where its transpose is needed (in = out only keeps the
// shapes): the target's own catalogue variant `weight_not_transposed_in_backward`.
class WeightNotTransposed final : public Bug {
  void inject(BugContext& ctx) override {
    if (!ctx.wants_gradients()) return;
    for (const auto& variant : ctx.def.wrong_variants)
      if (variant.name == "weight_not_transposed_in_backward") {
        if (const std::optional<Result> wrong = variant.evaluate(ctx.c, {}))
          ctx.result.gradients["x"] = wrong->gradients.at("x");
        return;
      }
    throw InternalError("replica 29: target '" + ctx.c.target + "' has no variant weight_not_transposed_in_backward");
  }
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

// 33. RGAT's attention normalized within each relation where it runs across all of a destination's
// in-edges: the softmax segmented by (destination, relation), as a kernel that reuses a per-relation
// grouping (R-GCN's) for the attention does. The target's own catalogue variant
// `softmax_within_relation`, forward and backward alike.
class SoftmaxWithinRelation final : public Bug {
  void inject(BugContext& ctx) override {
    for (const auto& variant : ctx.def.wrong_variants)
      if (variant.name == "softmax_within_relation") {
        if (std::optional<Result> wrong = variant.evaluate(ctx.c, {})) {
          ctx.result.outputs = std::move(wrong->outputs);
          if (ctx.wants_gradients()) ctx.result.gradients = std::move(wrong->gradients);
        }
        return;
      }
    throw InternalError("replica 33: target '" + ctx.c.target + "' has no variant softmax_within_relation");
  }
};

// 34. Rows sorted by their type for a segment matmul (PyG's HeteroLinear over pyg-lib's
// segment_matmul, R-GCN's grouped path) and y returned in that sorted order: the permutation back to
// the rows' own order is never applied. The target's own catalogue variant `rows_left_sorted_by_type`;
// gradients exact.
class TypedRowsLeftSorted final : public Bug {
  void inject(BugContext& ctx) override {
    for (const auto& variant : ctx.def.wrong_variants)
      if (variant.name == "rows_left_sorted_by_type") {
        if (std::optional<Result> wrong = variant.evaluate(ctx.c, {})) ctx.result.outputs["y"] = wrong->outputs.at("y");
        return;
      }
    throw InternalError("replica 34: target '" + ctx.c.target + "' has no variant rows_left_sorted_by_type");
  }
};

}  // namespace

std::unique_ptr<Bug> make_relational_bug(int number) {
  switch (number) {
    case 28: return std::make_unique<RelationGradientToNextRelation>();
    case 29: return std::make_unique<WeightNotTransposed>();
    case 30: return std::make_unique<SegmentBoundaryOffByOne>();
    case 33: return std::make_unique<SoftmaxWithinRelation>();
    case 34: return std::make_unique<TypedRowsLeftSorted>();
  }
  return nullptr;
}

}  // namespace gnncheck::replicas

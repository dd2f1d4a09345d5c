// The precision replicas: kernels that declare float16 storage with float32 sums (README.md's
// table) and break that declaration — sums formed in float16, attention logits rounded to float16
// before the softmax. Their controls, which keep it, are in half_precision.h.
#include "adapters/replicas/half_precision.h"
#include "adapters/replicas/replica_system.h"
#include "oracle/edge_softmax.h"

namespace gnncheck::replicas {
namespace {

// Every sum in float16: the inputs stored in float16 and each product and partial sum rounded to
// float16 (half_sparse_kernel), where the declaration says float32.
class SumsInFloat16 final : public Bug {
  void inject(BugContext& ctx) override {
    Result wrong = half_sparse_kernel(ctx.c, Precision::float16);
    if (!wrong.ok()) return ctx.unsupported(wrong.message);
    ctx.result.outputs = std::move(wrong.outputs);
    ctx.result.gradients = std::move(wrong.gradients);
  }
};

// GAT's attention logits (after the LeakyReLU) rounded to float16 before the softmax takes their
// maximum, as a kernel does that stores them in half between its two passes; every other step
// exact. The backward is the layer's with that attention (the rounding's derivative taken as 1).
class LogitsRoundedBeforeMax final : public Bug {
  void inject(BugContext& ctx) override {
    gat_softmax_no_max(ctx, [](const Graph& g, const Tensor& logits) {
      return oracle::edge_softmax_forward(g, rounded(logits, Precision::float16));
    });
  }
};

}  // namespace

std::unique_ptr<Bug> make_precision_bug(const std::string& name) {
  if (name == "half_sums_in_float16") return std::make_unique<SumsInFloat16>();
  if (name == "half_logits_rounded_before_max") return std::make_unique<LogitsRoundedBeforeMax>();
  return nullptr;
}

}  // namespace gnncheck::replicas

// gnncheck_gpu_gat_epoch_memory — the peak device memory of ONE training epoch of a 2-layer GAT
// with 1 head (forward, loss, backward, Adam step) on a ~1M-edge graph, from the accounting
// allocator, with every byte live at the peak named.
//
//   gnncheck_gpu_gat_epoch_memory [NODES = 65536] [FEATURES = 128] [SEED = 1]
//
// Graph: NODES nodes, row lengths uniform in [0, 32] (≈ 16·NODES edges: 1.05M at the default),
// sources uniform, plus a self-loop per node (GAT aggregates over A + I). Model: GAT(F → 16, 1 head)
// → ReLU → GAT(16 → 7 classes, 1 head), LeakyReLU 0.2 on the attention logits, bias on, no
// dropout; softmax cross-entropy over every node; Adam. Everything stays on the device.
//
// Method: every buffer the epoch creates is registered with a category and a name; after each
// allocation and each op call the program reads the allocator's peak, and when it has risen,
// records the registered buffers live at that moment. Bytes of the peak that no registered buffer
// holds were allocated inside the op call that raised it (cuSPARSE workspace, a reduction's
// partial sums) and are reported as that op's transient. The epoch measured is the second one
// (the first builds every lazily created view and warms cuBLAS/cuSPARSE). The saved state for
// backward is what the backward reads: x and h per layer (dense products and head_dot), LeakyReLU's
// input (logits) and alpha per layer (edge_softmax backward) — the per-edge scores and the two
// per-node attention terms are freed once used.
// Prints the table, then one line starting "RESULT".
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gpu/context.h"
#include "gpu/device_graph.h"
#include "gpu/edge_softmax.cuh"
#include "gpu/elementwise.cuh"
#include "gpu/layers/dense.h"
#include "gpu/sddmm.cuh"
#include "gpu/spmm_ve.cuh"
#include "gpu/training_kernels.cuh"
#include "core/graph.h"

namespace {

using namespace gnncheck;
using namespace gnncheck::gpu;

constexpr std::int64_t kHidden = 16, kClasses = 7;
constexpr float kSlope = 0.2f;

// The registered buffers, and what was live when the allocator's peak last rose.
class Ledger {
 public:
  struct Entry {
    std::string category, name;
    std::int64_t bytes = 0;
  };
  explicit Ledger(DeviceAllocator& allocator) : allocator_(allocator) {}

  int add(Entry e) {
    live_[next_id_] = std::move(e);
    checkpoint("allocation of " + live_[next_id_].name);
    return next_id_++;
  }
  void remove(int id) { live_.erase(id); }
  // Call after every op call: if the peak rose, the buffers live now (the op's own allocations
  // are freed by its return) plus the op's transient make up the new peak.
  void checkpoint(const std::string& where) {
    if (allocator_.peak_bytes() <= recorded_peak_) return;
    recorded_peak_ = allocator_.peak_bytes();
    at_peak_.clear();
    std::int64_t tracked = 0;
    for (const auto& [id, e] : live_) {
      at_peak_.push_back(e);
      tracked += e.bytes;
    }
    transient_ = recorded_peak_ - tracked;
    peak_step_ = where;
  }
  void start_measurement() {
    allocator_.reset_peak();
    recorded_peak_ = -1;
    checkpoint("start of the epoch");
  }
  std::int64_t peak() const { return recorded_peak_; }
  std::int64_t transient() const { return transient_; }
  const std::string& peak_step() const { return peak_step_; }
  const std::vector<Entry>& at_peak() const { return at_peak_; }

 private:
  DeviceAllocator& allocator_;
  std::map<int, Entry> live_;
  int next_id_ = 0;
  std::int64_t recorded_peak_ = -1, transient_ = 0;
  std::string peak_step_;
  std::vector<Entry> at_peak_;
};

// A float32 device buffer registered in the ledger for its lifetime.
class Tracked {
 public:
  Tracked(GpuContext& ctx, Ledger& ledger, std::string category, std::string name, std::int64_t count)
      : ledger_(ledger), buffer_(ctx.allocator, count) {
    buffer_.zero(ctx.stream);
    id_ = ledger_.add({std::move(category), std::move(name), static_cast<std::int64_t>(buffer_.bytes())});
  }
  ~Tracked() { ledger_.remove(id_); }
  Tracked(const Tracked&) = delete;
  Tracked& operator=(const Tracked&) = delete;
  float* data() { return buffer_.data(); }

 private:
  Ledger& ledger_;
  DeviceBuffer<float> buffer_;
  int id_ = 0;
};
using TrackedPtr = std::unique_ptr<Tracked>;

struct Parameter {
  std::int64_t size;
  Tracked value, grad, m, v;
  Parameter(GpuContext& ctx, Ledger& ledger, const std::string& name, std::int64_t n, float scale,
            std::mt19937_64& rng)
      : size(n),
        value(ctx, ledger, "parameters", name, n),
        grad(ctx, ledger, "parameter gradients", "grad " + name, n),
        m(ctx, ledger, "Adam moments", "m " + name, n),
        v(ctx, ledger, "Adam moments", "v " + name, n) {
    std::vector<float> init(static_cast<std::size_t>(n));
    std::uniform_real_distribution<float> uniform(-scale, scale);
    for (float& x : init) x = scale > 0 ? uniform(rng) : 0.0f;
    GNNCHECK_CUDA_CHECK(cudaMemcpyAsync(value.data(), init.data(), init.size() * sizeof(float), cudaMemcpyHostToDevice,
                                        ctx.stream));
    ctx.synchronize();
  }
};

struct GatParams {
  Parameter weight, att_src, att_dst, bias;
  GatParams(GpuContext& ctx, Ledger& ledger, const std::string& layer, std::int64_t in, std::int64_t out,
            std::mt19937_64& rng)
      : weight(ctx, ledger, layer + ".weight", in * out, std::sqrt(6.0f / static_cast<float>(in + out)), rng),
        att_src(ctx, ledger, layer + ".att_src", out, std::sqrt(6.0f / static_cast<float>(out + 1)), rng),
        att_dst(ctx, ledger, layer + ".att_dst", out, std::sqrt(6.0f / static_cast<float>(out + 1)), rng),
        bias(ctx, ledger, layer + ".bias", out, 0.0f, rng) {}
  std::vector<Parameter*> all() { return {&weight, &att_src, &att_dst, &bias}; }
};

// What a GAT layer's backward reads, kept from its forward.
struct GatSaved {
  TrackedPtr h, logits, alpha;
};

Graph random_graph_with_self_loops(index_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<index_t> row_ptr(static_cast<std::size_t>(n) + 1, 0), col_idx;
  col_idx.reserve(static_cast<std::size_t>(n) * 17);
  for (index_t i = 0; i < n; ++i) {
    const index_t degree = static_cast<index_t>(rng() % 33);
    for (index_t k = 0; k < degree; ++k) col_idx.push_back(static_cast<index_t>(rng() % static_cast<std::uint64_t>(n)));
    col_idx.push_back(i);  // the self-loop of A + I
    row_ptr[static_cast<std::size_t>(i) + 1] = static_cast<index_t>(col_idx.size());
  }
  return Graph::from_csr(n, n, std::move(row_ptr), std::move(col_idx));
}

class Epoch {
 public:
  Epoch(GpuContext& ctx, Ledger& ledger, DeviceGraph& g) : ctx_(ctx), ledger_(ledger), g_(g) {}

  template <class Fn>
  void step(const std::string& name, Fn&& fn) {
    fn();
    ctx_.synchronize();
    ledger_.checkpoint(name);
  }

  // out [n, c] = GAT(x [n, f]) with bias; fills `saved`.
  void gat_forward(const std::string& layer, GatParams& p, float* x, std::int64_t f, std::int64_t c, float* out,
                   GatSaved& saved) {
    const std::int64_t n = g_.n_dst(), e = g_.num_edges();
    saved.h = std::make_unique<Tracked>(ctx_, ledger_, "saved for backward", layer + " h = x·W [n, c]", n * c);
    step(layer + " x·W", [&] { matmul(ctx_, n, f, c, x, p.weight.value.data(), saved.h->data()); });
    auto s_src = std::make_unique<Tracked>(ctx_, ledger_, "forward temporaries", layer + " s_src [n]", n);
    auto s_dst = std::make_unique<Tracked>(ctx_, ledger_, "forward temporaries", layer + " s_dst [n]", n);
    step(layer + " head_dot", [&] {
      head_dot(ctx_, n, 1, c, saved.h->data(), p.att_src.value.data(), s_src->data());
      head_dot(ctx_, n, 1, c, saved.h->data(), p.att_dst.value.data(), s_dst->data());
    });
    saved.logits = std::make_unique<Tracked>(ctx_, ledger_, "saved for backward", layer + " logits [E]", e);
    step(layer + " sddmm_add", [&] { sddmm_add_forward(ctx_, g_, s_dst->data(), s_src->data(), 1, saved.logits->data()); });
    s_src.reset();
    s_dst.reset();
    auto scores = std::make_unique<Tracked>(ctx_, ledger_, "forward temporaries", layer + " LeakyReLU scores [E]", e);
    step(layer + " leaky_relu", [&] { leaky_relu_forward(ctx_, e, kSlope, saved.logits->data(), scores->data()); });
    saved.alpha = std::make_unique<Tracked>(ctx_, ledger_, "saved for backward", layer + " alpha [E]", e);
    step(layer + " edge_softmax", [&] { edge_softmax_forward(ctx_, g_, scores->data(), 1, saved.alpha->data()); });
    scores.reset();
    step(layer + " spmm_ve (CSR row kernel)", [&] {
      spmm_ve_forward(ctx_, g_, saved.alpha->data(), 1, saved.h->data(), c, out, ForwardMethod::row_kernel);
      add_bias(ctx_, n, c, p.bias.value.data(), out);
    });
  }

  // Gradients of p from grad_out [n, c] (consumed); grad_x [n, f] if not null.
  void gat_backward(const std::string& layer, GatParams& p, const float* x, std::int64_t f, std::int64_t c,
                    float* grad_out, GatSaved& saved, float* grad_x) {
    const std::int64_t n = g_.n_dst(), e = g_.num_edges();
    step(layer + " bias grad", [&] { column_sums_of_rows(ctx_, n, c, grad_out, p.bias.grad.data()); });
    auto grad_alpha = std::make_unique<Tracked>(ctx_, ledger_, "backward temporaries", layer + " grad alpha [E]", e);
    auto grad_h = std::make_unique<Tracked>(ctx_, ledger_, "backward temporaries", layer + " grad h [n, c]", n * c);
    step(layer + " spmm_ve backward (SDDMM + fused eShuffle/SpMMve over CSC)", [&] {
      spmm_ve_backward(ctx_, g_, saved.alpha->data(), 1, saved.h->data(), c, grad_out, grad_alpha->data(),
                       grad_h->data(), TransposeMethod::fused_csc_kernel);
    });
    auto grad_logits = std::make_unique<Tracked>(ctx_, ledger_, "backward temporaries", layer + " grad logits [E]", e);
    step(layer + " edge_softmax + leaky_relu backward", [&] {
      edge_softmax_backward(ctx_, g_, saved.alpha->data(), grad_alpha->data(), 1, grad_logits->data());
      leaky_relu_backward(ctx_, e, kSlope, saved.logits->data(), grad_logits->data(), grad_logits->data());
    });
    grad_alpha.reset();
    saved.alpha.reset();
    saved.logits.reset();
    auto grad_s_src = std::make_unique<Tracked>(ctx_, ledger_, "backward temporaries", layer + " grad s_src [n]", n);
    auto grad_s_dst = std::make_unique<Tracked>(ctx_, ledger_, "backward temporaries", layer + " grad s_dst [n]", n);
    step(layer + " sddmm_add backward + head_dot backward", [&] {
      sddmm_add_backward(ctx_, g_, grad_logits->data(), 1, grad_s_dst->data(), grad_s_src->data());
      head_dot_backward(ctx_, n, 1, c, saved.h->data(), p.att_src.value.data(), grad_s_src->data(), true,
                        grad_h->data(), p.att_src.grad.data());
      head_dot_backward(ctx_, n, 1, c, saved.h->data(), p.att_dst.value.data(), grad_s_dst->data(), true,
                        grad_h->data(), p.att_dst.grad.data());
    });
    grad_logits.reset();
    grad_s_src.reset();
    grad_s_dst.reset();
    saved.h.reset();
    step(layer + " weight grad", [&] { matmul_at_b(ctx_, n, f, c, x, grad_h->data(), p.weight.grad.data()); });
    if (grad_x) step(layer + " input grad", [&] { matmul_a_bt(ctx_, n, c, f, grad_h->data(), p.weight.value.data(), grad_x); });
  }

 private:
  GpuContext& ctx_;
  Ledger& ledger_;
  DeviceGraph& g_;
};

int run(index_t nodes, std::int64_t features, std::uint64_t seed) {
  GpuContext ctx;
  Ledger ledger(ctx.allocator);
  const std::int64_t cublas_bytes = ctx.allocator.current_bytes();
  const int cublas_id = ledger.add({"library workspace", "cuBLAS workspace (cublasSetWorkspace)", cublas_bytes});
  const Graph host = random_graph_with_self_loops(nodes, seed);
  DeviceGraph g(ctx, host);
  // Every view the epoch reads, built now so that they are graph storage, not an op's transient.
  g.row_of_edge(ctx);
  g.ensure_csc(ctx);
  g.edge_perm(ctx);
  ctx.synchronize();
  const std::int64_t n = g.n_dst(), e = g.num_edges();
  const int graph_id = ledger.add({"graph storage",
                                   "CSR (row_ptr 8(V+1), col_idx 4E), COO rows 4E, CSC (col_ptr 8(V+1), row_idx 4E), "
                                   "edge_perm 8E",
                                   g.storage_bytes()});
  std::mt19937_64 rng(seed);
  Tracked x(ctx, ledger, "input features", "x [n, F]", n * features);
  random_uniform(ctx, n * features, seed, -1.0f, 1.0f, x.data());
  DeviceBuffer<std::int32_t> labels(ctx.allocator, n);
  const int labels_id = ledger.add({"input features", "labels [n] int32", static_cast<std::int64_t>(labels.bytes())});
  random_labels(ctx, n, seed, static_cast<std::int32_t>(kClasses), labels.data());
  GatParams layer1(ctx, ledger, "gat1", features, kHidden, rng), layer2(ctx, ledger, "gat2", kHidden, kClasses, rng);
  const AdamConfig adam;

  double loss = 0.0;
  for (int epoch = 1; epoch <= 2; ++epoch) {
    if (epoch == 2) ledger.start_measurement();
    Epoch run_epoch(ctx, ledger, g);
    GatSaved saved1, saved2;
    Tracked a1(ctx, ledger, "saved for backward", "gat1 output → ReLU a1 [n, 16] (layer 2's input)", n * kHidden);
    run_epoch.gat_forward("gat1", layer1, x.data(), features, kHidden, a1.data(), saved1);
    run_epoch.step("relu", [&] { relu_forward(ctx, n * kHidden, a1.data(), a1.data()); });
    Tracked logits(ctx, ledger, "forward temporaries", "gat2 output logits [n, 7] (grad in place)", n * kClasses);
    run_epoch.gat_forward("gat2", layer2, a1.data(), kHidden, kClasses, logits.data(), saved2);
    run_epoch.step("softmax cross-entropy",
                   [&] { loss = softmax_cross_entropy(ctx, n, kClasses, logits.data(), labels.data(), logits.data()); });
    Tracked grad_a1(ctx, ledger, "backward temporaries", "grad a1 [n, 16]", n * kHidden);
    run_epoch.gat_backward("gat2", layer2, a1.data(), kHidden, kClasses, logits.data(), saved2, grad_a1.data());
    run_epoch.step("relu backward", [&] { relu_backward(ctx, n * kHidden, a1.data(), grad_a1.data(), grad_a1.data()); });
    run_epoch.gat_backward("gat1", layer1, x.data(), features, kHidden, grad_a1.data(), saved1, nullptr);
    run_epoch.step("Adam", [&] {
      for (GatParams* layer : {&layer1, &layer2})
        for (Parameter* p : layer->all())
          adam_step(ctx, adam, epoch, p->size, p->value.data(), p->grad.data(), p->m.data(), p->v.data());
    });
    std::printf("epoch %d: loss %.6f\n", epoch, loss);
  }

  const std::int64_t peak = ctx.allocator.peak_bytes();
  std::printf("2-layer GAT, 1 head (F=%lld -> 16 -> 7), %lld nodes, %lld edges incl. %lld self-loops\n",
              static_cast<long long>(features), static_cast<long long>(n), static_cast<long long>(e),
              static_cast<long long>(n));
  std::printf("peak of one training epoch: %lld bytes (%.1f MiB), reached at: %s\n", static_cast<long long>(peak),
              peak / 1048576.0, ledger.peak_step().c_str());
  std::map<std::string, std::int64_t> by_category;
  std::printf("%-22s %12s  %s\n", "category", "bytes", "buffer");
  for (const auto& entry : ledger.at_peak()) {
    std::printf("%-22s %12lld  %s\n", entry.category.c_str(), static_cast<long long>(entry.bytes), entry.name.c_str());
    by_category[entry.category] += entry.bytes;
  }
  std::printf("%-22s %12lld  %s\n", "op transient", static_cast<long long>(ledger.transient()),
              "allocated inside the op call that reached the peak, freed by its return");
  std::printf("--- by category\n");
  std::int64_t total = ledger.transient();
  for (const auto& [category, bytes] : by_category) {
    std::printf("%-22s %12lld  %5.1f%%\n", category.c_str(), static_cast<long long>(bytes), 100.0 * bytes / peak);
    total += bytes;
  }
  std::printf("%-22s %12lld  %5.1f%%\n", "op transient", static_cast<long long>(ledger.transient()),
              100.0 * ledger.transient() / peak);
  std::printf("sum %lld = peak %lld: %s\n", static_cast<long long>(total), static_cast<long long>(peak),
              total == peak ? "every byte accounted for" : "MISMATCH");
  std::printf("RESULT gat1_epoch_peak_bytes=%lld nodes=%lld edges=%lld features=%lld\n", static_cast<long long>(peak),
              static_cast<long long>(n), static_cast<long long>(e), static_cast<long long>(features));
  ledger.remove(labels_id);
  ledger.remove(graph_id);
  ledger.remove(cublas_id);
  return total == peak ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 4) {
    std::fprintf(stderr, "usage: %s [NODES = 65536] [FEATURES = 128] [SEED = 1]\n", argv[0]);
    return 2;
  }
  const index_t nodes = argc > 1 ? std::atoll(argv[1]) : 65536;
  const std::int64_t features = argc > 2 ? std::atoll(argv[2]) : 128;
  const std::uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  if (nodes < 1 || features < 1) {
    std::fprintf(stderr, "NODES and FEATURES must be positive\n");
    return 2;
  }
  try {
    return run(nodes, features, seed);
  } catch (const std::exception& e) {
    std::printf("FAILED: %s\n", e.what());
    return 1;
  }
}

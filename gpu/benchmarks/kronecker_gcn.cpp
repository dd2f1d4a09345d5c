// gnncheck_gpu_kronecker_gcn — full-graph training of a 2-layer GCN (150 features, hidden 16, 7
// classes; random deterministic features and labels) on a Graph500 Kronecker graph generated on
// the device (gpu/kronecker.cuh), reporting edges, generation time, epoch time (device-
// synchronized, after one warm-up epoch) and the accounting allocator's peak.
//
//   gnncheck_gpu_kronecker_gcn SCALE [EPOCHS = 3] [SEED = 1]
//
// Frugal by construction, so that scale 26/27 (2.1/4.3 billion directed edges) fits one H200:
//   - graph: CSR only (8 bytes per node, 4 per edge) — the generated graph is symmetric (A = Aᵀ;
//     gpu/tests/kronecker_test.cpp checks it), so Âᵀ = D^-½ Aᵀ D^-½ is the same CSR walk with the
//     factors' roles swapped: no CSC, no edge_perm, no edge values (normalization from the degree
//     factors on the fly, fused into the aggregation kernel);
//   - generation buffers (sort keys, CUB storage) are freed before the features exist;
//   - no gradient for the input features; activations in four buffers reused across the epoch:
//     [n,16] ×2 and [n,7] ×2 (forward h1 = x·W1, a1 = relu(Â·h1 + b1), h2 = a1·W2, logits =
//     Â·h2 + b2; backward in the same buffers).
// Prints the per-epoch loss and time, then one line starting "RESULT".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "gpu/aggregate.cuh"
#include "gpu/context.h"
#include "gpu/degree_norm.cuh"
#include "gpu/device_graph.h"
#include "gpu/elementwise.cuh"
#include "gpu/kronecker.cuh"
#include "gpu/layers/dense.h"
#include "gpu/training_kernels.cuh"

namespace {

using namespace gnncheck::gpu;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kFeatures = 150, kHidden = 16, kClasses = 7;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// A parameter with its gradient and Adam moments.
struct Parameter {
  std::int64_t size;
  DeviceBuffer<float> value, grad, m, v;
  Parameter(GpuContext& ctx, std::int64_t n, float scale, std::mt19937_64& rng)
      : size(n), value(ctx.allocator, n), grad(ctx.allocator, n), m(ctx.allocator, n), v(ctx.allocator, n) {
    std::vector<float> init(static_cast<std::size_t>(n));
    std::uniform_real_distribution<float> uniform(-scale, scale);
    for (float& x : init) x = uniform(rng);
    value.upload(init, ctx.stream);
    m.zero(ctx.stream);
    v.zero(ctx.stream);
    ctx.synchronize();
  }
};

float glorot(std::int64_t fan_in, std::int64_t fan_out) {
  return std::sqrt(6.0f / static_cast<float>(fan_in + fan_out));
}

int run(int scale, int epochs, std::uint64_t seed) {
  GpuContext ctx;
  std::printf("GCN on a Graph500 Kronecker graph: scale %d, edge factor 16, a,b,c = .57,.19,.19, both directions, "
              "self-loops and duplicates removed, seed %llu\n",
              scale, static_cast<unsigned long long>(seed));
  const auto generation_start = Clock::now();
  KroneckerTimings phases;
  KroneckerGraph k = generate_kronecker(ctx, {.scale = scale, .seed = seed}, &phases);
  ctx.synchronize();
  const double generation_s = seconds_since(generation_start);
  const std::int64_t n = k.nodes, edges = k.num_edges();
  const std::int64_t generation_peak = ctx.allocator.peak_bytes();
  std::printf("nodes %lld, generated %lld, edges %lld (directed, stored)\n", static_cast<long long>(n),
              static_cast<long long>(k.generated_edges), static_cast<long long>(edges));
  std::printf("generation %.3f s (device-synchronized, the whole generate_kronecker call): draw %.3f s (%lld "
              "edges × %d levels of hashing into %lld keys), radix sort %.3f s, unique %.3f s, CSR build %.3f s; "
              "generation peak %.2f GiB\n",
              generation_s, phases.draw_s, static_cast<long long>(k.generated_edges), scale,
              static_cast<long long>(2 * k.generated_edges), phases.sort_s, phases.unique_s, phases.csr_s,
              generation_peak / kGiB);
  std::fflush(stdout);

  DeviceGraph g(ctx, n, n, std::move(k.row_ptr), std::move(k.col_idx));
  ctx.allocator.reset_peak();
  // Symmetric normalization factors D^-½ (in-degree = out-degree here; both vectors are computed
  // by the general routine, 4 bytes per node each).
  const DegreeFactors factors = degree_factors(ctx, g, DegreeNorm::symmetric, SourceDegree::out);
  const CompressedView csr{n, g.row_ptr(), g.col_idx()};
  const Scales forward_scales{factors.dst.data(), factors.src.data()};
  const Scales backward_scales{factors.src.data(), factors.dst.data()};  // Âᵀ over the CSR of A = Aᵀ

  DeviceBuffer<float> x(ctx.allocator, n * kFeatures);
  random_uniform(ctx, n * kFeatures, seed, -1.0f, 1.0f, x.data());
  DeviceBuffer<std::int32_t> labels(ctx.allocator, n);
  random_labels(ctx, n, seed, static_cast<std::int32_t>(kClasses), labels.data());
  std::mt19937_64 rng(seed);
  Parameter w1(ctx, kFeatures * kHidden, glorot(kFeatures, kHidden), rng), b1(ctx, kHidden, 0.0f, rng);
  Parameter w2(ctx, kHidden * kClasses, glorot(kHidden, kClasses), rng), b2(ctx, kClasses, 0.0f, rng);
  DeviceBuffer<float> hidden_a(ctx.allocator, n * kHidden), hidden_b(ctx.allocator, n * kHidden);
  DeviceBuffer<float> out_a(ctx.allocator, n * kClasses), out_b(ctx.allocator, n * kClasses);
  const AdamConfig adam;

  std::vector<double> epoch_seconds;
  for (int epoch = 0; epoch <= epochs; ++epoch) {  // epoch 0 is the warm-up
    ctx.synchronize();
    const auto start = Clock::now();
    // Forward
    matmul(ctx, n, kFeatures, kHidden, x.data(), w1.value.data(), hidden_a.data());        // h1
    aggregate(ctx, csr, {}, forward_scales, hidden_a.data(), kHidden, hidden_b.data());    // Â·h1
    add_bias(ctx, n, kHidden, b1.value.data(), hidden_b.data());
    relu_forward(ctx, n * kHidden, hidden_b.data(), hidden_b.data());                      // a1
    matmul(ctx, n, kHidden, kClasses, hidden_b.data(), w2.value.data(), out_a.data());     // h2
    aggregate(ctx, csr, {}, forward_scales, out_a.data(), kClasses, out_b.data());         // Â·h2
    add_bias(ctx, n, kClasses, b2.value.data(), out_b.data());                             // logits
    const double loss = softmax_cross_entropy(ctx, n, kClasses, out_b.data(), labels.data(), out_b.data());
    // Backward (out_b now holds grad logits)
    column_sums_of_rows(ctx, n, kClasses, out_b.data(), b2.grad.data());
    aggregate(ctx, csr, {}, backward_scales, out_b.data(), kClasses, out_a.data());        // grad h2
    matmul_at_b(ctx, n, kHidden, kClasses, hidden_b.data(), out_a.data(), w2.grad.data());
    matmul_a_bt(ctx, n, kClasses, kHidden, out_a.data(), w2.value.data(), hidden_a.data());  // grad a1
    relu_backward(ctx, n * kHidden, hidden_b.data(), hidden_a.data(), hidden_a.data());
    column_sums_of_rows(ctx, n, kHidden, hidden_a.data(), b1.grad.data());
    aggregate(ctx, csr, {}, backward_scales, hidden_a.data(), kHidden, hidden_b.data());   // grad h1
    matmul_at_b(ctx, n, kFeatures, kHidden, x.data(), hidden_b.data(), w1.grad.data());
    for (Parameter* p : {&w1, &b1, &w2, &b2})
      adam_step(ctx, adam, epoch + 1, p->size, p->value.data(), p->grad.data(), p->m.data(), p->v.data());
    ctx.synchronize();
    const double s = seconds_since(start);
    if (epoch > 0) epoch_seconds.push_back(s);
    std::printf("epoch %d%s: loss %.6f, %.1f ms\n", epoch, epoch == 0 ? " (warm-up)" : "", loss, s * 1e3);
    std::fflush(stdout);
  }
  std::vector<double> sorted = epoch_seconds;
  std::sort(sorted.begin(), sorted.end());
  const double median_ms = sorted.empty() ? 0.0 : sorted[sorted.size() / 2] * 1e3;
  const std::int64_t training_peak = ctx.allocator.peak_bytes();
  std::printf("graph storage %.2f GiB (CSR), features %.2f GiB, training peak %.2f GiB\n",
              g.storage_bytes() / kGiB, x.bytes() / kGiB, training_peak / kGiB);
  std::printf("RESULT scale=%d nodes=%lld edges=%lld generation_s=%.3f epoch_ms_median=%.1f epochs=%d "
              "generation_peak_gib=%.2f training_peak_gib=%.2f\n",
              scale, static_cast<long long>(n), static_cast<long long>(edges), generation_s, median_ms,
              static_cast<int>(epoch_seconds.size()), generation_peak / kGiB, training_peak / kGiB);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: %s SCALE [EPOCHS = 3] [SEED = 1]\n", argv[0]);
    return 2;
  }
  const int scale = std::atoi(argv[1]);
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::uint64_t seed = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  if (epochs < 1) {
    std::fprintf(stderr, "EPOCHS = %s: expected a positive number\n", argv[2]);
    return 2;
  }
  try {
    return run(scale, epochs, seed);
  } catch (const std::exception& e) {
    std::printf("FAILED at scale %d: %s\n", scale, e.what());
    return 1;
  }
}

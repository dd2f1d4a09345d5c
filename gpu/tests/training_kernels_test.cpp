// The device-resident training pieces (gpu/training_kernels.cuh) against plain host computations:
// softmax cross-entropy's mean loss and gradient, chunked column sums across many chunks, one Adam
// step, and the hash-based features and labels (same for the same seed, in range, different for
// another seed).
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "gpu/tests/gpu_test_support.h"
#include "gpu/training_kernels.cuh"

namespace gnncheck::gpu::testing {
namespace {

class TrainingKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override { GNNCHECK_GPU_TEST_REQUIRES_DEVICE(); }
};

std::vector<float> random_floats(std::int64_t n, std::uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

TEST_F(TrainingKernelsTest, SoftmaxCrossEntropyMatchesTheHost) {
  GpuContext ctx;
  const std::int64_t n = 1000, classes = 7;
  const std::vector<float> h_logits = random_floats(n * classes, 1, -30.0f, 30.0f);  // large: max subtraction matters
  std::vector<std::int32_t> h_labels(n);
  for (std::int64_t i = 0; i < n; ++i) h_labels[i] = static_cast<std::int32_t>((i * 5) % classes);
  DeviceBuffer<float> logits(ctx.allocator, n * classes), grad(ctx.allocator, n * classes);
  DeviceBuffer<std::int32_t> labels(ctx.allocator, n);
  logits.upload(h_logits, ctx.stream);
  labels.upload(h_labels, ctx.stream);
  const double loss = softmax_cross_entropy(ctx, n, classes, logits.data(), labels.data(), grad.data());
  const std::vector<float> got = grad.download(ctx.stream);
  double expected_loss = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    double row_max = -INFINITY, denominator = 0.0;
    for (std::int64_t c = 0; c < classes; ++c) row_max = std::max(row_max, double(h_logits[i * classes + c]));
    for (std::int64_t c = 0; c < classes; ++c) denominator += std::exp(h_logits[i * classes + c] - row_max);
    expected_loss += std::log(denominator) - (h_logits[i * classes + h_labels[i]] - row_max);
    for (std::int64_t c = 0; c < classes; ++c) {
      const double p = std::exp(h_logits[i * classes + c] - row_max) / denominator;
      const double expected = (p - (c == h_labels[i] ? 1.0 : 0.0)) / static_cast<double>(n);
      ASSERT_NEAR(got[i * classes + c], expected, 1e-6 / n + 1e-6 * std::abs(expected)) << "row " << i << ", class " << c;
    }
  }
  EXPECT_NEAR(loss, expected_loss / n, 1e-5 * std::abs(expected_loss / n));
  // In place (grad == logits), as the training programs call it.
  const double in_place = softmax_cross_entropy(ctx, n, classes, logits.data(), labels.data(), logits.data());
  EXPECT_NEAR(in_place, loss, 1e-12 + 1e-9 * std::abs(loss));
  EXPECT_EQ(logits.download(ctx.stream), got);
}

TEST_F(TrainingKernelsTest, ChunkedColumnSumsAcrossManyChunks) {
  GpuContext ctx;
  for (std::int64_t rows : {std::int64_t{1}, std::int64_t{4096}, std::int64_t{4097}, std::int64_t{50000}}) {
    const std::int64_t width = 7;
    const std::vector<float> h = random_floats(rows * width, 2 + rows, -1.0f, 1.0f);
    DeviceBuffer<float> x(ctx.allocator, rows * width), sums(ctx.allocator, width);
    x.upload(h, ctx.stream);
    chunked_column_sums(ctx, rows, width, x.data(), sums.data());
    const std::vector<float> got = sums.download(ctx.stream);
    for (std::int64_t c = 0; c < width; ++c) {
      double expected = 0.0, magnitude = 0.0;
      for (std::int64_t i = 0; i < rows; ++i) expected += h[i * width + c], magnitude += std::abs(h[i * width + c]);
      // float32 sums of `rows` terms: |error| ≤ γ_rows · Σ|x| (rows·2^-24, doubled for safety)
      EXPECT_NEAR(got[c], expected, 2.0 * rows * std::ldexp(1.0, -24) * magnitude) << rows << " rows, column " << c;
    }
    // Deterministic: the same sums again, bit for bit.
    chunked_column_sums(ctx, rows, width, x.data(), sums.data());
    EXPECT_EQ(sums.download(ctx.stream), got);
  }
}

TEST_F(TrainingKernelsTest, AdamStepMatchesTheFormula) {
  GpuContext ctx;
  const std::int64_t n = 100;
  const AdamConfig adam{.learning_rate = 0.01f};
  std::vector<float> p = random_floats(n, 3, -1, 1), g = random_floats(n, 4, -1, 1);
  std::vector<float> m(n, 0.0f), v(n, 0.0f);
  DeviceBuffer<float> dp(ctx.allocator, n), dg(ctx.allocator, n), dm(ctx.allocator, n), dv(ctx.allocator, n);
  dp.upload(p, ctx.stream);
  dg.upload(g, ctx.stream);
  dm.zero(ctx.stream);
  dv.zero(ctx.stream);
  for (int step = 1; step <= 3; ++step) {
    adam_step(ctx, adam, step, n, dp.data(), dg.data(), dm.data(), dv.data());
    for (std::int64_t k = 0; k < n; ++k) {
      m[k] = 0.9f * m[k] + 0.1f * g[k];
      v[k] = 0.999f * v[k] + 0.001f * g[k] * g[k];
      const double m_hat = m[k] / (1.0 - std::pow(0.9, step)), v_hat = v[k] / (1.0 - std::pow(0.999, step));
      p[k] = static_cast<float>(p[k] - 0.01 * m_hat / (std::sqrt(v_hat) + 1e-8));
    }
  }
  const std::vector<float> got = dp.download(ctx.stream);
  for (std::int64_t k = 0; k < n; ++k) EXPECT_NEAR(got[k], p[k], 1e-5) << "parameter " << k;
}

TEST_F(TrainingKernelsTest, RandomFeaturesAndLabelsAreSeededAndInRange) {
  GpuContext ctx;
  const std::int64_t n = 100000;
  DeviceBuffer<float> a(ctx.allocator, n), b(ctx.allocator, n);
  random_uniform(ctx, n, 9, -1.0f, 1.0f, a.data());
  random_uniform(ctx, n, 9, -1.0f, 1.0f, b.data());
  const std::vector<float> first = a.download(ctx.stream);
  EXPECT_EQ(first, b.download(ctx.stream));
  double mean = 0.0;
  for (float x : first) {
    ASSERT_GE(x, -1.0f);
    ASSERT_LT(x, 1.0f);
    mean += x / n;
  }
  EXPECT_LT(std::abs(mean), 0.02);  // uniform on [-1, 1): mean 0, standard error 0.0018
  random_uniform(ctx, n, 10, -1.0f, 1.0f, b.data());
  EXPECT_NE(first, b.download(ctx.stream));

  DeviceBuffer<std::int32_t> labels(ctx.allocator, n);
  random_labels(ctx, n, 9, 7, labels.data());
  std::vector<std::int64_t> counts(7, 0);
  for (std::int32_t l : labels.download(ctx.stream)) {
    ASSERT_GE(l, 0);
    ASSERT_LT(l, 7);
    ++counts[l];
  }
  for (std::int64_t c : counts) EXPECT_GT(c, n / 7 - 1000) << "a class is rare: the hash is not uniform";
}

}  // namespace
}  // namespace gnncheck::gpu::testing

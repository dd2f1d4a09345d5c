// The device-resident training pieces (gpu/training_kernels.cuh) against plain host computations:
// softmax cross-entropy's mean loss and gradient (all rows, and masked), column sums across many
// row slices (plain and weighted per head), one Adam step, and the hash-based features and labels (same for the same seed, in range, different for
// another seed).
#include <algorithm>
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

// Holds `got` to (softmax(z_i) − one-hot)/count on the rows of `mask` (every row when it is empty)
// and to exactly 0 on the others; returns Σ over those rows of logsumexp(z_i) − z_i[label_i] in
// float64. Stops at the first element out of bounds.
double expect_cross_entropy(const std::vector<float>& logits, const std::vector<std::int32_t>& labels,
                            const std::vector<std::uint8_t>& mask, std::int64_t classes, std::int64_t count,
                            const std::vector<float>& got) {
  double loss_sum = 0.0;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(labels.size()) && !::testing::Test::HasFailure(); ++i) {
    if (!mask.empty() && !mask[i]) {
      for (std::int64_t c = 0; c < classes; ++c) EXPECT_EQ(got[i * classes + c], 0.0f) << "row " << i << " is not in the mask";
      continue;
    }
    double row_max = -INFINITY, denominator = 0.0;
    for (std::int64_t c = 0; c < classes; ++c) row_max = std::max(row_max, double(logits[i * classes + c]));
    for (std::int64_t c = 0; c < classes; ++c) denominator += std::exp(logits[i * classes + c] - row_max);
    loss_sum += std::log(denominator) - (logits[i * classes + labels[i]] - row_max);
    for (std::int64_t c = 0; c < classes; ++c) {
      const double p = std::exp(logits[i * classes + c] - row_max) / denominator;
      const double expected = (p - (c == labels[i] ? 1.0 : 0.0)) / static_cast<double>(count);
      EXPECT_NEAR(got[i * classes + c], expected, 1e-6 / count + 1e-6 * std::abs(expected)) << "row " << i << ", class " << c;
    }
  }
  return loss_sum;
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
  const double expected_loss = expect_cross_entropy(h_logits, h_labels, {}, classes, n, got);
  EXPECT_NEAR(loss, expected_loss / n, 1e-5 * std::abs(expected_loss / n));
  // In place (grad == logits), as the training programs call it.
  const double in_place = softmax_cross_entropy(ctx, n, classes, logits.data(), labels.data(), logits.data());
  EXPECT_NEAR(in_place, loss, 1e-12 + 1e-9 * std::abs(loss));
  EXPECT_EQ(logits.download(ctx.stream), got);
}

TEST_F(TrainingKernelsTest, ColumnSumsAcrossManySlices) {
  GpuContext ctx;
  for (std::int64_t rows : {std::int64_t{1}, std::int64_t{511}, std::int64_t{513}, std::int64_t{50000}}) {
    const std::int64_t width = 7;
    const std::vector<float> h = random_floats(rows * width, 2 + rows, -1.0f, 1.0f);
    DeviceBuffer<float> x(ctx.allocator, rows * width), sums(ctx.allocator, width);
    x.upload(h, ctx.stream);
    column_sums_of_rows(ctx, rows, width, x.data(), sums.data());
    const std::vector<float> got = sums.download(ctx.stream);
    for (std::int64_t c = 0; c < width; ++c) {
      double expected = 0.0, magnitude = 0.0;
      for (std::int64_t i = 0; i < rows; ++i) expected += h[i * width + c], magnitude += std::abs(h[i * width + c]);
      // float32 sums of `rows` terms: |error| ≤ γ_rows · Σ|x| (rows·2^-24, doubled for safety)
      EXPECT_NEAR(got[c], expected, 2.0 * rows * std::ldexp(1.0, -24) * magnitude) << rows << " rows, column " << c;
    }
    // Deterministic: the same sums again, bit for bit.
    column_sums_of_rows(ctx, rows, width, x.data(), sums.data());
    EXPECT_EQ(sums.download(ctx.stream), got);
  }
}

// Per-head weights (GAT's attention-vector gradient): out[h·C + c] = Σ_i w[i, h]·x[i, h·C + c],
// and more than 256 columns (two passes of the block over the columns).
TEST_F(TrainingKernelsTest, WeightedColumnSumsPerHead) {
  GpuContext ctx;
  struct Shape {
    std::int64_t rows, heads, channels;
  };
  for (const Shape shape : {Shape{5000, 3, 16}, Shape{700, 1, 300}, Shape{100, 2, 4}}) {
    const std::int64_t width = shape.heads * shape.channels;
    const std::vector<float> h_x = random_floats(shape.rows * width, 5 + width, -1.0f, 1.0f);
    const std::vector<float> h_w = random_floats(shape.rows * shape.heads, 6 + width, -1.0f, 1.0f);
    DeviceBuffer<float> x(ctx.allocator, shape.rows * width), w(ctx.allocator, shape.rows * shape.heads),
        partials(ctx.allocator, column_sum_slices * width), sums(ctx.allocator, width);
    x.upload(h_x, ctx.stream);
    w.upload(h_w, ctx.stream);
    weighted_column_sums(ctx, shape.rows, shape.heads, shape.channels, x.data(), w.data(), partials.data(), sums.data());
    const std::vector<float> got = sums.download(ctx.stream);
    for (std::int64_t col = 0; col < width; ++col) {
      const std::int64_t head = col / shape.channels;
      double expected = 0.0, magnitude = 0.0;
      for (std::int64_t i = 0; i < shape.rows; ++i) {
        const double term = double(h_w[i * shape.heads + head]) * h_x[i * width + col];
        expected += term, magnitude += std::abs(term);
      }
      // One product and at most rows − 1 additions per term: γ_rows · Σ|w||x|, doubled for safety.
      EXPECT_NEAR(got[col], expected, 2.0 * shape.rows * std::ldexp(1.0, -24) * magnitude)
          << shape.rows << " rows, " << shape.heads << " heads, column " << col;
    }
  }
}

// Only the rows of the mask count: their gradient is scale·(softmax − one-hot), every other row's is 0,
// and the loss sum is over the masked rows.
TEST_F(TrainingKernelsTest, MaskedSoftmaxCrossEntropy) {
  GpuContext ctx;
  const std::int64_t n = 500, classes = 41;  // more classes than a warp has lanes
  const std::vector<float> h_logits = random_floats(n * classes, 7, -10.0f, 10.0f);
  std::vector<std::int32_t> h_labels(n);
  std::vector<std::uint8_t> h_mask(n);
  std::int64_t counted = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    h_labels[i] = static_cast<std::int32_t>((i * 7) % classes);
    h_mask[i] = i % 3 == 0 ? 1 : 0;
    counted += h_mask[i];
  }
  DeviceBuffer<float> logits(ctx.allocator, n * classes), grad(ctx.allocator, n * classes);
  DeviceBuffer<std::int32_t> labels(ctx.allocator, n);
  DeviceBuffer<std::uint8_t> mask(ctx.allocator, n);
  DeviceBuffer<double> loss_sum(ctx.allocator, 1);
  logits.upload(h_logits, ctx.stream);
  labels.upload(h_labels, ctx.stream);
  mask.upload(h_mask, ctx.stream);
  const float scale = 1.0f / static_cast<float>(counted);
  softmax_cross_entropy(ctx, n, classes, logits.data(), labels.data(), mask.data(), scale, loss_sum.data(), grad.data());
  const std::vector<float> got = grad.download(ctx.stream);
  const double got_loss = loss_sum.download(ctx.stream)[0];
  const double expected_loss = expect_cross_entropy(h_logits, h_labels, h_mask, classes, counted, got);
  EXPECT_NEAR(got_loss, expected_loss, 1e-5 * std::abs(expected_loss));
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

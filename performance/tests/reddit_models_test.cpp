// The Reddit benchmark's own training loop (performance/reddit_models.h, gpu/training_kernels.cuh)
// against the float64 oracle. The GPU ops are checked one by one in gpu/tests; what this test
// adds is the loop the benchmark times: layers chained through buffers reused across steps, the
// ReLU between layers, the masked softmax cross-entropy, the parallel column reductions of the
// bias and attention-vector gradients, and Adam.
//
// For each model the benchmark trains (GCN hidden 16, GIN hidden 64, GAT 1 × 16 and 3 × 16; two
// layers) on a small directed graph (3,000 nodes, about 30,000 edges) with self-loops, duplicate
// edges and hub rows, and a training mask that leaves rows out, three training steps are taken
// and after each one:
//   (a) every layer's output is compared with the oracle's layer evaluated on the GPU model's own
//       float32 input to that layer and its parameters at the start of the step (so errors do not
//       compound), and the loss with the float64 cross-entropy of the GPU's own logits;
//   (b) every parameter's gradient and every hidden layer's input gradient with the oracle's
//       backward of that layer, given the gradient of its output the GPU backward received;
//       the logits' gradient with the float64 cross-entropy's;
//   (c) the parameters with training::Adam (torch.optim.Adam, no weight decay) in float64, fed the
//       GPU's gradients of every step so far from the same initial parameters.
// Bounds: checks::ToleranceModel (float32) for each layer's outputs and gradients — the bound
// `gnncheck run` holds the `gpu` system to; closed-form γ bounds for the cross-entropy and for Adam,
// derived below next to their code. No tolerance here is tuned.
//
// The hidden layers' ReLU is applied in place on the device, so what is compared is ReLU(output)
// with ReLU(oracle output) under the output's bound (ReLU is 1-Lipschitz: the bound still holds),
// and the gradient passed down with the oracle's input gradient masked where the GPU's ReLU output
// is 0 (the mask is exact; the masked elements must be exactly 0).
//
// The host-only tests at the end (no device needed) hold float32 emulations of the loss and Adam
// kernels to the same closed-form bounds, and show the bounds reject a loss gradient without the
// mask and an Adam with its bias corrections swapped.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "checks/tolerance.h"
#include "performance/reddit_models.h"
#include "performance/reddit_timeline.h"
#include "performance/head_products.cuh"
#include "gpu/training_kernels.cuh"
#include "gpu/context.h"
#include "gpu/device_graph.h"
#include "gpu/tests/gpu_test_support.h"
#include "core/error.h"
#include "core/graph.h"
#include "oracle/targets.h"
#include "training/adam.h"
#include "training/task.h"

namespace gnncheck::perf {
namespace {

constexpr double u32 = 0x1p-24;     // unit roundoff of float32
constexpr double safety = 2.0;      // the project's safety factor on closed forms (checks::ToleranceOptions)
constexpr std::uint64_t kSeed = 20261130;
constexpr int kSteps = 3;

double gamma(double n) { return checks::gamma(n, u32); }

// ---- the data --------------------------------------------------------------------------------

struct TrainingData {
  Graph without_loops;  // GIN's oracle graph: (1 + ε)·x_i + Σ_j x_j with ε = 0 is a sum over A + I
  Graph graph;          // A + I: what the benchmark's models are given
  index_t width = 12, classes = 7;
  std::vector<float> features;
  std::vector<std::int32_t> labels;
  std::vector<std::uint8_t> mask;
  std::vector<index_t> train_nodes;
};

// `n` nodes and about 10·n directed edges: random out-neighbors (7.5 per node on average), two
// hub destinations with n/2 in-edges each, 2n/3 edges repeated verbatim, a self-loop on every node;
// 12 features in [-1, 1], 7 classes, about 60 % of the rows in the training mask.
// The GPU test takes 3,000 nodes: more rows than the column reductions' 512 blocks, so that each
// block's lanes sum several rows (with 300 every block would see at most one row); the host loop
// takes 300 (the oracle's float32 layers are its arithmetic: it stays fast on CI's two cores).
constexpr index_t kGpuNodes = 3000, kHostNodes = 300;
TrainingData make_training_data(std::uint64_t seed, index_t n) {
  std::mt19937_64 rng(seed);
  std::vector<index_t> dst, src;
  for (index_t v = 0; v < n; ++v)
    for (index_t k = static_cast<index_t>(rng() % 16); k > 0; --k) {
      dst.push_back(static_cast<index_t>(rng() % n));
      src.push_back(v);
    }
  for (index_t hub : {index_t{7}, n / 2})
    for (index_t k = 0; k < n / 2; ++k) {
      dst.push_back(hub);
      src.push_back(static_cast<index_t>(rng() % n));
    }
  for (index_t k = 0; k < n * 2 / 3; ++k) {
    const std::size_t pick = rng() % dst.size();
    dst.push_back(dst[pick]);
    src.push_back(src[pick]);
  }
  TrainingData d;
  d.without_loops = Graph::from_edges(n, n, dst, src);
  d.graph = d.without_loops.with_self_loops();
  std::uniform_real_distribution<float> feature(-1.0f, 1.0f);
  d.features.resize(static_cast<size_t>(n * d.width));
  for (float& x : d.features) x = feature(rng);
  for (index_t v = 0; v < n; ++v) {
    d.labels.push_back(static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(d.classes)));
    d.mask.push_back(rng() % 5 < 3 ? 1 : 0);
    if (d.mask.back()) d.train_nodes.push_back(v);
  }
  return d;
}

Tensor to_tensor(const std::vector<float>& values, std::vector<index_t> shape) {
  return Tensor(std::move(shape), std::vector<double>(values.begin(), values.end()));
}

// ---- comparisons -----------------------------------------------------------------------------

// The largest |got − exact| / bound seen in one kind of comparison, and where.
struct Worst {
  double ratio = 0.0;
  std::string where;
  void see(double r, const std::string& label) {
    if (r > ratio) {
      ratio = r;
      where = label;
    }
  }
};

// Every element within its bound; the first violation (and how many there are) is a test failure.
void expect_within(const std::string& label, const std::vector<float>& got, const Tensor& exact, const Tensor& bound,
                   Worst& worst) {
  ASSERT_EQ(got.size(), static_cast<size_t>(exact.size())) << label;
  ASSERT_EQ(bound.size(), exact.size()) << label;
  index_t violations = 0, first = -1;
  double largest = 0.0;
  for (index_t k = 0; k < exact.size(); ++k) {
    const double err = std::abs(static_cast<double>(got[static_cast<size_t>(k)]) - exact[k]);
    if (!(err <= bound[k])) {
      if (violations++ == 0) first = k;
    }
    if (bound[k] > 0) largest = std::max(largest, err / bound[k]);
  }
  worst.see(largest, label);
  if (violations > 0) {
    const index_t cols = std::max<index_t>(1, exact.row_size());
    ADD_FAILURE() << fmt::format(
        "{}: {} of {} elements outside their bound; first [{}] (row {}, column {}): got {:.9g}, oracle {:.17g}, "
        "error {:.3g} > bound {:.3g}",
        label, violations, exact.size(), first, first / cols, first % cols, got[static_cast<size_t>(first)],
        exact[first], std::abs(got[static_cast<size_t>(first)] - exact[first]), bound[first]);
  }
}

// ---- the loss: masked softmax cross-entropy ----------------------------------------------------

struct CrossEntropyBounds {
  double loss = 0.0;
  Tensor grad_logits;
};

// Closed-form bounds on the float32 loss and logit gradient of gpu/training_kernels.cu's kernel,
// given the same (float32) logits z. For a training row i with C classes, T training rows:
//   m = max_c z_c (exact: a max rounds nothing), D = m − min_c z_c, S = Σ_c exp(z_c − m) ≥ 1,
//   p_c = exp(z_c − m)/S, L = log S + m − z_label; loss = (1/T)·Σ_i L_i, grad = (p − onehot)/T.
// The kernel rounds: d_c = z_c − m (relative u, so the exponent moves by ≤ u·D), expf (≤ 2 ulp,
// CUDA's documented maximum: relative 4u), so each exp carries θ_e = u·(D + 4); the sum of C
// positive terms in the warp's order adds γ_{C−1}: θ_S = θ_e + γ_{C−1}; p_c = e_c/S: θ_p = θ_e + θ_S + u.
// Gradient: fl(p̂ − y) adds u·|p − y|, the factor fl(1/T) and the product 2u more:
//   |ĝ_c − g_c| ≤ (1/T)·(p_c·θ_p + 3u·|p_c − y_c|),            and exactly 0 on rows outside the mask.
// Loss: logf(Ŝ) = log S + θ_S + (logf, 1 ulp) 2u·log S; + m and − z_label round u·|log S + m| and
// u·L; the product with fl(1/T) 2u·L; the T additions (non-negative terms, any order; the kernel
// adds in float64 and divides by T once, which rounds less) γ_{T−1}·loss:
//   |losŝ − loss| ≤ (1/T)·Σ_i (θ_S,i + 2u·log S_i + u·|log S_i + m_i| + 3u·L_i) + γ_{T−1}·loss.
// Underflow: an exp below float32's normal range (z_c − m < −87) loses its relative accuracy and
// may be flushed to 0 (flush-to-zero builds included); each exp, quotient and product into that
// range is off by at most φ = 2^-126 absolutely. With S ≥ 1 that adds C·φ to θ_S, and 2φ/T + φ to
// each gradient element: |ĝ_c − g_c| ≤ (1/T)·(p_c·θ_p + 2φ + 3u·|p_c − y_c|) + φ.
// These are first-order in u; every θ here is below 1e-5 on O(1) logits, so the second-order
// terms are below 1e-10 relative, inside the safety factor 2 that multiplies both bounds.
CrossEntropyBounds cross_entropy_bounds(const Tensor& logits, const std::vector<std::int32_t>& labels,
                                        const std::vector<std::uint8_t>& mask) {
  const double u = u32, phi = 0x1p-126;
  const index_t rows = logits.rows(), classes = logits.row_size();
  const double train = static_cast<double>(std::count(mask.begin(), mask.end(), std::uint8_t{1}));
  CrossEntropyBounds b{0.0, Tensor(logits.shape())};
  double loss_terms = 0.0, loss = 0.0;
  for (index_t i = 0; i < rows; ++i) {
    if (!mask[static_cast<size_t>(i)]) continue;  // bound 0: the gradient must be exactly 0
    const double* z = logits.row(i);
    const double m = *std::max_element(z, z + classes), spread = m - *std::min_element(z, z + classes);
    double s = 0.0;
    for (index_t c = 0; c < classes; ++c) s += std::exp(z[c] - m);
    const double theta_e = u * (spread + 4.0);
    const double theta_s = theta_e + gamma(static_cast<double>(classes - 1)) + static_cast<double>(classes) * phi;
    const double theta_p = theta_e + theta_s + u;
    const index_t label = labels[static_cast<size_t>(i)];
    for (index_t c = 0; c < classes; ++c) {
      const double p = std::exp(z[c] - m) / s, q = p - (c == label ? 1.0 : 0.0);
      b.grad_logits.at(i, c) = safety * ((p * theta_p + 2.0 * phi + 3.0 * u * std::abs(q)) / train + phi);
    }
    const double log_s = std::log(s), row_loss = log_s + m - z[label];
    loss_terms += theta_s + 2.0 * u * log_s + u * std::abs(log_s + m) + 3.0 * u * row_loss;
    loss += row_loss / train;
  }
  b.loss = safety * (loss_terms / train + gamma(train - 1) * loss);
  return b;
}

// ---- Adam ------------------------------------------------------------------------------------

// torch.optim.Adam's defaults with the benchmark's learning rate (reddit_models.cpp's Param::adam).
const training::AdamOptions kAdam{.learning_rate = 0.01, .weight_decay = 0.0, .beta1 = 0.9, .beta2 = 0.999, .epsilon = 1e-8};

// training::Adam in float64 from the GPU's initial parameters, fed the GPU's gradient of every
// step, with a closed-form bound on how far a float32 Adam (gpu/training_kernels.cu's adam_step with
// float constants) may drift from it. At step t, per element, with m, v the exact moments and
// M = Σ_k (1−β1)·β1^{t−k}·|g_k| the moment of |g| (cancellation in m hides its rounding):
//   constants: fl(β) is off by u·β, so 1 − fl(β) (exact by Sterbenz) is off relatively by
//     κ·u, κ = β/(1−β) — 9u for β1, 999u for β2 — and fl(β)^t by t·u;
//   m̂: besides κ1·u each term sees at most 3t roundings (the products and sums of the t steps):
//     |m̂ − m| ≤ ε_m·M, ε_m = κ1·u + γ_{3t};  v̂ (non-negative terms, one more product g·g):
//     |v̂ − v| ≤ ε_v·v, ε_v = κ2·u + γ_{3t+1};
//   bias corrections c = 1 − fl(β)^t on the host (powf ≤ 1 ulp: 2u; the subtraction u):
//     ε_c = (t + 2)·u·β^t/c + u;
//   the update Δ = lr·(m/c1)/(√(v/c2) + ε): numerator (lr's rounding, the division, the product)
//     |N̂ − N| ≤ (lr/c1)·(ε_m·M + |m|·(ε_c1 + 3u)); denominator (the division, sqrtf, ε's rounding,
//     the sum; a sum of non-negative terms keeps the larger relative error)
//     ε_den = (ε_v + ε_c2 + u)/2 + 2u; then |Δ̂ − Δ| ≤ |N̂ − N|/den + |Δ|·(ε_den + u);
//   the parameter: |p̂_t − p_t| ≤ |p̂_{t−1} − p_{t−1}| + |Δ̂_t − Δ_t| + u·|p_t|.
// First-order in u: the largest ε (ε_c2 at t = 1, about 3000u = 1.8e-4) makes the second-order
// terms below 4e-8 relative, inside the safety factor 2 applied to the accumulated bound.
class AdamReference {
 public:
  explicit AdamReference(const TensorMap& initial) : params_(initial) {
    for (const auto& [name, p] : initial) {
      m_[name] = v_[name] = abs_m_[name] = drift_[name] = Tensor(p.shape());
    }
  }

  void step(const TensorMap& grads) {
    adam_.step(params_, grads);
    ++t_;
    const double u = u32, b1 = kAdam.beta1, b2 = kAdam.beta2, lr = kAdam.learning_rate;
    const double c1 = 1.0 - std::pow(b1, t_), c2 = 1.0 - std::pow(b2, t_);
    const double eps_m = b1 / (1.0 - b1) * u + gamma(3.0 * t_), eps_v = b2 / (1.0 - b2) * u + gamma(3.0 * t_ + 1);
    const double eps_c1 = (t_ + 2.0) * u * std::pow(b1, t_) / c1 + u, eps_c2 = (t_ + 2.0) * u * std::pow(b2, t_) / c2 + u;
    const double eps_den = (eps_v + eps_c2 + u) / 2.0 + 2.0 * u;
    for (auto& [name, p] : params_) {
      const Tensor& g = grads.at(name);
      Tensor &m = m_.at(name), &v = v_.at(name), &abs_m = abs_m_.at(name), &drift = drift_.at(name);
      for (index_t k = 0; k < p.size(); ++k) {
        m[k] = b1 * m[k] + (1.0 - b1) * g[k];
        v[k] = b2 * v[k] + (1.0 - b2) * g[k] * g[k];
        abs_m[k] = b1 * abs_m[k] + (1.0 - b1) * std::abs(g[k]);
        const double den = std::sqrt(v[k] / c2) + kAdam.epsilon;
        const double delta = lr * (m[k] / c1) / den;
        const double numerator_err = lr / c1 * (eps_m * abs_m[k] + std::abs(m[k]) * (eps_c1 + 3.0 * u));
        drift[k] += numerator_err / den + std::abs(delta) * (eps_den + u) + u * std::abs(p[k]);
      }
    }
  }

  const Tensor& value(const std::string& name) const { return params_.at(name); }
  Tensor bound(const std::string& name) const {
    Tensor b = drift_.at(name);
    for (double& x : b.values()) x *= safety;
    return b;
  }

 private:
  training::Adam adam_{kAdam};
  int t_ = 0;
  TensorMap params_, m_, v_, abs_m_, drift_;
};

// ---- column sums: bias and attention-vector gradients ----------------------------------------

// Column sums s_c = Σ_i w_i·x_ic in float64 and the classical bound for the order
// gpu/training_kernels.cuh documents for weighted_column_sums: a term passes through its lane's
// ⌈chunk/lanes⌉ additions, the block's `lanes` partial sums and the second pass's column_sum_slices,
// after one product, so  |ŝ_c − s_c| ≤ 2·γ_n·Σ_i |w_i||x_ic|,
// n = ⌈chunk/lanes⌉ + lanes + column_sum_slices + 1 (chunk = ⌈rows/column_sum_slices⌉ rows per block;
// lanes = 256 / the columns of the pass, up to 256 columns at a time). Any other order of at most
// n roundings per term meets the same bound (a plain loop over fewer than n rows does).
// x is [rows, heads·channels]; w is [rows, heads] or empty (every weight 1).
struct ColumnSums {
  Tensor exact, bound;
};
ColumnSums column_sums_with_bound(index_t rows, index_t heads, index_t channels, const std::vector<float>& x,
                                  const std::vector<float>& w) {
  const index_t width = heads * channels, chunk = (rows + gpu::column_sum_slices - 1) / gpu::column_sum_slices;
  ColumnSums sums{Tensor({width}), Tensor({width})};
  for (index_t col = 0; col < width; ++col) {
    const index_t pass_columns = std::min<index_t>(width - col / 256 * 256, 256), lanes = 256 / pass_columns;
    const double n = static_cast<double>((chunk + lanes - 1) / lanes + lanes + gpu::column_sum_slices + 1);
    double sum = 0.0, magnitude = 0.0;
    for (index_t i = 0; i < rows; ++i) {
      const double term = (w.empty() ? 1.0 : w[static_cast<size_t>(i * heads + col / channels)]) *
                          x[static_cast<size_t>(i * width + col)];
      sum += term;
      magnitude += std::abs(term);
    }
    sums.exact[col] = sum;
    sums.bound[col] = safety * gamma(n) * magnitude;
  }
  return sums;
}

// ---- the models ------------------------------------------------------------------------------

struct ModelCase {
  const char* test_name;
  ModelSpec spec;
};

// GoogleTest prints a parameter with this (instead of its bytes).
void PrintTo(const ModelCase& model, std::ostream* os) { *os << model.spec.name(); }

const ModelCase kModels[] = {
    {"GCN", {ModelKind::gcn, 16, 1}},
    {"GIN", {ModelKind::gin, 64, 1}},
    {"GAT1", {ModelKind::gat, 16, 1}},
    {"GAT3", {ModelKind::gat, 16, 3}},
};

// The oracle's case for one layer of a two-layer model: its input x, its parameters and (for the
// backward) the gradient of its output, all as the model under test had them.
Case layer_case(const ModelSpec& spec, bool last, const TrainingData& d, Tensor x,
                const std::vector<ParameterSnapshot>& params, std::optional<Tensor> grad_y) {
  Case c;
  c.seed = kSeed;
  const index_t in = x.row_size(), out = last ? d.classes : spec.hidden;
  switch (spec.kind) {
    case ModelKind::gcn:
      c.target = "gcn";
      c.attributes = {{"in_features", in}, {"out_features", out}, {"bias", true}, {"self_loops", false},
                      {"norm", std::string("symmetric")}};
      c.graph = std::make_shared<const Graph>(d.graph);
      break;
    case ModelKind::gin:
      c.target = "gin";
      c.attributes = {{"in_features", in}, {"hidden_features", spec.hidden}, {"out_features", out}, {"bias", true}};
      c.graph = std::make_shared<const Graph>(d.without_loops);
      c.parameters["eps"] = Tensor({1}, {0.0});  // GINConv's default: ε fixed at 0, not learned
      break;
    case ModelKind::gat:
      c.target = "gat";
      c.attributes = {{"in_features", in},   {"out_features", out}, {"heads", last ? index_t{1} : spec.heads},
                      {"concat", true},      {"bias", true},        {"self_loops", false},
                      {"negative_slope", 0.2}, {"attn_dropout", 0.0}};
      c.graph = std::make_shared<const Graph>(d.graph);
      break;
  }
  const oracle::TargetDef& def = oracle::entry_of(c);
  const auto shapes = def.input_shapes(*c.graph, oracle::with_defaults(def.spec, c.attributes));
  for (const ParameterSnapshot& p : params) c.parameters[p.name] = to_tensor(p.value, shapes.at(p.name));
  c.inputs["x"] = std::move(x);
  if (grad_y) c.grad_outputs["y"] = std::move(*grad_y);
  return c;
}

struct TrainingFigures {
  Worst outputs, gradients, loss, adam;
};

// The checks (a), (b), (c) over `steps` training steps: `before` holds the initial parameters,
// `take_step` runs one step and returns what it left. Every violation is a test failure.
TrainingFigures check_training(const ModelSpec& spec, const TrainingData& d, ModelSnapshot before,
                               const std::function<ModelSnapshot()>& take_step, const std::string& where) {
  TensorMap initial;
  for (size_t l = 0; l < before.layers.size(); ++l)
    for (const ParameterSnapshot& p : before.layers[l].parameters)
      initial[fmt::format("layer {} {}", l, p.name)] = to_tensor(p.value, {static_cast<index_t>(p.value.size())});
  AdamReference adam(initial);
  TrainingFigures worst;
  const checks::ToleranceModel tolerance;  // the check library's defaults, as `gnncheck run` uses them
  const std::vector<index_t> labels(d.labels.begin(), d.labels.end());

  for (int step = 1; step <= kSteps; ++step) {
    SCOPED_TRACE(fmt::format("{}, step {}", where, step));
    const ModelSnapshot after = take_step();
    EXPECT_EQ(after.layers.size(), 2u);
    if (after.layers.size() != 2u) return worst;
    TensorMap grads;
    for (size_t l = 0; l < after.layers.size(); ++l) {
      const bool last = l + 1 == after.layers.size();
      const LayerSnapshot& layer = after.layers[l];
      const std::string name = fmt::format("step {} layer {}", step, l);
      const Tensor x = l == 0 ? to_tensor(d.features, {d.graph.n_src(), d.width})
                              : to_tensor(after.layers[l - 1].output, {after.layers[l - 1].rows, after.layers[l - 1].width});
      const Case c = layer_case(spec, last, d, x, before.layers[l].parameters,
                                to_tensor(layer.grad_output, {layer.rows, layer.width}));
      const Result exact = oracle::evaluate(c, Precision::float64);
      EXPECT_TRUE(exact.ok()) << name << ": oracle: " << exact.message;
      if (!exact.ok()) return worst;
      const checks::Bounds bounds = tolerance.bounds(c, exact, Precision::float32);

      // (a) the layer's output: ReLU'd in place for the hidden layer.
      Tensor y = exact.outputs.at("y");
      if (!last) {
        for (double& v : y.values()) v = std::max(v, 0.0);
        const auto positive = std::count_if(layer.output.begin(), layer.output.end(), [](float v) { return v > 0; });
        EXPECT_GT(positive, 0) << name << ": the hidden ReLU passes nothing; the ReLU checks would be empty";
        EXPECT_LT(positive, static_cast<long>(layer.output.size())) << name << ": the hidden ReLU cuts nothing";
      }
      expect_within(name + " output y" + (last ? " (logits)" : " after ReLU"), layer.output, y,
                    bounds.tensors.at("output y"), worst.outputs);

      // (b) the parameters' gradients, and the gradient passed to the layer below through the ReLU.
      for (const ParameterSnapshot& p : layer.parameters) {
        expect_within(name + " gradient " + p.name, p.grad, exact.gradients.at(p.name),
                      bounds.tensors.at("gradient " + p.name), worst.gradients);
        grads[fmt::format("layer {} {}", l, p.name)] = to_tensor(p.grad, {static_cast<index_t>(p.grad.size())});
      }
      // The output bias's gradient is the column sums of the output gradient the layer received
      // (GCN's and GAT's bias, GIN's bias2): held also to the reduction's own closed form, which
      // is tighter than the layer's measured bound (dropping a few rows hides under the latter).
      for (const ParameterSnapshot& p : layer.parameters)
        if (p.name == "bias" || p.name == "bias2") {
          const ColumnSums sums = column_sums_with_bound(layer.rows, 1, layer.width, layer.grad_output, {});
          expect_within(name + " gradient " + p.name + " as column sums of the output gradient", p.grad, sums.exact,
                        sums.bound, worst.gradients);
        }
      if (l > 0) {
        Tensor gx = exact.gradients.at("x"), bound = bounds.tensors.at("gradient x");
        for (index_t k = 0; k < gx.size(); ++k)
          if (!(x[k] > 0)) gx[k] = bound[k] = 0.0;  // the ReLU's output was 0: nothing may pass
        expect_within(name + " gradient x through the ReLU", after.layers[l - 1].grad_output, gx, bound,
                      worst.gradients);
      }

      // (a), (b) the loss and the logits' gradient, from the model's own logits.
      if (last) {
        const Tensor logits = to_tensor(layer.output, {layer.rows, layer.width});
        const training::LossAndGradient ce = training::cross_entropy(logits, labels, d.train_nodes);
        const CrossEntropyBounds ce_bounds = cross_entropy_bounds(logits, d.labels, d.mask);
        expect_within(fmt::format("step {} loss", step), {after.loss}, Tensor({1}, {ce.loss}),
                      Tensor({1}, {ce_bounds.loss}), worst.loss);
        expect_within(fmt::format("step {} gradient of the logits", step), layer.grad_output, ce.grad_logits,
                      ce_bounds.grad_logits, worst.loss);
      }
    }

    // (c) Adam, in float64 on the model's gradients, from the same initial parameters.
    adam.step(grads);
    for (size_t l = 0; l < after.layers.size(); ++l)
      for (const ParameterSnapshot& p : after.layers[l].parameters) {
        const std::string key = fmt::format("layer {} {}", l, p.name);
        expect_within(fmt::format("step {} Adam: {}", step, key), p.value, adam.value(key), adam.bound(key), worst.adam);
      }
    before = after;
  }
  fmt::print("{}: {} steps, worst |model − oracle| / bound: layer outputs {:.3g} ({}), gradients {:.3g} ({}), "
             "loss and logit gradient {:.3g} ({}), Adam {:.3g} ({})\n",
             where, kSteps, worst.outputs.ratio, worst.outputs.where, worst.gradients.ratio, worst.gradients.where,
             worst.loss.ratio, worst.loss.where, worst.adam.ratio, worst.adam.where);
  std::fflush(stdout);
  return worst;
}

class RedditModelsTest : public ::testing::TestWithParam<ModelCase> {
 protected:
  void SetUp() override { GNNCHECK_GPU_TEST_REQUIRES_DEVICE(); }
};

TEST_P(RedditModelsTest, TrainingStepsMatchTheFloat64Oracle) {
  const ModelSpec spec = GetParam().spec;
  const TrainingData d = make_training_data(kSeed, kGpuNodes);
  ASSERT_LT(d.train_nodes.size(), static_cast<size_t>(d.graph.n_dst())) << "the mask must leave rows out";
  gpu::GpuContext ctx;
  gpu::DeviceGraph graph(ctx, d.graph);
  prepare_graph(ctx, graph, spec.kind);
  const TrainingInputs inputs(ctx, d.features, d.width, d.labels, d.mask, d.classes);
  auto model = make_model(ctx, spec, {&graph, &graph}, inputs, /*seed=*/7);
  OpTimeline timeline(ctx.stream, false);
  check_training(spec, d, model->snapshot(), [&] {
    model->train_step(timeline);
    return model->snapshot();
  }, fmt::format("GPU {} on {}, data seed {}", spec.name(), d.graph.summary(), kSeed));
}

INSTANTIATE_TEST_SUITE_P(BenchmarkModels, RedditModelsTest, ::testing::ValuesIn(kModels),
                         [](const ::testing::TestParamInfo<ModelCase>& info) { return std::string(info.param.test_name); });

// ---- the column reductions at Reddit's row count ----------------------------------------------

// weighted_column_sums and add_head_products on 232,965 rows (the Reddit-shaped graph's), where
// every block sums hundreds of rows, against float64. The sums are held to column_sums_with_bound's
// bound for their documented order; a dropped or doubled slice of rows moves a sum of positive
// terms by about 1/512 of it, more than 20 times that bound. add_head_products is one product and one addition
// per element: 2·γ_2·(|grad_x| + |g||a|).
class RedditColumnReductions : public ::testing::Test {
 protected:
  void SetUp() override { GNNCHECK_GPU_TEST_REQUIRES_DEVICE(); }
};

struct ReductionShape {
  index_t rows, heads, channels;
  bool weighted;
  float low;  // values drawn from [low, 1]: low > 0 makes every term positive (no cancellation)
};

TEST_F(RedditColumnReductions, WeightedColumnSumsMatchFloat64) {
  gpu::GpuContext ctx;
  const ReductionShape shapes[] = {
      {232'965, 1, 41, false, 0.5f},  // the last layer's bias gradient (41 classes)
      {232'965, 1, 64, false, -1.0f},  // GIN's hidden bias gradient, with cancellation
      {232'965, 3, 16, true, 0.5f},    // GAT-3's attention-vector gradient
      {232'965, 3, 16, true, -1.0f},
      {5'000, 1, 300, false, -1.0f},   // wider than one pass of 256 columns
      {100, 1, 16, false, 0.5f},       // fewer rows than blocks: most blocks sum nothing
  };
  for (const ReductionShape& shape : shapes) {
    const index_t width = shape.heads * shape.channels;
    SCOPED_TRACE(fmt::format("{} rows, {} heads × {} channels, weighted {}, values in [{}, 1]", shape.rows, shape.heads,
                             shape.channels, shape.weighted, shape.low));
    std::mt19937_64 rng(kSeed + static_cast<std::uint64_t>(width));
    std::uniform_real_distribution<float> value(shape.low, 1.0f);
    std::vector<float> x(static_cast<size_t>(shape.rows * width)), w(static_cast<size_t>(shape.rows * shape.heads));
    for (float& v : x) v = value(rng);
    for (float& v : w) v = value(rng);
    gpu::DeviceBuffer<float> d_x(ctx.allocator, shape.rows * width), d_w(ctx.allocator, shape.rows * shape.heads),
        partials(ctx.allocator, gpu::column_sum_slices * width), out(ctx.allocator, width);
    d_x.upload(x, ctx.stream);
    d_w.upload(w, ctx.stream);
    gpu::weighted_column_sums(ctx, shape.rows, shape.heads, shape.channels, d_x.data(), shape.weighted ? d_w.data() : nullptr,
                         partials.data(), out.data());
    const std::vector<float> got = out.download(ctx.stream);
    const ColumnSums sums = column_sums_with_bound(shape.rows, shape.heads, shape.channels, x,
                                                   shape.weighted ? w : std::vector<float>{});
    Worst worst;
    expect_within("column sums", got, sums.exact, sums.bound, worst);
    fmt::print("weighted_column_sums, {} rows, width {} ({} heads), weighted {}, values in [{}, 1]: worst error/bound {:.3g}\n",
               shape.rows, width, shape.heads, shape.weighted, shape.low, worst.ratio);
  }
}

TEST_F(RedditColumnReductions, AddHeadProductsMatchFloat64) {
  gpu::GpuContext ctx;
  const index_t rows = 232'965, heads = 3, channels = 16, width = heads * channels;
  std::mt19937_64 rng(kSeed + 5);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> g(static_cast<size_t>(rows * heads)), a(static_cast<size_t>(width)),
      grad_x(static_cast<size_t>(rows * width));
  for (auto* v : {&g, &a, &grad_x})
    for (float& e : *v) e = value(rng);
  gpu::DeviceBuffer<float> d_g(ctx.allocator, rows * heads), d_a(ctx.allocator, width), d_grad_x(ctx.allocator, rows * width);
  d_g.upload(g, ctx.stream);
  d_a.upload(a, ctx.stream);
  d_grad_x.upload(grad_x, ctx.stream);
  add_head_products(ctx, rows, heads, channels, d_g.data(), d_a.data(), d_grad_x.data());
  const std::vector<float> got = d_grad_x.download(ctx.stream);
  Tensor exact({rows, width}), bound({rows, width});
  for (index_t i = 0; i < rows; ++i)
    for (index_t k = 0; k < width; ++k) {
      const double before = grad_x[static_cast<size_t>(i * width + k)];
      const double product = static_cast<double>(g[static_cast<size_t>(i * heads + k / channels)]) * a[static_cast<size_t>(k)];
      exact.at(i, k) = before + product;
      bound.at(i, k) = safety * gamma(2) * (std::abs(before) + std::abs(product));
    }
  Worst worst;
  expect_within("grad_x + g·a", got, exact, bound, worst);
  fmt::print("add_head_products, {} rows, {} heads × {} channels: worst error/bound {:.3g}\n", rows, heads, channels,
             worst.ratio);
}

// ---- the closed-form bounds themselves (host only) ---------------------------------------------

// float32 emulations of gpu/training_kernels.cu's loss and Adam kernels, in the same operation order (a plain loop
// in place of the warp's order). `with_mask` and `swap_corrections` turn on the two mistakes the
// bounds must reject.
std::vector<float> host_cross_entropy(const std::vector<float>& z, index_t classes, const std::vector<std::int32_t>& labels,
                                      const std::vector<std::uint8_t>& mask, bool with_mask, float& loss) {
  const index_t rows = static_cast<index_t>(labels.size());
  const float inv = 1.0f / static_cast<float>(std::count(mask.begin(), mask.end(), std::uint8_t{1}));
  std::vector<float> g(z.size(), 0.0f);
  loss = 0.0f;
  for (index_t i = 0; i < rows; ++i) {
    if (with_mask && !mask[static_cast<size_t>(i)]) continue;
    const float* row = z.data() + i * classes;
    const float m = *std::max_element(row, row + classes);
    float s = 0.0f;
    for (index_t c = classes; c-- > 0;) s += std::exp(row[c] - m);  // reversed: another summation order
    const int label = labels[static_cast<size_t>(i)];
    for (index_t c = 0; c < classes; ++c)
      g[static_cast<size_t>(i * classes + c)] = inv * (std::exp(row[c] - m) / s - (c == label ? 1.0f : 0.0f));
    if (mask[static_cast<size_t>(i)]) loss += inv * (std::log(s) + m - row[label]);
  }
  return g;
}

TEST(RedditModelsBounds, CrossEntropyBoundHoldsForFloat32AndRejectsAnUnmaskedGradient) {
  const TrainingData d = make_training_data(kSeed, kHostNodes);
  std::mt19937_64 rng(kSeed + 1);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const index_t rows = d.graph.n_dst();
  std::vector<float> z(static_cast<size_t>(rows * d.classes));
  for (float& v : z) v = normal(rng);
  const Tensor logits = to_tensor(z, {rows, d.classes});
  const auto ce = training::cross_entropy(logits, std::vector<index_t>(d.labels.begin(), d.labels.end()), d.train_nodes);
  const CrossEntropyBounds bounds = cross_entropy_bounds(logits, d.labels, d.mask);
  float loss = 0.0f;
  Worst worst;
  expect_within("float32 logit gradient", host_cross_entropy(z, d.classes, d.labels, d.mask, true, loss), ce.grad_logits,
                bounds.grad_logits, worst);
  expect_within("float32 loss", {loss}, Tensor({1}, {ce.loss}), Tensor({1}, {bounds.loss}), worst);
  EXPECT_GT(worst.ratio, 0.0) << "float32 rounding is visible: the comparison is not vacuous";
  // Without the mask every row's gradient is nonzero where the bound says exactly 0.
  const std::vector<float> unmasked = host_cross_entropy(z, d.classes, d.labels, d.mask, false, loss);
  index_t outside = 0;
  for (index_t k = 0; k < ce.grad_logits.size(); ++k)
    outside += std::abs(unmasked[static_cast<size_t>(k)] - ce.grad_logits[k]) > bounds.grad_logits[k];
  EXPECT_GT(outside, 0);
}

// One float32 Adam step as adam_step does it (float constants, bias corrections by powf on the host).
void host_adam_step(std::vector<float>& p, const std::vector<float>& g, std::vector<float>& m, std::vector<float>& v,
                    int t, bool swap_corrections) {
  const float b1 = 0.9f, b2 = 0.999f, lr = 0.01f, eps = 1e-8f;
  float c1 = 1.0f - std::pow(b1, static_cast<float>(t)), c2 = 1.0f - std::pow(b2, static_cast<float>(t));
  if (swap_corrections) std::swap(c1, c2);
  for (size_t k = 0; k < p.size(); ++k) {
    m[k] = b1 * m[k] + (1.0f - b1) * g[k];
    v[k] = b2 * v[k] + (1.0f - b2) * g[k] * g[k];
    p[k] -= lr * (m[k] / c1) / (std::sqrt(v[k] / c2) + eps);
  }
}

TEST(RedditModelsBounds, AdamBoundHoldsForFloat32AndRejectsSwappedBiasCorrections) {
  const index_t n = 4000;
  std::mt19937_64 rng(kSeed + 2);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> p0(static_cast<size_t>(n));
  for (float& v : p0) v = 0.3f * normal(rng);
  for (bool swap_corrections : {false, true}) {
    AdamReference reference({{"p", to_tensor(p0, {n})}});
    std::vector<float> p = p0, m(p.size(), 0.0f), v(p.size(), 0.0f);
    Worst worst;
    index_t outside = 0;
    for (int t = 1; t <= kSteps; ++t) {
      std::vector<float> g(p.size());
      for (size_t k = 0; k < g.size(); ++k) g[k] = (k % 7 == 0 ? 1e-6f : 1e-2f) * normal(rng);  // some near ε
      host_adam_step(p, g, m, v, t, swap_corrections);
      reference.step({{"p", to_tensor(g, {n})}});
      const Tensor& want = reference.value("p");
      const Tensor bound = reference.bound("p");
      if (!swap_corrections) {
        expect_within(fmt::format("float32 Adam step {}", t), p, want, bound, worst);
      } else {
        for (index_t k = 0; k < n; ++k) outside += std::abs(p[static_cast<size_t>(k)] - want[k]) > bound[k];
      }
    }
    if (swap_corrections) {
      EXPECT_GT(outside, n / 2) << "swapped bias corrections must be far outside the bound";
    } else {
      EXPECT_GT(worst.ratio, 0.0);
      fmt::print("float32 Adam emulation, {} steps: worst error/bound {:.3g}\n", kSteps, worst.ratio);
    }
  }
}

// ---- the checks themselves, on a host float32 training loop ------------------------------------

// Mistakes a training loop can make that the checks must catch.
struct LoopMistakes {
  bool unmasked_loss_gradient = false;  // every row's logit gradient, not only the training rows'
  bool no_relu_gradient = false;        // the gradient passed down ignores the ReLU
  bool swapped_bias_corrections = false;
};

// The benchmark's loop on the host in float32: each layer is the oracle's float32 code (another
// correct float32 implementation, in another operation order than the GPU's), the ReLU, the
// cross-entropy and Adam as head_products.cu writes them. Lets the checks run where there is no
// device, and shows they fail on a wrong loop.
class HostLoop {
 public:
  HostLoop(const ModelSpec& spec, const TrainingData& d, LoopMistakes mistakes)
      : spec_(spec), d_(d), mistakes_(mistakes) {
    std::mt19937_64 rng(kSeed + 3);
    std::uniform_real_distribution<float> uniform(-0.4f, 0.4f);
    index_t width = d.width;
    for (int l = 0; l < 2; ++l) {
      const Case c = layer_case(spec, l == 1, d, Tensor({d.graph.n_src(), width}), {}, std::nullopt);
      const oracle::TargetDef& def = oracle::entry_of(c);
      auto& layer = params_.emplace_back();
      for (const auto& [name, shape] : def.input_shapes(*c.graph, oracle::with_defaults(def.spec, c.attributes))) {
        if (name == "x" || name == "eps") continue;
        index_t size = 1;
        for (index_t extent : shape) size *= extent;
        ParameterSnapshot& p = layer.emplace_back();
        p.name = name;
        p.value.resize(static_cast<size_t>(size));
        for (float& v : p.value) v = uniform(rng);
        p.grad.assign(p.value.size(), 0.0f);
      }
      const auto out = def.output_shapes(*c.graph, oracle::with_defaults(def.spec, c.attributes)).at("y");
      widths_.push_back(out[1]);
      width = out[1];
    }
    for (auto& layer : params_)
      for (auto& p : layer) moments_[&p] = {std::vector<float>(p.value.size()), std::vector<float>(p.value.size())};
  }

  ModelSnapshot snapshot() const {
    ModelSnapshot s;
    for (size_t l = 0; l < params_.size(); ++l) s.layers.push_back({d_.graph.n_dst(), widths_[l], {}, {}, params_[l]});
    return s;
  }

  ModelSnapshot step() {
    ModelSnapshot s = snapshot();
    std::vector<Tensor> inputs{to_tensor(d_.features, {d_.graph.n_src(), d_.width})};
    for (size_t l = 0; l < 2; ++l) {
      const Result r = evaluate_f32(layer_case(spec_, l == 1, d_, inputs.back(), params_[l], std::nullopt));
      Tensor y = r.outputs.at("y");
      if (l == 0)
        for (double& v : y.values()) v = std::max(v, 0.0);
      s.layers[l].output.assign(y.values().begin(), y.values().end());
      inputs.push_back(std::move(y));
    }
    std::vector<std::uint8_t> mask = d_.mask;
    if (mistakes_.unmasked_loss_gradient) std::fill(mask.begin(), mask.end(), std::uint8_t{1});
    std::vector<float> grad = host_cross_entropy(s.layers[1].output, d_.classes, d_.labels, mask, true, s.loss);
    if (mistakes_.unmasked_loss_gradient) {  // the loss itself over the training rows only
      host_cross_entropy(s.layers[1].output, d_.classes, d_.labels, d_.mask, true, s.loss);
      const float scale = static_cast<float>(d_.labels.size()) / static_cast<float>(d_.train_nodes.size());
      for (float& g : grad) g *= scale;  // the count of the training rows, as the kernel divides by it
    }
    for (size_t l = 2; l-- > 0;) {
      s.layers[l].grad_output = grad;
      const Result r = evaluate_f32(layer_case(spec_, l == 1, d_, inputs[l], params_[l],
                                               to_tensor(grad, {d_.graph.n_dst(), widths_[l]})));
      for (ParameterSnapshot& p : params_[l]) {
        const Tensor& g = r.gradients.at(p.name);
        p.grad.assign(g.values().begin(), g.values().end());
      }
      if (l > 0) {
        const Tensor& gx = r.gradients.at("x");
        grad.assign(gx.values().begin(), gx.values().end());
        if (!mistakes_.no_relu_gradient)
          for (size_t k = 0; k < grad.size(); ++k)
            if (!(inputs[l][static_cast<index_t>(k)] > 0)) grad[k] = 0.0f;
      }
    }
    ++t_;
    for (auto& layer : params_)
      for (auto& p : layer) {
        auto& [m, v] = moments_.at(&p);
        host_adam_step(p.value, p.grad, m, v, t_, mistakes_.swapped_bias_corrections);
      }
    for (size_t l = 0; l < 2; ++l) s.layers[l].parameters = params_[l];
    return s;
  }

 private:
  static Result evaluate_f32(const Case& c) {
    Result r = oracle::evaluate(c, Precision::float32);
    if (!r.ok()) throw InternalError("host loop: the oracle's float32 layer failed: " + r.message);
    return r;
  }
  ModelSpec spec_;
  const TrainingData& d_;
  LoopMistakes mistakes_;
  std::vector<std::vector<ParameterSnapshot>> params_;
  std::vector<index_t> widths_;
  std::map<const ParameterSnapshot*, std::pair<std::vector<float>, std::vector<float>>> moments_;
  int t_ = 0;
};

// Runs the checks on the host loop and returns the failures they report (without failing the test).
std::vector<std::string> failures_of(const ModelSpec& spec, LoopMistakes mistakes) {
  const TrainingData d = make_training_data(kSeed, kHostNodes);
  HostLoop loop(spec, d, mistakes);
  ::testing::TestPartResultArray results;
  {
    ::testing::ScopedFakeTestPartResultReporter intercept(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    check_training(spec, d, loop.snapshot(), [&] { return loop.step(); }, "host float32 loop, " + spec.name());
  }
  std::vector<std::string> failures;
  for (int k = 0; k < results.size(); ++k)
    if (results.GetTestPartResult(k).failed()) failures.push_back(results.GetTestPartResult(k).message());
  return failures;
}

class HostLoopTest : public ::testing::TestWithParam<ModelCase> {};

TEST_P(HostLoopTest, CorrectFloat32LoopPasses) {
  const std::vector<std::string> failures = failures_of(GetParam().spec, {});
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures, the first: " << failures.front();
}

TEST_P(HostLoopTest, UnmaskedLossGradientFails) {
  const std::vector<std::string> failures = failures_of(GetParam().spec, {.unmasked_loss_gradient = true});
  ASSERT_FALSE(failures.empty());
  EXPECT_NE(failures.front().find("gradient of the logits"), std::string::npos) << failures.front();
}

TEST_P(HostLoopTest, MissingReluGradientFails) {
  const std::vector<std::string> failures = failures_of(GetParam().spec, {.no_relu_gradient = true});
  ASSERT_FALSE(failures.empty());
  EXPECT_NE(failures.front().find("gradient x through the ReLU"), std::string::npos) << failures.front();
}

TEST_P(HostLoopTest, SwappedAdamBiasCorrectionsFail) {
  const std::vector<std::string> failures = failures_of(GetParam().spec, {.swapped_bias_corrections = true});
  ASSERT_FALSE(failures.empty());
  EXPECT_NE(failures.front().find("Adam"), std::string::npos) << failures.front();
}

INSTANTIATE_TEST_SUITE_P(BenchmarkModels, HostLoopTest, ::testing::ValuesIn(kModels),
                         [](const ::testing::TestParamInfo<ModelCase>& info) { return std::string(info.param.test_name); });

}  // namespace
}  // namespace gnncheck::perf

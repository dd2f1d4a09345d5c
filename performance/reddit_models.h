// gnncheck/performance/reddit_models.h — the paper's GNN models (GCN, GIN, GAT) trained
// through the GPU reference's ops, for the performance benchmarks: a stack of layers over one
// graph per layer (the same graph for full-graph training, one sampled bipartite block per layer
// for mini-batches), ReLU between layers, masked softmax cross-entropy and Adam.
//
// Each layer is the op chain of gpu/layers/<layer>_layer.cpp, with buffers allocated once and
// reused every step (no allocation inside an epoch except the ops' own cuSPARSE workspaces), and
// every allocation tagged with its MemoryCategory so the peak can be split the paper's way. Where
// gpu/ offers two verified implementations of a product, the one measured faster on the
// Reddit-shaped graph is used: the CSR row kernel (gpu/aggregate.cuh) for A·X and SpMMve,
// cusparseSDDMM for the attention gradient, the CSC kernel for every Aᵀ product; bias and
// attention-vector gradients use a parallel column reduction (head_products.cuh).
//   GCN   y = D_dst^-½ (A+I) D_src^-½ (x·W) + b          (self-loops in the graph given)
//   GIN   y = ReLU((A+I)·(x·W1) + b1)·W2 + b2   (ε = 0: (1 + ε)·x_i + Σ_j x_j is one sum over A + I,
//         so the graph given has self-loops; MLP of two linears, the first applied before
//         aggregating — the same function by linearity, 64 instead of 602 values gathered per edge)
//   GAT   y = spmm_ve(softmax(LeakyReLU(a_dst·h[dst] + a_src·h[src])), h) + b,  h = x·W  (heads
//         concatenated; self-loops in the graph given)
// Destinations are the first n_dst sources of each graph (the block convention), as in oracle/layers.
//
//   TrainingInputs in(ctx, features, feature_width, labels, mask, classes);
//   auto model = make_model(ctx, ModelSpec{ModelKind::gcn, 16, 1}, {&g, &g}, in, /*seed=*/1);
//   model->train_step(timeline);   // forward, loss, backward, Adam
//   model->loss();                 // the loss of the last step (synchronizes)
//   ModelSnapshot s = model->snapshot();  // every layer's output, gradients and parameters (tests)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "performance/reddit_timeline.h"
#include "gpu/context.h"
#include "gpu/device_graph.h"
#include "core/tensor.h"

namespace gnncheck::perf {

enum class ModelKind { gcn, gin, gat };

struct ModelSpec {
  ModelKind kind = ModelKind::gcn;
  index_t hidden = 16;  // per head for GAT
  index_t heads = 1;    // GAT's hidden layers (the last layer has one head)
  std::string name() const;
};

// The device-resident inputs of training: features of the first graph's sources, labels and the
// loss mask of the last graph's destinations.
struct TrainingInputs {
  TrainingInputs(gpu::GpuContext& ctx, const std::vector<float>& features, index_t feature_width,
                 const std::vector<std::int32_t>& labels, const std::vector<std::uint8_t>& mask, index_t classes);
  index_t rows = 0, width = 0, label_rows = 0, classes = 0, train_count = 0;
  gpu::DeviceBuffer<float> features;
  gpu::DeviceBuffer<std::int32_t> labels;
  gpu::DeviceBuffer<std::uint8_t> mask;
};

// Builds the views a model reads (CSC, COO rows, edge_perm, unit values) ahead of time, tagged as
// graph storage, so no graph array is built inside a timed epoch.
void prepare_graph(gpu::GpuContext& ctx, gpu::DeviceGraph& g, ModelKind kind);

// What the device holds after a training step, downloaded so that the training loop itself can be
// checked against the float64 oracle (performance/tests/reddit_models_test.cpp). Reading it
// synchronizes and copies; the benchmark's timed epochs never call it.
struct ParameterSnapshot {
  std::string name;          // as the oracle's layer target names it: weight, bias, weight1, att_src, …
  std::vector<float> value;  // row-major in the oracle's shape; after the last step's Adam update
  std::vector<float> grad;   // the gradient the last step computed (and Adam applied)
};
struct LayerSnapshot {
  index_t rows = 0, width = 0;     // the layer's output is [rows = n_dst, width]
  std::vector<float> output;       // the last forward's output; after the ReLU for every layer but the last
  std::vector<float> grad_output;  // d loss / d (the output before the ReLU), as the last backward used it
  std::vector<ParameterSnapshot> parameters;
};
struct ModelSnapshot {
  float loss = 0.0f;  // of the last step's forward
  std::vector<LayerSnapshot> layers;  // first layer first
};

class Model {
 public:
  virtual ~Model() = default;
  // One iteration: forward, loss, backward, Adam step. Asynchronous except where an op
  // synchronizes internally.
  virtual void train_step(OpTimeline& timeline) = 0;
  // The loss of the last step (synchronizes).
  virtual float loss() = 0;
  // Everything the last step left on the device (synchronizes; before the first step the outputs
  // and gradients are uninitialized and only the parameters' initial values mean anything).
  virtual ModelSnapshot snapshot() = 0;
};

// `graphs` has one graph per layer, first layer first; each must have been prepared for the kind.
// Parameters are initialized from `seed` as PyG initializes them (Glorot for GCN and GAT, PyTorch's
// nn.Linear default for GIN's MLPs; biases zero). Throws InputError when the graphs' sizes do not chain
// (n_dst of layer l must be n_src of layer l+1) or the inputs do not match them.
std::unique_ptr<Model> make_model(gpu::GpuContext& ctx, const ModelSpec& spec, std::vector<gpu::DeviceGraph*> graphs,
                                  const TrainingInputs& inputs, std::uint64_t seed);

}  // namespace gnncheck::perf

#include "training/task.h"

#include <cmath>

#include <fmt/format.h>

namespace gnncheck::training {

NodeClassificationTask NodeClassificationTask::from_dataset(const Dataset& dataset, bool row_normalize) {
  NodeClassificationTask task;
  task.name = dataset.name;
  task.graph = std::make_shared<const Graph>(dataset.graph);
  task.features = row_normalize ? gnncheck::row_normalized(dataset.features) : dataset.features;
  task.labels = dataset.labels;
  task.num_classes = dataset.num_classes;
  task.train_nodes = dataset.train_nodes;
  task.val_nodes = dataset.val_nodes;
  task.test_nodes = dataset.test_nodes;
  validate_task(task);
  return task;
}

void validate_task(const NodeClassificationTask& task) {
  auto fail = [&](const std::string& why) { throw InputError(fmt::format("task '{}': {}", task.name, why)); };
  if (!task.graph) fail("no graph");
  if (!task.graph->is_square()) fail(fmt::format("the graph must be square, got {}", task.graph->summary()));
  const index_t n = task.graph->n_dst();
  if (task.features.rank() != 2 || task.features.rows() != n)
    fail(fmt::format("features must be [{}, F], got shape {}", n, task.features.shape()));
  if (static_cast<index_t>(task.labels.size()) != n) fail(fmt::format("{} labels for {} nodes", task.labels.size(), n));
  if (task.num_classes < 1) fail(fmt::format("num_classes must be positive, got {}", task.num_classes));
  for (index_t i = 0; i < n; ++i)
    if (task.labels[static_cast<size_t>(i)] < -1 || task.labels[static_cast<size_t>(i)] >= task.num_classes)
      fail(fmt::format("node {} has label {}, expected -1 or a class in [0, {})", i, task.labels[static_cast<size_t>(i)],
                       task.num_classes));
  auto check_list = [&](const std::vector<index_t>& nodes, const char* list) {
    for (index_t v : nodes)
      if (v < 0 || v >= n) fail(fmt::format("{} node {} is outside [0, {})", list, v, n));
  };
  check_list(task.train_nodes, "train");
  check_list(task.val_nodes, "validation");
  check_list(task.test_nodes, "test");
  if (task.train_nodes.empty()) fail("the training node list is empty");
  for (index_t v : task.train_nodes)
    if (task.labels[static_cast<size_t>(v)] < 0) fail(fmt::format("training node {} is unlabeled", v));
}

namespace {

// log Σ_c exp(z_c) of one row, with max subtraction.
double log_sum_exp(const double* z, index_t classes) {
  double m = z[0];
  for (index_t c = 1; c < classes; ++c) m = std::max(m, z[c]);
  double sum = 0;
  for (index_t c = 0; c < classes; ++c) sum += std::exp(z[c] - m);
  return m + std::log(sum);
}

index_t labeled_count(const std::vector<index_t>& labels, const std::vector<index_t>& nodes) {
  index_t count = 0;
  for (index_t v : nodes) count += labels[static_cast<size_t>(v)] >= 0;
  return count;
}

}  // namespace

LossAndGradient cross_entropy(const Tensor& logits, const std::vector<index_t>& labels,
                              const std::vector<index_t>& nodes) {
  const index_t classes = logits.row_size();
  LossAndGradient out{0.0, Tensor(logits.shape())};
  const index_t count = labeled_count(labels, nodes);
  if (count == 0) return out;
  const double inv_count = 1.0 / static_cast<double>(count);
  for (index_t v : nodes) {
    const index_t label = labels[static_cast<size_t>(v)];
    if (label < 0) continue;
    const double* z = logits.row(v);
    const double lse = log_sum_exp(z, classes);
    out.loss += (lse - z[label]) * inv_count;
    double* g = out.grad_logits.row(v);
    for (index_t c = 0; c < classes; ++c) g[c] += std::exp(z[c] - lse) * inv_count;
    g[label] -= inv_count;
  }
  return out;
}

double cross_entropy_loss(const Tensor& logits, const std::vector<index_t>& labels, const std::vector<index_t>& nodes) {
  const index_t classes = logits.row_size();
  const index_t count = labeled_count(labels, nodes);
  if (count == 0) return 0.0;
  double loss = 0;
  for (index_t v : nodes) {
    const index_t label = labels[static_cast<size_t>(v)];
    if (label >= 0) loss += log_sum_exp(logits.row(v), classes) - logits.row(v)[label];
  }
  return loss / static_cast<double>(count);
}

double accuracy(const Tensor& logits, const std::vector<index_t>& labels, const std::vector<index_t>& nodes) {
  const index_t classes = logits.row_size();
  index_t correct = 0, count = 0;
  for (index_t v : nodes) {
    const index_t label = labels[static_cast<size_t>(v)];
    if (label < 0) continue;
    const double* z = logits.row(v);
    index_t best = 0;
    for (index_t c = 1; c < classes; ++c)
      if (z[c] > z[best]) best = c;
    correct += best == label;
    ++count;
  }
  return count == 0 ? 0.0 : static_cast<double>(correct) / static_cast<double>(count);
}

}  // namespace gnncheck::training

// gnncheck/training/task.h — a node-classification task and its loss, in float64.
//
// A task is a graph, node features, one label per node (-1 = unlabeled) and the train/validation/
// test node lists. The loss is softmax cross-entropy averaged over a node list (the training mask);
// accuracy is the fraction of labeled nodes of a list whose arg-max logit is their label.
//
//   NodeClassificationTask t = NodeClassificationTask::from_dataset(load_dataset("cora"));
//   LossAndGradient l = cross_entropy(logits, t.labels, t.train_nodes);  // l.loss, l.grad_logits
//   double acc = accuracy(logits, t.labels, t.test_nodes);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fixtures/dataset.h"
#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::training {

struct NodeClassificationTask {
  std::string name;
  std::shared_ptr<const Graph> graph;  // square
  Tensor features;                     // [num_nodes, num_features], preprocessed
  std::vector<index_t> labels;         // class in [0, num_classes) or -1
  index_t num_classes = 0;
  std::vector<index_t> train_nodes;
  std::vector<index_t> val_nodes;
  std::vector<index_t> test_nodes;

  index_t num_nodes() const { return graph->n_dst(); }
  index_t num_features() const { return features.row_size(); }

  // The dataset with its features divided by their row sums when row_normalize (GCN's and GAT's
  // preprocessing on the citation graphs).
  static NodeClassificationTask from_dataset(const Dataset& dataset, bool row_normalize = true);
};

// Throws InputError naming the task and the first inconsistency: a non-square graph, feature or
// label counts that differ from the node count, a label outside [-1, num_classes), a node id out of
// range, an unlabeled or empty training list.
void validate_task(const NodeClassificationTask& task);

struct LossAndGradient {
  double loss = 0.0;
  Tensor grad_logits;  // d loss / d logits: (softmax − onehot) / |nodes| on the listed rows, 0 elsewhere
};

// Mean softmax cross-entropy over `nodes` (log-sum-exp with max subtraction; unlabeled nodes are
// skipped and not counted).
LossAndGradient cross_entropy(const Tensor& logits, const std::vector<index_t>& labels,
                              const std::vector<index_t>& nodes);
double cross_entropy_loss(const Tensor& logits, const std::vector<index_t>& labels, const std::vector<index_t>& nodes);

// Fraction of labeled nodes in `nodes` whose largest logit is their label (ties: the lowest class);
// 0 when no node is labeled.
double accuracy(const Tensor& logits, const std::vector<index_t>& labels, const std::vector<index_t>& nodes);

}  // namespace gnncheck::training

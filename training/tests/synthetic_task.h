// gnncheck/training/tests/synthetic_task.h — a small planted-partition task for the driver's tests.
//
// n nodes in `classes` communities; each node links to `degree` others, mostly inside its own
// community; features are a noisy one-hot of the class plus noise columns. Every 4th node trains,
// the rest split into validation and test. Deterministic for a seed. With symmetric = false the
// edges go one way only, so A ≠ Aᵀ and in- and out-degrees differ.
#pragma once

#include <random>

#include "training/task.h"

namespace gnncheck::training::tests {

inline NodeClassificationTask synthetic_task(index_t n = 90, index_t classes = 3, index_t degree = 4,
                                             std::uint64_t seed = 5, bool symmetric = true) {
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return static_cast<double>(rng() >> 11) * 0x1.0p-53; };
  NodeClassificationTask t;
  t.name = "synthetic";
  t.num_classes = classes;
  for (index_t i = 0; i < n; ++i) t.labels.push_back(i % classes);
  std::vector<index_t> dst, src;
  for (index_t i = 0; i < n; ++i)
    for (index_t k = 0; k < degree; ++k) {
      index_t j = static_cast<index_t>(uniform() * static_cast<double>(n));
      if (uniform() < 0.8) j = j - j % classes + i % classes;  // same community
      if (j >= n) j -= classes;
      dst.push_back(i);
      src.push_back(j);
      if (!symmetric) continue;
      dst.push_back(j);
      src.push_back(i);
    }
  t.graph = std::make_shared<const Graph>(Graph::from_edges(n, n, dst, src));
  const index_t width = classes + 5;
  t.features = Tensor({n, width});
  for (index_t i = 0; i < n; ++i) {
    for (index_t c = 0; c < width; ++c) t.features.at(i, c) = 0.5 * uniform();
    if (uniform() < 0.6) t.features.at(i, i % classes) += 1.0;  // informative for 60% of nodes
  }
  for (index_t i = 0; i < n; ++i) (i % 4 == 0 ? t.train_nodes : i % 4 == 1 ? t.val_nodes : t.test_nodes).push_back(i);
  return t;
}

}  // namespace gnncheck::training::tests

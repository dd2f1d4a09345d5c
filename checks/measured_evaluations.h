// gnncheck/checks/measured_evaluations.h — the measured model's helper evaluations (checks/tolerance.h,
// ToleranceModel::MeasuredEvaluations), shared by the model's files only.
#pragma once

#include <future>
#include <semaphore>

#include "checks/case_transforms.h"
#include "checks/gat_floor.h"
#include "checks/stored_values.h"
#include "checks/tolerance.h"

namespace gnncheck::checks {

// The measured model's helper cases and evaluations, each a shared future (see
// start_measured_evaluations).
struct ToleranceModel::MeasuredEvaluations {
  explicit MeasuredEvaluations(int concurrent) : slots(concurrent) {}
  std::counting_semaphore<> slots;  // first: destroyed after every future below
  std::shared_future<Relabeling> reversed, shuffled;
  std::shared_future<Case> nudged, absolute;
  std::shared_future<Result> in_order, reversed_order, shuffled_order, reversed_f64, nudged_f64, abs_sums;
  std::shared_future<Floors> gat_floor;  // valid for a target with the GAT attention floor
  StoredValues stored;                   // what storing the case's values moves (two formats)
  void wait() const {
    if (gat_floor.valid()) gat_floor.wait();
    for (const auto* f : {&reversed, &shuffled})
      if (f->valid()) f->wait();
    for (const auto* f : {&nudged, &absolute})
      if (f->valid()) f->wait();
    for (const auto* f : {&in_order, &reversed_order, &shuffled_order, &reversed_f64, &nudged_f64, &abs_sums})
      if (f->valid()) f->wait();
  }
};

}  // namespace gnncheck::checks

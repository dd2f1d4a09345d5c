// gnncheck/checks/tolerance_tasks.h — how the tolerance model runs its helper evaluations: as tasks
// beside each other when the case is large enough to pay for threads, in the calling thread
// otherwise, each holding one of a bounded number of evaluation slots (the memory held at once).
//
//   const bool async = worth_tasks(c);
//   auto f = start_task(async, [&c] { return must_evaluate(abs_case(c), Precision::float64, "|inputs|"); });
//   use(f.get());
#pragma once

#include <future>
#include <semaphore>

#include <omp.h>

#include "core/case.h"
#include "core/parallel.h"

namespace gnncheck::checks {

// Holds one of the measured model's evaluation slots for its lifetime.
class EvaluationSlot {
 public:
  explicit EvaluationSlot(std::counting_semaphore<>& slots) : slots_(slots) { slots_.acquire(); }
  ~EvaluationSlot() { slots_.release(); }
  EvaluationSlot(const EvaluationSlot&) = delete;
  EvaluationSlot& operator=(const EvaluationSlot&) = delete;

 private:
  std::counting_semaphore<>& slots_;
};

// What a case holds (edges, sources and every tensor's values): whether its helper evaluations are
// worth threads of their own.
inline bool worth_tasks(const Case& c) {
  index_t size = c.graph->num_edges() + c.graph->n_src();
  for (const TensorMap* m : {&c.inputs, &c.parameters, &c.grad_outputs})
    for (const auto& [name, t] : *m) size += t.size();
  return worth_parallel(size);
}

// `work` as a task with the caller's OpenMP thread count (a new thread would start from the
// default); small cases (the property tests' thousands) run it in the calling thread when its result
// is collected: starting threads would cost more than the work.
template <class Work>
auto start_task(bool async, Work work) {
  const int threads = omp_get_max_threads();
  return std::async(async ? std::launch::async : std::launch::deferred,
                    [threads, work = std::move(work)] {
                      omp_set_num_threads(threads);
                      return work();
                    })
      .share();
}

}  // namespace gnncheck::checks

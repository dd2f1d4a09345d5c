// gnncheck/python/src/python_system.h — a System whose evaluate() calls a Python callable, in process.
//
// The Python package (python/gnncheck/_system.py) wraps the user's forward (and backward, or
// nn.Module factory) into one callable that takes a case as a dict of numpy arrays and returns an
// answer dict. This System is the engine's view of it: the runner, the checks and the shrinker call
// evaluate() like any other system's, and evaluate() takes the GIL for the duration of the call
// (the runner is run with the GIL released). Answers are validated here against the target's
// catalogue entry (every output and gradient present, exact shapes, finite where the inputs are);
// a malformed answer is Status::invalid_output naming the tensor, never an exception.
//
//   auto state = std::make_shared<gnncheck::python::CallableState>(spec);
//   std::unique_ptr<gnncheck::System> sys = gnncheck::python::make_python_system(state);
//   gnncheck::Result r = sys->evaluate(c);   // calls spec.evaluate(case dict) under the GIL
#pragma once

#include <atomic>
#include <csignal>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include <pybind11/pybind11.h>

#include "core/system.h"

namespace gnncheck::python {

// What the Python side hands over: the system's name, the targets it computes with their declared
// precisions, the case evaluator and (optionally, None otherwise) a live-bytes probe.
struct CallableSpec {
  std::string name;
  std::map<std::string, Precision> targets;
  std::map<std::string, Precision> accumulation;  // where a target's sums are finer than its precision
  std::map<std::string, ImplementedAttributes> implemented;  // per target, where fewer than all (core/system.h)
  pybind11::object evaluate;    // (case: dict) -> answer dict {status, message, outputs, gradients, seconds, peak_bytes}
  pybind11::object live_bytes;  // () -> int | None
  // Whether the callable computes on a GPU: only then is this process's device memory its memory
  // (a cpu kernel's would be torch's CUDA context, which says nothing of what the kernel keeps).
  bool on_device = false;
};

// Shared by every System instance the runner makes of the callable. Owns Python references, so it
// is destroyed with the GIL held (its destructor takes it).
class CallableState {
 public:
  explicit CallableState(CallableSpec spec) : spec_(std::move(spec)) {}
  ~CallableState();
  CallableState(const CallableState&) = delete;
  CallableState& operator=(const CallableState&) = delete;

  const CallableSpec& spec() const { return spec_; }
  // Nonzero (SIGINT) once the evaluator has stopped answering (an interrupt, a usage error): the
  // runner polls it between cases and marks what it did not run `not_tested`.
  int stop_signal() const { return stop_signal_.load(); }
  void request_stop() { stop_signal_.store(SIGINT); }

 private:
  CallableSpec spec_;
  std::atomic<int> stop_signal_{0};
};

std::unique_ptr<System> make_python_system(std::shared_ptr<CallableState> state);

// The case as the Python side receives it: target, seed, attributes (defaults filled in), n_dst,
// n_src, row_ptr and col_idx (int64 arrays), inputs / parameters / grad_outputs (float64 arrays).
// Needs the GIL.
pybind11::dict case_to_python(const Case& c);

// Reads and validates an answer dict for case `c`. Needs the GIL. Never throws for a fault of the
// answer: that is Status::invalid_output with the tensor and the problem named.
Result result_from_python(const Case& c, const pybind11::handle& answer);

}  // namespace gnncheck::python

#include "python_system.h"

#include <unistd.h>

#include <chrono>
#include <mutex>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "adapters/protocol.h"
#include "core/error.h"
#include "oracle/target_listing.h"
#include "oracle/targets.h"
#include "platform/device_memory.h"

namespace py = pybind11;

namespace gnncheck::python {
namespace {

using Clock = std::chrono::steady_clock;

py::object attribute_to_python(const AttrValue& v) {
  return std::visit([](const auto& x) -> py::object { return py::cast(x); }, v);
}

py::array_t<double> array_of(const Tensor& t) {
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  return py::array_t<double>(shape, t.data());  // copies
}

py::array_t<std::int64_t> index_array(std::span<const index_t> values) {
  return py::array_t<std::int64_t>(static_cast<py::ssize_t>(values.size()), values.data());
}

py::dict tensors_to_python(const TensorMap& tensors) {
  py::dict d;
  for (const auto& [name, t] : tensors) d[py::str(name)] = array_of(t);
  return d;
}

Result invalid(std::string message) {
  Result r;
  r.status = Status::invalid_output;
  r.message = std::move(message);
  return r;
}

std::string shape_text(const std::vector<index_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

// A tensor's shape in the catalogue's words ("[n_dst, features]"), by target and tensor name; empty
// where the catalogue cannot name it. Read once per target (list_tensors probes the shape functions).
std::string named_shape(const std::string& target, const std::string& tensor) {
  static std::mutex mutex;
  static std::map<std::string, std::map<std::string, std::string>> by_target;
  std::lock_guard lock(mutex);
  auto it = by_target.find(target);
  if (it == by_target.end()) {
    std::map<std::string, std::string> shapes;
    for (const auto& t : oracle::list_tensors(oracle::find_target(target))) shapes.emplace(t.name, t.shape);
    it = by_target.emplace(target, std::move(shapes)).first;
  }
  auto found = it->second.find(tensor);
  return found == it->second.end() ? std::string() : found->second;
}

// "output 'y' must be [n_dst, features] = [9, 4], got [9, 0]": the same words as the Python side's
// check of a forward's outputs (gnncheck/_system.py) before it asks autograd for gradients.
std::string shape_problem(const std::string& what, const std::string& named, const std::vector<index_t>& expected,
                          const std::vector<index_t>& got) {
  const std::string numbers = shape_text(expected);
  return fmt::format("{} must be {}, got {}", what, named.empty() || named == numbers ? numbers : named + " = " + numbers,
                     shape_text(got));
}

// One returned tensor, checked against the shape the catalogue gives it. Empty string: fine. Its
// values are not judged here: a NaN or Inf where the exact result is finite is a wrong answer, which
// the check comparing it reports as a failure with the element (adapters/PROTOCOL.md §5).
std::string read_tensor(const py::handle& value, const std::string& what, const std::string& named,
                        const std::vector<index_t>& expected, Tensor& out) {
  auto array = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(value);
  if (!array)
    return fmt::format("{}: expected an array, got a {}", what, std::string(py::str(py::type::handle_of(value).attr("__name__"))));
  std::vector<index_t> shape(array.shape(), array.shape() + array.ndim());
  if (shape != expected) return shape_problem(what, named, expected, shape);
  out = Tensor(shape, std::vector<double>(array.data(), array.data() + array.size()));
  return {};
}

// Reads answer[key] (a dict of tensors) into `into`, requiring exactly the names of `expected`.
std::string read_tensors(const std::string& target, const py::dict& answer, const char* key, const char* what,
                         const std::map<std::string, std::vector<index_t>>& expected, TensorMap& into) {
  py::dict given;
  if (answer.contains(key) && !answer[key].is_none()) {
    if (!py::isinstance<py::dict>(answer[key])) return fmt::format("the answer's '{}' is not a dict", key);
    given = answer[key].cast<py::dict>();
  }
  std::vector<std::string> expected_names;
  for (const auto& [name, shape] : expected) expected_names.push_back(name);
  for (const auto& [name_obj, value] : given) {
    const std::string name = py::str(name_obj);
    if (!expected.count(name))
      return fmt::format("{} '{}' is not one of the target's {}s ({})", what, name, what,
                         expected_names.empty() ? std::string("none") : fmt::format("{}", fmt::join(expected_names, ", ")));
  }
  for (const auto& [name, shape] : expected) {
    if (!given.contains(name)) return fmt::format("{} '{}' is missing from the answer", what, name);
    Tensor t;
    if (std::string problem = read_tensor(given[py::str(name)], fmt::format("{} '{}'", what, name), named_shape(target, name),
                                          shape, t);
        !problem.empty())
      return problem;
    into.emplace(name, std::move(t));
  }
  return {};
}

class PythonSystem final : public System {
 public:
  explicit PythonSystem(std::shared_ptr<CallableState> state) : state_(std::move(state)) {}

  std::string name() const override { return state_->spec().name; }
  bool supports(const std::string& target) const override { return state_->spec().targets.count(target) != 0; }
  Precision precision(const std::string& target) const override {
    auto it = state_->spec().targets.find(target);
    return it == state_->spec().targets.end() ? Precision::float64 : it->second;
  }
  Precision accumulation(const std::string& target) const override {
    auto it = state_->spec().accumulation.find(target);
    return it == state_->spec().accumulation.end() ? precision(target) : it->second;
  }
  ImplementedAttributes implemented_attributes(const std::string& target) const override {
    auto it = state_->spec().implemented.find(target);
    return it == state_->spec().implemented.end() ? ImplementedAttributes{} : it->second;
  }

  // The engine calls this with the GIL released (python/README.md), so the device lock is taken
  // before the GIL, in the order every in-process GPU system takes it.
  Result evaluate(const Case& c) override {
    if (!state_->spec().on_device) return evaluate_unmeasured(c);
    Result r;
    meter_.run(c.memory_figures, own_device_memory, [&] { r = evaluate_unmeasured(c); });
    return r;
  }

  // The device memory this process gained during the callable's evaluations (platform/device_memory.h),
  // once the process has loaded the CUDA driver; nothing for a callable on the cpu, even where torch
  // has loaded the driver (its context is no memory of the callable's).
  std::optional<device_memory::Reading> measured_device_bytes() const override {
    if (!state_->spec().on_device) return std::nullopt;
    std::lock_guard device_lock(device_memory::in_process_device_lock());
    return meter_.total();
  }

 private:
  // NVML's figure for this process, else the device's memory in use (the driver does not list this
  // process here); nullopt before the CUDA driver is loaded. Asynchronous work of the callable is
  // not waited for: the kit's torch path synchronizes before it returns.
  static std::optional<device_memory::Reading> own_device_memory() {
    if (!device_memory::maps_cuda_driver(getpid())) return std::nullopt;
    if (auto mine = device_memory::process_memory(getpid())) return mine;
    return device_memory::device_used();
  }

  Result evaluate_unmeasured(const Case& c) {
    const auto start = Clock::now();
    Result r;
    {
      py::gil_scoped_acquire gil;
      try {
        py::object answer = state_->spec().evaluate(case_to_python(c));
        r = result_from_python(c, answer);
        if (py::hasattr(state_->spec().evaluate, "abort") && !state_->spec().evaluate.attr("abort").is_none())
          state_->request_stop();
      } catch (py::error_already_set& e) {
        // Only an interrupt that arrives outside the evaluator's own handlers gets here: hand it
        // to the evaluator so that it answers no further case and gnncheck.check re-raises it.
        if (e.matches(PyExc_KeyboardInterrupt) || e.matches(PyExc_SystemExit)) {
          if (py::hasattr(state_->spec().evaluate, "abort")) state_->spec().evaluate.attr("abort") = e.value();
          state_->request_stop();
        }
        r = Result{};
        r.status = Status::error;
        r.message = fmt::format("the Python evaluator raised: {}", e.what());
      } catch (const std::exception& e) {
        r = Result{};
        r.status = Status::error;
        r.message = fmt::format("converting the case or the answer failed: {}", e.what());
      }
    }
    if (r.seconds == 0.0) r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return r;
  }


 public:
  std::optional<std::int64_t> live_bytes() const override {
    py::gil_scoped_acquire gil;
    if (!state_->spec().live_bytes || state_->spec().live_bytes.is_none()) return std::nullopt;
    try {
      py::object bytes = state_->spec().live_bytes();
      if (bytes.is_none()) return std::nullopt;
      return bytes.cast<std::int64_t>();
    } catch (py::error_already_set&) {
      return std::nullopt;  // a probe that fails measures nothing; the resources check says so
    }
  }
  // gnncheck/_system.py's probe: the bytes torch's CUDA allocator holds for tensors between calls.
  std::string live_bytes_source() const override {
    return "torch.cuda.memory_allocated() after each call (tensors the callable keeps alive)";
  }

 private:
  std::shared_ptr<CallableState> state_;
  device_memory::RetainedMeter meter_;  // under in_process_device_lock()
};

}  // namespace

CallableState::~CallableState() {
  py::gil_scoped_acquire gil;
  spec_.evaluate = py::object();
  spec_.live_bytes = py::object();
}

std::unique_ptr<System> make_python_system(std::shared_ptr<CallableState> state) {
  return std::make_unique<PythonSystem>(std::move(state));
}

py::dict case_to_python(const Case& c) {
  if (!c.graph) throw InputError("case has no graph");
  const auto& def = oracle::entry_of(c);
  const Attributes attributes = oracle::with_defaults(def.spec, c.attributes);
  py::dict attrs;
  for (const auto& [name, value] : attributes.values()) attrs[py::str(name)] = attribute_to_python(value);
  const Graph& g = *c.graph;
  py::dict d;
  d["target"] = c.target;
  d["seed"] = c.seed;
  d["attributes"] = attrs;
  d["n_dst"] = g.n_dst();
  d["n_src"] = g.n_src();
  d["row_ptr"] = index_array(g.row_ptr());
  d["col_idx"] = index_array(g.col_idx());
  d["inputs"] = tensors_to_python(c.inputs);
  d["parameters"] = tensors_to_python(c.parameters);
  d["grad_outputs"] = tensors_to_python(c.grad_outputs);
  // What each output must be, so that the Python side says it before autograd meets a wrong shape.
  py::dict output_shapes;
  for (const auto& [name, shape] : def.output_shapes(g, attributes))
    output_shapes[py::str(name)] = py::make_tuple(py::cast(shape), named_shape(c.target, name));
  d["output_shapes"] = output_shapes;
  return d;
}

Result result_from_python(const Case& c, const py::handle& answer_obj) {
  if (!py::isinstance<py::dict>(answer_obj)) return invalid("the Python evaluator returned something other than a dict");
  const py::dict answer = answer_obj.cast<py::dict>();
  Result r;
  const std::string status = answer.contains("status") ? std::string(py::str(answer["status"])) : std::string("ok");
  if (answer.contains("message") && !answer["message"].is_none()) r.message = py::str(answer["message"]);
  if (answer.contains("seconds") && !answer["seconds"].is_none()) r.seconds = answer["seconds"].cast<double>();
  if (answer.contains("peak_bytes") && !answer["peak_bytes"].is_none()) r.peak_bytes = answer["peak_bytes"].cast<std::int64_t>();
  if (status == "unsupported" || status == "error") {
    r.status = status == "error" ? Status::error : Status::unsupported;
    if (r.message.empty()) r.message = fmt::format("the callable answered '{}' without a message", status);
    return r;
  }
  if (status == "invalid_output") return invalid(r.message.empty() ? std::string("the answer is not valid") : r.message);
  if (status != "ok")
    return invalid(fmt::format("answer status '{}' is not one of ok, unsupported, error, invalid_output", status));

  const auto& def = oracle::entry_of(c);
  const Attributes attributes = oracle::with_defaults(def.spec, c.attributes);
  const auto input_shapes = def.input_shapes(*c.graph, attributes);
  const auto output_shapes = def.output_shapes(*c.graph, attributes);
  if (std::string problem = read_tensors(c.target, answer, "outputs", "output", output_shapes, r.outputs); !problem.empty())
    return invalid(std::move(problem));
  if (!c.grad_outputs.empty()) {
    std::map<std::string, std::vector<index_t>> gradient_shapes;
    for (const auto& slot : def.spec.inputs)
      if (slot.differentiable && input_shapes.count(slot.name)) gradient_shapes[slot.name] = input_shapes.at(slot.name);
    if (std::string problem = read_tensors(c.target, answer, "gradients", "gradient", gradient_shapes, r.gradients);
        !problem.empty())
      return invalid(std::move(problem));
  }
  return r;
}

}  // namespace gnncheck::python

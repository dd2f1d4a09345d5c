#include "gpu/gpu_systems.h"

#include <unistd.h>

#include <chrono>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "gpu/context.h"
#include "gpu/cuda_check.h"
#include "platform/device_memory.h"
#include "gpu/gpu_targets.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck {
namespace {

using gpu::DeviceTensor;
using gpu::GpuTargetFn;

// Where a system's storage format is met: by its kernels, which read and write it themselves
// (cuSPARSE's half calls), or at its boundary: the float32 kernels on values rounded to it, each
// result rounded to it (the gpu_<format>_float32_sums systems).
enum class StoredBy { kernels, boundary };

class GpuSystem final : public System {
 public:
  GpuSystem(std::string name, std::map<std::string, GpuTargetFn> targets, Precision storage = Precision::float32,
            Precision accumulation = Precision::float32, StoredBy stored_by = StoredBy::kernels)
      : name_(std::move(name)), targets_(std::move(targets)), storage_(storage), accumulation_(accumulation),
        stored_by_(stored_by) {
    if (!accumulation_fits(storage, accumulation))
      throw InternalError(fmt::format("GPU system {}: {} accumulation cannot hold sums of {} values", name_,
                                      to_string(accumulation), to_string(storage)));
  }
  ~GpuSystem() override {
    // Freeing a context is device-memory traffic too: never during another system's measured evaluation.
    std::lock_guard lock(device_memory::in_process_device_lock());
    ctx_.reset();
  }

  std::string name() const override { return name_; }
  const std::map<std::string, GpuTargetFn>& targets() const { return targets_; }
  bool stored_at_boundary() const { return stored_by_ == StoredBy::boundary; }

  Availability availability() const override {
    const gpu::DeviceStatus status = gpu::probe_device();
    return {status.available, status.reason};
  }

  bool supports(const std::string& target) const override { return targets_.count(target) != 0; }
  Precision precision(const std::string&) const override { return storage_; }
  Precision accumulation(const std::string&) const override { return accumulation_; }
  ImplementedAttributes implemented_attributes(const std::string& target) const override {
    return oracle::find_target(target).spec.gpu.implemented;
  }

  std::optional<std::int64_t> live_bytes() const override {
    if (!ctx_) return std::int64_t{0};
    return ctx_->allocator.current_bytes();
  }

  // The device memory this system gained during its evaluations (see evaluate()).
  std::optional<device_memory::Reading> measured_device_bytes() const override {
    std::lock_guard lock(device_memory::in_process_device_lock());
    return meter_.total();
  }

  // Every evaluation holds the in-process device lock, and the resources check's are measured
  // (RetainedMeter): with no other GPU work of this process in between, the growth is what this
  // system's evaluations left behind on the device, whatever allocated it (the accounting
  // allocator, a library handle, a stray cudaMalloc).
  Result evaluate(const Case& c) override {
    Result r;
    meter_.run(c.memory_figures, [&] { return own_device_memory(); }, [&] { r = evaluate_unmeasured(c); });
    return r;
  }

 private:
  // This process's device memory once this evaluation's frees and library work have landed:
  // NVML's per-process figure, else (the driver does not list this process here) the device's
  // memory in use from cudaMemGetInfo. nullopt before the first context.
  std::optional<device_memory::Reading> own_device_memory() const {
    if (!ctx_) return std::nullopt;
    cudaDeviceSynchronize();
    if (auto mine = device_memory::process_memory(getpid())) return mine;
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) return std::nullopt;
    return device_memory::Reading{static_cast<std::int64_t>(total - free),
                                  "cudaMemGetInfo: memory in use on the device (every process on it counts)", true};
  }

  Result evaluate_unmeasured(const Case& c) {
    Result r;
    try {
      return evaluate_or_throw(c);
    } catch (const InputError& e) {
      r.status = Status::error;
      r.message = e.what();
    } catch (const gpu::UnsupportedCase& e) {
      r.status = Status::unsupported;
      r.message = fmt::format("{}: {}", name_, e.what());
    } catch (const gpu::CudaError& e) {
      r.status = Status::error;
      r.message = fmt::format("{}: {}", name_, e.what());
      // A failed kernel can leave the context unusable; the next evaluation starts a fresh one.
      ctx_.reset();
    } catch (const std::exception& e) {
      r.status = Status::error;
      r.message = fmt::format("{}: internal error: {}", name_, e.what());
    }
    return r;
  }

  Result evaluate_or_throw(const Case& given) {
    Result r;
    Case stored_case;
    if (stored_at_boundary()) {
      stored_case = given;
      oracle::store_values_in(stored_case, storage_);
    }
    const Case& c = stored_at_boundary() ? stored_case : given;
    auto fn = targets_.find(c.target);
    if (fn == targets_.end()) {
      r.status = Status::unsupported;
      r.message = fmt::format("the {} system does not implement target '{}'", name_, c.target);
      return r;
    }
    if (!ctx_) {
      const gpu::DeviceStatus status = gpu::probe_device();
      if (!status.available) {
        r.status = Status::unsupported;
        r.message = status.reason;
        return r;
      }
      ctx_ = std::make_unique<gpu::GpuContext>();
    }
    const oracle::TargetDef& def = oracle::entry_of(c);
    const Attributes attrs = oracle::validate_case(def, c);

    gpu::GpuContext& ctx = *ctx_;
    ctx.allocator.reset_peak();
    const auto start = std::chrono::steady_clock::now();
    {
      gpu::TargetRun run(ctx, *c.graph, attrs);
      for (const auto& [name, shape] : def.input_shapes(*c.graph, attrs)) {
        const Tensor& t = c.inputs.count(name) ? c.inputs.at(name) : c.parameters.at(name);
        run.inputs.emplace(name, DeviceTensor::upload(ctx, t));
        run.host_inputs.emplace(name, &t);
      }
      if (!c.grad_outputs.empty())
        for (const auto& [name, shape] : def.output_shapes(*c.graph, attrs))
          run.grad_outputs.emplace(name, DeviceTensor::upload(ctx, c.grad_outputs.at(name)));
      fn->second(run);
      ctx.synchronize();
      for (const auto& [name, t] : run.outputs) r.outputs.emplace(name, t.download(ctx));
      for (const auto& [name, t] : run.gradients) r.gradients.emplace(name, t.download(ctx));
    }
    if (stored_at_boundary())
      for (TensorMap* m : {&r.outputs, &r.gradients})
        for (auto& [name, t] : *m) t = rounded(t, storage_);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.peak_bytes = ctx.allocator.peak_bytes();
    return r;
  }

  std::string name_;
  std::map<std::string, GpuTargetFn> targets_;
  Precision storage_, accumulation_;
  StoredBy stored_by_;
  std::unique_ptr<gpu::GpuContext> ctx_;  // created by the first evaluate() that finds a device
  device_memory::RetainedMeter meter_;  // under in_process_device_lock()
};

// Every op and layer of the GPU reference.
std::map<std::string, GpuTargetFn> reference_targets() {
  auto targets = gpu::gpu_op_targets(gpu::Library::reference);
  for (auto& [name, fn] : gpu::gpu_layer_targets()) targets.emplace(name, std::move(fn));
  return targets;
}

}  // namespace

std::unique_ptr<System> make_gpu_system() { return std::make_unique<GpuSystem>("gpu", reference_targets()); }

std::unique_ptr<System> make_gpu_stored_system(Precision storage) {
  if (storage != Precision::float16 && storage != Precision::bfloat16 && storage != Precision::tf32)
    throw InternalError(fmt::format("the GPU reference stores in float16, bfloat16 or tf32, not {}", to_string(storage)));
  return std::make_unique<GpuSystem>(gpu_stored_system_name(storage), reference_targets(), storage,
                                     Precision::float32, StoredBy::boundary);
}

std::unique_ptr<System> make_cusparse_system() {
  return std::make_unique<GpuSystem>("cusparse", gpu::gpu_op_targets(gpu::Library::cusparse_only));
}

// Tensors stored in the format, sums in float32: gpu/cusparse_targets.cpp says why that is the model.
std::unique_ptr<System> make_cusparse_float16_system() {
  return std::make_unique<GpuSystem>("cusparse_float16", gpu::cusparse_op_targets(gpu::StorageFormat::float16),
                                     Precision::float16, Precision::float32);
}

std::unique_ptr<System> make_cusparse_bfloat16_system() {
  return std::make_unique<GpuSystem>("cusparse_bfloat16", gpu::cusparse_op_targets(gpu::StorageFormat::bfloat16),
                                     Precision::bfloat16, Precision::float32);
}

const std::map<std::string, GpuTargetFn>* gpu::device_targets_of(const System& system) {
  // A system stored at its boundary rounds in evaluate(); its kernels alone would compute float32.
  const auto* gpu_system = dynamic_cast<const GpuSystem*>(&system);
  return gpu_system && !gpu_system->stored_at_boundary() ? &gpu_system->targets() : nullptr;
}

// Both from the catalogue entries' GpuFacts (oracle/targets.h), where each implementation's audit
// is recorded.
const std::set<std::string>& gpu::device_resident_targets() {
  static const std::set<std::string> targets = [] {
    std::set<std::string> names;
    for (const auto& def : oracle::all_targets())
      if (def.spec.gpu.device_resident) names.insert(def.spec.name);
    return names;
  }();
  return targets;
}

const std::set<std::string>& gpu::targets_without_edge_perm() {
  static const std::set<std::string> targets = [] {
    std::set<std::string> names;
    for (const auto& def : oracle::all_targets())
      if (def.spec.gpu.device_resident && !def.spec.gpu.reads_edge_perm) names.insert(def.spec.name);
    return names;
  }();
  return targets;
}

std::unique_ptr<System> gpu::make_gpu_system_from_targets(std::string name, std::map<std::string, GpuTargetFn> targets) {
  return std::make_unique<GpuSystem>(std::move(name), std::move(targets));
}

std::unique_ptr<System> gpu::make_gpu_system_from_targets(std::string name, std::map<std::string, GpuTargetFn> targets,
                                                          Precision storage, Precision accumulation) {
  return std::make_unique<GpuSystem>(std::move(name), std::move(targets), storage, accumulation);
}

}  // namespace gnncheck

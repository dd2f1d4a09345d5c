#include "suites/system_registry.h"

#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "oracle/cpu_systems.h"
#include "adapters/plugin_system.h"
#include "adapters/process_system.h"
#include "adapters/replicas/gpu/device_fault_replicas.h"
#include "adapters/replicas/gpu/gpu_replicas.h"
#include "adapters/replicas/gpu/gpu_scale_replicas.h"
#include "adapters/sanitizer.h"
#include "adapters/replicas/half_precision.h"
#include "adapters/replicas/replicas.h"
#include "core/error.h"
#include "gpu/gpu_systems.h"  // declarations only; the systems are made only where CUDA is built

namespace gnncheck::suites {

const char* system_kind_name(SystemKind kind) {
  switch (kind) {
    case SystemKind::builtin: return "builtin";
    case SystemKind::gpu: return "gpu";
    case SystemKind::replica: return "replica";
    case SystemKind::scale_replica: return "scale-replica";
    case SystemKind::adapter: return "adapter";
    case SystemKind::plugin: return "plugin";
    case SystemKind::python: return "python";
  }
  return "unknown";
}

std::optional<SystemKind> system_kind_named(const std::string& name) {
  for (SystemKind k : {SystemKind::builtin, SystemKind::gpu, SystemKind::replica, SystemKind::scale_replica,
                       SystemKind::adapter, SystemKind::plugin, SystemKind::python})
    if (name == system_kind_name(k)) return k;
  return std::nullopt;
}

bool is_own_system(SystemKind kind) {
  return kind == SystemKind::builtin || kind == SystemKind::gpu || kind == SystemKind::replica || kind == SystemKind::scale_replica;
}

bool runs_as_process(SystemKind kind) { return kind == SystemKind::adapter || kind == SystemKind::plugin; }

namespace {

// The formats the correct stored systems keep their tensors in, with float32 sums: the CPU controls
// (cpu_<format>_float32_sums) and the GPU reference stored so (gpu_<format>_float32_sums).
constexpr Precision kStoredFormats[] = {Precision::float16, Precision::bfloat16, Precision::tf32};

std::string gpu_stored_system_summary(Precision storage) {
  return fmt::format("the GPU reference on inputs stored in {0}, results stored in {0}, float32 kernels: declares {0} "
                     "with float32 accumulation, correct",
                     to_string(storage));
}

}  // namespace

SystemRegistry SystemRegistry::with_builtins() {
  SystemRegistry r;
  r.add({.name = "oracle",
         .kind = SystemKind::builtin,
         .summary = "float64 ground truth: every op and layer, forward and backward",
         .bug = "",
         .availability = {},
         .make = [] { return make_oracle_system(); }});
  r.add({.name = "cpu_float32",
         .kind = SystemKind::builtin,
         .summary = "the oracle's code in float32: a second correct implementation the bounds must accept",
         .bug = "",
         .availability = {},
         .make = [] { return make_cpu_float32_system(); }});
  r.add({.name = "cpu_float32_right_derivatives",
         .kind = SystemKind::builtin,
         .summary = "cpu_float32 taking the other one-sided derivative at every kink (ReLU'(0) = LeakyReLU'(0) = 1, "
                    "AGNN's x/|x| side at its norm floor): correct, the control for subgradient conventions",
         .bug = "",
         .availability = {},
         .make = [] { return make_cpu_float32_right_derivatives_system(); }});
  // Controls of the precision replicas: float16, bfloat16 or TF32 storage with float32 sums, correct
  // (TF32: a tensor-core matmul's operands rounded to TF32, its sums in float32).
  for (Precision storage : kStoredFormats)
    r.add({.name = make_half_storage_system(storage)->name(),
           .kind = SystemKind::builtin,
           .summary = fmt::format("the oracle's float32 code on inputs stored in {0}, results stored in {0}: declares "
                                  "{0} with float32 accumulation, correct",
                                  to_string(storage)),
           .bug = "",
           .availability = {},
           .make = [storage] { return make_half_storage_system(storage); }});
  r.add({.name = "spmm_float16_float32_sums",
         .kind = SystemKind::builtin,
         .summary = "spmm, spmm_transposed, spmm_ve and sddmm_dot on float16 inputs with float32 sums and float16 "
                    "results: correct, the control of replica half_sums_in_float16",
         .bug = "",
         .availability = {},
         .make = [] { return make_half_kernel_system(); }});
#ifdef GNNCHECK_SUITES_HAVE_CUDA
  // Asking for availability touches only the CUDA runtime's device count, not the device.
  const Availability gpu_here = make_gpu_system()->availability();
  r.add({.name = "gpu",
         .kind = SystemKind::gpu,
         .summary = "CUDA/cuSPARSE float32 reference (GraphPy style)",
         .bug = "",
         .availability = gpu_here,
         .make = [] { return make_gpu_system(); }});
  for (Precision storage : kStoredFormats)
    r.add({.name = gpu_stored_system_name(storage),
           .kind = SystemKind::gpu,
           .summary = gpu_stored_system_summary(storage),
           .bug = "",
           .availability = gpu_here,
           .make = [storage] { return make_gpu_stored_system(storage); }});
  r.add({.name = "cusparse",
         .kind = SystemKind::gpu,
         .summary = "cuSPARSE's own SpMM/SDDMM calls, forward and backward",
         .bug = "",
         .availability = make_cusparse_system()->availability(),
         .make = [] { return make_cusparse_system(); }});
  r.add({.name = "cusparse_float16",
         .kind = SystemKind::gpu,
         .summary = "cuSPARSE's SpMM/SDDMM on float16 tensors with float32 sums (CUDA_R_16F, computeType CUDA_R_32F)",
         .bug = "",
         .availability = gpu_here,
         .make = [] { return make_cusparse_float16_system(); }});
  r.add({.name = "cusparse_bfloat16",
         .kind = SystemKind::gpu,
         .summary = "cuSPARSE's SpMM on bfloat16 tensors with float32 sums (CUDA_R_16BF; cuSPARSE has no bfloat16 SDDMM)",
         .bug = "",
         .availability = gpu_here,
         .make = [] { return make_cusparse_bfloat16_system(); }});
#else
  const Availability gpu_here{false, "this build has no CUDA (nvcc was not found at configure time; see GNNCHECK_CUDA)"};
  r.add({.name = "gpu", .kind = SystemKind::gpu, .summary = "CUDA/cuSPARSE float32 reference (GraphPy style)", .bug = "",
         .availability = gpu_here, .make = nullptr});
  for (Precision storage : kStoredFormats)
    r.add({.name = gpu_stored_system_name(storage), .kind = SystemKind::gpu, .summary = gpu_stored_system_summary(storage),
           .bug = "", .availability = gpu_here, .make = nullptr});
  r.add({.name = "cusparse", .kind = SystemKind::gpu, .summary = "cuSPARSE's own SpMM/SDDMM calls, forward and backward", .bug = "",
         .availability = gpu_here, .make = nullptr});
  r.add({.name = "cusparse_float16", .kind = SystemKind::gpu, .summary = "cuSPARSE's SpMM/SDDMM on float16 tensors with float32 sums",
         .bug = "", .availability = gpu_here, .make = nullptr});
  r.add({.name = "cusparse_bfloat16", .kind = SystemKind::gpu, .summary = "cuSPARSE's SpMM on bfloat16 tensors with float32 sums",
         .bug = "", .availability = gpu_here, .make = nullptr});
#endif
  // The replicas wrap the oracle: the injected bug is then the only way their answers differ.
  for (const auto& info : replica_catalogue()) {
    const std::string name = info.name;
    r.add({.name = name,
           .kind = SystemKind::replica,
           .summary = info.origin,
           .bug = info.bug,
           .availability = {},
           .make = [name] { return make_replica(name, make_oracle_system()); }});
  }
  // The GPU replicas: the GPU reference with one kernel swapped for a buggy one (suites/gpu_replicas.yaml).
  // A build without CUDA knows them too, as unavailable with the reason, like `gpu` itself.
  for (const auto& info : gpu_replica_catalogue()) {
    const std::string name = info.name;
    r.add({.name = name,
           .kind = SystemKind::replica,
           .summary = fmt::format("GPU kernel version of replica {} ({})", info.number,
                                  replica_catalogue().at(info.number - 1).name),
           .bug = info.bug,
           .availability = gpu_here,
#ifdef GNNCHECK_SUITES_HAVE_CUDA
           .make = [name] { return make_gpu_replica(name); }});
#else
           .make = nullptr});
#endif
  }
  // The scale-only GPU replicas: correct on every small graph, so not of kind "replica" (a suite's
  // `systems: replicas` expects each to be caught there); `gnncheck scale` at scale 25–27 catches them.
  for (const auto& info : gpu_scale_replica_catalogue()) {
    const std::string name = info.name;
    r.add({.name = name,
           .kind = SystemKind::scale_replica,
           .summary = fmt::format("scale-only GPU bug on {} ({})", info.target, info.fires_on),
           .bug = info.bug,
           .availability = gpu_here,
#ifdef GNNCHECK_SUITES_HAVE_CUDA
           .make = [name] { return make_gpu_scale_replica(name); }});
#else
           .make = nullptr});
#endif
  }
  // The GPU replicas whose fault changes no answer: a device leak, a shared-memory race.
  for (const auto& info : gpu_device_fault_catalogue()) {
    const std::string name = info.name;
    r.add({.name = name,
           .kind = SystemKind::replica,
           .summary = fmt::format("GPU fault that changes no answer, caught by {}", info.caught_by),
           .bug = info.bug,
           .availability = gpu_here,
#ifdef GNNCHECK_SUITES_HAVE_CUDA
           .make = [name] { return make_gpu_device_fault_replica(name); }});
#else
           .make = nullptr});
#endif
  }
  for (SystemEntry& e : r.entries_) {
    bool gpu_replica = false;
    for (const auto& info : gpu_replica_catalogue()) gpu_replica = gpu_replica || info.name == e.name;
    for (const auto& info : gpu_device_fault_catalogue()) gpu_replica = gpu_replica || info.name == e.name;
    for (const auto& info : gpu_scale_replica_catalogue()) gpu_replica = gpu_replica || info.name == e.name;
    e.runs_on_gpu = e.kind == SystemKind::gpu || gpu_replica;
  }
  return r;
}

namespace {

void apply_limits(const ProcessLimits& limits, ProcessSystemOptions& options) {
  auto ms = [](double s) { return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(s * 1000.0))); };
  if (limits.case_timeout_s) options.case_timeout = ms(*limits.case_timeout_s);
  if (limits.startup_timeout_s) options.startup_timeout = ms(*limits.startup_timeout_s);
}

}  // namespace

void SystemRegistry::sanitize(const SanitizeSettings& settings) {
  sanitizer::parse_tool(settings.tool);
  sanitize_ = settings;
  for (SystemEntry& e : entries_) {
    if (!e.runs_on_gpu || !e.make || !e.availability.available) continue;
    ProcessSystemOptions options;
    options.name = e.name;
    options.description = fmt::format("'{}' under compute-sanitizer {} (gnncheck serve-system)", e.name, settings.tool);
    apply_limits(limits_, options);
    e.sanitizer_log_dir = next_sanitizer_log_dir(e.name);
    apply_sanitizer(options, e.sanitizer_log_dir);
    const std::vector<std::string> argv = {settings.gnncheck.string(), "serve-system", e.name};
    e.make = [argv, options] { return make_process_system(argv, options); };
    e.instance = make_process_system(argv, options);  // started when the run first asks it something
    e.sanitizer_tool = settings.tool;
  }
}

std::filesystem::path SystemRegistry::next_sanitizer_log_dir(const std::string& label) {
  const std::filesystem::path dir = sanitize_->log_root / label;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);  // an earlier run's logs would read as this run's
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("--sanitize: cannot create {}: {}", dir.string(), ec.message()));
  ++sanitized_processes_;
  return dir;
}

void SystemRegistry::apply_sanitizer(ProcessSystemOptions& options, const std::filesystem::path& log_dir) const {
  if (!sanitize_) return;
  options.wrapper = sanitizer::wrapper(sanitize_->program, sanitizer::parse_tool(sanitize_->tool), log_dir);
  options.measure_device_memory = false;
  options.exit_grace = std::chrono::milliseconds(120'000);
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,@%+") == std::string::npos)
    return s;
  std::string out = "'";
  for (char ch : s) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

std::vector<std::string> limit_flags(const ProcessLimits& limits) {
  std::vector<std::string> out;
  if (limits.case_timeout_s) out.push_back(fmt::format("--case-timeout {:g}", *limits.case_timeout_s));
  if (limits.startup_timeout_s) out.push_back(fmt::format("--startup-timeout {:g}", *limits.startup_timeout_s));
  return out;
}

std::string SystemRegistry::add_adapter(const std::string& command, const std::string& name,
                                        const std::filesystem::path& working_directory) {
  split_command_line(command);  // an unterminated quote is the user's error: report it now
  ProcessSystemOptions options;
  options.name = name;
  options.working_directory = working_directory;
  apply_limits(limits_, options);
  std::filesystem::path log_dir;
  if (sanitize_) {
    log_dir = next_sanitizer_log_dir(fmt::format("adapter-{}", sanitized_processes_ + 1));
    apply_sanitizer(options, log_dir);
  }
  std::shared_ptr<System> instance = make_process_system(command, options);
  const Availability availability = instance->availability();  // starts it: the hello names it
  std::string registered = name;
  if (registered.empty()) registered = availability.available ? instance->name() : command;
  add({.name = registered,
       .kind = SystemKind::adapter,
       .summary = "external adapter: " + command,
       .bug = "",
       .availability = availability,
       .make = [command, options] { return make_process_system(command, options); },
       .instance = instance,
       .command_line_flag = "--adapter " + shell_quote(command),
       .adapter_command = command,
       .plugin_library = "",
       .runs_on_gpu = false,
       .sanitizer_tool = sanitize_ ? sanitize_->tool : "",
       .sanitizer_log_dir = log_dir,
       .limits = limits_});
  return registered;
}

std::string SystemRegistry::add_plugin(const std::string& library, const std::string& name) {
  PluginSystemOptions options;
  options.process.name = name;
  apply_limits(limits_, options.process);
  std::filesystem::path log_dir;
  if (sanitize_) {
    log_dir = next_sanitizer_log_dir(fmt::format("plugin-{}", sanitized_processes_ + 1));
    apply_sanitizer(options.process, log_dir);
  }
  std::shared_ptr<System> instance = make_plugin_system(library, options);
  const Availability availability = instance->availability();
  std::string registered = name;
  if (registered.empty()) registered = availability.available ? instance->name() : library;
  add({.name = registered,
       .kind = SystemKind::plugin,
       .summary = "C plugin: " + library,
       .bug = "",
       .availability = availability,
       .make = [library, options] { return make_plugin_system(library, options); },
       .instance = instance,
       .command_line_flag = "--plugin " + shell_quote(library),
       .adapter_command = "",
       .plugin_library = library,
       .runs_on_gpu = false,
       .sanitizer_tool = sanitize_ ? sanitize_->tool : "",
       .sanitizer_log_dir = log_dir,
       .limits = limits_});
  return registered;
}

void SystemRegistry::add(SystemEntry entry) {
  if (entry.command_line_flag.empty()) entry.command_line_flag = "--system " + shell_quote(entry.name);
  if (contains(entry.name))
    throw InputError(fmt::format("system '{}' is defined twice ({} and {})", entry.name, system_kind_name(find(entry.name).kind), system_kind_name(entry.kind)));
  entries_.push_back(std::move(entry));
}

bool SystemRegistry::contains(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return true;
  return false;
}

const SystemEntry& SystemRegistry::find(const std::string& name) const {
  std::vector<std::string> names;
  for (const auto& e : entries_) {
    if (e.name == name) return e;
    names.push_back(e.name);
  }
  throw InputError(fmt::format("unknown system '{}'; known systems: {}", name, fmt::join(names, ", ")));
}

}  // namespace gnncheck::suites

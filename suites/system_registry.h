// gnncheck/suites/system_registry.h — every system the `gnncheck` command can name, and how to make it.
//
// The registry is the runner's single view of "what can be tested here": the built-in systems
// (oracle, cpu_float32), the GPU reference when this build has CUDA, the bug replicas, and the
// external adapters and C plugins named on the command line or in a suite. Each entry says whether
// it can run on this machine and, when not, why — `gnncheck list` prints exactly that.
//
//   auto registry = gnncheck::suites::SystemRegistry::with_builtins();
//   std::unique_ptr<gnncheck::System> sys = registry.find("oracle").make();
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "adapters/process_system.h"
#include "core/system.h"

namespace gnncheck::suites {

// Time limits for adapter and plugin processes (PROTOCOL.md §5); unset: ProcessSystemOptions' defaults.
struct ProcessLimits {
  std::optional<double> case_timeout_s;     // per case, from sending the case to its answer
  std::optional<double> startup_timeout_s;  // from start to the hello line
};
// The limits that are set, as flags of a command line ("--case-timeout 2", "--startup-timeout 3").
std::vector<std::string> limit_flags(const ProcessLimits& limits);

// What a system is: how a task gets an instance of it, and how report.json and a saved case's
// system.json name it (to_string).
enum class SystemKind {
  builtin,        // gnncheck's own CPU systems: a fresh instance per task
  gpu,            // gnncheck's GPU reference and cuSPARSE systems: one instance per thread
  replica,        // a bug replica on the CPU or the GPU: a fresh instance per task
  scale_replica,  // a bug replica of the scale check
  adapter,        // an external process speaking PROTOCOL.md: one process per run
  plugin,         // a C plugin in gnncheck-plugin-host: one process per run
  python,         // the Python package's callable, checked in its own process
};
// "builtin", "gpu", "replica", "scale-replica", "adapter", "plugin", "python".
const char* system_kind_name(SystemKind kind);
// The kind a record names, or nullopt.
std::optional<SystemKind> system_kind_named(const std::string& name);
// gnncheck's own systems implement every attribute value of the targets they support.
bool is_own_system(SystemKind kind);
// An adapter or a plugin: a process started once for the run, under the run's time limits.
bool runs_as_process(SystemKind kind);

struct SystemEntry {
  std::string name;
  SystemKind kind = SystemKind::builtin;
  std::string summary;  // one line for `gnncheck list`
  std::string bug;      // replicas: the bug it reproduces; empty for correct systems
  Availability availability;
  // Makes a fresh instance; unset when the system cannot be built here (availability says why).
  std::function<std::unique_ptr<System>()> make;
  // Adapters and plugins: the one process-backed instance every task of a run shares (its calls are
  // serialized), started when the system was registered — so one process answers the whole run and
  // its start-up is not charged to any entry's time budget.
  std::shared_ptr<System> instance;
  // How to name this system on a gnncheck command line, for re-run lines: "--system NAME",
  // "--plugin /abs/lib.so" or "--adapter 'CMD'".
  std::string command_line_flag;
  std::string adapter_command;  // kind adapter: its command line
  std::string plugin_library;   // kind plugin: the library's absolute path
  bool runs_on_gpu = false;     // a built-in GPU system (gpu, cusparse, the GPU replicas)
  // Under `--sanitize`: the sanitizer tool and the folder its logs for this system go to; empty otherwise.
  std::string sanitizer_tool;
  std::filesystem::path sanitizer_log_dir;
  // Adapters and plugins: the time limits their processes run under (recorded with a saved case, so
  // that `gnncheck repro` waits as long as the run did).
  ProcessLimits limits;
};

// `gnncheck run --sanitize TOOL` (adapters/sanitizer.h): how GPU systems are started under compute-sanitizer.
struct SanitizeSettings {
  std::string tool;                 // memcheck, racecheck or initcheck
  std::filesystem::path program;    // compute-sanitizer
  std::filesystem::path log_root;   // each system's logs go to log_root/<system or adapter-N>/
  std::filesystem::path gnncheck;   // this program: built-in GPU systems run as `gnncheck serve-system NAME`
};


class SystemRegistry {
 public:
  // oracle, cpu_float32, gpu (unavailable with a reason when not built or no device), replicas.
  static SystemRegistry with_builtins();

  // Adds an entry; a second entry of the same name is an InputError naming both.
  void add(SystemEntry entry);

  // An external adapter process (adapters/process_system.h) started from `command` (no shell). The
  // system's name is `name`, or when empty the name the adapter announces in its hello line.
  // Returns the name it was registered under.
  // `working_directory`: where the adapter is started (empty: the current directory).
  std::string add_adapter(const std::string& command, const std::string& name = "",
                          const std::filesystem::path& working_directory = {});
  // A C plugin (.so implementing gnncheck/plugin.h), run in gnncheck-plugin-host. The system's
  // name is `name`, or when empty the name the plugin reports. Returns the registered name.
  std::string add_plugin(const std::string& library, const std::string& name = "");

  // Limits for adapters and plugins registered from now on.
  void set_process_limits(const ProcessLimits& limits) { limits_ = limits; }
  const ProcessLimits& process_limits() const { return limits_; }

  // From now on every GPU system runs under compute-sanitizer: the built-in GPU systems already
  // registered become `gnncheck serve-system NAME` processes under it, and adapters and plugins
  // registered later are started under it. Throws InputError for an unknown tool.
  void sanitize(const SanitizeSettings& settings);

  bool contains(const std::string& name) const;
  // Throws InputError "unknown system 'x'; known systems: …".
  const SystemEntry& find(const std::string& name) const;
  const std::vector<SystemEntry>& entries() const { return entries_; }

 private:
  // Sanitizer options for a process whose logs go to `log_dir` (nothing when not sanitizing).
  void apply_sanitizer(ProcessSystemOptions& options, const std::filesystem::path& log_dir) const;
  std::filesystem::path next_sanitizer_log_dir(const std::string& label);

  std::vector<SystemEntry> entries_;
  ProcessLimits limits_;
  std::optional<SanitizeSettings> sanitize_;
  int sanitized_processes_ = 0;
};

// `s` quoted for a POSIX shell when it needs it (re-run lines are pasted into one).
std::string shell_quote(const std::string& s);

}  // namespace gnncheck::suites

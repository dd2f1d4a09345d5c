// gnncheck/core/system.h — the one interface through which every system under test is reached.
//
// The oracle, the float32 CPU evaluation, the GPU reference, cuSPARSE, external processes, C plugins
// and the bug replicas are all Systems: a name, whether it can run here (and why not), which targets
// it supports and in which precision it computes them, and one entry point that evaluates a Case.
// evaluate() never throws for a problem of the system under test: it returns a Result whose status
// says what went wrong (error, crashed, timeout, invalid_output) with a message.
//
//   std::unique_ptr<gnncheck::System> sys = gnncheck::make_oracle_system();
//   gnncheck::Result r = sys->evaluate(c);
//   if (!r.ok()) fmt::print("{}: {}\n", gnncheck::to_string(r.status), r.message);
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/case.h"

namespace gnncheck {

// The values of each attribute a system implements for one target, where it implements fewer than
// the catalogue allows: a convention ({"source_degree": {"in"}}), a mode ({"norm": {"row_mean"}}) or
// a shape ({"heads": {1}}). An attribute it does not name is implemented for every value. Every
// case the runner gives the system is drawn within it (suites/SCHEMA.md, "What a system declares").
using ImplementedAttributes = std::map<std::string, std::vector<AttrValue>>;

struct Availability {
  bool available = true;
  std::string reason;  // why not, e.g. "no CUDA device" — shown by `gnncheck list` and in reports
};

class System {
 public:
  virtual ~System() = default;
  virtual std::string name() const = 0;
  virtual Availability availability() const { return {}; }
  virtual bool supports(const std::string& target) const = 0;
  // The format `target`'s inputs and outputs are stored in.
  virtual Precision precision(const std::string& target) const = 0;
  // The format its sums and intermediate values are computed in (float16 storage accumulated in
  // float32, as tensor-core kernels do); never coarser than precision(target) (accumulation_fits).
  virtual Precision accumulation(const std::string& target) const { return precision(target); }
  // What the system declares it implements of `target`'s attributes; empty: every value of every one.
  virtual ImplementedAttributes implemented_attributes(const std::string& /*target*/) const { return {}; }
  virtual Result evaluate(const Case& c) = 0;
  // Bytes the system holds between evaluations (host or device), when it can tell; the resources
  // check watches it across repeated evaluations of one case. nullopt: not measured.
  virtual std::optional<std::int64_t> live_bytes() const { return std::nullopt; }
  // What live_bytes() is, in the words its user knows: a resources failure names it so (an
  // adapter's live_bytes in its answers; the Python package's torch.cuda.memory_allocated()).
  virtual std::string live_bytes_source() const { return "live_bytes() reported by the system"; }
  // The resident host memory of the system's own process as gnncheck measured it after its last
  // evaluation: an adapter's resident set size. nullopt for a system inside gnncheck's process
  // (whose RSS holds gnncheck's own work too) or where it cannot be read. Allocator caches move it
  // a little from call to call: the resources check holds it to
  // CheckOptions::resource_host_allowance_bytes of growth over one case's series.
  virtual std::optional<std::int64_t> measured_host_bytes() const { return std::nullopt; }
  // Device memory of this system as gnncheck measured it itself after its last evaluation (not
  // what the system reports): per process through NVML for adapters and plugins, the device's
  // memory around each evaluation for in-process GPU systems (platform/device_memory.h). The resources
  // check holds it to kDriverPageBytes of growth. nullopt: this system uses no device, or nothing
  // could be measured (the verdict says so).
  virtual std::optional<device_memory::Reading> measured_device_bytes() const { return std::nullopt; }
  // Device memory the system reports it holds after its last evaluation as the driver counts it
  // (an adapter's result.json `device_bytes`), page-granular like gnncheck's own reading and held
  // to the same bound. nullopt: not reported.
  virtual std::optional<std::int64_t> reported_device_bytes() const { return std::nullopt; }
  // Seconds this system has spent starting (an adapter's start up to its hello line, every restart
  // included, failed starts too) since it was made. It is not part of any Result::seconds, and a
  // runner leaves it out of an entry's time budget. 0 for systems that start nothing.
  virtual double startup_seconds() const { return 0.0; }
};

}  // namespace gnncheck

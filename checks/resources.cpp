// The resources check: memory (live_bytes(), peak_bytes, device memory) must not grow over repeated
// evaluations of one case after a warm-up; device series are held to one driver page over a window
// long enough that a per-call leak of detectable_leak_bytes() always exceeds it (checks/resources.h).
#include "checks/resources.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/check_support.h"
#include "platform/device_memory.h"
#include "core/error.h"

namespace gnncheck::checks {

using namespace detail;

std::int64_t PageGrowthCriterion::detectable_leak_bytes() const {
  const std::int64_t m = window();
  if (m < 1) return 0;
  return (2 * page_bytes + m - 1) / m;
}

namespace {

// Both criteria: a window of at least one call, one entry per evaluation, and a value at every
// reading the criterion uses.
template <class Criterion>
void require_series(const Criterion& c, const Readings& readings) {
  if (c.window() < 1)
    throw InputError(fmt::format("resources check: {} evaluations leave fewer than 2 after {} warm-up ones",
                                 c.evaluations, c.warmup));
  if (readings.size() != static_cast<size_t>(c.evaluations))
    throw InputError(fmt::format("resources check: {} readings for {} evaluations", readings.size(), c.evaluations));
  for (int k = 0; k < c.evaluations; ++k)
    if (c.uses_reading(k) && !readings[static_cast<size_t>(k)])
      throw InputError(fmt::format("resources check: no reading after evaluation {}, which the criterion compares", k + 1));
}

Readings all_read(const std::vector<std::int64_t>& values) { return Readings(values.begin(), values.end()); }

}  // namespace

SeriesGrowth PageGrowthCriterion::assess(const Readings& readings) const {
  require_series(*this, readings);
  SeriesGrowth g;
  g.first = *readings[static_cast<size_t>(warmup)];
  g.last = *readings.back();
  g.growth = g.last - g.first;
  g.allowance = page_bytes;
  return g;
}

SeriesGrowth PageGrowthCriterion::assess(const std::vector<std::int64_t>& readings) const {
  return assess(all_read(readings));
}

SeriesGrowth CounterGrowthCriterion::assess(const Readings& readings) const {
  require_series(*this, readings);
  const auto least = [&](int from) {
    std::int64_t m = *readings[static_cast<size_t>(from)];
    for (int k = from; k < from + block(); ++k) m = std::min(m, *readings[static_cast<size_t>(k)]);
    return m;
  };
  SeriesGrowth g;
  g.first = least(warmup);
  g.last = least(evaluations - block());
  g.growth = g.last - g.first;
  if (has_middle()) g.middle = least(middle_start());
  return g;
}

SeriesGrowth CounterGrowthCriterion::assess(const std::vector<std::int64_t>& readings) const {
  return assess(all_read(readings));
}

namespace {

// A series compared over the evaluations after warm-up: a counter (CounterGrowthCriterion: what the
// system reports, exact, and the resident host memory gnncheck reads) or device memory in driver
// pages (PageGrowthCriterion).
struct Series {
  std::string label;
  const Readings* values;
  bool have;
  std::int64_t allowance;
  bool counter;
};

}  // namespace

Verdict resources(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::resources, system, c, options);
  const int warmup = options.resource_warmup;
  if (options.resource_evaluations < warmup + 2)
    throw InputError(fmt::format("resources check: {} evaluations leave fewer than 2 after {} warm-up ones",
                                 options.resource_evaluations, warmup));
  if (options.resource_device_evaluations < options.resource_evaluations)
    throw InputError(fmt::format("resources check: {} evaluations with a device series is fewer than the {} without one",
                                 options.resource_device_evaluations, options.resource_evaluations));
  // One entry per evaluation; the figures are read (and the entries hold values) where a criterion
  // compares them, and on the short series' evaluations, which decide whether there is a device
  // series. The others are `counted`: a system may skip its readings there, but what they leave
  // behind shows in the next figures read.
  Readings live, peak, reported_device, host;
  // gnncheck's own readings: a system measured around its evaluations has none before its first
  // (its context did not exist yet), which only the warm-up may lack.
  std::vector<std::optional<device_memory::Reading>> readings;
  bool any_device_reading = false;
  int evaluations = options.resource_evaluations;
  const auto figures_read = [&](int k) {
    return k < options.resource_evaluations || PageGrowthCriterion{evaluations, warmup, 0}.uses_reading(k) ||
           CounterGrowthCriterion{evaluations, warmup}.uses_reading(k);
  };
  // Held across a device series, so that no other thread's GPU work of this process comes between
  // its evaluations and an in-process system's counted evaluations need no readings (RetainedMeter).
  std::unique_lock series_lock(device_memory::in_process_device_lock(), std::defer_lock);
  Case measured = c;
  for (int k = 0; k < evaluations; ++k) {
    const bool read = figures_read(k);
    measured.memory_figures = read ? MemoryFigures::read : MemoryFigures::counted;
    const Result r = system.evaluate(measured);
    if (system_failed(v, r, fmt::format("evaluation {}", k + 1))) return v;
    live.push_back(read ? system.live_bytes() : std::nullopt);
    peak.push_back(read ? r.peak_bytes : std::nullopt);
    host.push_back(read ? system.measured_host_bytes() : std::nullopt);
    reported_device.push_back(read ? system.reported_device_bytes() : std::nullopt);
    readings.push_back(read ? system.measured_device_bytes() : std::nullopt);
    any_device_reading = any_device_reading || readings.back() || reported_device.back();
    // A device series moves in whole pages: only a longer window sees a leak smaller than a page
    // per call. Systems without one (no device, no NVML) keep the short series.
    if (k + 1 == options.resource_evaluations && any_device_reading) {
      evaluations = options.resource_device_evaluations;
      series_lock.lock();
    }
  }
  const size_t n = static_cast<size_t>(evaluations);
  const size_t first = static_cast<size_t>(warmup);
  const PageGrowthCriterion criterion{evaluations, warmup, device_memory::kDriverPageBytes};
  const CounterGrowthCriterion counters{evaluations, warmup};
  const bool have_device = std::any_of(readings.begin(), readings.end(), [](const auto& r) { return r.has_value(); });
  Readings device(n);
  std::vector<std::string> device_sources;  // of the readings after warm-up
  bool device_complete = true;  // a reading after every evaluation after warm-up whose figures were read
  for (size_t k = 0; k < n; ++k) {
    if (readings[k]) device[k] = readings[k]->bytes;
    if (k < first || !figures_read(static_cast<int>(k))) continue;
    device_sources.push_back(readings[k] ? readings[k]->source : "no reading");
    device_complete = device_complete && readings[k].has_value();
  }
  // A counter series is there when every evaluation whose figures were read gave it.
  const auto complete = [&](const Readings& series) {
    for (size_t k = 0; k < n; ++k)
      if (figures_read(static_cast<int>(k)) && !series[k]) return false;
    return true;
  };
  const bool have_live = complete(live), have_peak = complete(peak);
  const bool have_reported_device = complete(reported_device), have_host = complete(host);
  if (!have_live && !have_peak && !have_device && !have_reported_device && !have_host)
    return not_applicable(v, fmt::format("system '{}' reports neither live_bytes() nor peak_bytes, and gnncheck measured "
                                         "neither its process's host memory nor device memory of it",
                                         v.system));
  // One measurement kind over every evaluation after warm-up, or the series cannot be compared.
  const bool device_comparable =
      have_device && device_complete &&
      std::all_of(device_sources.begin(), device_sources.end(),
                  [&](const std::string& s) { return s == device_sources.back(); });
  const std::string device_model =
      have_device || have_reported_device
          ? fmt::format("≤ {} bytes (one driver page) in device memory as the driver counts it (device_bytes reported "
                        "by the system, and what gnncheck measures itself: {}) over the {} evaluations after the first "
                        "one after warm-up, so that a leak of {} bytes or more per call exceeds it whatever the phase "
                        "of the driver's pages (⌈2 pages / {}⌉)",
                        device_memory::kDriverPageBytes, have_device ? device_sources.back() : "not measured",
                        criterion.window(), criterion.detectable_leak_bytes(), criterion.window())
          : "device memory not measured for this system (no device reading, no device_bytes reported)";
  // What a series' growth compares: the same words in the model and in a failure's detail.
  const auto compared = [&](bool counter) {
    if (counter && counters.has_middle())
      return fmt::format("the least of the last {0} readings against the least of the first {0} after warm-up, {1} "
                         "calls apart, growing in both halves (against the least of {0} readings from evaluation {2}: "
                         "a leak grows each half, a one-time allocation steps once)",
                         counters.block(), counters.window(), counters.middle_start() + 1);
    if (counter && counters.block() > 1)
      return fmt::format("the least of the last {0} readings against the least of the first {0} after warm-up, {1} "
                         "calls apart",
                         counters.block(), counters.window());
    return fmt::format("the last reading against the first after warm-up, {} calls apart", criterion.window());
  };
  const std::string counter_model =
      compared(true) + (counters.block() > 1 ? " (a counter read while the system's threads still release memory "
                                               "reads high, never low)"
                                             : "");
  // The evaluations whose figures were read, as ranges ("1–10, 31–38, 60–67"): every other one is counted.
  std::vector<std::string> read_ranges;
  for (int k = 0; k < evaluations; ++k) {
    if (!figures_read(k) || (k > 0 && figures_read(k - 1))) continue;
    int last = k;
    while (last + 1 < evaluations && figures_read(last + 1)) ++last;
    read_ranges.push_back(last == k ? fmt::format("{}", k + 1) : fmt::format("{}–{}", k + 1, last + 1));
  }
  const std::string read_model =
      read_ranges.size() == 1 ? ""
                              : fmt::format("; figures read after evaluations {} (what the others leave behind "
                                            "shows in the next ones read)",
                                            fmt::join(read_ranges, ", "));
  const std::string host_model =
      have_host ? fmt::format("; ≤ {} bytes in the resident host memory of the system's process, which gnncheck reads "
                              "(allocator caches creep; compared the same way)",
                              options.resource_host_allowance_bytes)
                : "";
  v.tolerance_model =
      fmt::format("growth after {} warm-up evaluations of {}: ≤ {} bytes in what the system reports (live_bytes(), "
                  "peak_bytes: {}){}; {}{}",
                  warmup, n, options.resource_allowance_bytes, counter_model, host_model, device_model, read_model);
  v.metric_name = "bytes gained between the first evaluation after warm-up and the last";
  const std::vector<Series> all = {
      {system.live_bytes_source(), &live, have_live, options.resource_allowance_bytes, true},
      {"peak_bytes reported by the system", &peak, have_peak, options.resource_allowance_bytes, true},
      {"resident host memory of the system's process measured by gnncheck", &host, have_host,
       options.resource_host_allowance_bytes, true},
      {"device_bytes reported by the system", &reported_device, have_reported_device, device_memory::kDriverPageBytes,
       false},
      {fmt::format("device memory measured by gnncheck ({})", have_device ? device_sources.back() : ""), &device,
       device_comparable, device_memory::kDriverPageBytes, false},
  };
  std::map<std::string, std::string> compared_by_tensor;  // the failure's detail names its series' rule
  std::map<std::string, int> calls_by_tensor;              // … and the calls its growth spans (the rate per call)
  std::map<std::string, SeriesGrowth> growth_by_tensor;    // … and its halves
  for (const Series& s : all) {
    if (!s.have) continue;
    SeriesGrowth g = s.counter ? counters.assess(*s.values) : criterion.assess(*s.values);
    g.allowance = s.allowance;
    const double allowance = static_cast<double>(g.allowance);
    TensorComparison tc;
    tc.tensor = fmt::format("{} over {} evaluations", s.label, n);
    tc.elements = static_cast<std::int64_t>(n);
    tc.agreement = g.exceeds() ? Agreement::disagrees : Agreement::agrees;
    tc.elements_over_bound = tc.agrees() ? 0 : 1;
    tc.worst_ratio = tc.agrees() ? 0.0 : (allowance > 0 ? static_cast<double>(g.growth) / allowance : INFINITY);
    tc.worst = ElementReport{static_cast<std::int64_t>(n - 1), {}, static_cast<double>(g.last),
                             static_cast<double>(g.first), allowance};
    compared_by_tensor[tc.tensor] = compared(s.counter);
    calls_by_tensor[tc.tensor] = s.counter ? counters.window() : criterion.window();
    growth_by_tensor[tc.tensor] = g;
    v.comparisons.push_back(tc);
  }
  summarize(v);
  // The headline comparison (the worst disagreeing one, else the worst agreeing one) gives the figures.
  v.metric = v.worst ? v.worst->actual - v.worst->expected : 0.0;
  v.bound = v.worst ? v.worst->bound : 0.0;
  if (have_device && !device_comparable && v.conclusion != Conclusion::fail) {
    // Fail closed: what the system reports is not enough to pass a GPU system's memory.
    v.conclusion = Conclusion::inconclusive;
    v.detail = fmt::format("gnncheck's device-memory measurement changed kind during the evaluations after warm-up "
                           "(from '{}' to '{}'), so its readings cannot be compared",
                           device_sources.front(), device_sources.back());
  }
  if (v.conclusion == Conclusion::fail) {
    const int calls = std::max(1, calls_by_tensor[v.tensor]);
    const SeriesGrowth& g = growth_by_tensor[v.tensor];
    const std::string halves =
        g.middle ? fmt::format(", {} bytes in the first half and {} in the second", g.first_half(), g.second_half()) : "";
    v.detail = fmt::format("memory grew by {:.0f} bytes over repeated evaluations of the same case{}, {:.0f} bytes "
                           "({:.3g} MiB) per call over {} calls (got = bytes at the end, expected = bytes after "
                           "warm-up: {}; bound {:.0f} bytes).",
                           v.metric, halves, v.metric / calls, v.metric / calls / 1048576.0, calls,
                           compared_by_tensor[v.tensor], v.bound);
    v.message = failure_message(v);
  }
  return v;
}

}  // namespace gnncheck::checks

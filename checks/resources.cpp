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
  SeriesGrowth g;
  // The least reading of the block from `from`, its spread joining the series'.
  const auto least = [&](int from) {
    std::int64_t lo = *readings[static_cast<size_t>(from)], hi = lo;
    for (int k = from; k < from + block(); ++k) {
      lo = std::min(lo, *readings[static_cast<size_t>(k)]);
      hi = std::max(hi, *readings[static_cast<size_t>(k)]);
    }
    g.spread = std::max(g.spread, hi - lo);
    return lo;
  };
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

// The evaluation counts the check needs, checked before any evaluation.
void require_evaluation_counts(const CheckOptions& options) {
  if (options.resource_evaluations < options.resource_warmup + 2)
    throw InputError(fmt::format("resources check: {} evaluations leave fewer than 2 after {} warm-up ones",
                                 options.resource_evaluations, options.resource_warmup));
  if (options.resource_device_evaluations < options.resource_evaluations)
    throw InputError(fmt::format("resources check: {} evaluations with a device series is fewer than the {} without one",
                                 options.resource_device_evaluations, options.resource_evaluations));
}

// Which evaluations' figures are read: every one of the short series, which decides whether there
// is a device series, and after it the ones a criterion compares. The others are `counted`: a
// system may skip its readings there, but what they leave behind shows in the next figures read.
struct Schedule {
  int short_evaluations = 0;  // the short series' length (CheckOptions::resource_evaluations)
  int evaluations = 0;        // n: the short series', or the device series' once a device reading showed
  int warmup = 0;
  bool figures_read(int k) const {
    return k < short_evaluations || PageGrowthCriterion{evaluations, warmup, 0}.uses_reading(k) ||
           CounterGrowthCriterion{evaluations, warmup}.uses_reading(k);
  }
  PageGrowthCriterion pages() const { return {evaluations, warmup, device_memory::kDriverPageBytes}; }
  CounterGrowthCriterion counters() const { return {evaluations, warmup}; }
};

// One entry per evaluation; the entries hold values where the schedule reads the figures.
struct Measurements {
  Schedule schedule;
  Readings live, peak, reported_device, host;
  // gnncheck's own readings: a system measured around its evaluations has none before its first
  // (its context did not exist yet), which only the warm-up may lack.
  std::vector<std::optional<device_memory::Reading>> device;
};

// Whether the short series' resident set grew by more than the host allowance. A reading of it after
// a call lies anywhere between the live memory and that plus what the call allocated and freed (an
// allocator keeps or returns freed blocks as it sees fit), so two single readings cannot tell such a
// swing from a leak: the growth is measured again over the long series, whose blocks' floors can.
bool host_growth_suspected(const Measurements& m, const CheckOptions& options) {
  const auto first = static_cast<size_t>(options.resource_warmup);
  return m.host.size() > first && m.host[first] && m.host.back() &&
         *m.host.back() - *m.host[first] > options.resource_host_allowance_bytes;
}

// Evaluates the case again and again, reading the figures where the schedule says. A device series
// moves in whole pages: only a longer window sees a leak smaller than a page per call, so a device
// reading in the short series lengthens it, under `series_lock`; systems without one (no device, no
// NVML) keep the short series. nullopt when an evaluation failed (`v` says why).
std::optional<Measurements> measure(Verdict& v, System& system, const Case& c, const CheckOptions& options,
                                    std::unique_lock<device_memory::DeviceLock>& series_lock) {
  Measurements m;
  m.schedule = {options.resource_evaluations, options.resource_evaluations, options.resource_warmup};
  bool any_device_reading = false;
  Case measured = c;
  for (int k = 0; k < m.schedule.evaluations; ++k) {
    const bool read = m.schedule.figures_read(k);
    measured.memory_figures = read ? MemoryFigures::read : MemoryFigures::counted;
    const Result r = system.evaluate(measured);
    if (system_failed(v, r, fmt::format("evaluation {}", k + 1))) return std::nullopt;
    m.live.push_back(read ? system.live_bytes() : std::nullopt);
    m.peak.push_back(read ? r.peak_bytes : std::nullopt);
    m.host.push_back(read ? system.measured_host_bytes() : std::nullopt);
    m.reported_device.push_back(read ? system.reported_device_bytes() : std::nullopt);
    m.device.push_back(read ? system.measured_device_bytes() : std::nullopt);
    any_device_reading = any_device_reading || m.device.back() || m.reported_device.back();
    if (k + 1 == options.resource_evaluations && (any_device_reading || host_growth_suspected(m, options))) {
      m.schedule.evaluations = options.resource_device_evaluations;
      if (any_device_reading) series_lock.lock();
    }
  }
  return m;
}

// A counter series is there when every evaluation whose figures were read gave it.
bool read_throughout(const Readings& series, const Schedule& schedule) {
  for (size_t k = 0; k < static_cast<size_t>(schedule.evaluations); ++k)
    if (schedule.figures_read(static_cast<int>(k)) && !series[k]) return false;
  return true;
}

// Which of the series the system reports, and gnncheck's host reading, are there.
struct Present {
  bool live = false, peak = false, reported_device = false, host = false;
};

Present present(const Measurements& m) {
  return {read_throughout(m.live, m.schedule), read_throughout(m.peak, m.schedule),
          read_throughout(m.reported_device, m.schedule), read_throughout(m.host, m.schedule)};
}

// gnncheck's own device readings as a series: compared only when one measurement kind gave a
// reading after every evaluation after warm-up whose figures were read.
struct DeviceSeries {
  Readings values;
  std::vector<std::string> sources;  // of the readings after warm-up
  bool have = false;                 // any reading at all
  bool comparable = false;
};

DeviceSeries device_series(const Measurements& m) {
  const size_t n = static_cast<size_t>(m.schedule.evaluations);
  const size_t first = static_cast<size_t>(m.schedule.warmup);
  DeviceSeries d;
  d.have = std::any_of(m.device.begin(), m.device.end(), [](const auto& r) { return r.has_value(); });
  d.values = Readings(n);
  bool complete = true;  // a reading after every evaluation after warm-up whose figures were read
  for (size_t k = 0; k < n; ++k) {
    if (m.device[k]) d.values[k] = m.device[k]->bytes;
    if (k < first || !m.schedule.figures_read(static_cast<int>(k))) continue;
    d.sources.push_back(m.device[k] ? m.device[k]->source : "no reading");
    complete = complete && m.device[k].has_value();
  }
  d.comparable = d.have && complete &&
                 std::all_of(d.sources.begin(), d.sources.end(), [&](const std::string& s) { return s == d.sources.back(); });
  return d;
}

// What a series' growth compares: the same words in the model and in a failure's detail.
std::string compared_rule(bool counter, const Schedule& schedule) {
  const CounterGrowthCriterion counters = schedule.counters();
  if (counter && counters.has_middle())
    return fmt::format("the least of the last {0} readings against the least of the first {0} after warm-up, {1} "
                       "calls apart, growing in both halves (against the least of {0} readings from evaluation {2}: "
                       "a leak grows each half, a one-time allocation steps once)",
                       counters.block(), counters.window(), counters.middle_start() + 1);
  if (counter && counters.block() > 1)
    return fmt::format("the least of the last {0} readings against the least of the first {0} after warm-up, {1} "
                       "calls apart",
                       counters.block(), counters.window());
  return fmt::format("the last reading against the first after warm-up, {} calls apart", schedule.pages().window());
}

// The device part of the model: one driver page over a window long enough to catch a leak.
std::string device_model_text(const Schedule& schedule, const DeviceSeries& device, bool have_reported_device) {
  const PageGrowthCriterion criterion = schedule.pages();
  if (!device.have && !have_reported_device)
    return "device memory not measured for this system (no device reading, no device_bytes reported)";
  return fmt::format("≤ {} bytes (one driver page) in device memory as the driver counts it (device_bytes reported "
                     "by the system, and what gnncheck measures itself: {}) over the {} evaluations after the first "
                     "one after warm-up, so that a leak of {} bytes or more per call exceeds it whatever the phase "
                     "of the driver's pages (⌈2 pages / {}⌉)",
                     device_memory::kDriverPageBytes, device.have ? device.sources.back() : "not measured",
                     criterion.window(), criterion.detectable_leak_bytes(), criterion.window());
}

// The evaluations whose figures were read, as ranges ("1–10, 31–38, 60–67"), where not all were.
std::string read_model_text(const Schedule& schedule) {
  std::vector<std::string> read_ranges;
  for (int k = 0; k < schedule.evaluations; ++k) {
    if (!schedule.figures_read(k) || (k > 0 && schedule.figures_read(k - 1))) continue;
    int last = k;
    while (last + 1 < schedule.evaluations && schedule.figures_read(last + 1)) ++last;
    read_ranges.push_back(last == k ? fmt::format("{}", k + 1) : fmt::format("{}–{}", k + 1, last + 1));
  }
  if (read_ranges.size() == 1) return "";
  return fmt::format("; figures read after evaluations {} (what the others leave behind shows in the next ones read)",
                     fmt::join(read_ranges, ", "));
}

// How the bound was formed: each kind of series' allowance and rule, and which figures were read.
std::string tolerance_model_text(const Schedule& schedule, const DeviceSeries& device, const Present& have,
                                 const CheckOptions& options) {
  const std::string counter_model =
      compared_rule(true, schedule) + (schedule.counters().block() > 1
                                           ? " (a counter read while the system's threads still release memory "
                                             "reads high, never low)"
                                           : "");
  const std::string host_model =
      have.host ? fmt::format("; ≤ {} bytes in the resident host memory of the system's process, which gnncheck reads "
                              "(compared the same way: allocators creep, and keep or return freed blocks as they "
                              "see fit, so over a long series each half's floor must also rise by more than the "
                              "readings moved inside a block; a growth over the short series is measured again "
                              "over the long one)",
                              options.resource_host_allowance_bytes)
                : "";
  return fmt::format("growth after {} warm-up evaluations of {}: ≤ {} bytes in what the system reports (live_bytes(), "
                     "peak_bytes: {}){}; {}{}",
                     schedule.warmup, static_cast<size_t>(schedule.evaluations), options.resource_allowance_bytes,
                     counter_model, host_model, device_model_text(schedule, device, have.reported_device),
                     read_model_text(schedule));
}

// A series compared over the evaluations after warm-up: a counter (CounterGrowthCriterion: what the
// system reports, exact, and the resident host memory gnncheck reads) or device memory in driver
// pages (PageGrowthCriterion).
struct Series {
  std::string label;
  const Readings* values;
  bool have;
  std::int64_t allowance;
  bool counter;
  // Readings that move within a block without growth (the resident set): each half's floor must
  // rise by more than the largest spread of a block, too (checks/resources.md, "Host memory").
  bool moves_within_blocks = false;
};

// Every series the check knows, in the order the comparisons are reported; `have` says which are there.
std::vector<Series> all_series(System& system, const Measurements& m, const DeviceSeries& device, const Present& have,
                               const CheckOptions& options) {
  return {
      {system.live_bytes_source(), &m.live, have.live, options.resource_allowance_bytes, true},
      {"peak_bytes reported by the system", &m.peak, have.peak, options.resource_allowance_bytes, true},
      {"resident host memory of the system's process measured by gnncheck", &m.host, have.host,
       options.resource_host_allowance_bytes, true, true},
      {"device_bytes reported by the system", &m.reported_device, have.reported_device,
       device_memory::kDriverPageBytes, false},
      {fmt::format("device memory measured by gnncheck ({})", device.have ? device.sources.back() : ""),
       &device.values, device.comparable, device_memory::kDriverPageBytes, false},
  };
}

// What a failure's detail says about the series behind its headline comparison.
struct Assessment {
  std::string compared;  // its series' rule
  int calls = 0;         // the calls its growth spans (the rate per call)
  SeriesGrowth growth;   // its halves
};

// One comparison per series that is there, its growth against its allowance; by comparison label,
// what the failure's detail needs.
std::map<std::string, Assessment> assess_series(Verdict& v, const std::vector<Series>& all, const Schedule& schedule) {
  const size_t n = static_cast<size_t>(schedule.evaluations);
  const PageGrowthCriterion criterion = schedule.pages();
  const CounterGrowthCriterion counters = schedule.counters();
  std::map<std::string, Assessment> by_tensor;
  for (const Series& s : all) {
    if (!s.have) continue;
    SeriesGrowth g = s.counter ? counters.assess(*s.values) : criterion.assess(*s.values);
    g.allowance = s.moves_within_blocks ? std::max(s.allowance, 2 * g.spread) : s.allowance;
    const double allowance = static_cast<double>(g.allowance);
    TensorComparison tc;
    tc.tensor = fmt::format("{} over {} evaluations", s.label, n);
    tc.elements = static_cast<std::int64_t>(n);
    tc.agreement = g.exceeds() ? Agreement::disagrees : Agreement::agrees;
    tc.elements_over_bound = tc.agrees() ? 0 : 1;
    tc.worst_ratio = tc.agrees() ? 0.0 : (allowance > 0 ? static_cast<double>(g.growth) / allowance : INFINITY);
    tc.worst = ElementReport{static_cast<std::int64_t>(n - 1), {}, static_cast<double>(g.last),
                             static_cast<double>(g.first), allowance};
    by_tensor[tc.tensor] = {compared_rule(s.counter, schedule), s.counter ? counters.window() : criterion.window(), g};
    v.comparisons.push_back(tc);
  }
  return by_tensor;
}

// Fail closed: where gnncheck's device measurement changed kind, what the system reports is not
// enough to pass a GPU system's memory.
void require_one_device_kind(Verdict& v, const DeviceSeries& device) {
  if (!device.have || device.comparable || v.conclusion == Conclusion::fail) return;
  v.conclusion = Conclusion::inconclusive;
  v.detail = fmt::format("gnncheck's device-memory measurement changed kind during the evaluations after warm-up "
                         "(from '{}' to '{}'), so its readings cannot be compared",
                         device.sources.front(), device.sources.back());
}

// A failure's detail: how much, how fast per call, and by which rule.
void explain_growth(Verdict& v, std::map<std::string, Assessment>& assessed) {
  const Assessment& a = assessed[v.tensor];
  const int calls = std::max(1, a.calls);
  const SeriesGrowth& g = a.growth;
  const std::string halves =
      (g.middle ? fmt::format(", {} bytes in the first half and {} in the second", g.first_half(), g.second_half())
                : "") +
      (g.spread > 0 ? fmt::format(" (readings moved by up to {} bytes inside a block)", g.spread) : "");
  v.detail = fmt::format("memory grew by {:.0f} bytes over repeated evaluations of the same case{}, {:.0f} bytes "
                         "({:.3g} MiB) per call over {} calls (got = bytes at the end, expected = bytes after "
                         "warm-up: {}; bound {:.0f} bytes).",
                         v.metric, halves, v.metric / calls, v.metric / calls / 1048576.0, calls, a.compared, v.bound);
  v.message = failure_message(v);
}

}  // namespace

Verdict resources(System& system, const Case& c, const CheckOptions& options) {
  Verdict v = start_verdict(CheckKind::resources, system, c, options);
  require_evaluation_counts(options);
  // Held across a device series, so that no other thread's GPU work of this process comes between
  // its evaluations and an in-process system's counted evaluations need no readings (RetainedMeter).
  std::unique_lock series_lock(device_memory::in_process_device_lock(), std::defer_lock);
  const std::optional<Measurements> m = measure(v, system, c, options, series_lock);
  if (!m) return v;
  const DeviceSeries device = device_series(*m);
  const Present have = present(*m);
  if (!have.live && !have.peak && !device.have && !have.reported_device && !have.host)
    return not_applicable(v, fmt::format("system '{}' reports neither live_bytes() nor peak_bytes, and gnncheck measured "
                                         "neither its process's host memory nor device memory of it",
                                         v.system));
  v.tolerance_model = tolerance_model_text(m->schedule, device, have, options);
  v.metric_name = "bytes gained between the first evaluation after warm-up and the last";
  auto assessed = assess_series(v, all_series(system, *m, device, have, options), m->schedule);
  summarize(v);
  // The headline comparison (the worst disagreeing one, else the worst agreeing one) gives the figures.
  v.metric = v.worst ? v.worst->actual - v.worst->expected : 0.0;
  v.bound = v.worst ? v.worst->bound : 0.0;
  require_one_device_kind(v, device);
  if (v.conclusion == Conclusion::fail) explain_growth(v, assessed);
  return v;
}

}  // namespace gnncheck::checks

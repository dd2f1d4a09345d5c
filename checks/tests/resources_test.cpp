// The resources check without a GPU: its growth criterion (checks/resources.h) and the check on
// systems whose device memory, as gnncheck would measure it, follows a script — a leak that the
// driver's 2 MiB pages hide for ~10 calls at a time, warm-up jumps, a flat series, a measurement
// that changes kind — and on a replica whose own counters grow.
#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "adapters/replicas/replicas.h"
#include "checks/checks.h"
#include "checks/resources.h"
#include "platform/device_memory.h"
#include "core/error.h"
#include "oracle/cpu_systems.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::checks {
namespace {

constexpr std::int64_t kPage = device_memory::kDriverPageBytes;
constexpr std::int64_t kKiB = 1024;

Case spmm_case() {
  const std::vector<index_t> dst{0, 0, 1, 2, 2}, src{1, 2, 0, 2, 1};
  auto g = std::make_shared<const Graph>(Graph::from_edges(3, 3, dst, src));
  return oracle::make_random_case(oracle::find_target("spmm"), g, {}, 11);
}

// The device memory the driver shows for a process that has `leaked` bytes of small allocations
// live beside `base` bytes: whole pages, the leak sub-allocated inside them (so 200 KiB per call
// moves the reading by one page about every 10 calls). `phase`: how full the last page was before.
std::int64_t paged(std::int64_t base, std::int64_t phase, std::int64_t leaked) {
  return base + kPage * ((phase + leaked + kPage - 1) / kPage);
}

// A correct float32 system whose device memory, as gnncheck would measure it, is bytes(k) after
// evaluation k (0-based), read through source(k); nullopt before `first_reading`.
class ScriptedDeviceMemory final : public System {
 public:
  ScriptedDeviceMemory(std::function<std::int64_t(int)> bytes, std::function<std::string(int)> source = {},
                       int first_reading = 0)
      : inner_(make_cpu_float32_system()), bytes_(std::move(bytes)), source_(std::move(source)),
        first_reading_(first_reading) {}
  std::string name() const override { return "scripted"; }
  bool supports(const std::string& t) const override { return inner_->supports(t); }
  Precision precision(const std::string& t) const override { return inner_->precision(t); }
  Result evaluate(const Case& c) override {
    ++evaluations_;
    return inner_->evaluate(c);
  }
  std::optional<device_memory::Reading> measured_device_bytes() const override {
    const int k = evaluations_ - 1;
    if (k < first_reading_) return std::nullopt;
    return device_memory::Reading{bytes_(k), source_ ? source_(k) : "NVML: process 1"};
  }
  // A live_bytes() counter beside the device series: live(k) after evaluation k (none unless set).
  void report_live_bytes(std::function<std::int64_t(int)> live) { live_ = std::move(live); }
  std::optional<std::int64_t> live_bytes() const override {
    if (!live_) return std::nullopt;
    return live_(evaluations_ - 1);
  }
  // The process's resident set as gnncheck would read it: host(k) after evaluation k, k counted
  // over every case this system evaluated (none unless set).
  void report_host_bytes(std::function<std::int64_t(int)> host) { host_ = std::move(host); }
  std::optional<std::int64_t> measured_host_bytes() const override {
    if (!host_) return std::nullopt;
    return host_(evaluations_ - 1);
  }
  int evaluations() const { return evaluations_; }

 private:
  std::unique_ptr<System> inner_;
  std::function<std::int64_t(int)> bytes_;
  std::function<std::string(int)> source_;
  int first_reading_;
  std::function<std::int64_t(int)> live_;
  std::function<std::int64_t(int)> host_;
  int evaluations_ = 0;
};

const CheckOptions kDefaults;

TEST(PageGrowthCriterion, DetectableLeakFollowsFromThePageAndTheWindow) {
  const PageGrowthCriterion defaults{kDefaults.resource_device_evaluations, kDefaults.resource_warmup, kPage};
  EXPECT_EQ(defaults.window(), 64);
  EXPECT_EQ(defaults.detectable_leak_bytes(), 64 * kKiB);
  // The short series without a device reading could only promise ⌈2 pages / 3⌉ ≈ 1.33 MiB per call.
  const PageGrowthCriterion short_series{kDefaults.resource_evaluations, kDefaults.resource_warmup, kPage};
  EXPECT_EQ(short_series.detectable_leak_bytes(), (2 * kPage + 2) / 3);
  EXPECT_EQ((PageGrowthCriterion{3, 2, kPage}).detectable_leak_bytes(), 0);  // no window
  EXPECT_THROW((PageGrowthCriterion{3, 2, kPage}).assess(std::vector<std::int64_t>{0, 0, 0}), InputError);
  EXPECT_THROW(defaults.assess(std::vector<std::int64_t>{0, 0}), InputError);
}

TEST(PageGrowthCriterion, ALeakOfTheDetectableSizeExceedsOnePageAtEveryPhaseAndASmallerOneNeedNot) {
  const PageGrowthCriterion c{kDefaults.resource_device_evaluations, kDefaults.resource_warmup, kPage};
  const std::int64_t detectable = c.detectable_leak_bytes();
  bool smaller_escapes_somewhere = false;
  for (std::int64_t phase = 0; phase < kPage; phase += 4 * kKiB) {
    std::vector<std::int64_t> at_bound, below;
    for (int k = 0; k < c.evaluations; ++k) {
      at_bound.push_back(paged(700 * kPage, phase, detectable * (k + 1)));
      below.push_back(paged(700 * kPage, phase, (detectable - kKiB) * (k + 1)));
    }
    EXPECT_TRUE(c.assess(at_bound).exceeds()) << "phase " << phase;
    smaller_escapes_somewhere = smaller_escapes_somewhere || !c.assess(below).exceeds();
  }
  // The bound is tight: 63 KiB per call over 64 calls is under 2 pages, and some phase hides it.
  EXPECT_TRUE(smaller_escapes_somewhere);
}

TEST(Resources, CatchesA200KiBPerCallLeakThatMovesTheReadingOnePageEveryTenCalls) {
  // The cuRAND generator created per call and never destroyed (issue: ~200 KiB of device memory per call).
  for (std::int64_t phase : {std::int64_t{0}, kPage / 3, kPage - 1}) {
    ScriptedDeviceMemory leak([&](int k) { return paged(300 * kPage, phase, 200 * kKiB * (k + 1)); });
    const Verdict v = resources(leak, spmm_case());
    ASSERT_EQ(v.conclusion, Conclusion::fail) << "phase " << phase << ": " << one_line(v);
    EXPECT_EQ(leak.evaluations(), kDefaults.resource_device_evaluations);
    // 64 calls × 200 KiB = 12.5 MiB: six or seven pages.
    EXPECT_GE(v.metric, 6.0 * kPage);
    EXPECT_EQ(v.bound, static_cast<double>(kPage));
    EXPECT_NE(v.message.find("device memory measured by gnncheck"), std::string::npos) << v.message;
    EXPECT_NE(v.tolerance_model.find("a leak of 65536 bytes or more per call"), std::string::npos) << v.tolerance_model;
    EXPECT_NE(v.detail.find("the last reading against the first after warm-up, 64 calls apart"), std::string::npos)
        << v.detail;
  }
  // In the first 6 evaluations (the count before device series were longer) it moved by at most a page.
  std::vector<std::int64_t> first_six;
  for (int k = 0; k < 6; ++k) first_six.push_back(paged(300 * kPage, 0, 200 * kKiB * (k + 1)));
  EXPECT_FALSE((PageGrowthCriterion{6, 2, kPage}).assess(first_six).exceeds());
}

TEST(Resources, WarmUpJumpsAndOneLatePageStepPassAFlatSeriesToo) {
  // Context, cuBLAS/cuSPARSE workspaces, lazily loaded kernels: anything in the first two evaluations.
  ScriptedDeviceMemory warm_up([](int k) { return k == 0 ? 250 * kPage : (k == 1 ? 500 * kPage : 504 * kPage); });
  // A reading that first exists after the first evaluation (in-process systems measure around
  // their evaluations, and there is no context before the first).
  ScriptedDeviceMemory measured_late([](int) { return 3 * kPage; }, {}, 1);
  // The driver keeps one sub-allocation page after a cudaFree, at any point after warm-up.
  ScriptedDeviceMemory one_step([](int k) { return 500 * kPage + (k >= 40 ? kPage : 0); });
  ScriptedDeviceMemory flat([](int) { return 500 * kPage; });
  for (ScriptedDeviceMemory* s : {&warm_up, &measured_late, &one_step, &flat}) {
    const Verdict v = resources(*s, spmm_case());
    EXPECT_TRUE(v.passed()) << one_line(v) << "\n" << v.tolerance_model;
    EXPECT_EQ(s->evaluations(), kDefaults.resource_device_evaluations);
    EXPECT_NE(v.tolerance_model.find("measures itself: NVML: process 1"), std::string::npos) << v.tolerance_model;
  }
  // A page and a byte of growth after warm-up is not what a correct system does.
  ScriptedDeviceMemory over([](int k) { return 10 * kPage + (k >= 60 ? kPage + 1 : 0); });
  const Verdict caught = resources(over, spmm_case());
  ASSERT_EQ(caught.conclusion, Conclusion::fail) << one_line(caught);
  EXPECT_EQ(caught.metric, static_cast<double>(kPage + 1));
}

TEST(CounterGrowthCriterion, TheLeastOfEachEndIgnoresHighReadingsAndCatchesEveryByte) {
  const CounterGrowthCriterion device_series{67, 2};
  EXPECT_EQ(device_series.block(), 8);
  EXPECT_EQ(device_series.window(), 57);
  // A counter read high now and then (memory the system's own threads had not released yet).
  auto series = [](std::int64_t per_call, auto high) {
    std::vector<std::int64_t> r;
    for (int k = 0; k < 67; ++k) r.push_back(1000000 + per_call * k + (high(k) ? 512 : 0));
    return r;
  };
  const auto last_high = [](int k) { return k == 66; };
  const auto every_third_high = [](int k) { return k % 3 == 0; };
  EXPECT_FALSE(device_series.assess(series(0, last_high)).exceeds());
  EXPECT_FALSE(device_series.assess(series(0, every_third_high)).exceeds());
  // One byte per call, read high or not, grows between the two minima: 57 calls apart at least.
  for (const auto& g : {device_series.assess(series(1, last_high)), device_series.assess(series(1, every_third_high))}) {
    EXPECT_TRUE(g.exceeds());
    EXPECT_GE(g.growth, 57);
  }
  // High at every one of the last 8 readings is a step, not growth in both halves; high from the
  // middle block on and again at the end is.
  EXPECT_FALSE(device_series.assess(series(0, [](int k) { return k >= 59; })).exceeds());
  EXPECT_FALSE(device_series.assess(series(0, [](int k) { return k >= 30; })).exceeds());
  {
    std::vector<std::int64_t> two_steps;
    for (int k = 0; k < 67; ++k) two_steps.push_back(1000 + (k >= 20 ? 512 : 0) + (k >= 50 ? 512 : 0));
    EXPECT_TRUE(device_series.assess(two_steps).exceeds());
  }
  // The short series (no device readings) compares the last reading with the first after warm-up.
  const CounterGrowthCriterion short_series{6, 2};
  EXPECT_EQ(short_series.block(), 1);
  EXPECT_EQ(short_series.window(), 3);
  EXPECT_TRUE(short_series.assess(std::vector<std::int64_t>{5, 5, 5, 5, 5, 6}).exceeds());
  EXPECT_THROW(short_series.assess(std::vector<std::int64_t>{5, 5, 5}), InputError);
  EXPECT_THROW((CounterGrowthCriterion{3, 2}).assess(std::vector<std::int64_t>{5, 5, 5}), InputError);
}

TEST(Resources, ACounterReadHighOnceIsNotGrowthButOneBytePerCallIs) {
  // The torch adapter on the H200 (docs/campaigns.md): torch.cuda.memory_allocated() one 512-byte
  // block above its value at the last reading of a case, with 16 adapter processes on 16 cores.
  const auto flat = [](int) { return 500 * kPage; };  // a device series: the long window
  ScriptedDeviceMemory high_at_the_end(flat);
  high_at_the_end.report_live_bytes([](int k) { return k == 66 ? 512 : 0; });
  const Verdict v = resources(high_at_the_end, spmm_case());
  EXPECT_TRUE(v.passed()) << one_line(v);
  EXPECT_NE(v.tolerance_model.find("the least of the last 8 readings"), std::string::npos) << v.tolerance_model;
  ScriptedDeviceMemory leak(flat);
  leak.report_live_bytes([](int k) { return k + (k == 30 ? 512 : 0); });
  const Verdict caught = resources(leak, spmm_case());
  ASSERT_EQ(caught.conclusion, Conclusion::fail) << one_line(caught);
  EXPECT_GE(caught.metric, 57.0);
  EXPECT_NE(caught.message.find("live_bytes() reported by the system"), std::string::npos) << caught.message;
  // The detail says what the failing series compared.
  EXPECT_NE(caught.detail.find("the least of the last 8 readings against the least of the first 8 after warm-up, 57 "
                               "calls apart"),
            std::string::npos)
      << caught.detail;
}

TEST(CounterGrowthCriterion, AOneTimeAllocationAfterWarmUpIsNoLeakButGrowthInBothHalvesIs) {
  // The torch adapter on the H200 under `full` (docs/campaigns.md): torch.cuda.memory_allocated()
  // one 512-byte block higher from some call after warm-up on, in a long-lived adapter process, on
  // cases that pass on a fresh one — a one-time allocation, not a per-call leak.
  const CounterGrowthCriterion c{67, 2};
  ASSERT_TRUE(c.has_middle());
  EXPECT_EQ(c.middle_start(), 30);
  EXPECT_EQ(c.half_window(), 28);
  for (int step_at = 2; step_at < 67; ++step_at) {
    std::vector<std::int64_t> r;
    for (int k = 0; k < 67; ++k) r.push_back(4096 + (k >= step_at ? 512 : 0));
    const SeriesGrowth g = c.assess(r);
    EXPECT_FALSE(g.exceeds()) << "a step after evaluation " << step_at;
    EXPECT_LE(g.growth, 512);
  }
  // Any per-call gain L ≥ 1 byte grows both halves, by at least 28·L each; so does a leak of one
  // 512-byte block every 28 calls, whatever its phase.
  for (int phase = 0; phase < 28; ++phase) {
    std::vector<std::int64_t> r;
    for (int k = 0; k < 67; ++k) r.push_back(4096 + 512 * ((k + phase) / 28));
    EXPECT_TRUE(c.assess(r).exceeds()) << "phase " << phase;
  }
  std::vector<std::int64_t> byte_per_call;
  for (int k = 0; k < 67; ++k) byte_per_call.push_back(k);
  const SeriesGrowth g = c.assess(byte_per_call);
  EXPECT_TRUE(g.exceeds());
  EXPECT_GE(g.first_half(), 28);
  EXPECT_GE(g.second_half(), 28);
  // With an allowance (host memory), each half must gain more than half of it.
  SeriesGrowth host = g;
  host.allowance = 2 * 28 - 1;
  EXPECT_TRUE(host.exceeds());
  host.allowance = 2 * 28;
  EXPECT_FALSE(host.exceeds());
}

TEST(Resources, AOneTimeAllocationInALongLivedSystemPasses) {
  const auto flat = [](int) { return 500 * kPage; };
  ScriptedDeviceMemory step(flat);
  step.report_live_bytes([](int k) { return k >= 40 ? 512 : 0; });
  const Verdict v = resources(step, spmm_case());
  EXPECT_TRUE(v.passed()) << one_line(v);
  EXPECT_NE(v.tolerance_model.find("growing in both halves"), std::string::npos) << v.tolerance_model;
  ScriptedDeviceMemory leak(flat);
  leak.report_live_bytes([](int k) { return 512 * k; });
  const Verdict caught = resources(leak, spmm_case());
  ASSERT_EQ(caught.conclusion, Conclusion::fail) << one_line(caught);
  EXPECT_NE(caught.detail.find("in the first half and"), std::string::npos) << caught.detail;
}

TEST(Resources, AMeasurementThatChangesKindIsNeverAPass) {
  ScriptedDeviceMemory mixed([](int) { return 0; }, [](int k) { return k < 30 ? "a" : "b"; });
  const Verdict v = resources(mixed, spmm_case());
  EXPECT_EQ(v.conclusion, Conclusion::inconclusive) << one_line(v);
  EXPECT_NE(v.detail.find("changed kind"), std::string::npos) << v.detail;
  // A reading missing after warm-up is as bad.
  ScriptedDeviceMemory gap([](int) { return 0; }, {}, 3);
  EXPECT_EQ(resources(gap, spmm_case()).conclusion, Conclusion::inconclusive);
}

TEST(Resources, SystemsWithoutADeviceSeriesKeepTheShortSeries) {
  // What the system reports is exact (0 bytes allowed): six evaluations are enough, and a CPU
  // system or an adapter on a machine without NVML costs no more than before.
  auto wrong = make_replica("dgnn_memory_growth", make_cpu_float32_system());
  const Verdict v = resources(*wrong, spmm_case());
  EXPECT_EQ(v.conclusion, Conclusion::fail) << one_line(v);
  EXPECT_GT(v.metric, 1 << 20);
  EXPECT_NE(v.tolerance_model.find("of 6:"), std::string::npos) << v.tolerance_model;
  EXPECT_NE(v.tolerance_model.find("device memory not measured"), std::string::npos) << v.tolerance_model;
  auto plain = make_cpu_float32_system();
  const Verdict na = resources(*plain, spmm_case());
  EXPECT_EQ(na.conclusion, Conclusion::not_applicable);
  EXPECT_FALSE(na.passed());
}

// Records, per evaluation, what the check asked of the evaluation's memory figures.
class AskedForFigures final : public System {
 public:
  explicit AskedForFigures(bool device = false) : device_(device) {}
  std::string name() const override { return "asked"; }
  bool supports(const std::string& t) const override { return inner_->supports(t); }
  Precision precision(const std::string& t) const override { return inner_->precision(t); }
  Result evaluate(const Case& c) override {
    asked_.push_back(c.memory_figures);
    return inner_->evaluate(c);
  }
  std::optional<std::int64_t> live_bytes() const override { return 0; }
  std::optional<device_memory::Reading> measured_device_bytes() const override {
    if (!device_) return std::nullopt;
    return device_memory::Reading{0, "scripted"};
  }
  const std::vector<MemoryFigures>& asked() const { return asked_; }

 private:
  bool device_;
  std::unique_ptr<System> inner_ = make_cpu_float32_system();
  std::vector<MemoryFigures> asked_;
};

TEST(Resources, OnlyTheResourcesCheckAsksForMemoryFigures) {
  // Systems skip their memory readings (driver calls) unless Case::memory_figures says they are
  // read: the resources check's evaluations say so or `counted`, and no other check's do.
  AskedForFigures measured;
  EXPECT_TRUE(resources(measured, spmm_case()).passed());
  ASSERT_EQ(measured.asked().size(), 6u);
  for (MemoryFigures asked : measured.asked()) EXPECT_EQ(asked, MemoryFigures::read);
  for (CheckKind kind : {CheckKind::differential, CheckKind::adjoint, CheckKind::state_repeat,
                         CheckKind::state_interleaved, CheckKind::numerics, CheckKind::op_order}) {
    AskedForFigures other;
    run_check(kind, other, spmm_case());
    ASSERT_FALSE(other.asked().empty()) << to_string(kind);
    for (MemoryFigures asked : other.asked()) EXPECT_EQ(asked, MemoryFigures::unread) << to_string(kind);
  }
}

TEST(Resources, ADeviceSeriesReadsOnlyTheFiguresItsCriteriaCompare) {
  // 67 evaluations: the short series' 6 (they decide whether there is a device series), the
  // counters' first block (3–10), middle block (31–38) and last block (60–67) are read; the 41
  // others are counted.
  AskedForFigures measured(/*device=*/true);
  const Verdict v = resources(measured, spmm_case());
  EXPECT_TRUE(v.passed()) << one_line(v);
  ASSERT_EQ(measured.asked().size(), 67u);
  for (size_t k = 0; k < 67; ++k)
    EXPECT_EQ(measured.asked()[k], k < 10 || (k >= 30 && k < 38) || k >= 59 ? MemoryFigures::read : MemoryFigures::counted) << k;
  EXPECT_NE(v.tolerance_model.find("figures read after evaluations 1–10, 31–38, 60–67"), std::string::npos)
      << v.tolerance_model;
  for (int k = 0; k < 67; ++k)
    EXPECT_EQ(CounterGrowthCriterion({67, 2}).uses_reading(k) || PageGrowthCriterion({67, 2, kPage}).uses_reading(k),
              (k >= 2 && k < 10) || (k >= 30 && k < 38) || k >= 59)
        << k;
}

TEST(Resources, ACriterionRefusesASeriesWithoutAReadingItCompares) {
  Readings gappy(67, std::int64_t{0});
  gappy[20].reset();  // not compared: fine
  EXPECT_FALSE((CounterGrowthCriterion{67, 2}).assess(gappy).exceeds());
  EXPECT_FALSE((PageGrowthCriterion{67, 2, kPage}).assess(gappy).exceeds());
  gappy[5].reset();  // in the counters' first block, not a page reading
  EXPECT_THROW((CounterGrowthCriterion{67, 2}).assess(gappy), InputError);
  EXPECT_FALSE((PageGrowthCriterion{67, 2, kPage}).assess(gappy).exceeds());
  gappy[66].reset();
  EXPECT_THROW((PageGrowthCriterion{67, 2, kPage}).assess(gappy), InputError);
}

TEST(Resources, HostMemoryThatCreepsAcrossCasesIsNoCasesGrowthButALeakIs) {
  // The torch adapter's RSS on the H200 crept by about 400 bytes a call (on average over 800) across thousands of calls
  // (allocator caches of new shapes). Held through a dead band across cases, that creep became a
  // 1 MiB step inside the 40th case's series or so and failed it; compared within each case's own
  // series it is 23 KB of a 1 MiB allowance.
  ScriptedDeviceMemory creeping([](int) { return 0; });
  creeping.report_host_bytes([](int k) { return (std::int64_t{1} << 30) + 400 * std::int64_t{k}; });
  for (int c = 0; c < 60; ++c) {
    const Verdict v = resources(creeping, spmm_case());
    ASSERT_TRUE(v.passed()) << "case " << c << ": " << one_line(v);
  }
  EXPECT_GT(creeping.evaluations() * 400, 1 << 20);  // more creep in all than the allowance
  // 20 KiB a call is 1.14 MiB over the 57 calls between the two blocks: caught.
  ScriptedDeviceMemory leaking([](int) { return 0; });
  leaking.report_host_bytes([](int k) { return (std::int64_t{1} << 30) + 20 * kKiB * k; });
  const Verdict leak = resources(leaking, spmm_case());
  EXPECT_EQ(leak.conclusion, Conclusion::fail) << one_line(leak);
  EXPECT_NE(leak.tensor.find("resident host memory"), std::string::npos) << leak.tensor;
  EXPECT_NE(leak.tolerance_model.find("≤ 1048576 bytes in the resident host memory"), std::string::npos)
      << leak.tolerance_model;
}

// The resident set of the torch adapter (CPU, torch 1.13) after each of 60 calls of one attention
// case (65 nodes, 578 edges, 2 heads of 256 features), in KiB: glibc keeps or returns the call's few
// MiB of freed intermediates as it sees fit, so the readings swing by 9 MiB without growing. In the
// short series (readings 3 and 6 of rec[12…17]) it "grew" by 3.3 MiB: `full` failed a correct adapter.
constexpr std::int64_t kTorchResidentKiB[] = {
    12908, 18688, 21000, 22156, 18816, 21004, 22160, 19980, 21008, 18824, 21008, 19984, 23324, 17672, 19984,
    21012, 21012, 21012, 22168, 16516, 22168, 19984, 22168, 16520, 19860, 22172, 23328, 23328, 23328, 23328,
    23328, 23328, 23328, 21144, 17676, 22172, 25640, 19988, 22172, 23328, 19988, 21016, 18832, 21016, 22172,
    18832, 19860, 21016, 22172, 18832, 22172, 23328, 21144, 19988, 21668, 19484, 21668, 22824, 23980, 23980};

std::int64_t torch_resident(int k) { return (std::int64_t{1} << 30) + kTorchResidentKiB[(k + 12) % 60] * kKiB; }

// A system with no device series: only gnncheck's reading of its resident set.
ScriptedDeviceMemory host_only(std::function<std::int64_t(int)> host) {
  ScriptedDeviceMemory s([](int) { return 0; }, {}, std::numeric_limits<int>::max());
  s.report_host_bytes(std::move(host));
  return s;
}

TEST(Resources, AResidentSetThatSwingsIsMeasuredAgainOverTheLongSeriesAndPasses) {
  ASSERT_GT(torch_resident(5) - torch_resident(2), std::int64_t{1} << 20);  // the short series alone would fail
  ScriptedDeviceMemory swinging = host_only(torch_resident);
  const Verdict v = resources(swinging, spmm_case());
  EXPECT_TRUE(v.passed()) << one_line(v);
  EXPECT_EQ(swinging.evaluations(), 67);
  EXPECT_NE(v.tolerance_model.find("of 67:"), std::string::npos) << v.tolerance_model;
  // A quiet one keeps the short series.
  ScriptedDeviceMemory quiet = host_only([](int k) { return (std::int64_t{1} << 30) + 4096 * (k % 2); });
  EXPECT_TRUE(resources(quiet, spmm_case()).passed());
  EXPECT_EQ(quiet.evaluations(), 6);
}

TEST(Resources, AFloorThatRisesLessThanTheReadingsSwingInsideABlockIsNoGrowthButALeakIs) {
  // Blocks of 8 readings swinging by 5 MiB over floors 0, 1 and 2 MiB (first, middle, last block):
  // each half's floor rises by 1 MiB, more than half the 1 MiB allowance, yet less than the readings
  // move inside one block, which an allocator's swing explains as well as a leak would.
  const std::int64_t MiB = std::int64_t{1} << 20;
  const std::int64_t swing[] = {0, 5, 1, 1, 4, 3, 5, 3};  // readings 3 and 6 grow by 2 MiB
  auto stepped = [&](int k) {
    const std::int64_t floor = k >= 59 ? 2 * MiB : k >= 30 ? MiB : 0;
    return (std::int64_t{1} << 30) + floor + swing[k % 8] * MiB;
  };
  ScriptedDeviceMemory floors = host_only(stepped);
  const Verdict v = resources(floors, spmm_case());
  EXPECT_TRUE(v.passed()) << one_line(v);
  EXPECT_EQ(floors.evaluations(), 67);
  // The same swing over a leak of 1 MiB a call: 28 MiB in each half, far past the 5 MiB swing.
  ScriptedDeviceMemory leaking = host_only([&](int k) { return torch_resident(k) + k * MiB; });
  const Verdict leak = resources(leaking, spmm_case());
  EXPECT_EQ(leak.conclusion, Conclusion::fail) << one_line(leak);
  EXPECT_NE(leak.tensor.find("resident host memory"), std::string::npos) << leak.tensor;
  EXPECT_NE(leak.detail.find("inside a block"), std::string::npos) << leak.detail;
  EXPECT_NE(leak.detail.find("in the first half and"), std::string::npos) << leak.detail;
}

TEST(Resources, RejectsCountsThatLeaveNoWindow) {
  ScriptedDeviceMemory flat([](int) { return 0; });
  CheckOptions options;
  options.resource_evaluations = 3;
  EXPECT_THROW(resources(flat, spmm_case(), options), InputError);
  options = {};
  options.resource_device_evaluations = 5;
  EXPECT_THROW(resources(flat, spmm_case(), options), InputError);
}

}  // namespace
}  // namespace gnncheck::checks

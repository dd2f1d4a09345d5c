// The C plugin system: the example plugin computes SpMM correctly in float32, and plugins that crash,
// abort, hang, fail, print, flood stderr, leak, allocate without bound, answer NaN, overwrite their
// output shapes or speak another ABI version each get their own verdict while the run goes on.
#include <cmath>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "oracle/cpu_systems.h"
#include "adapters/plugin_system.h"
#include "adapters/tests/adapter_test_support.h"
#include "checks/checks.h"

namespace gnncheck {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

// In a sanitizer build (scripts/sanitize.sh) the plugin host is instrumented too. Its children get
// options that keep a plugin's faults what they are in a normal build: SIGSEGV ends the host with the
// signal (not with ASan's report and exit code 1), and freed memory is reused at once instead of
// sitting in ASan's quarantine, which the resources check would read as a leak.
#if defined(__SANITIZE_ADDRESS__)
[[maybe_unused]] const bool kPluginHostSanitizerOptions = [] {
  return setenv("ASAN_OPTIONS", "handle_segv=0:detect_leaks=0:quarantine_size_mb=0", 1) == 0;
}();
#endif

PluginSystemOptions fast_options(const TempDir& work) {
  PluginSystemOptions options;
  options.process.case_timeout = std::chrono::milliseconds(2000);
  options.process.work_dir = work.path();
  return options;
}

// |plugin − oracle| within float32 rounding of a sum of k terms: k·u·Σ|terms| per element, with
// Σ|terms| from the oracle on |inputs| (a short form of the checks' closed-form bound).
void expect_float32_close(const Case& c, const Result& got) {
  Case abs_case = c;
  for (TensorMap* map : {&abs_case.inputs, &abs_case.grad_outputs})
    for (auto& [name, t] : *map)
      for (double& v : t.values()) v = std::abs(v);
  const Result exact = oracle::evaluate(c), magnitude = oracle::evaluate(abs_case);
  const double k = static_cast<double>(c.graph->num_edges()) + 1;
  for (const auto& [kind, want, scale, have] :
       {std::tuple{"output", &exact.outputs, &magnitude.outputs, &got.outputs},
        std::tuple{"gradient", &exact.gradients, &magnitude.gradients, &got.gradients}}) {
    ASSERT_EQ(have->size(), want->size()) << kind;
    for (const auto& [name, t] : *want) {
      const Tensor& h = have->at(name);
      ASSERT_EQ(h.shape(), t.shape()) << kind << " " << name;
      for (index_t i = 0; i < t.size(); ++i)
        EXPECT_LE(std::abs(h[i] - t[i]), k * std::ldexp(1.0, -24) * scale->at(name)[i] + 1e-30)
            << kind << " " << name << " element " << i;
    }
  }
}

TEST(PluginSystem, ExamplePluginComputesSpmmAndItsTranspose) {
  TempDir work;
  auto plugin = make_plugin_system(GNNCHECK_TEST_EXAMPLE_PLUGIN, fast_options(work));
  ASSERT_TRUE(plugin->availability().available) << plugin->availability().reason;
  EXPECT_EQ(plugin->name(), "example_spmm");
  EXPECT_TRUE(plugin->supports("spmm"));
  EXPECT_TRUE(plugin->supports("spmm_transposed"));
  EXPECT_FALSE(plugin->supports("spmm_ve"));
  EXPECT_EQ(plugin->precision("spmm"), Precision::float32);
  std::uint64_t seed = 100;
  for (const auto& graph : {testing::asymmetric_graph(), testing::bipartite_graph()}) {
    for (const char* target : {"spmm", "spmm_transposed"}) {
      for (std::int64_t features : {1, 7, 33}) {
        for (bool with_gradients : {true, false}) {
          const Case c = testing::random_case(target, graph, {{"features", features}}, seed++, with_gradients);
          const Result r = plugin->evaluate(c);
          ASSERT_TRUE(r.ok()) << target << ": " << r.message;
          EXPECT_EQ(r.gradients.empty(), !with_gradients);
          expect_float32_close(c, r);
        }
      }
    }
  }
}

TEST(PluginSystem, CrashingHangingAndFailingKernelsCostOneCaseEach) {
  TempDir work;
  auto plugin = make_plugin_system(GNNCHECK_TEST_FAULTY_PLUGIN, fast_options(work));
  ASSERT_TRUE(plugin->availability().available) << plugin->availability().reason;
  const auto spmm_case = [](std::uint64_t seed) {
    return testing::random_case("spmm", testing::asymmetric_graph(), {{"features", std::int64_t{4}}}, seed);
  };
  struct Step {
    std::uint64_t seed;
    Status status;
    const char* message_part;
  };
  for (const Step& step : {Step{0, Status::ok, ""}, Step{1, Status::crashed, "signal 11"}, Step{0, Status::ok, ""},
                           Step{2, Status::timeout, "no answer within 2 s"}, Step{0, Status::ok, ""},
                           Step{3, Status::error, "cudaMalloc failed: out of memory (simulated)"},
                           Step{4, Status::ok, ""}}) {
    const Case c = spmm_case(step.seed);
    const Result r = plugin->evaluate(c);
    EXPECT_EQ(r.status, step.status) << "seed " << step.seed << ": " << r.message;
    if (step.status == Status::crashed)  // built with AddressSanitizer, the host reports the SEGV itself
      EXPECT_THAT(r.message, ::testing::AnyOf(HasSubstr(step.message_part), HasSubstr("AddressSanitizer: SEGV")));
    else
      EXPECT_THAT(r.message, HasSubstr(step.message_part));
    if (r.ok()) {
      EXPECT_EQ(r.peak_bytes, 4096);
      const Result want = oracle::evaluate(c);
      EXPECT_LE(testing::max_abs_difference(r.outputs, want.outputs), 1e-12);
      EXPECT_LE(testing::max_abs_difference(r.gradients, want.gradients), 1e-12);
    }
  }
}

// The faults a kernel can commit inside the plugin host: each costs one case, with its own message
// and the host's stderr tail, and the next case gets a fresh host.
TEST(PluginSystem, AbortingFloodingAndGarbageAnsweringKernelsCostOneCaseEach) {
  TempDir work;
  PluginSystemOptions options = fast_options(work);
  // Page faults are slow on small VMs: the limit is reached well within 2 s. An instrumented host
  // starts above 128 MiB on its own (ASan's shadow memory: 130 MiB measured with the catalogue of 27
  // targets), so a sanitizer build sets the limit above that start.
#if defined(__SANITIZE_ADDRESS__)
  options.process.max_rss_bytes = std::int64_t{512} << 20;
#else
  options.process.max_rss_bytes = std::int64_t{128} << 20;
#endif
  auto plugin = make_plugin_system(GNNCHECK_TEST_FAULTY_PLUGIN, options);
  ASSERT_TRUE(plugin->availability().available) << plugin->availability().reason;
  struct Step {
    std::uint64_t seed;
    Status status;
    const char* message_part;
  };
  for (const Step& step :
       {Step{5, Status::crashed, "signal 6"}, Step{0, Status::ok, ""},
        Step{7, Status::error, "garbage shape: the plugin overwrote the shape of output 'y': it is now [1099511627776, -3], it was [5, 4]"},
        Step{0, Status::ok, ""},
        Step{8, Status::crashed, "stderr flood: the adapter wrote more than 64.0 MiB to stderr"}, Step{0, Status::ok, ""},
        Step{10, Status::crashed, "memory limit: the adapter's resident memory reached"}, Step{0, Status::ok, ""}}) {
    const Result r = plugin->evaluate(testing::random_case("spmm", testing::asymmetric_graph(),
                                                           {{"features", std::int64_t{4}}}, step.seed));
    EXPECT_EQ(r.status, step.status) << "seed " << step.seed << ": " << r.message.substr(0, 2000);
    EXPECT_THAT(r.message, HasSubstr(step.message_part)) << "seed " << step.seed;
    EXPECT_LT(r.message.size(), 6000u) << "seed " << step.seed;
  }
  const Result aborted = plugin->evaluate(testing::random_case("spmm", testing::asymmetric_graph(),
                                                               {{"features", std::int64_t{4}}}, 5));
  EXPECT_THAT(aborted.message, HasSubstr("faulty plugin: assertion failed, aborting"));
  EXPECT_TRUE(std::filesystem::is_empty(work.path()));
}

// A kernel that answers NaN (seed 6: y[0]) has answered: the checks compare the value with the
// exact result and fail there (PROTOCOL.md §5); it is not invalid output.
TEST(PluginSystem, ANanAnswerIsReadAsAnsweredForTheChecks) {
  TempDir work;
  auto plugin = make_plugin_system(GNNCHECK_TEST_FAULTY_PLUGIN, fast_options(work));
  ASSERT_TRUE(plugin->availability().available) << plugin->availability().reason;
  const Result r = plugin->evaluate(testing::random_case("spmm", testing::asymmetric_graph(),
                                                         {{"features", std::int64_t{4}}}, 6));
  ASSERT_EQ(r.status, Status::ok) << r.message;
  EXPECT_TRUE(std::isnan(r.outputs.at("y")[0]));
}

TEST(PluginSystem, LeakingKernelFailsTheResourcesCheck) {
  TempDir work;
  auto plugin = make_plugin_system(GNNCHECK_TEST_FAULTY_PLUGIN, fast_options(work));
  const Case leaking = testing::random_case("spmm", testing::asymmetric_graph(), {{"features", std::int64_t{4}}}, 9);
  const checks::Verdict leak = checks::resources(*plugin, leaking);
  EXPECT_FALSE(leak.passed());
  EXPECT_THAT(leak.message, HasSubstr("memory grew by"));
  const Case correct = testing::random_case("spmm", testing::asymmetric_graph(), {{"features", std::int64_t{4}}}, 0);
  const checks::Verdict flat = checks::resources(*plugin, correct);
  EXPECT_TRUE(flat.passed()) << flat.message;
}

// Every start-up failure of a plugin: unavailable, the reason's first line names the library and the
// host's explanation, and evaluate() says the case was not evaluated (no endless per-case retries).
void expect_unavailable(const std::filesystem::path& library, const std::string& cause) {
  TempDir work;
  auto plugin = make_plugin_system(library, fast_options(work));
  const Availability a = plugin->availability();
  EXPECT_FALSE(a.available) << library;
  const std::string first_line = a.reason.substr(0, a.reason.find('\n'));
  EXPECT_THAT(first_line, HasSubstr(fmt::format("plugin '{}' (run by ", std::filesystem::absolute(library).string())));
  EXPECT_THAT(first_line, HasSubstr("it exited with code 2 before its hello line: gnncheck-plugin-host: "));
  EXPECT_THAT(first_line, HasSubstr(cause));
  const Result r = plugin->evaluate(testing::random_case("spmm", testing::asymmetric_graph(), {{"features", std::int64_t{4}}}, 0));
  EXPECT_EQ(r.status, Status::error);
  EXPECT_THAT(r.message, HasSubstr("not evaluated: the system is unavailable: plugin '"));
  EXPECT_THAT(r.message, HasSubstr(cause));
}

TEST(PluginSystem, PluginOfAnotherAbiVersionIsUnavailableWithTheReason) {
  expect_unavailable(GNNCHECK_TEST_WRONG_ABI_PLUGIN, "compiled against plugin ABI 99; this host speaks 1");
}

TEST(PluginSystem, LibraryWithoutTheEntryPointIsUnavailableWithTheReason) {
  expect_unavailable(GNNCHECK_TEST_NO_ENTRY_PLUGIN, "does not export gnncheck_plugin_v1()");
}

TEST(PluginSystem, LibraryWithAnUndefinedSymbolIsUnavailableNamingTheSymbol) {
  expect_unavailable(GNNCHECK_TEST_UNDEFINED_SYMBOL_PLUGIN, "undefined symbol: gnncheck_test_function_nothing_defines");
}

TEST(PluginSystem, MisspelledTargetInTheTableIsUnavailableListingTheKnownTargets) {
  expect_unavailable(GNNCHECK_TEST_UNKNOWN_TARGET_PLUGIN,
                     "target table entry 0: unknown target 'spmm_tranposed'; known targets: spmm, spmm_transposed");
}

TEST(PluginSystem, PrecisionOutsideTheEnumIsUnavailableWithTheReason) {
  expect_unavailable(GNNCHECK_TEST_BAD_PRECISION_PLUGIN,
                     "target table entry 0 ('spmm'): precision 42 is not a gnncheck_precision");
}

TEST(PluginSystem, AttributeValuesAPluginDeclaresAreWhatItImplements) {
  TempDir work;
  auto plugin = make_plugin_system(GNNCHECK_TEST_DECLARING_PLUGIN, fast_options(work));
  ASSERT_TRUE(plugin->availability().available) << plugin->availability().reason;
  const ImplementedAttributes implemented = plugin->implemented_attributes("spmm");
  EXPECT_EQ(implemented.at("features"), (std::vector<AttrValue>{std::int64_t{1}, std::int64_t{2}, std::int64_t{3}}));
  EXPECT_TRUE(plugin->implemented_attributes("spmm_transposed").empty());
}

TEST(PluginSystem, AMisspelledAttributeDeclarationIsUnavailableNamingIt) {
  expect_unavailable(GNNCHECK_TEST_BAD_DECLARATION_PLUGIN, "attribute declaration 0: target 'spmm' has no attribute 'feature'");
}

// One destination with 1000 copies of one edge: y = 1000·x[1], a sum that float16 cannot hold to
// the bound of float32 sums.
Case long_row_case(std::uint64_t seed) {
  const std::vector<index_t> dst(1000, 0), src(1000, 1);
  return testing::random_case("spmm", std::make_shared<const Graph>(Graph::from_edges(2, 2, dst, src)),
                              {{"features", std::int64_t{3}}}, seed);
}

TEST(PluginSystem, AnAccumulationDeclarationTightensTheBoundsItNames) {
  TempDir work;
  auto half = make_plugin_system(GNNCHECK_TEST_HALF_PLUGIN, fast_options(work));
  ASSERT_TRUE(half->availability().available) << half->availability().reason;
  EXPECT_EQ(half->precision("spmm"), Precision::float16);
  EXPECT_EQ(half->accumulation("spmm"), Precision::float32);
  // Storing in float16 and summing in float32, as declared: within the bound on short and long rows.
  for (std::uint64_t seed : {1, 2}) {
    for (const Case& c : {testing::random_case("spmm", testing::asymmetric_graph(), {{"features", std::int64_t{4}}}, seed),
                          long_row_case(seed)}) {
      for (const checks::Verdict& v : {checks::differential(*half, c), checks::adjoint(*half, c)}) {
        EXPECT_EQ(v.conclusion, checks::Conclusion::pass) << v.message;
      }
    }
  }
}

TEST(PluginSystem, SumsInTheStorageFormatFailUnderADeclaredFloat32Accumulation) {
  TempDir work;
  auto half_sums = make_plugin_system(GNNCHECK_TEST_HALF_SUMS_PLUGIN, fast_options(work));
  ASSERT_TRUE(half_sums->availability().available) << half_sums->availability().reason;
  const checks::Verdict v = checks::differential(*half_sums, long_row_case(1));
  EXPECT_EQ(v.conclusion, checks::Conclusion::fail) << v.message;
  EXPECT_THAT(v.message, HasSubstr("float16 (float32 accumulation)"));
}

TEST(PluginSystem, AnAccumulationCoarserThanTheStorageIsUnavailableNamingTheDeclaration) {
  expect_unavailable(GNNCHECK_TEST_COARSE_SUMS_PLUGIN,
                     "accumulation declaration 0 ('spmm'): float16 sums are coarser than its precision bfloat16");
}

TEST(PluginSystem, UnloadableLibraryIsUnavailableWithTheLoadersReason) {
  TempDir files;
  const std::filesystem::path not_elf = files.path() / "libnot_a_library.so";
  std::ofstream(not_elf) << "not an ELF file\n";
  expect_unavailable(not_elf, "cannot load");
  // A real library cut short, as an interrupted copy leaves it.
  const std::filesystem::path truncated = files.path() / "libtruncated.so";
  std::filesystem::copy_file(GNNCHECK_TEST_FAULTY_PLUGIN, truncated);
  std::filesystem::resize_file(truncated, std::filesystem::file_size(truncated) / 3);
  expect_unavailable(truncated, fmt::format("cannot load {}", truncated.string()));
}

TEST(PluginSystem, MissingLibraryIsAnInputError) {
  EXPECT_THROW(make_plugin_system("/nonexistent/libmykernel.so"), InputError);
}

}  // namespace
}  // namespace gnncheck

// Reading compute-sanitizer's plain-text logs (adapters/sanitizer.h) from samples written by hand in
// the layouts its documentation shows (CUDA 12 and later, and the earlier "at 0x… in file:line:kernel"),
// attributing findings to the system's own kernels or to vendor libraries, and the reasons a
// sanitized run refuses to start.
#include "adapters/sanitizer.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/error.h"

namespace gnncheck::sanitizer {
namespace {

constexpr const char* kMemcheckLog = R"(========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at void my_spmm_kernel<long, int>(long, const long *, const int *, long, const float *, float *)+0x1b0 in /src/kernels/spmm.cu:48
=========     by thread (3,0,0) in block (0,0,0)
=========     Address 0x7f1200000400 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f1200000000 of size 1024 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2f5a31] in libcuda.so.1
=========         Host Frame: __cudart803 [0x1f2b] in gnncheck
=========         Host Frame: cudaLaunchKernel [0x69208] in gnncheck
=========         Host Frame: gnncheck::gpu::spmm_forward(...) [0x4b0d] in gnncheck
=========
========= Invalid __global__ read of size 16 bytes
=========     at void cusparse::csrmm_v2_kernel<float>(cusparse::KernelCoeffs<float>, int, const int *, const float *)+0x9d0
=========     by thread (0,0,0) in block (2,0,0)
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2f5a31] in libcuda.so.1
=========         Host Frame: [0x1c02a0] in libcusparse.so.12
=========
========= ERROR SUMMARY: 2 errors
)";

constexpr const char* kRacecheckLog = R"(========= COMPUTE-SANITIZER
========= Warning: Race reported between Write access at void racy_spmm_kernel<long, int>(long, const long *, const int *, long, const float *, float *)+0x2a0 in /src/device_fault_kernels.cu:29
=========     and Read access at void racy_spmm_kernel<long, int>(long, const long *, const int *, long, const float *, float *)+0x2c0 in /src/device_fault_kernels.cu:31 [62 hazards]
=========
========= Error: Race reported between Write access at 0x5f0 in sddmm.cu:0:void cusparse::sddmm_csr_kernel<float>(float *)
=========     and Read access at 0x610 in sddmm.cu:0:void cusparse::sddmm_csr_kernel<float>(float *) [4 hazards]
=========
========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)
)";

constexpr const char* kInitcheckLog = R"(========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 4 bytes
=========     at 0x70 in /src/edge_softmax.cu:12:softmax_kernel(const float *, float *)
=========     by thread (0,0,0) in block (0,0,0)
=========     Address 0x7f3c00000000
=========
========= ERROR SUMMARY: 1 error
)";

TEST(SanitizerLog, MemcheckFindingsAreAttributedToOwnKernelsOrVendorLibraries) {
  const LogReport r = parse_log(kMemcheckLog);
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.summary_count, 2);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].headline, "Invalid __global__ read of size 4 bytes");
  EXPECT_EQ(r.findings[0].kernel, "void my_spmm_kernel<long, int>(long, const long *, const int *, long, const float *, float *)");
  EXPECT_EQ(r.findings[0].location, "spmm.cu:48");
  EXPECT_EQ(r.findings[0].host_library, "gnncheck");
  EXPECT_FALSE(r.findings[0].vendor);
  EXPECT_TRUE(r.findings[1].vendor);
  EXPECT_EQ(r.findings[1].host_library, "libcusparse.so.12");
  EXPECT_EQ(r.findings[1].location, "");
}

TEST(SanitizerLog, RacecheckHazardsInBothLayouts) {
  const LogReport r = parse_log(kRacecheckLog);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.summary_count, 2);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_TRUE(r.findings[0].warning);
  EXPECT_EQ(r.findings[0].location, "device_fault_kernels.cu:29");
  EXPECT_FALSE(r.findings[0].vendor);
  EXPECT_FALSE(r.findings[1].warning);
  EXPECT_EQ(r.findings[1].kernel, "void cusparse::sddmm_csr_kernel<float>(float *)");
  EXPECT_TRUE(r.findings[1].vendor);
}

TEST(SanitizerLog, InitcheckEarlierLayout) {
  const LogReport r = parse_log(kInitcheckLog);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].kernel, "softmax_kernel(const float *, float *)");
  EXPECT_EQ(r.findings[0].location, "edge_softmax.cu:12");
  EXPECT_FALSE(r.findings[0].vendor);
}

TEST(SanitizerLog, ACleanLogAndAnIncompleteOne) {
  const LogReport clean = parse_log("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(clean.complete);
  EXPECT_TRUE(clean.findings.empty());
  EXPECT_EQ(clean.summary_count, 0);
  const LogReport cut = parse_log("========= COMPUTE-SANITIZER\n========= Invalid __global__ write of size 4 bytes\n"
                                  "=========     at k()+0x10 in a.cu:3\n");
  EXPECT_FALSE(cut.complete);
  EXPECT_EQ(cut.findings.size(), 1u);
  const LogReport tool = parse_log("========= Error: No attachable process found. compute-sanitizer timed-out.\n"
                                   "========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(tool.findings.empty());
  ASSERT_EQ(tool.tool_messages.size(), 1u);
}

TEST(SanitizerLog, VendorRule) {
  EXPECT_TRUE(is_vendor("void cusparse::load_balancing_kernel<int>(int)", ""));
  EXPECT_TRUE(is_vendor("cutlass::Kernel<cutlass_80_tensorop_s1688gemm>(Params)", ""));
  EXPECT_TRUE(is_vendor("gemv2T_kernel_val<int, int, float>(float)", "libcublas.so.12"));
  EXPECT_FALSE(is_vendor("gemv2T_kernel_val<int, int, float>(float)", ""));  // unnamespaced, no backtrace: counted
  EXPECT_FALSE(is_vendor("void gnncheck::gpu::spmm_kernel(int)", "gnncheck"));
}

class LogDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("gnncheck-sanitizer-test-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::filesystem::path dir_;
};

TEST_F(LogDirectory, OwnFindingsCountVendorOnesAreListed) {
  write("sanitizer.100.log", kRacecheckLog);
  const SystemFindings f = read_logs(dir_, Tool::racecheck, 86);
  EXPECT_EQ(f.logs, 1);
  EXPECT_EQ(f.own, 1);
  EXPECT_EQ(f.vendor, 1);
  EXPECT_TRUE(f.problems.empty());
  EXPECT_FALSE(f.clean());
  EXPECT_NE(f.details.find("listed, not counted"), std::string::npos) << f.details;
}

TEST_F(LogDirectory, OnlyVendorFindingsIsClean) {
  write("sanitizer.7.log", "========= Error: Race reported between Write access at cusparse::k()+0x10\n"
                           "=========     and Read access at cusparse::k()+0x20 [2 hazards]\n=========\n"
                           "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n");
  const SystemFindings f = read_logs(dir_, Tool::racecheck, 86);
  EXPECT_EQ(f.own, 0);
  EXPECT_EQ(f.vendor, 1);
  EXPECT_TRUE(f.clean());
}

TEST_F(LogDirectory, MissingSummaryNoLogAndUnreadableFindingsAreProblems) {
  EXPECT_FALSE(read_logs(dir_, Tool::memcheck, 0).clean());  // no log at all
  EXPECT_FALSE(read_logs(dir_, Tool::memcheck, 0).problems.empty());
  write("sanitizer.1.log", "========= COMPUTE-SANITIZER\n");
  EXPECT_FALSE(read_logs(dir_, Tool::memcheck, 0).problems.empty());  // killed before its summary
  write("sanitizer.1.log", "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(read_logs(dir_, Tool::memcheck, 0).clean());
  EXPECT_FALSE(read_logs(dir_, Tool::memcheck, kErrorExitCode).clean());  // the exit code says otherwise
  write("sanitizer.1.log", "========= ERROR SUMMARY: 12000 errors\n");
  EXPECT_EQ(read_logs(dir_, Tool::memcheck, kErrorExitCode).unattributed, 12000);
}

TEST(SanitizerSetup, ToolsWrapperAndClearErrors) {
  EXPECT_EQ(parse_tool("initcheck"), Tool::initcheck);
  EXPECT_THROW(parse_tool("synccheck"), InputError);
  const auto argv = wrapper("/opt/cs", Tool::racecheck, "/logs");
  ASSERT_GE(argv.size(), 4u);
  EXPECT_EQ(argv.front(), "/opt/cs");
  EXPECT_EQ(argv.back(), "--");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "/logs/sanitizer.%p.log"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), std::to_string(kErrorExitCode)), argv.end());

  ::setenv("GNNCHECK_COMPUTE_SANITIZER", "/nonexistent/compute-sanitizer", 1);
  const std::string saved_path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", "/nonexistent", 1);
  try {
    const auto found = find_program();
    // Only where the toolkit is installed in its default place.
    EXPECT_EQ(found, "/usr/local/cuda/bin/compute-sanitizer");
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("/nonexistent/compute-sanitizer"), std::string::npos) << what;
    EXPECT_NE(what.find("/usr/local/cuda/bin/compute-sanitizer"), std::string::npos) << what;
  }
  ::setenv("PATH", saved_path.c_str(), 1);
  ::unsetenv("GNNCHECK_COMPUTE_SANITIZER");
}

TEST(SanitizerSetup, NoDeviceIsAnErrorWithTheReason) {
  try {
    require_device();
    SUCCEED() << "a device is present";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no NVIDIA GPU can be used here"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gnncheck::sanitizer

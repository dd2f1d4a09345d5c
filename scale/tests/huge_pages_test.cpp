// LargeTensorsOnHugePages (scale/huge_pages.h): the scope is process-wide and nests, a large
// tensor made, copied or cast inside it lies in memory marked for huge pages (the kernel's own
// record, /proc/self/smaps' VmFlags "hg"), one made outside the scope does not, and no value
// changes (a small tensor's marks are not tested: it may lie inside memory advised for a large one).
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <sys/mman.h>

#include "scale/huge_pages.h"
#include "core/tensor.h"

namespace gnncheck {
namespace {

// Whether the mapping that holds `address` is marked MADV_HUGEPAGE; nullopt where smaps cannot say.
std::optional<bool> marked_for_huge_pages(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  if (!smaps) return std::nullopt;
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.find(" hg") != std::string::npos;
    }
  }
  return std::nullopt;
}

// Whether this kernel keeps MADV_HUGEPAGE on a mapping of its own (transparent huge pages built in),
// asked directly, so that a tensor without the mark is a failure, never a skip.
std::optional<bool> kernel_keeps_the_advice() {
  const std::size_t bytes = std::size_t{8} << 20;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return std::nullopt;
  std::optional<bool> kept;
  if (madvise(p, bytes, MADV_HUGEPAGE) == 0) kept = marked_for_huge_pages(static_cast<char*>(p) + bytes / 2);
  else kept = false;
  munmap(p, bytes);
  return kept;
}

TEST(LargeTensorsOnHugePages, TheScopeIsProcessWideAndNests) {
  EXPECT_FALSE(large_tensors_on_huge_pages());
  {
    const LargeTensorsOnHugePages outer;
    {
      const LargeTensorsOnHugePages inner;
      EXPECT_TRUE(large_tensors_on_huge_pages());
    }
    EXPECT_TRUE(large_tensors_on_huge_pages());
    bool seen_by_another_thread = false;
    std::thread([&] { seen_by_another_thread = large_tensors_on_huge_pages(); }).join();
    EXPECT_TRUE(seen_by_another_thread);  // the tolerance model's evaluations run as tasks
  }
  EXPECT_FALSE(large_tensors_on_huge_pages());
}

TEST(LargeTensorsOnHugePages, LargeTensorsInsideTheScopeAreMarkedAndKeepTheirValues) {
  const index_t n = index_t{4} << 20;  // 32 MiB of float64: whole 2 MiB pages inside it whatever its address
  const Tensor outside({n}, 0.5);
  const std::optional<bool> outside_marked = marked_for_huge_pages(outside.data() + n / 2);
  if (!outside_marked) GTEST_SKIP() << "/proc/self/smaps does not say how this process's memory is mapped";
  EXPECT_FALSE(*outside_marked);
  const LargeTensorsOnHugePages scope;
  const Tensor made({n}, 0.25);
  const Tensor copied(outside);
  const TensorF cast_down = cast<float>(outside);
  const Tensor small({1000}, 1.0);
  const std::optional<bool> kernel = kernel_keeps_the_advice();
  ASSERT_TRUE(kernel.has_value());
  if (!*kernel) GTEST_SKIP() << "this kernel refuses MADV_HUGEPAGE (transparent huge pages not built in)";
  EXPECT_TRUE(*marked_for_huge_pages(made.data() + n / 2));
  EXPECT_TRUE(*marked_for_huge_pages(copied.data() + n / 2));
  EXPECT_TRUE(*marked_for_huge_pages(cast_down.data() + n / 2));
  EXPECT_EQ(copied, outside);
  EXPECT_EQ(made.values(), std::vector<double>(static_cast<size_t>(n), 0.25));
  EXPECT_EQ(cast_down.values(), std::vector<float>(static_cast<size_t>(n), 0.5f));
  EXPECT_EQ(small.values(), std::vector<double>(1000, 1.0));
  Tensor assigned;
  assigned = outside;
  EXPECT_EQ(assigned, outside);
}

}  // namespace
}  // namespace gnncheck

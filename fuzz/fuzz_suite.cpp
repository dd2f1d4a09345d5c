// Fuzz target: YAML suite files (suites/suite.h). yaml-cpp's own exceptions must not escape:
// parse_suite turns them into InputError naming the file and line.
#include "fuzz/fuzz_support.h"
#include "suites/suite.h"

using namespace gnncheck;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::refuse_or_check([&] {
    const suites::Suite suite = suites::parse_suite(std::string(fuzz::text(data, size)), "fuzz.yaml");
    for (const auto& entry : suite.entries) {
      fuzz::expect(!entry.name.empty(), "every entry has a name");
      fuzz::expect(suite.graphs.count(entry.graphs) == 1,
                   "every entry's graph family exists");
    }
  });
  return 0;
}

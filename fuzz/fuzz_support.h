// gnncheck/fuzz/fuzz_support.h — what every libFuzzer target of fuzz/ shares.
//
// A target hands the fuzzer's bytes to one parser. The contract it checks: the parser returns a
// valid object or throws gnncheck::InputError. Any other exception escapes the target (libFuzzer
// reports it as a crash: std::terminate aborts), and a broken invariant of the returned object
// aborts through expect() with a message, so both become findings with a reproducer file.
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
//     gnncheck::fuzz::refuse_or_check([&] { check_graph(parse_x(gnncheck::fuzz::text(data, size))); });
//     return 0;
//   }
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <unistd.h>

#include "core/error.h"
#include "core/graph.h"
#include "core/tensor.h"

namespace gnncheck::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Aborts with `what` when an invariant of a parser's result does not hold.
inline void expect(bool holds, const char* what) {
  if (!holds) {
    std::fprintf(stderr, "fuzz finding: invariant broken: %s\n", what);
    std::abort();
  }
}

// Runs `parse_and_check`; an InputError is the accepted way to refuse input. Anything else propagates.
template <class F>
void refuse_or_check(F&& parse_and_check) {
  try {
    parse_and_check();
  } catch (const InputError& e) {
    expect(e.what()[0] != '\0', "an InputError carries a message");
  }
}

// A directory made once per fuzzing process (mkdtemp under $TMPDIR or /tmp) for parsers that read
// files; removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gnncheck-fuzz-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  expect(static_cast<bool>(out), "the scratch file can be written");
}

// The structural invariants every Graph a loader returns must satisfy.
inline void check_graph(const Graph& g) {
  expect(g.n_dst() >= 0 && g.n_src() >= 0, "non-negative node counts");
  expect(g.row_ptr().size() == static_cast<std::size_t>(g.n_dst()) + 1, "row_ptr has n_dst + 1 entries");
  expect(g.col_ptr().size() == static_cast<std::size_t>(g.n_src()) + 1, "col_ptr has n_src + 1 entries");
  expect(g.row_ptr().front() == 0 && g.row_ptr().back() == g.num_edges(), "row_ptr spans the edges");
  for (index_t e = 0; e < g.num_edges(); ++e) {
    const index_t src = g.col_idx()[static_cast<std::size_t>(e)];
    expect(src >= 0 && src < g.n_src(), "every source id is in range");
  }
}

template <class T>
void check_tensor(const DenseTensor<T>& t) {
  index_t count = 1;
  for (index_t extent : t.shape()) {
    expect(extent >= 0, "non-negative extents");
    count *= extent;
  }
  expect(static_cast<std::size_t>(count) == t.values().size(), "a tensor holds as many values as its shape says");
}

}  // namespace gnncheck::fuzz

// gnncheck/adapters/tests/adapter_test_support.h — graphs, cases and paths shared by the adapters' tests.
//
//   auto g = gnncheck::testing::asymmetric_graph();       // square, A ≠ Aᵀ, duplicate edge, empty row
//   gnncheck::Case c = gnncheck::testing::random_case("spmm", g, {{"features", std::int64_t{5}}}, 7);
//   gnncheck::Case r = gnncheck::testing::revealing_case("spmm_ve", 7);   // where every replica's bug shows
//   std::string py = gnncheck::testing::python();          // the interpreter CMake found (numpy, scipy)
#pragma once

#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::testing {

// Square 5×5, directed (A ≠ Aᵀ, in- and out-degrees differ), a duplicate edge (0 <- 2 twice), a
// self-loop (3 <- 3), an empty row (destination 4) and CSC order different from CSR order.
inline std::shared_ptr<const Graph> asymmetric_graph() {
  const std::vector<index_t> dst = {0, 0, 0, 1, 1, 2, 3, 3};
  const std::vector<index_t> src = {2, 1, 2, 0, 4, 0, 3, 1};
  return std::make_shared<const Graph>(Graph::from_edges(5, 5, dst, src));
}

// Non-square 3×4 with a duplicate edge, an empty row and an isolated source.
inline std::shared_ptr<const Graph> bipartite_graph() {
  const std::vector<index_t> dst = {0, 0, 0, 2, 2};
  const std::vector<index_t> src = {2, 1, 2, 0, 2};
  return std::make_shared<const Graph>(Graph::from_edges(3, 4, dst, src));
}

inline Case random_case(const std::string& target, std::shared_ptr<const Graph> g, const Attributes& attrs,
                        std::uint64_t seed, bool with_gradients = true) {
  oracle::RandomCaseOptions options;
  options.with_grad_outputs = with_gradients;
  return oracle::make_random_case(oracle::find_target(target), std::move(g), attrs, seed, options);
}

// A case where every replica's bug can show (CPU and GPU replicas alike): asymmetric_graph() and
// widths that are not a multiple of 32 (features and out_features 33, in_features 5, 2 heads).
inline Case revealing_case(const std::string& target, std::uint64_t seed) {
  const oracle::TargetDef& def = oracle::find_target(target);
  Attributes attrs;
  for (const auto& a : def.spec.attributes) {
    if (a.name == "features" || a.name == "out_features") attrs.set(a.name, std::int64_t{33});
    if (a.name == "in_features") attrs.set(a.name, std::int64_t{5});
    if (a.name == "heads") attrs.set(a.name, std::int64_t{2});
  }
  return random_case(target, asymmetric_graph(), attrs, seed);
}

// Largest |a - b| over two tensor maps with the same keys; +inf when keys or shapes differ.
inline double max_abs_difference(const TensorMap& a, const TensorMap& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (const auto& [name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.shape() != t.shape()) return INFINITY;
    for (index_t i = 0; i < t.size(); ++i) worst = std::max(worst, std::abs(t[i] - it->second[i]));
  }
  return worst;
}

inline std::filesystem::path source_dir() { return GNNCHECK_TEST_SOURCE_DIR; }
inline std::string python() { return GNNCHECK_TEST_PYTHON; }

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The pids a test adapter wrote into `file`, one per line (faulty_adapter.py --pid-file).
inline std::vector<pid_t> read_pids(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<pid_t> pids;
  for (pid_t pid; in >> pid;) pids.push_back(pid);
  return pids;
}

// Whether `pid` is gone, or only a zombie (a process reparented to an init that does not reap), within
// `wait`: a killed process needs a moment to be torn down (longer on a loaded machine; a process
// that is gone returns at once, so only a failure waits the whole of it).
inline bool process_gone(pid_t pid, std::chrono::milliseconds wait = std::chrono::milliseconds(30000)) {
  const auto deadline = std::chrono::steady_clock::now() + wait;
  while (true) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(stat, text);
    const size_t paren = text.rfind(')');
    if (!stat || paren == std::string::npos || paren + 2 >= text.size() || text[paren + 2] == 'Z') return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// A fresh, empty directory under the system's temp dir, removed by the destructor.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "gnncheck-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace gnncheck::testing

#include "suites/run_share.h"

#include <algorithm>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"

namespace gnncheck::suites {

CaseShare parse_case_share(const std::string& text) {
  const auto slash = text.find('/');
  auto number = [&](const std::string& s) -> int {
    if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](unsigned char ch) { return std::isdigit(ch); }))
      return 0;
    return std::stoi(s);
  };
  const int part = slash == std::string::npos ? 0 : number(text.substr(0, slash));
  const int of = slash == std::string::npos ? 0 : number(text.substr(slash + 1));
  if (part < 1 || of < 1 || part > of)
    throw InputError(fmt::format("--share '{}': expected PART/OF with 1 <= PART <= OF (e.g. 3/8: the third of eight "
                                 "disjoint parts of every check's cases)",
                                 text));
  return {part, of};
}

std::optional<CaseShare> share_from_environment(const std::function<const char*(const char*)>& lookup,
                                                const std::optional<CaseShare>& given) {
  struct Found {
    std::string names;
    CaseShare share;
  };
  std::vector<Found> found;
  for (const auto& [total_name, index_name] : {std::pair{"GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX"},
                                                std::pair{"TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX"}}) {
    const char* total = lookup(total_name);
    const char* index = lookup(index_name);
    if (!total && !index) continue;
    if (!total || !index)
      throw InputError(fmt::format("{} is set but {} is not: a test runner sets both to run one shard", total ? total_name : index_name,
                                   total ? index_name : total_name));
    auto number = [](const std::string& s) -> long {
      if (s.empty() || s.size() > 6 || !std::all_of(s.begin(), s.end(), [](unsigned char ch) { return std::isdigit(ch); })) return -1;
      return std::stol(s);
    };
    const long n = number(total), i = number(index);
    if (n < 1 || i < 0 || i >= n)
      throw InputError(fmt::format("{}='{}' and {}='{}': expected 0 <= index < total", total_name, total, index_name, index));
    found.push_back({fmt::format("{}={} {}={}", total_name, total, index_name, index), {static_cast<int>(i) + 1, static_cast<int>(n)}});
  }
  if (found.empty()) return std::nullopt;
  for (const auto& f : found) {
    const CaseShare& a = found.front().share;
    if (f.share.part != a.part || f.share.of != a.of)
      throw InputError(fmt::format("{} and {} ask for different shards", found.front().names, f.names));
    if (given && (given->part != f.share.part || given->of != f.share.of))
      throw InputError(fmt::format("--share {}/{} and {} (shard {}/{}) disagree", given->part, given->of, f.names, f.share.part,
                                   f.share.of));
  }
  if (const char* status = lookup("TEST_SHARD_STATUS_FILE"); status && *status) {
    std::ofstream touch(status, std::ios::app);
    if (!touch) throw InputError(fmt::format("TEST_SHARD_STATUS_FILE='{}': cannot write it", status));
  }
  return found.front().share;
}

}  // namespace gnncheck::suites

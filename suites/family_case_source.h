// gnncheck/suites/family_case_source.h — the fixed and generator graph families of a suite as a
// case source (properties/case_loop.h): `cases` cases, each on the family's graph for its case seed
// (the same graph every time for a dataset or a file), with attributes and values drawn from the
// task's seed, case i in the generator's i-th value style (properties::drawn_case). They do not
// shrink: the failing case is handed back as drawn.
//
//   FamilyCaseSource source(*task.graphs, "spmm", task.attributes, /*cases=*/10, task.seed);
//   properties::CaseLoopResult out = properties::run_case_loop(source, loop_options);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "properties/case_loop.h"
#include "suites/suite.h"

namespace gnncheck::suites {

// The graph of family `f` for one case seed (a non-random family). Throws InputError naming the
// family when it cannot be made or read.
std::shared_ptr<const Graph> family_graph(const GraphFamily& f, std::uint64_t case_seed);

class FamilyCaseSource final : public properties::CaseSource {
 public:
  FamilyCaseSource(const GraphFamily& family, std::string target, const std::vector<AttributeChoice>& attributes,
                   std::int64_t cases, std::uint64_t seed);
  std::optional<properties::CaseFailure> draw(properties::CaseJudge& judge) override;

 private:
  const GraphFamily& family_;
  std::string target_;
  const std::vector<AttributeChoice>& attributes_;
  std::int64_t cases_;
  std::uint64_t seed_;
};

}  // namespace gnncheck::suites

// gnncheck/fuzz/protocol_fixture.h — a valid case directory of the external-process protocol
// (adapters/PROTOCOL.md), written once per fuzzing process, for the targets that fuzz one file of
// it (case.json, result.json) or the values an adapter or plugin answers with.
//
//   static const gnncheck::fuzz::ProtocolFixture fixture(gnncheck::NpyDType::float64);
//   gnncheck::fuzz::write_file(fixture.dir() / "case.json", fuzzed_bytes);
#pragma once

#include <memory>

#include "adapters/protocol.h"
#include "fuzz/fuzz_support.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"

namespace gnncheck::fuzz {

// An SpMM case with gradients on a 3×4 graph with a duplicate edge and an empty row.
inline Case small_spmm_case() {
  const std::vector<index_t> dst = {0, 0, 0, 2, 2};
  const std::vector<index_t> src = {2, 1, 2, 0, 2};
  auto graph = std::make_shared<const Graph>(Graph::from_edges(3, 4, dst, src));
  return oracle::make_random_case(oracle::find_target("spmm"), graph, {{"features", std::int64_t{2}}}, 7);
}

class ProtocolFixture {
 public:
  explicit ProtocolFixture(NpyDType dtype)
      : case_(small_spmm_case()), manifest_(protocol::write_case(case_, dtype, scratch_.path())) {
    protocol::write_result(scratch_.path(), manifest_, oracle::evaluate(case_));
    // $GNNCHECK_FUZZ_DUMP_FIXTURE=<folder>: copy the fixture's files there (how the seed corpora of
    // fuzz_case_json and fuzz_result_json were made).
    if (const char* dump = std::getenv("GNNCHECK_FUZZ_DUMP_FIXTURE"))
      std::filesystem::copy(scratch_.path(), dump,
                            std::filesystem::copy_options::recursive | std::filesystem::copy_options::overwrite_existing);
  }
  const std::filesystem::path& dir() const { return scratch_.path(); }
  const Case& original_case() const { return case_; }
  const protocol::CaseManifest& manifest() const { return manifest_; }

 private:
  ScratchDir scratch_;  // first: the members below are written into it
  Case case_;
  protocol::CaseManifest manifest_;
};

// The statuses read_result may give an adapter's answer.
inline bool is_answer_status(Status s) {
  return s == Status::ok || s == Status::unsupported || s == Status::error || s == Status::invalid_output;
}

}  // namespace gnncheck::fuzz

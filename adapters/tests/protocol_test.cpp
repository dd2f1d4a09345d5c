// Both sides of the case-directory protocol (adapters/PROTOCOL.md): a case written by gnncheck reads
// back identical on the adapter's side, an answer written by the adapter's side reads back as the
// same Result, and malformed case files are refused with the file and field named.
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapters/protocol.h"
#include "adapters/tests/adapter_test_support.h"
#include "oracle/targets.h"

namespace gnncheck {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

TEST(Protocol, CaseRoundTripsThroughTheDirectory) {
  TempDir dir;
  const Case c = testing::random_case("gat", testing::asymmetric_graph(), {{"heads", std::int64_t{3}}}, 9);
  const protocol::CaseManifest written = protocol::write_case(c, NpyDType::float64, dir.path());
  const protocol::LoadedCase loaded = protocol::read_case(dir.path());
  EXPECT_EQ(loaded.c.target, "gat");
  EXPECT_EQ(loaded.c.seed, 9u);
  EXPECT_EQ(*loaded.c.graph, *c.graph);
  EXPECT_EQ(loaded.c.inputs, c.inputs);
  EXPECT_EQ(loaded.c.parameters, c.parameters);
  EXPECT_EQ(loaded.c.grad_outputs, c.grad_outputs);
  EXPECT_EQ(loaded.c.attributes.get_int("heads"), 3);
  EXPECT_TRUE(loaded.c.attributes.has("negative_slope"));  // defaults are filled in for the adapter
  EXPECT_EQ(loaded.manifest.gradients.size(), written.gradients.size());
  EXPECT_EQ(written.parameters.size(), 4u);  // weight, att_src, att_dst, bias
}

TEST(Protocol, WhetherMemoryFiguresAreReadTravelsWithTheCase) {
  TempDir dir;
  Case c = testing::random_case("spmm", testing::asymmetric_graph(), {}, 5);
  EXPECT_FALSE(protocol::write_case(c, NpyDType::float64, dir.path()).measure_resources);
  EXPECT_EQ(protocol::read_case(dir.path()).c.memory_figures, MemoryFigures::unread);
  c.memory_figures = MemoryFigures::counted;  // counted, not read: the adapter may skip its readings
  EXPECT_FALSE(protocol::write_case(c, NpyDType::float64, dir.path()).measure_resources);
  c.memory_figures = MemoryFigures::read;
  protocol::write_case(c, NpyDType::float64, dir.path());
  EXPECT_EQ(protocol::read_case(dir.path()).c.memory_figures, MemoryFigures::read);
  // A case.json without the field (an older gnncheck) measures everything, as it did.
  nlohmann::json j = nlohmann::json::parse(std::ifstream(dir.path() / "case.json"));
  j.erase("measure_resources");
  std::ofstream(dir.path() / "case.json") << j.dump();
  EXPECT_EQ(protocol::read_case(dir.path()).c.memory_figures, MemoryFigures::read);
  j["measure_resources"] = "yes";
  std::ofstream(dir.path() / "case.json") << j.dump();
  EXPECT_THROW(
      {
        try {
          protocol::read_case(dir.path());
        } catch (const InputError& e) {
          EXPECT_THAT(e.what(), HasSubstr("field 'measure_resources' must be true or false"));
          throw;
        }
      },
      InputError);
}

TEST(Protocol, Float32CaseHoldsFloat32Tensors) {
  TempDir dir;
  const Case c = testing::random_case("spmm_ve", testing::bipartite_graph(), {}, 3);
  protocol::write_case(c, NpyDType::float32, dir.path());
  EXPECT_EQ(read_npy(dir.path() / "input_x.npy").dtype(), NpyDType::float32);
  EXPECT_EQ(read_npy(dir.path() / "graph_row_ptr.npy").dtype(), NpyDType::int64);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(dir.path() / "case.json"));
  EXPECT_EQ(j["dtype"], "float32");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::array({3, 4}));
}

TEST(Protocol, OptionalInputsThatAreOffAreNotWritten) {
  TempDir dir;
  Case c = testing::random_case("gcn", testing::asymmetric_graph(), {}, 2);
  c.attributes.set("bias", false);
  c.parameters.erase("bias");
  const protocol::CaseManifest m = protocol::write_case(c, NpyDType::float64, dir.path());
  for (const auto& e : m.parameters) EXPECT_NE(e.name, "bias");
  for (const auto& e : m.gradients) EXPECT_NE(e.name, "bias");
}

TEST(Protocol, ForwardOnlyCaseAsksForNoGradients) {
  TempDir dir;
  const Case c = testing::random_case("spmm", testing::asymmetric_graph(), {}, 2, false);
  const protocol::CaseManifest m = protocol::write_case(c, NpyDType::float64, dir.path());
  EXPECT_TRUE(m.grad_outputs.empty());
  EXPECT_TRUE(m.gradients.empty());
}

// write_case validates with oracle::validate_case, so the protocol refuses exactly the cases the
// oracle refuses, with the same message (before, it kept its own copy, which lacked the square-graph check).
TEST(Protocol, RefusesAnInvalidCaseWithTheOraclesMessage) {
  const Case valid = testing::random_case("spmm_ve", testing::asymmetric_graph(), {{"heads", std::int64_t{2}}}, 3);
  std::vector<Case> invalid(3, valid);
  invalid[0].inputs.erase("x");
  invalid[1].inputs["edge_values"] = Tensor({1, 2});
  invalid[2].grad_outputs["y"] = Tensor({2, 2});
  for (const Case& c : invalid) {
    TempDir dir;
    const Result oracle_answer = oracle::evaluate(c);
    ASSERT_EQ(oracle_answer.status, Status::error);
    try {
      protocol::write_case(c, NpyDType::float64, dir.path());
      ADD_FAILURE() << "write_case accepted a case the oracle refuses: " << oracle_answer.message;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), oracle_answer.message);
    }
  }
  EXPECT_THAT(oracle::evaluate(invalid[0]).message, HasSubstr("target 'spmm_ve': input 'x' is missing"));
}

TEST(Protocol, AnswerRoundTripsAsTheSameResult) {
  TempDir dir;
  const Case c = testing::random_case("sddmm_dot", testing::asymmetric_graph(), {{"heads", std::int64_t{2}}}, 4);
  const protocol::CaseManifest m = protocol::write_case(c, NpyDType::float64, dir.path());
  Result answer = oracle::evaluate(c);
  answer.seconds = 0.25;
  answer.peak_bytes = 123;
  protocol::write_result(dir.path(), m, answer);
  const Result back = protocol::read_result(dir.path(), m);
  ASSERT_TRUE(back.ok()) << back.message;
  EXPECT_EQ(back.outputs, answer.outputs);
  EXPECT_EQ(back.gradients, answer.gradients);
  EXPECT_EQ(back.seconds, 0.25);
  EXPECT_EQ(back.peak_bytes, 123);
}

// PROTOCOL.md §5: NaN or Inf in an answer is an answer, not an unreadable one. Where the exact
// result is finite the checks compare it and fail with the element; it used to be invalid_output,
// which made a softmax without its row maximum read as a broken system (`error`), not a wrong one.
TEST(Protocol, NonFiniteAnswersToFiniteInputsAreReadForTheChecksToJudge) {
  TempDir dir;
  const Case c = testing::random_case("spmm", testing::asymmetric_graph(), {}, 4, false);
  const protocol::CaseManifest m = protocol::write_case(c, NpyDType::float64, dir.path());
  Result answer = oracle::evaluate(c);
  answer.outputs.at("y")[7] = INFINITY;
  answer.outputs.at("y")[8] = NAN;
  protocol::write_result(dir.path(), m, answer);
  const Result back = protocol::read_result(dir.path(), m);
  ASSERT_TRUE(back.ok()) << back.message;
  EXPECT_EQ(back.outputs.at("y")[7], INFINITY);
  EXPECT_TRUE(std::isnan(back.outputs.at("y")[8]));
}

TEST(Protocol, MalformedCaseFilesNameTheFileAndField) {
  TempDir dir;
  const Case c = testing::random_case("spmm", testing::asymmetric_graph(), {}, 4);
  protocol::write_case(c, NpyDType::float64, dir.path());
  const auto rewrite = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = nlohmann::json::parse(std::ifstream(dir.path() / "case.json"));
    edit(j);
    std::ofstream(dir.path() / "case.json") << j.dump();
  };
  const auto error_of = [&]() -> std::string {
    try {
      protocol::read_case(dir.path());
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  rewrite([](nlohmann::json& j) { j["protocol"] = 7; });
  EXPECT_THAT(error_of(), HasSubstr("protocol 7 is not supported"));
  rewrite([](nlohmann::json& j) { j["protocol"] = 1; j["inputs"][0].erase("shape"); });
  EXPECT_THAT(error_of(), HasSubstr("inputs[0]: field 'shape' is missing"));
  rewrite([](nlohmann::json& j) { j["inputs"][0]["shape"] = {5, 4}; j["inputs"][0]["file"] = "../x.npy"; });
  EXPECT_THAT(error_of(), HasSubstr("must be a plain file name"));
  rewrite([](nlohmann::json& j) { j["inputs"][0]["file"] = "input_x.npy"; j["graph"]["num_edges"] = 3; });
  EXPECT_THAT(error_of(), HasSubstr("num_edges = 3"));
  std::ofstream(dir.path() / "case.json") << "{not json";
  EXPECT_THAT(error_of(), HasSubstr("not valid JSON"));
}

// Found by fuzz/fuzz_plugin_values: a plugin's error message that is not UTF-8 (a Latin-1 strerror,
// garbage left in the buffer) made write_result throw nlohmann's type_error 316 instead of
// answering; the message now arrives with U+FFFD in place of the bad bytes.
TEST(Protocol, AnswerWithANonUtf8MessageIsWrittenAndReadBack) {
  TempDir dir;
  const Case c = testing::random_case("spmm", testing::asymmetric_graph(), {}, 2);
  const protocol::CaseManifest m = protocol::write_case(c, NpyDType::float64, dir.path());
  Result answer;
  answer.status = Status::error;
  answer.message = "caf\xe9 \xff\xfe out of memory";
  ASSERT_NO_THROW(protocol::write_result(dir.path(), m, answer));
  const Result back = protocol::read_result(dir.path(), m);
  EXPECT_EQ(back.status, Status::error) << back.message;
  EXPECT_THAT(back.message, HasSubstr("caf\xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd out of memory"));
}

// Found with fuzz/fuzz_case_json: a case.json whose seed is a string escaped as nlohmann's
// type_error 302 instead of an InputError naming the field.
TEST(Protocol, CaseWithANonIntegerSeedNamesTheField) {
  TempDir dir;
  protocol::write_case(testing::random_case("spmm", testing::asymmetric_graph(), {}, 2), NpyDType::float64, dir.path());
  nlohmann::json j = nlohmann::json::parse(std::ifstream(dir.path() / "case.json"));
  for (const nlohmann::json& bad : {nlohmann::json("x"), nlohmann::json(-1), nlohmann::json(1.5)}) {
    j["seed"] = bad;
    std::ofstream(dir.path() / "case.json") << j.dump();
    try {
      protocol::read_case(dir.path());
      ADD_FAILURE() << "seed " << bad.dump() << " was accepted";
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), HasSubstr("case.json: field 'seed' must be a non-negative integer")) << bad.dump();
    }
  }
}

// PROTOCOL.md §1: a protocol line may follow text printed without a newline on the same line.
TEST(ProtocolLines, HelloIsFoundAfterTextPrintedWithoutNewline) {
  EXPECT_EQ(protocol::hello_payload("gnncheck-hello {\"protocol\": 1}"), "{\"protocol\": 1}");
  EXPECT_EQ(protocol::hello_payload("Loading...gnncheck-hello {\"protocol\": 1}"), "{\"protocol\": 1}");
  EXPECT_EQ(protocol::hello_payload("gnncheck-hello {}\r"), "{}");
  EXPECT_EQ(protocol::hello_payload("imported gnncheck-hello gnncheck-hello {}"), "{}");  // the last token counts
  EXPECT_EQ(protocol::hello_payload("gnncheck-hello"), std::nullopt);  // the token includes its space
  EXPECT_EQ(protocol::hello_payload("gnncheck-helo {}"), std::nullopt);
  EXPECT_EQ(protocol::hello_payload(""), std::nullopt);
}

TEST(ProtocolLines, DoneLineAnswersTheCaseItEndsWith) {
  EXPECT_TRUE(protocol::is_done_line_for("gnncheck-done /tmp/gnncheck-case-1", "/tmp/gnncheck-case-1"));
  EXPECT_TRUE(protocol::is_done_line_for("progress 100%gnncheck-done /tmp/gnncheck-case-1", "/tmp/gnncheck-case-1"));
  EXPECT_TRUE(protocol::is_done_line_for("gnncheck-done /tmp/gnncheck-case-1\r", "/tmp/gnncheck-case-1"));
  // A directory whose path contains the token itself is still matched exactly.
  EXPECT_TRUE(protocol::is_done_line_for("gnncheck-done /w/gnncheck-done x/c", "/w/gnncheck-done x/c"));
  EXPECT_FALSE(protocol::is_done_line_for("gnncheck-done /tmp/gnncheck-case-12", "/tmp/gnncheck-case-1"));
  EXPECT_FALSE(protocol::is_done_line_for("/tmp/gnncheck-case-1", "/tmp/gnncheck-case-1"));
  EXPECT_EQ(protocol::done_payload("50%gnncheck-done /tmp/other"), "/tmp/other");
  EXPECT_EQ(protocol::done_payload("done /tmp/other"), std::nullopt);
}

TEST(ProtocolResult, ByteCountsAreReadAndValidated) {
  TempDir dir;
  const Case c = testing::random_case("spmm", testing::asymmetric_graph(), {{"features", std::int64_t{2}}}, 3, false);
  const protocol::CaseManifest m = protocol::write_case(c, NpyDType::float64, dir.path());
  std::ofstream(dir.path() / "result.json") << R"({"status": "error", "message": "m", "live_bytes": 4096, "device_bytes": 8192})";
  protocol::Answer a = protocol::read_answer(dir.path(), m);
  EXPECT_EQ(a.live_bytes, 4096);
  EXPECT_EQ(a.device_bytes, 8192);
  EXPECT_EQ(a.result.status, Status::error);
  std::ofstream(dir.path() / "result.json") << R"({"status": "error", "message": "m", "live_bytes": -1})";
  a = protocol::read_answer(dir.path(), m);
  EXPECT_EQ(a.live_bytes, std::nullopt);
  EXPECT_EQ(a.result.status, Status::invalid_output);
  EXPECT_THAT(a.result.message, HasSubstr("field 'live_bytes' must be a non-negative integer"));
  std::ofstream(dir.path() / "result.json") << R"({"status": "error", "message": "m"})";
  a = protocol::read_answer(dir.path(), m);
  EXPECT_EQ(a.live_bytes, std::nullopt);
  EXPECT_EQ(a.device_bytes, std::nullopt);
  std::filesystem::remove(dir.path() / "result.json");
  a = protocol::read_answer(dir.path(), m);
  EXPECT_EQ(a.result.status, Status::invalid_output);
  EXPECT_THAT(a.result.message, HasSubstr("wrote no result.json"));
}

TEST(ProtocolHello, AcceptsCatalogueTargetsWithTheirPrecisions) {
  const protocol::Hello hello =
      protocol::parse_hello(R"({"protocol": 1, "name": "mine", "targets": {"spmm": "tf32", "gat": "float64"}})");
  EXPECT_EQ(hello.name, "mine");
  EXPECT_EQ(hello.targets, (std::map<std::string, Precision>{{"gat", Precision::float64}, {"spmm", Precision::tf32}}));
}

std::string hello_error(const std::string& json) {
  try {
    protocol::parse_hello(json);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(ProtocolHello, RefusesWhatCannotBeCheckedNamingTheProblem) {
  EXPECT_THAT(hello_error(R"({"protocol": 1, "targets": {"spmm": "float64", "spmmm": "float64"}})"),
              HasSubstr("the hello line declares unknown target 'spmmm'; known targets: spmm, spmm_transposed"));
  EXPECT_THAT(hello_error(R"({"protocol": 1, "targets": {"spmm": "fp16"}})"),
              HasSubstr("target 'spmm': unknown precision 'fp16': expected float64, float32, tf32, bfloat16 or float16"));
  EXPECT_THAT(hello_error(R"({"protocol": 1, "targets": {"spmm": 32}})"),
              HasSubstr("target 'spmm': expected a precision string or an object"));
  EXPECT_THAT(hello_error(R"({"protocol": 1, "targets": {}})"), HasSubstr("declares no targets"));
  EXPECT_THAT(hello_error(R"({"protocol": 2, "targets": {"spmm": "float64"}})"),
              HasSubstr("the adapter speaks protocol 2; gnncheck speaks 1"));
  EXPECT_THAT(hello_error(R"({"targets": {"spmm": "float64"}})"), HasSubstr("no integer field 'protocol'"));
  EXPECT_THAT(hello_error(R"({"protocol": 1})"), HasSubstr("no object field 'targets'"));
  EXPECT_THAT(hello_error("{protocol: 1"), HasSubstr("the hello line is not valid JSON"));
}

TEST(ProtocolHello, ATargetMayDeclareAnAccumulationFinerThanItsStorage) {
  const protocol::Hello hello = protocol::parse_hello(
      R"({"protocol": 1, "targets": {"spmm": {"precision": "float16", "accumulation": "float32"},)"
      R"( "gat": {"precision": "bfloat16", "accumulation": "float32", "attributes": {"heads": 1}},)"
      R"( "sddmm_dot": {"precision": "float16", "accumulation": "float16"}, "spmm_ve": "float16"}})");
  EXPECT_EQ(hello.targets.at("spmm"), Precision::float16);
  EXPECT_EQ(hello.accumulation.at("spmm"), Precision::float32);
  EXPECT_EQ(hello.accumulation.at("gat"), Precision::float32);
  EXPECT_EQ(hello.implemented.at("gat").at("heads"), std::vector<AttrValue>{std::int64_t{1}});
  // Declared equal to the precision, or not declared: the one-format declaration it always was.
  EXPECT_FALSE(hello.accumulation.count("sddmm_dot"));
  EXPECT_FALSE(hello.accumulation.count("spmm_ve"));
}

TEST(ProtocolHello, RefusesAnAccumulationCoarserThanItsStorageOrUnknownNamingTargetAndField) {
  EXPECT_THAT(hello_error(R"({"protocol": 1, "targets": {"spmm": {"precision": "float32", "accumulation": "float16"}}})"),
              HasSubstr("target 'spmm': field 'accumulation': float16 is coarser than the precision float32"));
  // float16 is finer than bfloat16 but ends at 65504: a bfloat16 value may not fit its sums.
  EXPECT_THAT(hello_error(R"({"protocol": 1, "targets": {"gat": {"precision": "bfloat16", "accumulation": "float16"}}})"),
              HasSubstr("target 'gat': field 'accumulation': float16 is coarser than the precision bfloat16"));
  EXPECT_THAT(hello_error(R"({"protocol": 1, "targets": {"spmm": {"precision": "float16", "accumulation": "fp32"}}})"),
              HasSubstr("target 'spmm': field 'accumulation': unknown precision 'fp32': expected float64, float32"));
  EXPECT_THAT(hello_error(R"({"protocol": 1, "targets": {"spmm": {"precision": "float16", "accumulation": 32}}})"),
              HasSubstr("target 'spmm': field 'accumulation': expected a precision name"));
  EXPECT_THAT(hello_error(R"({"protocol": 1, "targets": {"spmm": {"accumulation": "float32"}}})"),
              HasSubstr("target 'spmm': 'accumulation' without 'precision'"));
  EXPECT_THAT(hello_error(R"({"protocol": 1, "targets": {"spmm": {"precision": "float16", "accumulate": "float32"}}})"),
              HasSubstr("target 'spmm': unknown key 'accumulate'; expected precision, accumulation and attributes"));
}

TEST(ProtocolHello, ATargetMayDeclareTheAttributeValuesItImplements) {
  const protocol::Hello hello = protocol::parse_hello(
      R"({"protocol": 1, "targets": {"spmm": "float32", "gcn": {"precision": "float32", "attributes": )"
      R"({"source_degree": ["in"], "zero_degree": "zero", "in_features": [4, 8]}},)"
      R"( "gat": {"precision": "tf32", "attributes": {"negative_slope": [0.2, 1], "heads": 1}}}})");
  EXPECT_EQ(hello.targets.at("gcn"), Precision::float32);
  EXPECT_EQ(hello.targets.at("gat"), Precision::tf32);
  EXPECT_FALSE(hello.implemented.count("spmm"));  // a bare precision implements every value
  const ImplementedAttributes& gcn = hello.implemented.at("gcn");
  EXPECT_EQ(gcn.at("source_degree"), std::vector<AttrValue>{std::string("in")});
  EXPECT_EQ(gcn.at("zero_degree"), std::vector<AttrValue>{std::string("zero")});
  EXPECT_EQ(gcn.at("in_features"), (std::vector<AttrValue>{std::int64_t{4}, std::int64_t{8}}));
  // An integer stands for a number where the attribute is a number.
  EXPECT_EQ(hello.implemented.at("gat").at("negative_slope"), (std::vector<AttrValue>{0.2, 1.0}));
  EXPECT_EQ(hello.implemented.at("gat").at("heads"), std::vector<AttrValue>{std::int64_t{1}});
}

TEST(ProtocolHello, RefusesAnAttributeDeclarationThatCouldLeaveSomethingSilentlyUntested) {
  auto declaring = [](const std::string& attributes) {
    return hello_error(R"({"protocol": 1, "targets": {"gcn": {"precision": "float32", "attributes": )" + attributes + "}}}");
  };
  EXPECT_THAT(declaring(R"({"source_degre": ["in"]})"),
              HasSubstr("target 'gcn': target 'gcn' has no attribute 'source_degre'; its attributes: in_features"));
  EXPECT_THAT(declaring(R"({"source_degree": ["inn"]})"), HasSubstr("'inn' is not one of its values (out, in)"));
  EXPECT_THAT(declaring(R"({"source_degree": []})"), HasSubstr("the values implemented are empty"));
  EXPECT_THAT(declaring(R"({"in_features": ["8"]})"), HasSubstr("attribute 'in_features': expected an integer"));
  EXPECT_THAT(declaring(R"({"bias": [1]})"), HasSubstr("attribute 'bias': expected a boolean"));
  EXPECT_THAT(declaring(R"({"bias": [null]})"), HasSubstr("expected booleans, numbers or strings, got null"));
  EXPECT_THAT(declaring(R"(["source_degree"])"), HasSubstr("'attributes' must be an object"));
  EXPECT_THAT(hello_error(R"({"protocol": 1, "targets": {"gcn": {"precision": "float32", "atributes": {}}}})"),
              HasSubstr("target 'gcn': unknown key 'atributes'; expected precision, accumulation and attributes"));
  EXPECT_THAT(hello_error(R"({"protocol": 1, "targets": {"gcn": {"attributes": {}}}})"),
              HasSubstr("target 'gcn': expected a precision string or an object"));
}

}  // namespace
}  // namespace gnncheck

// gnncheck/adapters/protocol.h — both sides of the case-directory protocol of adapters/PROTOCOL.md.
//
// gnncheck's side writes a Case into a directory (case.json + .npy tensors) and reads back the
// adapter's answer with every check of PROTOCOL.md §5 (missing/garbage/truncated files, shapes,
// dtypes) turned into a Result. The adapter's side (used by the C plugin host,
// and usable by any C++ adapter) reads a case directory back into a Case and writes a Result.
//
//   auto manifest = gnncheck::protocol::write_case(c, gnncheck::NpyDType::float64, dir);
//   ... the adapter answers ...
//   gnncheck::Result r = gnncheck::protocol::read_result(dir, manifest);
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fixtures/npy.h"
#include "core/case.h"
#include "core/system.h"

namespace gnncheck::protocol {

inline constexpr int kVersion = 1;
inline constexpr std::string_view kHelloPrefix = "gnncheck-hello ";
inline constexpr std::string_view kDonePrefix = "gnncheck-done ";

// How gnncheck finds a protocol line on the adapter's stdout (PROTOCOL.md §1). A stdout line is the
// text between two '\n' (a trailing '\r' is ignored); it may begin with text that the adapter printed
// without a newline before the protocol line, and that text is ignored.
//
// The JSON of a hello line: what follows the last "gnncheck-hello " of the line; nullopt when the
// line has none.
std::optional<std::string_view> hello_payload(std::string_view line);
// Whether `line` is the answer to the case in `dir`: it ends with "gnncheck-done <dir>".
bool is_done_line_for(std::string_view line, std::string_view dir);
// The directory a done line names: what follows the last "gnncheck-done "; nullopt when the line has none.
std::optional<std::string_view> done_payload(std::string_view line);

// What a hello line declares.
struct Hello {
  std::string name;                           // may be empty
  std::map<std::string, Precision> targets;  // every one a target of oracle::all_targets()
  // Per target, the accumulation format where the declaration names one (`"spmm": {"precision":
  // "float16", "accumulation": "float32"}`); a target not listed accumulates in its precision.
  std::map<std::string, Precision> accumulation;
  // Per target, the attribute values the system implements where it declared fewer than all
  // (`"gcn": {"precision": "float32", "attributes": {"source_degree": ["in"]}}`); validated.
  std::map<std::string, ImplementedAttributes> implemented;
};
// A target's `attributes` declaration as JSON text ({"source_degree": ["in"], "heads": 1}), parsed and
// validated (oracle::validated_implemented_attributes). Throws InputError saying what is wrong. The
// hello line, the plugin host and the Python package all read declarations through it.
ImplementedAttributes parse_implemented_attributes(const std::string& target, std::string_view json_text);

// Parses the JSON of a hello line. Throws InputError saying what is wrong: not JSON, no integer
// `protocol` or another version, no `targets` object, no target at all, a target that is not in the
// catalogue (naming it and listing the known targets: a misspelled target must not be silently
// unsupported), a precision or accumulation that is not one of float64, float32, tf32, bfloat16,
// float16, an accumulation coarser than its target's precision (accumulation_fits), or an
// attribute declaration that oracle::validated_implemented_attributes refuses.
Hello parse_hello(std::string_view json);

// One tensor of case.json: a file in the case directory with its expected shape and dtype.
struct TensorEntry {
  std::string name;
  std::string kind;  // dst_nodes, src_nodes, edges, edges_csc, parameter (inputs only)
  bool differentiable = true;
  std::string file;
  std::vector<index_t> shape;
  NpyDType dtype = NpyDType::float64;
  // An index tensor (integers stored in the case's dtype, each edge's relation): the attribute bounding
  // its values ("relations"); empty for a tensor of values.
  std::string index_range = {};
};

// Everything case.json says.
struct CaseManifest {
  int protocol = kVersion;
  std::string target;
  std::uint64_t seed = 0;
  NpyDType dtype = NpyDType::float64;
  Attributes attributes;  // defaults filled in
  index_t n_dst = 0, n_src = 0, num_edges = 0;
  std::string row_ptr_file = "graph_row_ptr.npy";
  std::string col_idx_file = "graph_col_idx.npy";
  std::vector<TensorEntry> inputs, parameters, grad_outputs, outputs, gradients;
  std::string result_file = "result.json";
  bool measure_resources = true;  // case.json's measure_resources (Case::memory_figures is read); absent: true
};

// The dtype of a case's tensors for a system that computes a target in `precision`: float64 for
// float64, float32 for everything narrower (tf32, bfloat16 and float16 systems take float32 data).
NpyDType case_dtype(Precision precision);
// Writes one tensor of a case directory as a .npy file in `dtype` (float32 rounds each value once).
void write_case_tensor(const std::filesystem::path& path, const Tensor& t, NpyDType dtype);

// Writes `c` into the existing directory `dir` with every tensor in `dtype`. The output and gradient
// entries come from the target's catalogue entry. Throws InputError when the case does not fit its
// target (unknown target, missing input, wrong shape) or a file cannot be written.
CaseManifest write_case(const Case& c, NpyDType dtype, const std::filesystem::path& dir);

// gnncheck's side: the adapter's answer in `dir`, validated against `manifest`. Never throws for a
// problem of the answer: it becomes Status::invalid_output naming the file and the problem. Values
// are read as answered: NaN or Inf is the checks' to judge against the exact result (a wrong
// answer where that is finite), never an unreadable answer.
Result read_result(const std::filesystem::path& dir, const CaseManifest& manifest);

// read_result together with result.json's optional byte counts, from one read of the file:
// - live_bytes: memory the system holds between evaluations after this one (device memory for a GPU
//   system), which a host-side RSS cannot see;
// - device_bytes: the device memory the adapter's process holds after this evaluation as the driver
//   counts it (the torch kit: NVML's figure for its PID).
// Each is nullopt when absent or not a non-negative integer (read_result refuses such a value).
struct Answer {
  Result result;
  std::optional<std::int64_t> live_bytes, device_bytes;
};
Answer read_answer(const std::filesystem::path& dir, const CaseManifest& manifest);

// The adapter's side: reads case.json and its tensors (widened to float64) into a Case. Throws
// InputError naming the file and field on anything malformed.
struct LoadedCase {
  CaseManifest manifest;
  Case c;
};
LoadedCase read_case(const std::filesystem::path& dir);

// The adapter's side: writes r's outputs and gradients (narrowed to the manifest's dtype) under the
// manifest's file names, then result.json. For a status other than ok only result.json is written.
void write_result(const std::filesystem::path& dir, const CaseManifest& manifest, const Result& r);

// result.json's status names: ok, unsupported, error (the only ones an adapter may write).
std::string_view adapter_status_name(Status s);

}  // namespace gnncheck::protocol

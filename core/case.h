// gnncheck/core/case.h — the vocabulary every system and check shares: a case and its result.
//
// A Case is one evaluation request: {target op or layer, attributes, graph, inputs, parameters,
// gradients of the outputs}. A Result carries the outputs, the gradient of every input and
// parameter (keyed by that input's name), a status and the measured time and peak memory.
// Tensors are float64 here whatever the system computes in; a float32 system converts.
//
//   gnncheck::Case c;
//   c.target = "spmm_ve";
//   c.graph = std::make_shared<const gnncheck::Graph>(g);
//   c.inputs["edge_values"] = w;  c.inputs["x"] = x;
//   c.grad_outputs["y"] = gy;     // empty grad_outputs = forward only
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/graph.h"
#include "core/memory_figures.h"
#include "core/tensor.h"

namespace gnncheck {

using AttrValue = std::variant<bool, std::int64_t, double, std::string>;

// Named attributes of a case (heads, widths, normalization kind, …) with typed getters whose
// errors name the attribute and the type expected.
class Attributes {
 public:
  Attributes() = default;
  Attributes(std::initializer_list<std::pair<const std::string, AttrValue>> init) : values_(init) {}

  void set(const std::string& name, AttrValue value) { values_[name] = std::move(value); }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  const std::map<std::string, AttrValue>& values() const { return values_; }

  std::int64_t get_int(const std::string& name) const;
  std::int64_t get_int(const std::string& name, std::int64_t fallback) const;
  double get_double(const std::string& name) const;  // an integer value is accepted too
  double get_double(const std::string& name, double fallback) const;
  bool get_bool(const std::string& name) const;
  bool get_bool(const std::string& name, bool fallback) const;
  std::string get_string(const std::string& name) const;
  std::string get_string(const std::string& name, const std::string& fallback) const;

  friend bool operator==(const Attributes&, const Attributes&) = default;

 private:
  const AttrValue& require(const std::string& name) const;
  std::map<std::string, AttrValue> values_;
};

std::string to_string(const AttrValue& v);
// The value as a user writes it on a command line or in a suite: a string bare, others as to_string.
std::string to_plain_string(const AttrValue& v);
// "a boolean", "an integer", "a number" or "a string": the value's type, for messages.
std::string_view type_name(const AttrValue& v);

using TensorMap = std::map<std::string, Tensor>;

// A target's catalogue entry, as a case carries it. The oracle's catalogue defines what an entry
// holds (oracle/targets.h: oracle::TargetDef extends this); core only carries the reference, so that
// whatever made a case resolves its target once and every check reads that entry
// (oracle::entry_of(case)).
struct TargetEntry {};

struct Case {
  std::string target;                  // the target's name (messages, saved cases, the protocol)
  const TargetEntry* entry = nullptr;  // its catalogue entry, where the case's maker resolved it
  Attributes attributes;
  std::shared_ptr<const Graph> graph;
  TensorMap inputs;        // by input name (the target's catalogue entry lists them)
  TensorMap parameters;    // learnable parameters by name (layers only)
  TensorMap grad_outputs;  // by output name; empty means forward only
  std::uint64_t seed = 0;  // the seed the case was generated from (for messages and re-runs)
  // Whether this evaluation's memory figures are read (live_bytes(), peak_bytes, device memory):
  // only the resources check asks (core/memory_figures.h). A system may skip its memory readings
  // unless they are `read` — they are driver calls no other check uses — but a `counted`
  // evaluation's memory must still show in the next figures read.
  MemoryFigures memory_figures = MemoryFigures::unread;
};

// What happened when a system evaluated a case. Anything but `ok` carries a message.
enum class Status {
  ok,              // outputs (and gradients when asked) are present
  unsupported,     // the system does not implement this target or attribute combination
  error,           // the system reported an error (bad input, out of memory, …)
  crashed,         // the system's process died (signal or unexpected exit)
  timeout,         // no answer within the time limit
  invalid_output,  // answered, but with missing tensors, wrong shapes or wrong dtypes
};
std::string_view to_string(Status s);

struct Result {
  Status status = Status::ok;
  std::string message;
  TensorMap outputs;
  TensorMap gradients;  // by input or parameter name
  double seconds = 0.0;
  std::optional<std::int64_t> peak_bytes;  // device or host peak, when the system measures it
  bool ok() const { return status == Status::ok; }
};

// A floating-point format. A system declares, per target, the one its inputs and outputs are stored in
// (System::precision) and the one its sums and intermediate values are computed in
// (System::accumulation, the same by default); the tolerance model uses their unit roundoffs.
enum class Precision { float64, float32, tf32, bfloat16, float16 };
std::string_view to_string(Precision p);
Precision parse_precision(std::string_view name);  // throws InputError listing the accepted names
double unit_roundoff(Precision p);                 // u = 2^-p: 2^-53, 2^-24, 2^-11, 2^-8, 2^-11
// x rounded to the nearest value of `p` (round to nearest even; float32 through a cast; tf32,
// bfloat16 and float16 by rounding the float32 significand to 10, 7 and 10 stored bits; float16 also
// to its exponent range, ±∞ past 65504): the value a kernel storing in p holds. float64 returns x.
double round_to_precision(double x, Precision p);
Tensor rounded(const Tensor& t, Precision p);  // every element so rounded
// Whether `accumulation` may be declared for sums over values stored in `storage`: at least as fine
// (u no larger) and at least as wide a range. float16 in float32 or tf32, bfloat16 in float32: yes;
// float32 in float16, bfloat16 in float16 (finer, but 65504 is a narrower range): no.
bool accumulation_fits(Precision storage, Precision accumulation);
// A declaration as a verdict shows it: "float16" where the two agree, else "float16 (float32 accumulation)".
std::string precision_text(Precision storage, Precision accumulation);
// γ_n = n·u / (1 − n·u), capped at 1 when n·u ≥ 1/2 (the bound then only says "same magnitude"):
// the relative error of n roundings (Higham, Lemma 3.1).
double gamma(double n, double u);

}  // namespace gnncheck

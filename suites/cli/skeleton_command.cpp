#include "suites/cli/skeleton_command.h"

#include <cctype>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "oracle/target_listing.h"
#include "oracle/targets.h"

namespace gnncheck::suites {
namespace {

namespace fs = std::filesystem;

struct SkeletonTensor {
  std::string name;
  std::string role;   // input, parameter, output
  std::string lives;  // src_nodes, dst_nodes, edges, edges_csc, parameter
  std::string shape;  // "[n_src, features]"
  bool differentiable = true;
  std::string absent_when;  // "bias = false" for a tensor a case may lack; empty when always present
  std::string index_range;  // an index tensor's bound attribute ("relations"); empty for a value tensor
};

struct SkeletonAttribute {
  std::string name;
  std::string variable;  // the name, or name_attribute where a tensor has the same name
  int type = 0;          // the AttrValue alternative: 0 bool, 1 int, 2 double, 3 string
  std::string default_text;
  std::string help;
};

struct Skeleton {
  const oracle::TargetDef* def = nullptr;
  std::vector<SkeletonTensor> tensors;
  std::vector<SkeletonAttribute> attributes;

  std::vector<const SkeletonTensor*> with_role(std::initializer_list<const char*> roles) const {
    std::vector<const SkeletonTensor*> out;
    for (const auto& t : tensors)
      for (const char* r : roles)
        if (t.role == r) out.push_back(&t);
    return out;
  }
};

// The input tensors a case carries for these attributes, on a small graph every target accepts.
std::set<std::string> present_inputs(const oracle::TargetDef& def, const Attributes& attrs) {
  static const Graph probe = Graph::from_csr(3, 3, {0, 1, 2, 3}, {1, 2, 0});
  std::set<std::string> names;
  for (const auto& [name, shape] : def.input_shapes(probe, attrs)) names.insert(name);
  return names;
}

Skeleton make_skeleton(const oracle::TargetDef& def) {
  Skeleton s;
  s.def = &def;
  for (const auto& t : oracle::list_tensors(def)) s.tensors.push_back({t.name, t.role, t.lives, t.shape, t.differentiable, "", ""});
  for (const auto& slot : def.spec.inputs)
    for (auto& t : s.tensors)
      if (t.name == slot.name && t.role != "output") t.index_range = slot.index_range;
  // A tensor is optional when some value of one boolean or enumerated attribute, the others at their
  // defaults, leaves it out (bias = false; gspmm's e with message = copy_u, gsddmm's lhs_v with lhs = u or e).
  const Attributes defaults = oracle::with_defaults(def.spec, {});
  std::map<std::string, std::vector<std::string>> absent_with;  // tensor -> "attribute = values" where it is absent
  for (const auto& a : def.spec.attributes) {
    std::vector<AttrValue> values = a.choices;
    if (std::holds_alternative<bool>(a.default_value)) values = {AttrValue{false}, AttrValue{true}};
    if (values.empty()) continue;
    std::map<std::string, std::vector<std::string>> absent_values;
    for (const AttrValue& value : values) {
      Attributes varied = defaults;
      varied.set(a.name, value);
      std::set<std::string> present;
      try {
        present = present_inputs(def, varied);
      } catch (const InputError&) {
        continue;  // not a valid combination on the probe graph: it says nothing about optional tensors
      }
      for (const auto& t : s.tensors)
        if (t.role != "output" && !present.count(t.name)) absent_values[t.name].push_back(to_plain_string(value));
    }
    for (const auto& [tensor, absent] : absent_values) {
      if (absent.size() == values.size()) continue;  // absent whatever this attribute says: another one decides
      std::string listed = absent.back();
      if (absent.size() > 1)
        listed = fmt::format("{} or {}", fmt::join(absent.begin(), absent.end() - 1, ", "), absent.back());
      absent_with[tensor].push_back(fmt::format("{} = {}", a.name, listed));
    }
  }
  const std::set<std::string> at_defaults = present_inputs(def, defaults);
  for (auto& t : s.tensors) {
    if (t.role == "output") continue;
    if (absent_with.count(t.name)) t.absent_when = fmt::format("{}", fmt::join(absent_with.at(t.name), " or "));
    else if (!at_defaults.count(t.name)) t.absent_when = "the attributes do not read it";
  }
  std::set<std::string> tensor_names;
  for (const auto& t : s.tensors) tensor_names.insert(t.name);
  for (const auto& a : def.spec.attributes)
    s.attributes.push_back({a.name, tensor_names.count(a.name) ? a.name + "_attribute" : a.name,
                            static_cast<int>(a.default_value.index()), gnncheck::to_string(a.default_value), a.help});
  return s;
}

// `text` with every line prefixed (trailing blanks of empty lines dropped).
std::string prefixed(const std::string& text, const std::string& prefix) {
  std::string out, line;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n') {
      if (i == text.size() && line.empty()) break;
      std::string full = prefix + line;
      while (!full.empty() && full.back() == ' ') full.pop_back();
      out += full + "\n";
      line.clear();
    } else {
      line += text[i];
    }
  }
  return out;
}

std::string not_implemented_message(const std::string& target) {
  return fmt::format("{} is not implemented yet: this is the stub that `gnncheck skeleton` wrote", target);
}

// as_int64: the Python package hands an index tensor over as int64; the adapter kit and a plugin
// get its integers stored as numbers, as every tensor.
std::string tensor_comment(const SkeletonTensor& t, bool as_int64 = false) {
  std::string c = t.lives == "parameter" ? fmt::format("{}, a parameter", t.shape) : fmt::format("{} on {}", t.shape, t.lives);
  if (!t.index_range.empty())
    c += as_int64 ? fmt::format("; an index tensor: int64 in [0, {}), no gradient", t.index_range)
                  : fmt::format("; an index tensor: integers in [0, {}) stored as numbers (convert to int64), no gradient",
                                t.index_range);
  if (!t.absent_when.empty()) c += fmt::format("; absent when {}", t.absent_when);
  return c;
}

// A Python string literal (JSON's escapes are Python's).
std::string python_string(const std::string& text) { return nlohmann::json(text).dump(); }

const char* python_attribute_type(int type) {
  static const char* names[] = {"bool", "int", "float", "str"};
  return names[type];
}

// An example attribute declaration for the comments: the target's first enumerated attribute (a
// convention or a mode) at its default, else its first attribute; empty for a target without any.
std::pair<std::string, std::string> example_declaration(const oracle::TargetSpec& spec) {
  for (const auto& a : spec.attributes)
    if (!a.choices.empty()) return {a.name, std::get<std::string>(a.default_value)};
  if (spec.attributes.empty()) return {};
  const auto& a = spec.attributes.front();
  return {a.name, to_plain_string(a.default_value)};
}

// The line declaring what the kernel implements of the attributes, for the Python skeletons.
std::string python_implements_line(const oracle::TargetSpec& spec) {
  const auto [name, value] = example_declaration(spec);
  const std::string example =
      name.empty() ? std::string("{}") : fmt::format("{{\"{}\": [{}]}}", name, python_string(value));
  return fmt::format("IMPLEMENTS = {{}}  # attribute -> the values the kernel implements, where fewer than all (a convention, a mode,\n"
                     "                # a shape), e.g. {}; every case is drawn within it. Empty: every value.\n",
                     example);
}

// ---- python: an adapter process with the adapter kit (numpy) ----

std::string python_skeleton(const Skeleton& s, const std::string& precision, const fs::path& kit_dir) {
  const auto& spec = s.def->spec;
  const std::string& t = spec.name;
  std::string out = fmt::format(R"(#!/usr/bin/env python3
"""A gnncheck adapter for the target '{0}', written by `gnncheck skeleton --target {0} --lang python`.

It runs as it is and answers `unsupported` for every case (a run of it is `not tested`, never a
pass) until the math is written: compute the outputs and gradients in {0}() below and delete its
`raise kit.Unsupported(...)` line. Return numpy arrays in case.dtype with the shapes below.

    gnncheck check --adapter "python3 THIS_FILE" --target {0}
    gnncheck run ci --adapter "python3 THIS_FILE" --target {0}

The protocol is adapters/PROTOCOL.md; the shapes below are at the attributes' defaults, and
case.outputs / case.gradients give each case's own. The target, from gnncheck's catalogue
(`gnncheck list {0}`):

{1}"""

import sys

sys.path.insert(0, {2})  # the adapter kit, gnncheck_adapter.py
import gnncheck_adapter as kit  # noqa: E402

PRECISION = "{3}"  # what the kernel computes in: float64, float32, tf32, bfloat16 or float16
{4}

def {0}(case):
    graph = case.graph  # A, n_dst × n_src, in CSR: graph.row_ptr [n_dst + 1], graph.col_idx [E] (int64), graph.row_of_edge [E]
    n_dst, n_src, num_edges = graph.n_dst, graph.n_src, graph.num_edges
)",
                                t, prefixed(oracle::describe_target(*s.def), "    "), python_string(kit_dir.string()), precision,
                                python_implements_line(spec));
  for (const auto& a : s.attributes)
    out += fmt::format("    {} = case.attributes[\"{}\"]  # {}, default {}: {}\n", a.variable, a.name, python_attribute_type(a.type),
                       a.default_text, a.help);
  for (const auto* x : s.with_role({"input", "parameter"})) {
    const char* dict = x->role == "parameter" ? "parameters" : "inputs";
    if (x->absent_when.empty())
      out += fmt::format("    {} = case.{}[\"{}\"]  # {}\n", x->name, dict, x->name, tensor_comment(*x));
    else
      out += fmt::format("    {} = case.{}.get(\"{}\")  # {}\n", x->name, dict, x->name, tensor_comment(*x));
  }
  out += fmt::format("\n    raise kit.Unsupported(\"{}\")\n\n", not_implemented_message(t));
  std::vector<std::string> outputs;
  for (const auto* y : s.with_role({"output"})) {
    out += fmt::format("    {} = ...  # {}\n", y->name, tensor_comment(*y));
    outputs.push_back(fmt::format("\"{0}\": {0}", y->name));
  }
  out += fmt::format("    answer = {{\"outputs\": {{{}}}}}\n", fmt::join(outputs, ", "));
  out += "    if case.wants_gradients:\n";
  for (const auto* y : s.with_role({"output"}))
    if (y->differentiable) out += fmt::format("        grad_{0} = case.grad_outputs[\"{0}\"]  # {1}\n", y->name, y->shape);
  out += "        answer[\"gradients\"] = {}  # of Σ outputs · grad_outputs, one per differentiable input, its shape\n";
  for (const auto* x : s.with_role({"input", "parameter"})) {
    if (!x->differentiable) continue;
    const std::string indent = x->absent_when.empty() ? "        " : "            ";
    if (!x->absent_when.empty()) out += fmt::format("        if {} is not None:\n", x->name);
    out += fmt::format("{}answer[\"gradients\"][\"{}\"] = ...  # {}\n", indent, x->name, x->shape);
  }
  out += fmt::format(R"(    return answer


if __name__ == "__main__":
    kit.serve(name="{0}_skeleton", targets={{"{0}": (PRECISION, {0}, IMPLEMENTS)}})
)",
                     t);
  return out;
}

// ---- torch: an in-process check with the Python package (import gnncheck) ----

std::string torch_skeleton(const Skeleton& s, const std::string& precision) {
  const std::string& t = s.def->spec.name;
  std::string out = fmt::format(R"("""A gnncheck check of a torch implementation of '{0}', written by `gnncheck skeleton --target {0} --lang torch`.

It runs as it is — `python3 THIS_FILE`, or `python3 -m pytest THIS_FILE` — and answers
gnncheck.Unsupported for every case (so the run is `not tested`, which fails) until the math is
written: compute the outputs in {0}_forward() below with your kernel and delete its
`raise gnncheck.Unsupported(...)` line. The gradients are your kernel's own backward, reached through
torch.autograd from the returned outputs (python/API.md says how, and how to pass backward=).

The target, from gnncheck's catalogue (`gnncheck list {0}`, gnncheck.describe("{0}")):

{1}"""

import sys

import torch

import gnncheck

PRECISION = "{2}"  # what the kernel computes in: float64, float32, tf32, bfloat16 or float16
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
{3}

def {0}_forward(case):
    graph = case.graph  # int64 on case.device: graph.row_ptr [n_dst + 1], graph.col_idx [E], graph.row_of_edge [E], graph.edge_index [2, E]
    n_dst, n_src, num_edges = case.n_dst, case.n_src, case.num_edges
)",
                                t, prefixed(oracle::describe_target(*s.def), "    "), precision, python_implements_line(s.def->spec));
  for (const auto& a : s.attributes)
    out += fmt::format("    {} = case.attributes[\"{}\"]  # {}, default {}: {}\n", a.variable, a.name, python_attribute_type(a.type),
                       a.default_text, a.help);
  for (const auto* x : s.with_role({"input", "parameter"})) {
    const char* dict = x->role == "parameter" ? "parameters" : "inputs";
    const std::string grad = x->differentiable ? "; requires_grad when gradients are asked" : "";
    if (x->absent_when.empty())
      out += fmt::format("    {} = case.{}[\"{}\"]  # {}{}\n", x->name, dict, x->name, tensor_comment(*x, true), grad);
    else
      out += fmt::format("    {} = case.{}.get(\"{}\")  # {}{}\n", x->name, dict, x->name, tensor_comment(*x, true), grad);
  }
  out += fmt::format("\n    raise gnncheck.Unsupported(\"{}\")\n\n", not_implemented_message(t));
  std::vector<std::string> outputs;
  for (const auto* y : s.with_role({"output"})) {
    out += fmt::format("    {} = ...  # {}, computed from the tensors above so that autograd reaches them\n", y->name,
                       tensor_comment(*y));
    outputs.push_back(fmt::format("\"{0}\": {0}", y->name));
  }
  out += fmt::format(R"(    return {{{1}}}


def test_{0}():
    gnncheck.assert_correct("{0}", {0}_forward, precision=PRECISION, implements=IMPLEMENTS, suite="ci", device=DEVICE)


if __name__ == "__main__":
    run = gnncheck.check("{0}", {0}_forward, precision=PRECISION, implements=IMPLEMENTS, suite="ci", device=DEVICE)
    for verdict in run:
        print(verdict.one_line())
    print("gnncheck: %s; report: %s" % ("passed" if run.passed else "NOT passed", run.report_dir))
    sys.exit(0 if run.passed else 1)
)",
                     t, fmt::join(outputs, ", "));
  return out;
}

// ---- c: a plugin (gnncheck/plugin.h) ----

std::string c_precision(const std::string& precision) {
  std::string upper;
  for (char ch : precision) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return "GNNCHECK_PRECISION_" + upper;
}

// The optional attribute declaration (gnncheck_plugin_attributes_v1), commented out: with it absent the
// plugin implements every value of every attribute.
std::string c_implements_comment(const oracle::TargetSpec& spec) {
  const auto [name, value] = example_declaration(spec);
  if (name.empty()) return {};
  return fmt::format(R"(
/* Where the kernel implements fewer values of an attribute than gnncheck draws (a convention, a mode,
 * a shape), declare them and every case is drawn within them (gnncheck/plugin.h); without this
 * symbol, every value of every attribute:
 *
 * static const gnncheck_attribute_decl implemented[] = {{{{"{0}", "{1}", "{2}"}}}};
 * static const gnncheck_plugin_attributes attributes = {{1, implemented}};
 * GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin_attributes* gnncheck_plugin_attributes_v1(void) {{ return &attributes; }}
 */
)",
                     spec.name, name, value);
}

// The optional accumulation declaration (gnncheck_plugin_accumulation_v1), commented out: with it
// absent the kernel sums in the precision of its target table.
std::string c_accumulation_comment(const std::string& target) {
  return fmt::format(R"(
/* Where the kernel stores in float16 or bfloat16 (the table's precision) but sums in float32, declare
 * its sums; the bounds are then those of float32 sums (adapters/PROTOCOL.md §2):
 *
 * static const gnncheck_accumulation_decl sums[] = {{{{"{0}", GNNCHECK_PRECISION_FLOAT32}}}};
 * static const gnncheck_plugin_accumulation accumulation = {{1, sums}};
 * GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin_accumulation* gnncheck_plugin_accumulation_v1(void) {{ return &accumulation; }}
 */
)",
                     target);
}

std::string c_skeleton(const Skeleton& s, const std::string& precision) {
  const std::string& t = s.def->spec.name;
  std::string describe = oracle::describe_target(*s.def);
  for (std::size_t p = describe.find("*/"); p != std::string::npos; p = describe.find("*/", p)) describe.replace(p, 2, "* /");
  const char* value_type = precision == "float64" ? "double" : "float";
  std::string out = fmt::format(R"(/* A gnncheck plugin for the target '{0}', written by `gnncheck skeleton --target {0} --lang c`.
 *
 * It builds and runs as it is and answers GNNCHECK_UNSUPPORTED for every case (a run of it is
 * `not tested`, never a pass) until the math is written: fill the outputs (and, when asked, the
 * gradients) in evaluate() below and return GNNCHECK_OK instead. Values are {1} ({2}): the
 * precision declared in `targets` below decides the dtype of every tensor (float64: double).
 *
 *   cc -std=c99 -shared -fPIC -O2 -I<gnncheck prefix>/include THIS_FILE -o lib{0}_plugin.so
 *   gnncheck check --plugin ./lib{0}_plugin.so --target {0}
 *
 * or in CMake: find_package(gnncheck COMPONENTS plugin), add_library(... MODULE THIS_FILE),
 * target_link_libraries(... PRIVATE gnncheck::plugin_abi), gnncheck_add_plugin_test(TARGET ...).
 * The ABI is gnncheck/plugin.h. The target, from gnncheck's catalogue (`gnncheck list {0}`):
 *
{3} */
#include <stdio.h>
#include <string.h>

#include "gnncheck/plugin.h"

/* The tensor called `name` among `count`, or NULL. */
static const gnncheck_tensor* input_named(const gnncheck_tensor* tensors, int64_t count, const char* name) {{
  for (int64_t k = 0; k < count; ++k)
    if (strcmp(tensors[k].name, name) == 0) return &tensors[k];
  return NULL;
}}

static gnncheck_tensor* output_named(gnncheck_tensor* tensors, int64_t count, const char* name) {{
  for (int64_t k = 0; k < count; ++k)
    if (strcmp(tensors[k].name, name) == 0) return &tensors[k];
  return NULL;
}}

static const gnncheck_attribute* attribute_named(const gnncheck_case* c, const char* name) {{
  for (int64_t k = 0; k < c->num_attributes; ++k)
    if (strcmp(c->attributes[k].name, name) == 0) return &c->attributes[k];
  return NULL;
}}

static int evaluate(const gnncheck_case* c, char* error, int64_t error_capacity, int64_t* peak_bytes) {{
  /* A, n_dst × n_src, in CSR: row_ptr [n_dst + 1], col_idx [E] (int64); an edge's id is its position in col_idx. */
  const gnncheck_graph* graph = c->graph;
  const int64_t n_dst = graph->n_dst, n_src = graph->n_src, num_edges = graph->num_edges;
  const int64_t* row_ptr = graph->row_ptr;
  const int64_t* col_idx = graph->col_idx;

)",
                                t, value_type, precision, prefixed(describe, " *   "));
  std::vector<std::string> used = {"peak_bytes", "n_dst", "n_src", "num_edges", "row_ptr", "col_idx"};
  if (!s.attributes.empty()) {
    std::vector<std::string> names;
    for (const auto& a : s.attributes) names.push_back(fmt::format("\"{}\"", a.name));
    out += fmt::format(R"(  /* Every attribute of the target comes with the case, defaults filled in. */
  static const char* const attribute_names[] = {{{}}};
  for (size_t k = 0; k < sizeof attribute_names / sizeof attribute_names[0]; ++k)
    if (!attribute_named(c, attribute_names[k])) {{
      snprintf(error, (size_t)error_capacity, "{}: the case has no attribute '%s'", attribute_names[k]);
      return GNNCHECK_ERROR;
    }}
)",
                       fmt::join(names, ", "), t);
  }
  static const char* c_types[] = {"int", "int64_t", "double", "char*"};
  static const char* c_fields[] = {"(int)attribute_named(c, \"{}\")->int_value", "attribute_named(c, \"{}\")->int_value",
                                   "attribute_named(c, \"{}\")->double_value", "attribute_named(c, \"{}\")->string_value"};
  for (const auto& a : s.attributes) {
    out += fmt::format("  const {} {} = {};  /* default {}: {} */\n", c_types[a.type], a.variable,
                       fmt::format(fmt::runtime(c_fields[a.type]), a.name), a.default_text, a.help);
    used.push_back(a.variable);
  }
  out += "\n  /* Inputs and parameters (read-only), in catalogue order. */\n";
  std::vector<std::string> required;
  for (const auto* x : s.with_role({"input", "parameter"})) {
    out += fmt::format("  const gnncheck_tensor* {0} = input_named(c->inputs, c->num_inputs, \"{0}\");  /* {1} */\n", x->name,
                       tensor_comment(*x));
    if (x->absent_when.empty()) required.push_back(x->name);
    used.push_back(x->name);
  }
  out += "\n  /* Outputs to fill: allocated by gnncheck with exactly these shapes, zero-filled. */\n";
  for (const auto* y : s.with_role({"output"})) {
    out += fmt::format("  gnncheck_tensor* {0} = output_named(c->outputs, c->num_outputs, \"{0}\");  /* {1} */\n", y->name,
                       tensor_comment(*y));
    required.push_back(y->name);
    used.push_back(y->name);
  }
  out += "\n  /* Backward (NULL when only the forward is asked): the gradient of each output, and one gradient\n"
         "     to fill per differentiable input, of Σ outputs · grad_outputs, shaped as that input. */\n";
  for (const auto* y : s.with_role({"output"})) {
    if (!y->differentiable) continue;
    out += fmt::format("  const gnncheck_tensor* grad_{0} = input_named(c->grad_outputs, c->num_grad_outputs, \"{0}\");  /* {1} */\n",
                       y->name, y->shape);
    used.push_back("grad_" + y->name);
  }
  for (const auto* x : s.with_role({"input", "parameter"})) {
    if (!x->differentiable) continue;
    out += fmt::format("  gnncheck_tensor* grad_{0} = output_named(c->gradients, c->num_gradients, \"{0}\");  /* {1}{2} */\n", x->name,
                       x->shape, x->absent_when.empty() ? "" : "; absent when " + x->absent_when);
    used.push_back("grad_" + x->name);
  }
  std::vector<std::string> missing;
  for (const auto& name : required) missing.push_back("!" + name);
  out += fmt::format(R"(  if ({}) {{
    snprintf(error, (size_t)error_capacity, "{}: the case lacks a tensor of the target");
    return GNNCHECK_ERROR;
  }}

)",
                     fmt::join(missing, " || "), t);
  std::vector<std::string> voids;
  for (const auto& name : used) voids.push_back(fmt::format("(void){};", name));
  out += fmt::format(R"(  /* Write the math here: fill each output's data ({0}*), and each gradient's when it is not NULL;
     set *peak_bytes to the evaluation's peak memory if you measure it; then return GNNCHECK_OK. */
  {1}
  snprintf(error, (size_t)error_capacity, "%s", "{2}");
  return GNNCHECK_UNSUPPORTED;
}}

static const gnncheck_target_decl targets[] = {{{{"{3}", {4}}}}};
static const gnncheck_plugin plugin = {{GNNCHECK_PLUGIN_ABI_VERSION, "{3}_skeleton", 1, targets, evaluate}};

GNNCHECK_PLUGIN_EXPORT const gnncheck_plugin* gnncheck_plugin_v1(void) {{ return &plugin; }}
{5}{6})",
                     value_type, fmt::join(voids, " "), not_implemented_message(t), t, c_precision(precision),
                     c_implements_comment(s.def->spec), c_accumulation_comment(t));
  return out;
}

// The folder holding the adapter kit (gnncheck_adapter.py): installed next to the command, else the source tree's.
fs::path adapter_kit_dir(const fs::path& executable_dir) {
  std::vector<fs::path> candidates = {executable_dir / ".." / "share" / "gnncheck" / "python", fs::path(GNNCHECK_SOURCE_ADAPTER_KIT_DIR)};
  std::vector<std::string> tried;
  std::error_code ec;
  for (const auto& dir : candidates) {
    if (fs::is_regular_file(dir / "gnncheck_adapter.py", ec)) return fs::weakly_canonical(dir);
    tried.push_back(fs::weakly_canonical(dir / "gnncheck_adapter.py").string());
  }
  throw InputError(fmt::format("gnncheck skeleton --lang python: the adapter kit gnncheck_adapter.py was not found; looked for: {}",
                               fmt::join(tried, ", ")));
}

}  // namespace

std::string skeleton_text(const std::string& target, const std::string& lang, const std::string& precision,
                          const fs::path& kit_dir) {
  const Skeleton s = make_skeleton(oracle::find_target(target));
  if (lang == "python") return python_skeleton(s, precision, kit_dir);
  if (lang == "torch") return torch_skeleton(s, precision);
  if (lang == "c") return c_skeleton(s, precision);
  throw InputError(fmt::format("gnncheck skeleton --lang {}: expected python, torch or c", lang));
}

CLI::App* add_skeleton_command(CLI::App& app, SkeletonCommandArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "skeleton", "Write a stub adapter (python, torch) or C plugin for one target, every tensor, attribute and shape filled in; "
                  "it answers unsupported until the math is written");
  cmd->add_option("--target", args.target, "The op or layer (see `gnncheck list targets`)")->required();
  cmd->add_option("--lang", args.lang,
                  "python: an adapter process with the adapter kit (numpy); torch: a check in process with the Python package "
                  "(import gnncheck); c: a plugin (gnncheck/plugin.h)")
      ->required()
      ->check(CLI::IsMember({"python", "torch", "c"}));
  cmd->add_option("--precision", args.precision, "The precision the stub declares (what the kernel will compute in)")
      ->check(CLI::IsMember({"float64", "float32", "tf32", "bfloat16", "float16"}))
      ->capture_default_str();
  cmd->add_option("--output", args.output, "Write to this file (it must not exist yet); default: standard output");
  return cmd;
}

int run_skeleton_command(const SkeletonCommandArgs& args, const fs::path& executable_dir) {
  const fs::path kit = args.lang == "python" ? adapter_kit_dir(executable_dir) : fs::path();
  const std::string text = skeleton_text(args.target, args.lang, args.precision, kit);
  if (args.output.empty()) {
    std::cout << text;
    return 0;
  }
  std::error_code ec;
  if (fs::exists(args.output, ec))
    throw InputError(fmt::format("gnncheck skeleton --output {}: the file exists; it is not overwritten (remove it first)", args.output));
  std::ofstream out(args.output);
  out << text;
  out.close();
  if (!out) throw InputError(fmt::format("gnncheck skeleton --output {}: cannot write the file", args.output));
  if (args.lang == "python") fs::permissions(args.output, fs::perms::owner_exec | fs::perms::group_exec, fs::perm_options::add, ec);
  return 0;
}

}  // namespace gnncheck::suites

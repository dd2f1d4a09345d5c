// The Python writers of `gnncheck skeleton`: an adapter process with the adapter kit (numpy), and
// an in-process check with the Python package (import gnncheck).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "oracle/target_listing.h"
#include "suites/cli/skeleton.h"

namespace gnncheck::suites {
namespace {

namespace fs = std::filesystem;

// A Python string literal (JSON's escapes are Python's).
std::string python_string(const std::string& text) { return nlohmann::json(text).dump(); }

const char* python_attribute_type(int type) {
  static const char* names[] = {"bool", "int", "float", "str"};
  return names[type];
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

}  // namespace

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

}  // namespace gnncheck::suites

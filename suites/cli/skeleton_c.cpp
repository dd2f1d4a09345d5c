// The C writer of `gnncheck skeleton`: a plugin (gnncheck/plugin.h).
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "oracle/target_listing.h"
#include "suites/cli/skeleton.h"

namespace gnncheck::suites {
namespace {

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

}  // namespace

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

}  // namespace gnncheck::suites

// gnncheck-plugin-host: loads one plugin (gnncheck/plugin.h) and serves it as an adapter process.
//
//   gnncheck-plugin-host path/to/libmy_kernels.so
//
// It speaks adapters/PROTOCOL.md on stdin/stdout, so the plugin runs in this process, never in
// gnncheck's: a kernel that crashes or hangs costs one case (crashed / timeout) and the host is
// restarted for the next. Whatever the plugin prints on stdout is sent to stderr, so it cannot
// corrupt a protocol line. Exit codes: 0 at end of input, 2 when the plugin cannot be loaded.
#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "gnncheck/plugin.h"
#include "adapters/protocol.h"
#include "adapters/system_server.h"
#include "core/case.h"
#include "oracle/targets.h"

namespace gnncheck {
namespace {

// The protocol's name of a precision a plugin declared, read as the integer it wrote: a value
// outside the enum (a plugin's bug) must be reported, and loading it as a gnncheck_precision would be
// undefined in C++. Throws InputError "<where>: <field> N is not a gnncheck_precision (…)" for one.
std::string declared_precision(const gnncheck_precision& declared, const std::string& where, std::string_view field) {
  std::underlying_type_t<gnncheck_precision> raw{};
  std::memcpy(&raw, &declared, sizeof raw);
  switch (raw) {
    case GNNCHECK_PRECISION_FLOAT64: return "float64";
    case GNNCHECK_PRECISION_FLOAT32: return "float32";
    case GNNCHECK_PRECISION_TF32: return "tf32";
    case GNNCHECK_PRECISION_BFLOAT16: return "bfloat16";
    case GNNCHECK_PRECISION_FLOAT16: return "float16";
    default:
      throw InputError(fmt::format("{}: {} {} is not a gnncheck_precision (GNNCHECK_PRECISION_FLOAT64 = 1, FLOAT32 = 2, "
                                   "TF32 = 3, BFLOAT16 = 4, FLOAT16 = 5)",
                                   where, field, static_cast<long long>(raw)));
  }
}

// The plugin's target table as the hello line's "targets" object, or throws InputError naming the
// entry that is wrong: a null or unknown target name (listing the known ones), a duplicate, or a
// precision that is not a gnncheck_precision. A misspelled target must not become "unsupported".
nlohmann::json target_table(const gnncheck_plugin& plugin) {
  if (plugin.num_targets == 0) throw InputError("its target table is empty: the plugin computes nothing gnncheck could check");
  nlohmann::json targets = nlohmann::json::object();
  for (int64_t k = 0; k < plugin.num_targets; ++k) {
    const gnncheck_target_decl& decl = plugin.targets[k];
    if (!decl.target) throw InputError(fmt::format("target table entry {}: the target name is a null pointer", k));
    try {
      oracle::find_target(decl.target);
    } catch (const InputError& e) {
      throw InputError(fmt::format("target table entry {}: {}", k, e.what()));
    }
    if (targets.contains(decl.target))
      throw InputError(fmt::format("target table entry {}: target '{}' is declared twice", k, decl.target));
    targets[decl.target] =
        declared_precision(decl.precision, fmt::format("target table entry {} ('{}')", k, decl.target), "precision");
  }
  return targets;
}

// One comma-separated value of a plugin's attribute declaration, typed like the attribute's default.
nlohmann::json declared_value(const oracle::AttributeSpec& attribute, std::string text) {
  const auto first = text.find_first_not_of(" \t"), last = text.find_last_not_of(" \t");
  text = first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
  auto refuse = [&](std::string_view expected) {
    return InputError(fmt::format("attribute '{}': expected {}, got '{}'", attribute.name, expected, text));
  };
  switch (attribute.default_value.index()) {
    case 0:
      if (text == "true" || text == "false") return text == "true";
      throw refuse("true or false");
    case 1: {
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || text.empty()) throw refuse("an integer");
      return v;
    }
    case 2: {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || end != text.c_str() + text.size()) throw refuse("a number");
      return v;
    }
    default: return text;
  }
}

// An optional declaration table the plugin exports through `symbol`: nullptr where it exports none;
// throws InputError where the function returns no valid table.
template <class Table>
const Table* optional_table(void* library, const char* symbol) {
  auto function = reinterpret_cast<const Table* (*)(void)>(dlsym(library, symbol));
  if (!function) return nullptr;
  const Table* table = function();
  if (!table || table->num_declarations < 0 || (table->num_declarations > 0 && !table->declarations))
    throw InputError(fmt::format("{}() returned no declaration table", symbol));
  return table;
}

// The plugin's optional attribute declarations (gnncheck_plugin_attributes_v1) as the hello line's
// detailed target entries, validated like an adapter's: a declaration for a target outside the
// table, an unknown attribute or a value it does not take refuses the plugin, naming the entry.
void add_attribute_declarations(void* library, nlohmann::json& targets) {
  const auto* table = optional_table<gnncheck_plugin_attributes>(library, GNNCHECK_PLUGIN_ATTRIBUTES_SYMBOL);
  if (!table) return;
  std::map<std::string, nlohmann::json> attributes;  // by target
  for (int64_t k = 0; k < table->num_declarations; ++k) {
    const gnncheck_attribute_decl& d = table->declarations[k];
    const std::string where = fmt::format("attribute declaration {}", k);
    if (!d.target || !d.attribute || !d.values) throw InputError(where + ": a null pointer");
    if (!targets.contains(d.target))
      throw InputError(fmt::format("{}: target '{}' is not in the plugin's target table", where, d.target));
    const oracle::TargetSpec& spec = oracle::find_target(d.target).spec;
    const oracle::AttributeSpec* attribute = spec.find_attribute(d.attribute);
    if (!attribute)
      throw InputError(fmt::format("{}: target '{}' has no attribute '{}'", where, d.target, d.attribute));
    nlohmann::json values = nlohmann::json::array();
    std::string text = d.values;
    try {
      for (std::size_t start = 0;;) {
        const std::size_t comma = text.find(',', start);
        values.push_back(declared_value(*attribute, text.substr(start, comma - start)));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      protocol::parse_implemented_attributes(d.target, nlohmann::json{{d.attribute, values}}.dump());
    } catch (const InputError& e) {
      throw InputError(fmt::format("{} (target '{}'): {}", where, d.target, e.what()));
    }
    attributes[d.target][d.attribute] = values;
  }
  for (auto& [target, declared] : attributes)
    targets[target] = {{"precision", targets[target]}, {"attributes", declared}};
}

// The plugin's optional accumulation declarations (gnncheck_plugin_accumulation_v1) as the hello
// line's "accumulation" fields, or throws InputError naming the declaration that is wrong: a target
// outside the table, a second declaration of one target, a value that is not a gnncheck_precision,
// or a format coarser than the target's storage (the protocol refuses that too, but could name only
// the hello line).
void add_accumulation_declarations(void* library, nlohmann::json& targets) {
  const auto* table = optional_table<gnncheck_plugin_accumulation>(library, GNNCHECK_PLUGIN_ACCUMULATION_SYMBOL);
  if (!table) return;
  for (int64_t k = 0; k < table->num_declarations; ++k) {
    const gnncheck_accumulation_decl& d = table->declarations[k];
    const std::string where = fmt::format("accumulation declaration {}", k);
    if (!d.target) throw InputError(where + ": the target name is a null pointer");
    if (!targets.contains(d.target))
      throw InputError(fmt::format("{}: target '{}' is not in the plugin's target table", where, d.target));
    nlohmann::json& entry = targets[d.target];
    if (entry.is_string()) entry = {{"precision", entry}};
    if (entry.contains("accumulation"))
      throw InputError(fmt::format("{}: target '{}' is declared twice", where, d.target));
    const std::string accumulation =
        declared_precision(d.accumulation, fmt::format("{} ('{}')", where, d.target), "accumulation");
    const std::string storage = entry["precision"].get<std::string>();
    if (!accumulation_fits(parse_precision(storage), parse_precision(accumulation)))
      throw InputError(fmt::format("{} ('{}'): {} sums are coarser than its precision {} (fewer significand bits or "
                                   "a narrower range); declare the accumulation at least as fine as the storage",
                                   where, d.target, accumulation, storage));
    entry["accumulation"] = accumulation;
  }
}

// Tensors in the C layout, owning their storage for the duration of one evaluate() call.
struct CTensors {
  std::vector<std::vector<double>> f64;
  std::vector<std::vector<float>> f32;
  std::vector<std::vector<int64_t>> shapes;           // what the plugin is shown (and could overwrite)
  std::vector<std::vector<int64_t>> expected_shapes;  // the host's own copy
  std::vector<gnncheck_tensor> views;
  std::vector<gnncheck_tensor> issued;  // the views as handed to the plugin

  void add(const std::string& name, const std::vector<index_t>& shape, NpyDType dtype, const Tensor* values) {
    shapes.emplace_back(shape.begin(), shape.end());
    expected_shapes.emplace_back(shape.begin(), shape.end());
    const auto count = static_cast<size_t>(shape_size(shape));
    void* data;
    if (dtype == NpyDType::float64) {
      f64.emplace_back(values ? values->values() : std::vector<double>(count, 0.0));
      data = f64.back().data();
    } else {
      f32.emplace_back(count, 0.0f);
      if (values)
        for (size_t i = 0; i < count; ++i) f32.back()[i] = static_cast<float>(values->values()[i]);
      data = f32.back().data();
    }
    views.push_back({nullptr, static_cast<int64_t>(shape.size()), nullptr,
                     dtype == NpyDType::float64 ? GNNCHECK_FLOAT64 : GNNCHECK_FLOAT32, data});
    names.push_back(name);
  }
  // Pointers into the vectors are taken once everything is added (the vectors no longer move).
  void finish() {
    for (size_t k = 0; k < views.size(); ++k) {
      views[k].name = names[k].c_str();
      views[k].shape = shapes[k].data();
    }
    issued = views;
  }
  // A plugin that writes through its const shape pointers, or replaces a view's fields, would make
  // the host read the wrong number of values from the wrong place: say which tensor it changed.
  std::string tampering(std::string_view kind) const {
    for (size_t k = 0; k < views.size(); ++k) {
      const gnncheck_tensor& now = views[k];
      const gnncheck_tensor& was = issued[k];
      if (now.name != was.name || now.rank != was.rank || now.shape != was.shape || now.dtype != was.dtype ||
          now.data != was.data)
        return fmt::format("the plugin replaced the description of {} '{}' (name, rank, shape, dtype or data "
                           "pointer); they are gnncheck's and read-only",
                           kind, names[k]);
      if (shapes[k] != expected_shapes[k])
        return fmt::format("the plugin overwrote the shape of {} '{}': it is now [{}], it was [{}]; shapes are "
                           "gnncheck's and read-only",
                           kind, names[k], fmt::join(shapes[k], ", "), fmt::join(expected_shapes[k], ", "));
    }
    return {};
  }
  // The values of tensor k, read with the host's own shape, dtype and pointer.
  Tensor to_tensor(size_t k) const {
    const gnncheck_tensor& v = issued[k];
    std::vector<index_t> shape(expected_shapes[k].begin(), expected_shapes[k].end());
    const auto count = static_cast<size_t>(shape_size(shape));
    std::vector<double> values(count);
    for (size_t i = 0; i < count; ++i)
      values[i] = v.dtype == GNNCHECK_FLOAT64 ? static_cast<const double*>(v.data)[i] : static_cast<const float*>(v.data)[i];
    return Tensor(std::move(shape), std::move(values));
  }

  std::vector<std::string> names;
};

// Reserve first so that the per-tensor vectors never reallocate while views point into them.
void reserve(CTensors& t, size_t n) {
  t.f64.reserve(n);
  t.f32.reserve(n);
  t.shapes.reserve(n);
  t.expected_shapes.reserve(n);
  t.views.reserve(n);
  t.names.reserve(n);
}

Result evaluate_with_plugin(const gnncheck_plugin& plugin, const protocol::LoadedCase& loaded) {
  const protocol::CaseManifest& m = loaded.manifest;
  const Case& c = loaded.c;
  const Graph& g = *c.graph;
  const std::vector<int64_t> row_ptr(g.row_ptr().begin(), g.row_ptr().end());
  const std::vector<int64_t> col_idx(g.col_idx().begin(), g.col_idx().end());
  const gnncheck_graph graph{g.n_dst(), g.n_src(), g.num_edges(), row_ptr.data(), col_idx.data()};

  std::vector<std::string> attr_names, attr_strings;
  attr_names.reserve(m.attributes.values().size());
  attr_strings.reserve(m.attributes.values().size());
  std::vector<gnncheck_attribute> attributes;
  for (const auto& [name, value] : m.attributes.values()) {
    attr_names.push_back(name);
    gnncheck_attribute a{attr_names.back().c_str(), GNNCHECK_ATTR_INT, 0, 0.0, nullptr};
    if (auto* b = std::get_if<bool>(&value)) { a.type = GNNCHECK_ATTR_BOOL; a.int_value = *b ? 1 : 0; }
    else if (auto* i = std::get_if<std::int64_t>(&value)) { a.type = GNNCHECK_ATTR_INT; a.int_value = *i; }
    else if (auto* d = std::get_if<double>(&value)) { a.type = GNNCHECK_ATTR_DOUBLE; a.double_value = *d; }
    else {
      attr_strings.push_back(std::get<std::string>(value));
      a.type = GNNCHECK_ATTR_STRING;
      a.string_value = attr_strings.back().c_str();
    }
    attributes.push_back(a);
  }

  CTensors inputs, grad_outputs, outputs, gradients;
  reserve(inputs, m.inputs.size() + m.parameters.size());
  reserve(grad_outputs, m.grad_outputs.size());
  reserve(outputs, m.outputs.size());
  reserve(gradients, m.gradients.size());
  for (const auto* list : {&m.inputs, &m.parameters})
    for (const auto& e : *list)
      inputs.add(e.name, e.shape, e.dtype, c.inputs.count(e.name) ? &c.inputs.at(e.name) : &c.parameters.at(e.name));
  for (const auto& e : m.grad_outputs) grad_outputs.add(e.name, e.shape, e.dtype, &c.grad_outputs.at(e.name));
  for (const auto& e : m.outputs) outputs.add(e.name, e.shape, e.dtype, nullptr);
  for (const auto& e : m.gradients) gradients.add(e.name, e.shape, e.dtype, nullptr);
  for (CTensors* t : {&inputs, &grad_outputs, &outputs, &gradients}) t->finish();

  const gnncheck_case request{m.target.c_str(),
                              m.seed,
                              &graph,
                              static_cast<int64_t>(attributes.size()),
                              attributes.data(),
                              static_cast<int64_t>(inputs.views.size()),
                              inputs.views.data(),
                              static_cast<int64_t>(grad_outputs.views.size()),
                              grad_outputs.views.data(),
                              static_cast<int64_t>(outputs.views.size()),
                              outputs.views.data(),
                              static_cast<int64_t>(gradients.views.size()),
                              gradients.views.data()};
  std::vector<char> error(4096, '\0');
  int64_t peak_bytes = -1;
  const auto start = std::chrono::steady_clock::now();
  const int status = plugin.evaluate(&request, error.data(), static_cast<int64_t>(error.size()), &peak_bytes);
  Result r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (peak_bytes >= 0) r.peak_bytes = peak_bytes;
  error.back() = '\0';  // whatever the plugin wrote, the message ends inside the buffer
  if (status == GNNCHECK_UNSUPPORTED || status == GNNCHECK_ERROR) {
    r.status = status == GNNCHECK_ERROR ? Status::error : Status::unsupported;
    r.message = error[0] ? error.data() : "the plugin gave no reason";
    return r;
  }
  if (status != GNNCHECK_OK) {
    r.status = Status::error;
    r.message = fmt::format("the plugin's evaluate returned {}, which is not a gnncheck_status", status);
    return r;
  }
  for (const auto& [tensors, kind] : {std::pair{&outputs, "output"}, std::pair{&gradients, "gradient"}}) {
    if (std::string problem = tensors->tampering(kind); !problem.empty()) {
      r.status = Status::error;  // the protocol's only failure status an adapter can write
      r.message = "garbage shape: " + problem;
      return r;
    }
  }
  for (size_t k = 0; k < m.outputs.size(); ++k) r.outputs.emplace(m.outputs[k].name, outputs.to_tensor(k));
  for (size_t k = 0; k < m.gradients.size(); ++k) r.gradients.emplace(m.gradients[k].name, gradients.to_tensor(k));
  return r;
}

// A library cut short (an interrupted copy, a full disk) makes dlopen map pages past the end of the
// file, and the host dies of SIGBUS with no word said: check first that the file holds everything its
// ELF headers describe. Returns why not, or an empty string (also for what is not ELF: dlopen says).
std::string truncation_problem(const char* library) {
  std::ifstream in(library, std::ios::binary);
  Elf64_Ehdr header{};
  if (!in.read(reinterpret_cast<char*>(&header), sizeof header)) return {};
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64) return {};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::uint64_t>(in.tellg());
  std::uint64_t needed = std::max<std::uint64_t>(header.e_phoff + std::uint64_t{header.e_phnum} * header.e_phentsize,
                                                 header.e_shoff + std::uint64_t{header.e_shnum} * header.e_shentsize);
  if (needed <= size && header.e_phentsize == sizeof(Elf64_Phdr)) {
    in.seekg(static_cast<std::streamoff>(header.e_phoff));
    for (int k = 0; k < header.e_phnum; ++k) {
      Elf64_Phdr segment{};
      if (!in.read(reinterpret_cast<char*>(&segment), sizeof segment)) break;
      if (segment.p_type == PT_LOAD) needed = std::max<std::uint64_t>(needed, segment.p_offset + segment.p_filesz);
    }
  }
  if (needed <= size) return {};
  return fmt::format("the file is truncated: it has {} bytes, its ELF headers describe {}", size, needed);
}

int serve(const char* library) {
  if (const std::string truncated = truncation_problem(library); !truncated.empty()) {
    std::cerr << "gnncheck-plugin-host: cannot load " << library << ": " << truncated << '\n';
    return 2;
  }
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::cerr << "gnncheck-plugin-host: cannot load " << library << ": " << dlerror() << '\n';
    return 2;
  }
  auto entry = reinterpret_cast<gnncheck_plugin_entry_fn>(dlsym(handle, GNNCHECK_PLUGIN_ENTRY_SYMBOL));
  if (!entry) {
    std::cerr << "gnncheck-plugin-host: " << library << " does not export " << GNNCHECK_PLUGIN_ENTRY_SYMBOL
              << "() (see gnncheck/plugin.h)\n";
    return 2;
  }
  const gnncheck_plugin* plugin = entry();
  if (!plugin || plugin->abi_version != GNNCHECK_PLUGIN_ABI_VERSION || !plugin->evaluate || plugin->num_targets < 0 ||
      (plugin->num_targets > 0 && !plugin->targets)) {
    std::cerr << "gnncheck-plugin-host: " << library << ": "
              << (!plugin ? std::string("the entry point returned no plugin")
                  : plugin->abi_version != GNNCHECK_PLUGIN_ABI_VERSION
                      ? fmt::format("compiled against plugin ABI {}; this host speaks {}", plugin->abi_version,
                                    GNNCHECK_PLUGIN_ABI_VERSION)
                      : std::string("the plugin has no evaluate function or no target list"))
              << '\n';
    return 2;
  }
  nlohmann::json targets;
  try {
    targets = target_table(*plugin);
    add_attribute_declarations(handle, targets);
    add_accumulation_declarations(handle, targets);
  } catch (const InputError& e) {
    std::cerr << "gnncheck-plugin-host: " << library << ": " << e.what() << '\n';
    return 2;
  }
  const nlohmann::json hello = {{"protocol", protocol::kVersion},
                                {"name", plugin->name ? plugin->name : "plugin"},
                                {"targets", targets}};

  // Protocol lines go to a private copy of stdout; the plugin's own prints go to stderr.
  return serve_protocol(hello.dump(), "gnncheck-plugin-host",
                        [&](const protocol::LoadedCase& loaded) { return evaluate_with_plugin(*plugin, loaded); });
}

}  // namespace
}  // namespace gnncheck

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gnncheck-plugin-host path/to/plugin.so\n"
                 "Serves a gnncheck plugin (gnncheck/plugin.h) over the adapter protocol (adapters/PROTOCOL.md).\n";
    return 2;
  }
  return gnncheck::serve(argv[1]);
}

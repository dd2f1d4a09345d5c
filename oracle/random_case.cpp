#include "oracle/random_case.h"

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "core/splitmix64.h"

namespace gnncheck::oracle {
namespace {

// FNV-1a over the stream name: fixed by the standard-free algorithm, unlike std::hash.
std::uint64_t name_hash(const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ULL;
  return h;
}

// A double uniform in [0, 1) from the top 53 bits: exact and identical on every platform.
double unit_uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

void check_options(const RandomCaseOptions& options) {
  if (!(options.min_value < options.max_value) || !std::isfinite(options.min_value) ||
      !std::isfinite(options.max_value))
    throw InputError(fmt::format("random case: value range [{}, {}) is empty or not finite", options.min_value,
                                 options.max_value));
  if (!(options.zero_fraction >= 0.0 && options.zero_fraction <= 1.0))
    throw InputError(fmt::format("random case: zero_fraction must be in [0, 1], got {}", options.zero_fraction));
}

}  // namespace

Tensor random_tensor(const std::vector<index_t>& shape, std::uint64_t seed, const std::string& stream_name,
                     const RandomCaseOptions& options) {
  check_options(options);
  std::mt19937_64 rng(splitmix64(seed ^ splitmix64(name_hash(stream_name))));
  Tensor t(shape);
  const double span = options.max_value - options.min_value;
  for (double& value : t.values()) {
    // Two draws per element whatever zero_fraction is, so changing it keeps the non-zero values.
    const bool zero = unit_uniform(rng) < options.zero_fraction;
    const double drawn = options.min_value + span * unit_uniform(rng);
    value = zero ? 0.0 : drawn;
  }
  return t;
}

Tensor random_index_tensor(const std::vector<index_t>& shape, std::uint64_t seed, const std::string& stream_name,
                           std::int64_t count) {
  if (count < 1) throw InputError(fmt::format("random case: index tensor '{}' needs a count of at least 1, got {}", stream_name, count));
  std::mt19937_64 rng(splitmix64(seed ^ splitmix64(name_hash(stream_name))));
  Tensor t(shape);
  for (double& value : t.values()) value = std::floor(unit_uniform(rng) * static_cast<double>(count));
  return t;
}

namespace {

// f on every tensor of values of the case (inputs, parameters, output gradients); index tensors are
// choices, not values, and stay as they are.
template <class F>
void for_each_value_tensor(Case& c, F f) {
  const TargetSpec& spec = entry_of(c).spec;
  for (TensorMap* m : {&c.inputs, &c.parameters, &c.grad_outputs})
    for (auto& [name, t] : *m) {
      const TensorSlot* slot = find_slot(spec, name);
      if (!(slot && slot->is_index())) f(t);
    }
}

}  // namespace

void round_to_small_integers(Case& c) {
  for_each_value_tensor(c, [](Tensor& t) {
    for (double& v : t.values()) v = std::round(2.0 * v);
  });
}

void store_values_in(Case& c, Precision storage) {
  for_each_value_tensor(c, [storage](Tensor& t) { t = rounded(t, storage); });
}

void keep_divisors_off_zero(const TargetDef& def, Case& c) {
  if (!def.divisors) return;
  for (const std::string& name : def.divisors(with_defaults(def.spec, c.attributes))) {
    const auto it = c.inputs.find(name);
    if (it == c.inputs.end()) continue;
    for (double& v : it->second.values()) v = std::copysign(0.5 + std::abs(v), v);
  }
}

Case make_random_case(const TargetDef& def, std::shared_ptr<const Graph> graph, const Attributes& attributes,
                      std::uint64_t seed, const RandomCaseOptions& options) {
  check_options(options);
  if (!graph) throw InputError(fmt::format("random case for '{}': no graph given", def.spec.name));
  if (def.spec.needs_square_graph && !graph->is_square())
    throw InputError(fmt::format("target '{}' needs a square graph; got {}", def.spec.name, graph->summary()));
  Case c;
  set_target(c, def);
  c.attributes = with_defaults(def.spec, attributes);
  c.graph = graph;
  c.seed = seed;
  const auto input_shapes = def.input_shapes(*graph, c.attributes);
  for (const TensorSlot& slot : def.spec.inputs) {
    auto shape = input_shapes.find(slot.name);
    // An input the attributes switch off (a layer's bias with bias = false, gspmm's e with
    // message = copy_u) has no shape.
    if (shape == input_shapes.end()) continue;
    TensorMap& into = slot.kind == TensorKind::parameter ? c.parameters : c.inputs;
    into[slot.name] = slot.is_index() ? random_index_tensor(shape->second, seed, "input:" + slot.name,
                                                            c.attributes.get_int(slot.index_range))
                                      : random_tensor(shape->second, seed, "input:" + slot.name, options);
  }
  if (options.with_grad_outputs) {
    for (const auto& [name, shape] : def.output_shapes(*graph, c.attributes))
      c.grad_outputs[name] = random_tensor(shape, seed, "grad_output:" + name, options);
  }
  keep_divisors_off_zero(def, c);
  return c;
}

}  // namespace gnncheck::oracle

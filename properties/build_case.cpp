// build_case(): a CaseSpec's tensors — every input, parameter and output gradient from the value
// seed in the drawn value style, the types of a typed graph, and the case moved off its kinks.
#include <cmath>
#include <cstdint>
#include <memory>

#include "checks/case_transforms.h"
#include "checks/kinks.h"
#include "checks/stored_values.h"
#include "core/splitmix64.h"
#include "oracle/random_case.h"
#include "oracle/targets.h"
#include "properties/generators.h"

namespace gnncheck::properties {
namespace {

// The types of a typed graph (an index tensor: each edge's relation): in 1/4 of the cases every row
// has one type (the relation drawn for all), in 1/4 the last relation is empty (no row of that type:
// its weight's gradient must be exactly 0), and otherwise uniform over [0, count).
Tensor typed_index_tensor(const std::vector<index_t>& shape, std::uint64_t seed, const std::string& name, std::int64_t count) {
  Tensor t = oracle::random_index_tensor(shape, seed, "input:" + name, count);
  switch (splitmix64(seed ^ 0x7f4a7c15ULL) % 4) {
    case 0: {
      const double one = static_cast<double>(splitmix64(seed) % static_cast<std::uint64_t>(count));
      for (double& v : t.values()) v = one;
      break;
    }
    case 1:
      if (count > 1)
        for (double& v : t.values()) v = std::fmod(v, static_cast<double>(count - 1));
      break;
    default: break;
  }
  return t;
}

}  // namespace

Case build_case(const CaseSpec& spec) {
  return drawn_case(oracle::find_target(spec.target), std::make_shared<const Graph>(to_graph(spec.graph)), spec.attributes,
                    spec.values, spec.value_seed);
}

Case drawn_case(const oracle::TargetDef& def, std::shared_ptr<const Graph> graph, const Attributes& attributes,
                ValueStyle values, std::uint64_t value_seed) {
  oracle::RandomCaseOptions range;
  if (values == ValueStyle::with_zeros) range.zero_fraction = 0.3;
  Case c;
  oracle::set_target(c, def);
  c.attributes = oracle::with_defaults(def.spec, attributes);
  c.graph = graph;
  // Every input the target has for these attributes (an optional one, like a disabled bias, has no
  // shape), with oracle::random_tensor's per-tensor streams.
  const auto shapes = def.input_shapes(*graph, c.attributes);
  for (const auto& slot : def.spec.inputs) {
    auto shape = shapes.find(slot.name);
    if (shape == shapes.end()) continue;
    TensorMap& into = slot.kind == oracle::TensorKind::parameter ? c.parameters : c.inputs;
    into[slot.name] = slot.is_index() ? typed_index_tensor(shape->second, value_seed, slot.name,
                                                           c.attributes.get_int(slot.index_range))
                                      : oracle::random_tensor(shape->second, value_seed, "input:" + slot.name, range);
  }
  for (const auto& [name, shape] : def.output_shapes(*graph, c.attributes))
    c.grad_outputs[name] = oracle::random_tensor(shape, value_seed, "grad_output:" + name, range);
  if (values == ValueStyle::small_integers) {
    oracle::round_to_small_integers(c);
  } else if (values == ValueStyle::large) {
    for (auto& [name, t] : c.inputs)
      if (!checks::is_index_tensor(c, name))
        for (double& v : t.values()) v *= 1e3;
  }
  oracle::keep_divisors_off_zero(def, c);
  if (values == ValueStyle::half_grid)
    for (TensorMap* m : {&c.inputs, &c.parameters, &c.grad_outputs})
      for (auto& [name, t] : *m)
        if (m == &c.grad_outputs || !checks::is_index_tensor(c, name))
          for (double& v : t.values()) v = checks::nearest_on_every_half_grid(v, v);
  c.seed = value_seed;
  // Off the kinks (see the header): the point itself, or up to 4 jittered ones. Ties of a max or
  // min stay: the checks decide there, and tie bugs hide there.
  const Case drawn = c;
  for (std::uint64_t attempt = 0; attempt < 4 && !def.kinks.ties; ++attempt) {
    const auto kink = checks::nearest_kink(c, Precision::float32);
    if (!kink || !kink->near) break;
    c = checks::jittered(drawn, value_seed + 0x632be59bd9b4e019ull * (attempt + 1));
  }
  return c;
}

}  // namespace gnncheck::properties

// gnncheck/oracle/random_case.h — a seeded random Case for any target and graph.
//
// make_random_case fills every input, parameter and (by default) output gradient of a target with
// values drawn uniformly from [min_value, max_value), sized by the target's input_shapes and
// output_shapes for the graph and attributes. The values are portable: they come from
// std::mt19937_64 bits converted to doubles here (std:: distributions differ between standard
// libraries), and each tensor has its own stream derived from the seed and the tensor's name, so
// adding a tensor to a target never changes the values of the others.
//
//   auto g = std::make_shared<const gnncheck::Graph>(gnncheck::Graph::from_edges(3, 3, dst, src));
//   const auto& def = gnncheck::oracle::find_target("spmm_ve");
//   gnncheck::Case c = gnncheck::oracle::make_random_case(def, g, {{"heads", std::int64_t{2}}}, 42, {});
#pragma once

#include <cstdint>
#include <memory>

#include "core/case.h"
#include "oracle/targets.h"

namespace gnncheck::oracle {

struct RandomCaseOptions {
  double min_value = -1.0;      // values are uniform in [min_value, max_value)
  double max_value = 1.0;
  double zero_fraction = 0.0;   // probability that an element is exactly 0 (sparsity, masked gradients)
  bool with_grad_outputs = true;  // false = a forward-only case (empty grad_outputs)
};

// Throws InputError when the options are invalid (min ≥ max, zero_fraction outside [0, 1]), the
// graph is missing, or the target rejects the graph or attributes.
Case make_random_case(const TargetDef& def, std::shared_ptr<const Graph> graph, const Attributes& attributes,
                      std::uint64_t seed, const RandomCaseOptions& options = {});

// An index tensor (TensorSlot::is_index) of `shape`: integers uniform in [0, count), from its own
// stream like random_tensor's.
Tensor random_index_tensor(const std::vector<index_t>& shape, std::uint64_t seed, const std::string& stream_name,
                           std::int64_t count);
// Every value of the case's inputs, parameters and output gradients (index tensors excepted) v ← round(2v): from uniform
// [−1, 1), integers in [−2, 2] — exact in every format, and repeated, so a max or min ties. Divisors
// moved off 0 first stay off it.
void round_to_small_integers(Case& c);
// The case as a kernel storing in `storage` reads it: every value of its inputs, parameters and
// output gradients (index tensors excepted) rounded to nearest in `storage` (core/case.h, rounded).
void store_values_in(Case& c, Precision storage);

// Moves every value of the case's divisors (TargetDef::divisors) at least 1/2 away from 0, keeping
// its sign: v ← sign(v)·(1/2 + |v|) (0 becomes 1/2). Every case source calls it after drawing values.
void keep_divisors_off_zero(const TargetDef& def, Case& c);

// A tensor of `shape` with the same value stream make_random_case uses for a tensor called
// `stream_name` (exposed for generators that need extra tensors sized by hand).
Tensor random_tensor(const std::vector<index_t>& shape, std::uint64_t seed, const std::string& stream_name,
                     const RandomCaseOptions& options = {});

}  // namespace gnncheck::oracle

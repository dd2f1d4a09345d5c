// gnncheck/properties/generators.h — RapidCheck generators of graphs and whole cases, with shrinking.
//
// A GraphSpec is a graph as an edge list (dst[k] <- src[k], in edge-id order) plus the family it was
// drawn from. arbitrary_graph() draws a family of fixtures/generators.h (erdos_renyi, rmat,
// power_law, skewed_directed, star, chain, complete_bipartite) or an edgeless graph, each with
// probability 1/8 (1/7 each without complete_bipartite when square_only) — except the first case
// (RapidCheck's size 0), a square erdos_renyi, star or chain graph of at least 3 nodes with edges —,
// its size (1 node up to max_nodes a side, at least 3 at RapidCheck's smallest sizes; 0 nodes in
// the empty family only; degrees uniform to heavy-tailed), symmetric or directed, and the fixtures'
// irregularities (duplicate edges, self-loops, empty rows, isolated nodes). Its shape, in fixed
// fractions at every size: square 1/2, n_dst < n_src 1/4, n_dst > n_src 1/4 (with dst_at_most_src,
// the layers' blocks where destination i is source i: square 1/2, n_dst < n_src 1/2; square_only:
// square); complete_bipartite (at most 8 nodes a side) is always non-square, and the square-only
// families give the first rows or columns of a square graph. 1/4 of the graphs get an extra edge
// from the highest source id. It shrinks by removing half the nodes, single nodes, half the edges
// and single edges — every candidate is rebuilt with Graph::from_edges and dropped if invalid, a
// square graph stays square and a block keeps n_dst ≤ n_src.
//
// A CaseSpec is a graph plus everything else of a case: attributes (heads: 1 in 1/4 of the cases,
// 2–8 otherwise; feature widths that are odd or not multiples of 32; normalization kind,
// self-loops, bias), the shapes where kernels change path (1/4 of the cases: one width on either
// side of 32, 64, 128 or 256; 1/4: a dimension coincidence — every width = a node count, heads =
// width or heads·width = a node count, with a bias), a value style (small integers, uniform
// [-1, 1], uniform with exact zeros, large magnitudes up to 1e3) and a value seed.
// arbitrary_case() generates the graph first and the rest sized to it (gen::mapcat), so RapidCheck
// shrinks the graph first, then attributes toward 1 head and width 1 and the shape toward an
// ordinary one, then the value style toward small integers. build_case() turns a CaseSpec into a Case with tensors from oracle/random_case.
//
//   rc::check([] {
//     const auto spec = *gnncheck::properties::arbitrary_case("spmm");
//     gnncheck::Case c = gnncheck::properties::build_case(spec);
//     RC_ASSERT(gnncheck::oracle::evaluate(c).ok());
//   });
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "core/case.h"

namespace gnncheck::oracle {
struct TargetDef;
}

namespace gnncheck::properties {

struct GraphSpec {
  std::string family;  // how it was drawn (kept through shrinking for messages)
  index_t n_dst = 0;
  index_t n_src = 0;
  std::vector<index_t> dst;
  std::vector<index_t> src;
};
Graph to_graph(const GraphSpec& spec);  // throws InputError for an invalid spec
void showValue(const GraphSpec& spec, std::ostream& os);

struct GraphOptions {
  index_t max_nodes = 12;       // per side; RapidCheck's size scales the actual maximum
  bool square_only = false;     // targets that need a square graph
  bool dst_at_most_src = false; // non-square graphs only with n_dst < n_src (the layers' blocks)
  double max_average_degree = 4.0;
  // When > 0, every graph with a node gets hub_edges more copies of the edge 0 <- n_src−1: a row
  // and a column of degree > hub_edges (for bugs that live on hubs; shrinking removes them too).
  index_t hub_edges = 0;
};

rc::Gen<GraphSpec> arbitrary_graph(GraphOptions options = {});

// The candidates a graph shrinks to (valid graphs only, smallest first-tried); exposed for tests.
std::vector<GraphSpec> graph_shrinks(const GraphSpec& spec, bool keep_square, bool dst_at_most_src = false);

enum class ValueStyle {
  small_integers,  // integers in [-2, 2]: exact in every format, so counterexamples read easily
  // uniform in [-1, 1) on the grid every half format holds (8 significant bits): a system that
  // stores in float16, bfloat16 or TF32 stores these inputs exactly, so what it rounds besides (an
  // intermediate kept in the storage format, sums in it) is all its error and stands out
  half_grid,
  uniform,         // uniform in [-1, 1)
  with_zeros,      // uniform in [-1, 1) with 30% exact zeros
  large,           // inputs uniform in [-1e3, 1e3) (large attention logits); parameters in [-1, 1)
};
std::string_view to_string(ValueStyle style);
ValueStyle parse_value_style(std::string_view name);  // throws InputError naming the accepted names

struct CaseSpec {
  GraphSpec graph;
  std::string target;
  Attributes attributes;
  ValueStyle values = ValueStyle::uniform;
  std::uint64_t value_seed = 0;
  std::string shape;  // the path width or dimension coincidence drawn, in words ("" for an ordinary shape)
};
void showValue(const CaseSpec& spec, std::ostream& os);

struct CaseOptions {
  GraphOptions graph;
  std::int64_t max_width = 40;  // ordinary feature widths are drawn from {1,2,3,5,7,8,16,31,33,…} up to this
  std::int64_t max_heads = 8;
  // The widths where kernels change path: each side of a warp (32), of 64- and 128-column tiles and
  // of a 256-thread block. One width attribute of 1/4 of the cases is one of these.
  std::vector<std::int64_t> path_widths = {31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257};
  // A drawn shape (path width or coincidence) that would make a case larger than this — node and
  // edge rows times the widest row, plus a layer's widest weight — is not drawn (heads are halved
  // first): path widths on small graphs, which keeps them cheap.
  std::int64_t max_case_elements = std::int64_t{1} << 19;
  std::vector<ValueStyle> value_styles = {ValueStyle::small_integers, ValueStyle::half_grid, ValueStyle::uniform,
                                          ValueStyle::with_zeros, ValueStyle::large};
  // Attributes drawn from these values only (a suite's pins within what the system implements,
  // core/system.h); each shrinks toward its first value. Others are drawn as the target's spec says.
  std::map<std::string, std::vector<AttrValue>> attribute_values;
};

// Cases of one target (its spec decides which attributes are drawn; targets that need a square
// graph get square graphs only, layers blocks with n_dst ≤ n_src as well as square graphs).
rc::Gen<CaseSpec> arbitrary_case(const std::string& target, CaseOptions options = {});

// The Case: graph, attributes, inputs, parameters and output gradients; seed = value_seed.
// A case whose nearest kink (checks/kinks.h: a ReLU/LeakyReLU pre-activation, AGNN's norm floor)
// lies within float32 rounding of it — small integers put GIN's and GAT's pre-activations exactly
// at 0 — is moved off it by checks::jittered (1% of each tensor's RMS; up to 4 seeds derived from
// value_seed), so that gradient cases are never drawn exactly at a non-differentiable point.
Case build_case(const CaseSpec& spec);

// The same for a given graph (a suite's fixed graph family): its tensors from value_seed in the
// value style, a typed graph's types as the generator draws them, moved off its kinks.
Case drawn_case(const oracle::TargetDef& def, std::shared_ptr<const Graph> graph, const Attributes& attributes,
                ValueStyle values, std::uint64_t value_seed);

}  // namespace gnncheck::properties

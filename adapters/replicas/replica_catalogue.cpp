// The catalogue of the CPU bug replicas: each one's origin, bug, expected check and targets, its bug
// class, and the attributes and shape its bug needs (replicas.h). Wrapping a base system and
// injecting the bug is replicas.cpp's job; the bugs themselves are in the *_bugs.cpp files.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "adapters/replicas/replicas.h"
#include "adapters/replicas/half_precision.h"
#include "core/error.h"
#include "oracle/targets.h"

namespace gnncheck {
namespace {

// Targets the bug is written for; the catalogue keeps those the oracle knows today.
struct CatalogueEntry {
  ReplicaInfo info;
  bool every_target = false;  // generic bugs (leak, width tail) apply to every target
};

// A replica that declares float16 storage with float32 sums (ReplicaInfo::declared_accumulation).
CatalogueEntry half_storage(CatalogueEntry entry, ReplicaInfo::Values values) {
  entry.info.declared_accumulation = Precision::float32;
  entry.info.values = values;
  return entry;
}

std::vector<CatalogueEntry> entries() {
  return {
      {{1, "tcgnn_backward_uses_A",
        "TC-GNN (GCN and GIN): the backward aggregation multiplied by the same adjacency as the forward, "
        "A where Aᵀ is needed; its tests used symmetric graphs, where the two coincide",
        "gradient of the aggregated input is A·ḡ instead of Aᵀ·ḡ (square graphs only, like the original)",
        "adjoint", "a square graph with A ≠ Aᵀ",
        {"spmm", "normalized_spmm", "gcn", "gin"}, std::nullopt, 0},
       false},
      {{2, "tcgnn_agnn_attention_grad",
        "TC-GNN (AGNN): the attention gradient was formed from the output gradient with itself instead of "
        "from the output gradient with the features, and the aggregation backward used the untransposed "
        "attention matrix",
        "grad of the edge values is ⟨ḡ[row], ḡ[col]⟩ instead of ⟨ḡ[row], X[col]⟩, and grad X is A_w·ḡ "
        "instead of A_wᵀ·ḡ (AGNN: the attention's gradient and the aggregation backward, the rest of the "
        "layer's backward unchanged) (square graphs only)",
        "differential", "a square graph",
        {"spmm_ve", "agnn"}, std::nullopt, 0},
       false},
      {{3, "gnnadvisor_sqrt_degree",
        "GNNAdvisor: its preprocessing scaled edges by sqrt(degree) where GCN's normalization needs "
        "1/sqrt(degree); forward and backward agree with each other, so only a reference notices",
        "normalized edge value sqrt(d_dst·d_src) instead of 1/sqrt(d_dst·d_src) (row_mean: d_dst instead "
        "of 1/d_dst), in forward and backward",
        "differential", "any graph with an edge",
        {"normalized_spmm", "gcn"}, std::nullopt, 0},
       false},
      {{4, "gnnadvisor_norm_backward_order",
        "GNNAdvisor and Seastar: the fused degree normalization was applied in backward in the forward's "
        "order, scaling the gradient by the degrees of the wrong side; on graphs whose in- and out-degrees "
        "agree (all symmetric test graphs) the result is the same",
        "backward computes D_dst^-½ Aᵀ D_src^-½ ḡ (row_mean: D^-1 Aᵀ ḡ) instead of D_src^-½ Aᵀ D_dst^-½ ḡ "
        "(row_mean: Aᵀ D^-1 ḡ) (square graphs only)",
        "op_order", "a square graph whose in- and out-degrees differ",
        {"normalized_spmm", "gcn"}, std::nullopt, 0},
       false},
      {{5, "gat_backward_untransposed_attention",
        "The pitfalls paper's controlled experiment on GAT: using the attention matrix untransposed in "
        "backward made training 1.34x faster and 11-27 points less accurate",
        "backward walks the forward's CSR with CSR-ordered edge tensors wherever it needs the transposed "
        "attention graph: the feature gradient is A_α·ḡ instead of A_αᵀ·ḡ (spmm_ve), and the source-score "
        "gradient of the logits is the row sum of their gradient instead of the column sum (sddmm_add's "
        "grad b; in GAT it reaches att_src and the features) (square graphs only)",
        "adjoint", "a square graph with A ≠ Aᵀ",
        {"spmm_ve", "sddmm_add", "gat", "attention"}, std::nullopt, 0},
       false},
      {{6, "tlpgnn_no_attention_grad",
        "TLPGNN and Huang et al.: fused attention kernels implemented forward only, so no gradient reached "
        "the attention logits and the attention parameters never trained",
        "gradient of the attention logits (edge_softmax) and of the edge values (spmm_ve) is zero",
        "differential", "any graph with an edge",
        {"edge_softmax", "spmm_ve", "gat", "attention"}, std::nullopt, 0},
       false},
      {{7, "shared_edge_buffer",
        "Huang et al.: one edge buffer shared across layers and calls, so a layer's backward read the "
        "attention that a later forward had written",
        "a forward-only evaluation stores its edge tensor (softmax output or edge values; GAT: its "
        "attention) in one shared buffer; a later evaluation with output gradients computes its backward "
        "from that buffer when its shape matches, not from its own forward",
        "state_interleaved", "two forwards on different inputs before a backward",
        {"edge_softmax", "spmm_ve", "gat"}, std::nullopt, 0},
       false},
      {{8, "fusegnn_softmax_no_max",
        "FuseGNN (GAT on Reddit): edge softmax computed exp(s)/Σexp(s) without subtracting the row "
        "maximum, overflowing to Inf/NaN at large logits",
        "edge softmax without max subtraction, in the base system's precision (GAT: its attention, in "
        "forward and backward)",
        "numerics", "logits above 88 (float32) or 709 (float64)",
        {"edge_softmax", "gat", "attention"}, std::nullopt, 0},
       false},
      {{9, "dgnn_memory_growth",
        "dgNN: buffers allocated every iteration and never freed, so memory grew until the run died",
        "every evaluation keeps the size of its outputs and gradients plus 1 MiB alive (touched host "
        "memory, reported in peak_bytes and live_bytes) until the system is destroyed",
        "resources", "repeated evaluations of one case",
        {}, std::nullopt, 0},
       true},
      {{10, "width_not_multiple_of_32",
        "Huang et al.: kernels that process features in warps of 32 gave wrong results when the feature "
        "width was not a multiple of 32",
        "in every node output and node gradient the last (width mod 32) columns of each row are left zero",
        "differential", "a node feature width that is not a multiple of 32",
        {}, std::nullopt, 0},
       true},
      {{11, "missing_eshuffle",
        "GraphPy's analysis of attention backward: edge values used in CSR order where the CSC traversal "
        "of the transposed product needs them shuffled (the missing eShuffle)",
        "the transposed edge-weighted product reads w[p] at CSC position p instead of w[edge_perm[p]]: "
        "the gradient of X in spmm_ve and the forward of spmm_ve_transposed",
        "differential", "a graph whose CSC order differs from its CSR order",
        {"spmm_ve", "spmm_ve_transposed", "gat"}, std::nullopt, 0},
       false},
      {{12, "missing_bias_grad",
        "Several layer implementations: the bias received no gradient (it was added outside autograd), so "
        "it stayed at its initial value",
        "the gradient of every parameter named like 'bias' is zero",
        "differential", "a layer with bias enabled",
        {}, std::nullopt, 0},
       false},
      {{13, "backward_assumes_square",
        "Kernels written and tested on square adjacencies: the transposed product of backward loops to "
        "min(n_dst, n_src) on both sides, which only a rectangular graph (a sampled block) exposes",
        "the gradient of the aggregated input is Aᵀ·ḡ over the edges with both ends below min(n_dst, n_src): "
        "on a rectangular graph the gradient rows of sources ≥ n_dst are zero and destinations ≥ n_src "
        "contribute nothing; square graphs are exact",
        "differential", "a non-square graph with an edge into a column ≥ n_dst or out of a row ≥ n_src",
        {"spmm", "spmm_ve", "normalized_spmm"}, std::nullopt, 0},
       false},
      {{14, "hub_row_race",
        "Atomic accumulation without the atomics (or a reduction that loses partial sums under contention): "
        "updates lost only on rows hit by many edges at once, which graphs of a few dozen nodes never have",
        "on a destination row of more than 1000 in-edges (forward) and a source column of more than 1000 "
        "out-edges (backward), each update — one edge's contribution to one element — is lost with "
        "probability 1/10⁴, chosen from the case seed (the same case loses the same updates)",
        "differential", "a row or column of degree > 1000 (a hub)",
        {"spmm", "spmm_ve"},
        std::nullopt, 1000},
       false},
      {{15, "tf32_edge_value_grad",
        "A TF32 tensor-core kernel whose edge-value gradient carries a small constant error (a scale applied "
        "twice), small enough to pass a bound that grows with the system's own noise",
        "declares TF32; the gradient of the edge values is (1 + 1/8)·⟨ḡ[row], X[col]⟩ (spmm_ve; "
        "spmm_ve_transposed: ⟨Y[row], ḡ[col]⟩); outputs and every other gradient exact",
        "adjoint",
        "an edge, and at most about 16 features per head (TF32's worst-case rounding of a wider dot product "
        "exceeds 1/8 of it)",
        {"spmm_ve", "spmm_ve_transposed"},
        Precision::tf32, 0},
       false},
      {{16, "forward_not_repeatable",
        "Kernels whose result depends on scheduling far beyond rounding (uninitialised or racing partial "
        "sums): the same case gives a different answer on every call",
        "every output element is multiplied by (1 + 2⁻¹⁰·r), r uniform in [-1, 1) drawn afresh on every call "
        "(a seeded sequence per instance)",
        "state_repeat", "an output that is not zero",
        {"spmm", "spmm_ve", "sddmm_dot", "edge_softmax"}, std::nullopt, 0},
       false},
      {{17, "gspmm_tie_gradient_to_every_edge",
        "Generalized SpMM kernels whose max/min backward compares each edge's message with the row's "
        "result and gives the output gradient to every edge that equals it, counting a tie twice",
        "max and min backward: every edge whose message equals the selected one exactly receives the whole "
        "output gradient (a valid subgradient splits it among them)",
        "differential", "a row whose max (or min) two edges reach exactly (small-integer values, duplicate edges)",
        {"gspmm"}, std::nullopt, 0},
       false},
      {{18, "gspmm_stale_argmax",
        "Max/min kernels that keep the forward's argmax in a buffer shared across calls: the backward reads "
        "the selections of the last forward run, not of its own",
        "a forward-only call stores its selected edges per output element; a call with output gradients "
        "routes its max/min backward through the stored selections when the buffer's shape matches",
        "state_interleaved", "two forwards on different inputs of the same shape before a backward, with max or min",
        {"gspmm"}, std::nullopt, 0},
       false},
      {{19, "gspmm_edge_gradient_at_source_index",
        "DGL-style max/min kernels record the selected source (arg_u) and the selected edge (arg_e); a "
        "backward that scatters the edge gradient with arg_u writes to the wrong edges",
        "max and min backward: the gradient of e goes to row col_k (the selected edge's source id) of grad_e "
        "instead of row k (dropped where col_k ≥ E)",
        "differential", "max or min with an edge operand, an edge whose id differs from its source's",
        {"gspmm"}, std::nullopt, 0},
       false},
      {{20, "gspmm_mean_source_degree",
        "A mean aggregation whose backward divides by the degree of the node it scatters to (the source's "
        "out-degree) instead of the destination's in-degree that the forward divided by",
        "mean backward: g / out_degree(col_k) instead of g / in_degree(i); forward exact",
        "differential", "mean over a graph whose in- and out-degrees differ",
        {"gspmm"}, std::nullopt, 0},
       false},
      {{21, "gspmm_div_no_quotient_term",
        "A division message whose backward for the denominator forgets the quotient factor of "
        "∂(u/e)/∂e = −(u/e)·(1/e)",
        "message div: the gradient of e is −g/e instead of −g·u/e²; forward and the gradient of u exact",
        "differential", "message div with u ≠ 1",
        {"gspmm"}, std::nullopt, 0},
       false},
      {{22, "gspmm_broadcast_grad_not_summed",
        "Broadcasting backward that keeps the first broadcast copy instead of summing over the broadcast "
        "axis (a gradient shaped like the operand, read from one slice)",
        "the gradient of a broadcast operand collects only the first output column of each group it was "
        "broadcast to (features = 0, or head 0) instead of their sum",
        "differential", "an operand broadcast over features or heads of more than one",
        {"gspmm"}, std::nullopt, 0},
       false},
      {{23, "wide_rows_partial_tile_dropped",
        "Kernels that switch to a tiled path for rows wider than 64 values (64 columns a tile) and never "
        "write the partial last tile; rows of at most 64 values take the warp path and are right",
        "in every node output and node gradient with rows wider than 64 values, the last (width mod 64) "
        "columns of each row are left zero",
        "differential", "a node row of more than 64 values that is not a multiple of 64 (65, 127, 129, 257)",
        {}, std::nullopt, 0},
       false},
      {{24, "square_features_read_transposed",
        "Kernels that accept node features in either layout, node-major [n, width] or feature-major "
        "[width, n], and tell them apart by shape: a square matrix is taken for the feature-major one",
        "every node input whose rows are as many as its row's values (n = heads·width) is read transposed, "
        "forward and backward; its gradient is written back transposed",
        "differential", "a node input of n rows of n values (heads·width = n, n ≥ 2)",
        {}, std::nullopt, 0},
       false},
      {{25, "heads_and_features_swapped",
        "Multi-head kernels that find the head axis of a [n, heads, features] node tensor by matching "
        "extents against the edge tensor's heads: with heads = features they take the wrong axis",
        "every node input of heads·features values a row is read as [features, heads] when heads = "
        "features ≥ 2, forward and backward; its gradient is written back in that layout",
        "differential", "heads = features ≥ 2 on a target with both",
        {}, std::nullopt, 0},
       false},
      {{26, "gine_edge_attr_grad_dropped",
        "GINE kernels that add the edge features into the messages but treat them as constants in "
        "backward (edge features taken as fixed inputs, never learned through)",
        "the gradient of edge_attr is zero; forward and every other gradient exact",
        "differential", "a graph with at least one edge whose message is positive",
        {"gine"}, std::nullopt, 0},
       false},
      {{27, "gatv2_att_grad_from_pre_activation",
        "GATv2 kernels ported from GAT's, where the attention vector met the scores before the "
        "nonlinearity: the attention's gradient reads the pre-activation z saved for the LeakyReLU's "
        "backward instead of the activated LeakyReLU(z) it multiplied",
        "the gradient of att is Σ_e grad_logit[e, k] · z[e, k, c] instead of Σ_e grad_logit[e, k] · "
        "LeakyReLU(z[e, k, c]); forward and every other gradient exact",
        "differential", "a row of two or more edges with a negative pre-activation channel",
        {"gatv2"}, std::nullopt, 0},
       false},
      {{28, "relation_gradient_to_next_relation",
        "relational kernels (R-GCN's per-relation weights, DGL's gather_mm and TypedLinear) whose weight-gradient "
        "scatter takes the type id off by one: a relation's gradient summed into the next relation",
        "the gradient of relation r's weight (R-GCN with bases: its row of comp) is written to relation r + 1 "
        "(mod relations); forward and every other gradient exact",
        "differential", "two or more relations with edges (typed_linear: two or more node types with nodes)",
        {"gather_mm", "typed_linear", "rgcn", "rgat"}, std::nullopt, 0},
       false},
      {{29, "relation_weight_not_transposed",
        "per-type matmul kernels whose backward multiplies the output gradient by the forward weight where its "
        "transpose is needed; with square weights (in = out) the shapes agree and nothing fails to run",
        "grad_x = grad_y · weight[t] instead of grad_y · weight[t]ᵀ (square weights only); forward and the weight "
        "gradient exact",
        "differential", "in_features = out_features ≥ 2 and an edge (typed_linear: a node)",
        {"gather_mm", "typed_linear", "segment_mm"}, std::nullopt, 0},
       false},
      {{30, "segment_boundary_off_by_one",
        "segment matmul kernels (pyg-lib's segment_matmul, DGL's segment_mm) that read each segment's first row "
        "with the previous segment's weight: a type boundary off by one",
        "row k is multiplied by the weight of row k − 1's segment (row 0 by its own), in forward and backward",
        "differential", "two non-empty segments",
        {"segment_mm"}, std::nullopt, 0},
       false},
      half_storage({{31, "half_sums_in_float16",
                    "tensor-core and fused sparse kernels that read and write float16 and declare float32 sums "
                    "(cuSPARSE's computeType CUDA_R_32F, TC-GNN) but keep their partial sums in float16 registers",
                    "declares float16 storage with float32 accumulation; every partial sum of spmm and "
                    "spmm_transposed, forward and backward, rounded to float16 (inputs and results stored in "
                    "float16, as declared)",
                    "differential",
                    "a row or column of more than 64 equal-sign terms (ci's 1002-edge multigraph: past 512 a "
                    "float16 partial sum's spacing is 0.5, and each term is rounded away)",
                    {"spmm", "spmm_transposed"}, Precision::float16, 64},
                   false},
                  ReplicaInfo::Values::any),
      half_storage({{32, "half_logits_rounded_before_max",
                    "fused GAT kernels that store in float16 with float32 arithmetic but keep the attention logits "
                    "in half between their two passes: the softmax's max and exponentials read logits rounded to "
                    "float16",
                    "declares float16 storage with float32 accumulation; GAT's logits (after the LeakyReLU) rounded "
                    "to float16 before the edge softmax, forward and backward (the rounding's derivative taken as "
                    "1); every other step exact",
                    "differential",
                    "values float16 holds (small integers), so that storing them costs nothing and the rounding of a "
                    "logit shows beside float32 sums; or a destination row whose common logit a_dst·h_i is large "
                    "beside the part that varies along the row (a_src·h_j): rounding a logit of 10² moves it by up "
                    "to 0.03, while storing the inputs moves the common part alike on every edge of the row, where "
                    "the softmax cancels it",
                    {"gat"}, Precision::float16, 0},
                   false},
                  ReplicaInfo::Values::dominant_destination_logits),
      {{33, "rgat_softmax_within_relation",
        "relational attention kernels (RGAT) that normalize the attention over each relation's in-edges apart, "
        "grouping the softmax by (destination, relation) as R-GCN groups its mean, where PyG's RGATConv "
        "(across-relation, its default) normalizes over every in-edge of a destination",
        "the softmax of RGAT's logits taken within each (destination, relation) group, in forward and backward "
        "(PyG's attention_mechanism='within-relation'); every other step exact",
        "differential", "a destination with in-edges of two relations",
        {"rgat"}, std::nullopt, 0},
       false},
      {{34, "typed_rows_left_sorted",
        "per-type matmul kernels that sort the rows by type to run a segment matmul (PyG's HeteroLinear over "
        "pyg-lib's segment_matmul, R-GCN's grouped path) and return the output in that sorted order, never "
        "permuting it back",
        "y's rows in the order of a stable sort of the rows by their type (edge_type, node_type) instead of the "
        "rows' own order; gradients exact",
        "differential", "rows whose types are not already in order (a type after a greater one)",
        {"gather_mm", "typed_linear"}, std::nullopt, 0},
       false},
  };
}

// The class of mistake of each replica, by number (ReplicaInfo::bug_class).
struct BugClass {
  int number;
  const char* bug_class;
  const char* description;
  bool single_evaluation;
  bool in_system_precision = false;  // the bug exists only in the system's precision (overflow)
  bool after_previous_call = false;  // the bug shows on a case evaluated after another (state)
};
constexpr BugClass kBugClasses[] = {
    {1, "a_for_at", "backward uses A where Aᵀ is needed (the TC-GNN bug class)", true},
    {2, "agnn_attention_grad",
     "the attention gradient formed from the output gradient with itself and the aggregation backward untransposed "
     "(the TC-GNN AGNN bug class)",
     true},
    {3, "degree_power", "degree normalization with the wrong power: √d where 1/√d is needed (the GNNAdvisor bug class)",
     true},
    {4, "degree_side",
     "degree normalization on the wrong side in backward, in the forward's order (the GNNAdvisor and Seastar bug class)",
     true},
    {5, "a_for_at", "backward uses the attention graph A_α where A_αᵀ is needed (the GAT untransposed-attention bug class)",
     true},
    {6, "gradient_dropped", "no gradient reaches the attention (forward-only attention kernels: the TLPGNN bug class)",
     true},
    {7, "stale_state", "backward reads an edge buffer a previous call wrote (state left over, Huang et al.)", false,
     false, true},
    {8, "softmax_no_max", "edge softmax without max subtraction, overflowing at large logits (the FuseGNN bug class)",
     true, true},
    {9, "memory_growth", "memory kept alive by every evaluation (the dgNN bug class)", false},
    {10, "width_tail", "the last (width mod 32) feature columns never written (warp-width kernels, Huang et al.)", true},
    {11, "missing_eshuffle", "edge values read in CSR order where the CSC traversal needs them shuffled (missing eShuffle)",
     true},
    {12, "gradient_dropped", "the bias receives no gradient (a gradient term dropped)", true},
    {26, "gradient_dropped", "the edge features receive no gradient (a gradient term dropped)", true},
    {27, "pre_activation_used",
     "the backward reads the saved pre-activation where the activated value is needed (a nonlinearity skipped in "
     "backward)",
     true},
    {28, "relation_gradient_misrouted", "a relation's weight gradient summed into another relation (a type id off by one)",
     true},
    {29, "weight_not_transposed", "the forward weight used in backward where its transpose is needed", true},
    {30, "segment_off_by_one", "a segment boundary off by one row (the first row of each segment takes the previous weight)",
     true},
    {31, "accumulation_precision",
     "sums formed in a coarser format than declared (float16 partial sums where float32 accumulation is declared)", true},
    {32, "attention_precision",
     "attention logits rounded to the storage format before the softmax, where the declared arithmetic keeps them "
     "in float32", true},
    {33, "softmax_within_relation",
     "the attention softmax normalized within each relation's edges where it runs across all of a destination's "
     "in-edges",
     true},
    {34, "rows_left_sorted", "the output left in the order its rows were sorted into by type, not permuted back", true},
    {13, "square_only_backward", "the backward's loops stop at min(n_dst, n_src) (a kernel written for square graphs)",
     true},
    {14, "lost_updates", "updates lost on rows and columns of many edges (a race in the accumulation)", true},
    {15, "scaled_edge_gradient", "the edge-value gradient scaled by a constant (a scale applied twice)", true},
    {16, "nondeterministic", "an answer that changes from call to call far beyond rounding", false},
    {17, "tie_gradient_copied", "the output gradient copied to every tied candidate of a max or min instead of split", true},
    {18, "stale_state", "max/min backward through the selections a previous call left (state left over)", false, false,
     true},
    {19, "index_confusion", "the edge gradient scattered with the source index instead of the edge index", true},
    {20, "degree_side", "the mean's backward divides by the source's degree instead of the destination's", true},
    {21, "quotient_term_dropped", "the division's backward for the denominator without its quotient factor u/e", true},
    {22, "broadcast_not_summed", "the backward through a broadcast operand not summed over the broadcast axis", true},
    {23, "width_tail", "the partial last tile of rows wider than 64 values never written (a tiled path for wide rows)",
     true},
    {24, "layout_from_shape",
     "a node input read in another layout that its shape cannot tell apart (a square matrix read transposed)", true},
    {25, "layout_from_shape",
     "a node input read in another layout that its shape cannot tell apart (heads and features swapped when equal)",
     true},
};

// The shape each replica's bug needs (ReplicaInfo::shape).
ReplicaInfo::Shape shape_of(int number) {
  switch (number) {
    case 23: return ReplicaInfo::Shape::row_wider_than_64;
    case 24: return ReplicaInfo::Shape::square_node_matrix;
    case 25: return ReplicaInfo::Shape::heads_equal_features;
    case 29: return ReplicaInfo::Shape::square_node_matrix;  // in_features = out_features
    default: return ReplicaInfo::Shape::any;
  }
}

// The attributes under which each gspmm replica's bug shows (ReplicaInfo::shows_with).
struct ShowsWith {
  int number;
  std::vector<std::pair<const char*, const char*>> attributes;
  bool tied_values = false;
};
const std::vector<ShowsWith>& shows_with() {
  static const std::vector<ShowsWith> table = {
      {17, {{"reduce", "max"}}, true},
      {18, {{"reduce", "max"}, {"message", "mul"}}},
      {19, {{"reduce", "min"}, {"message", "add"}}},
      {20, {{"reduce", "mean"}}},
      {21, {{"message", "div"}}},
      {22, {{"message", "mul"}}},
  };
  return table;
}

// Targets with a node tensor among their inputs (and outputs, when asked): where a feature width
// or a node layout applies.
bool has_node_tensor(const oracle::TargetDef& def, bool outputs_too = true) {
  for (const auto* slots : {&def.spec.inputs, &def.spec.outputs}) {
    for (const auto& slot : *slots)
      if (slot.kind == oracle::TensorKind::dst_nodes || slot.kind == oracle::TensorKind::src_nodes) return true;
    if (!outputs_too) break;
  }
  return false;
}

// Targets whose node inputs (under the default attributes) all have three or more dimensions:
// segment_mm's weight [n_dst, in, out] has a layout its shape tells, so replica 24's [n, n] matrix
// read as [width, n] does not apply.
bool node_inputs_all_beyond_matrices(const oracle::TargetDef& def) {
  const Graph g = Graph::from_edges(2, 2, std::vector<index_t>{0}, std::vector<index_t>{1});
  const auto shapes = def.input_shapes(g, oracle::with_defaults(def.spec, {}));
  bool any = false;
  for (const auto& slot : def.spec.inputs) {
    if (slot.kind != oracle::TensorKind::dst_nodes && slot.kind != oracle::TensorKind::src_nodes) continue;
    const auto it = shapes.find(slot.name);
    if (it == shapes.end()) continue;
    if (it->second.size() < 3) return false;
    any = true;
  }
  return any;
}

bool has_attribute(const oracle::TargetDef& def, const std::string& name) {
  for (const auto& a : def.spec.attributes)
    if (a.name == name) return true;
  return false;
}

bool bias_target(const oracle::TargetDef& def) {
  for (const auto& slot : def.spec.inputs)
    if (slot.kind == oracle::TensorKind::parameter && slot.name.find("bias") != std::string::npos) return true;
  return false;
}

// The entry's targets that the oracle's catalogue knows today.
ReplicaInfo resolve_targets(const CatalogueEntry& entry) {
  ReplicaInfo info = entry.info;
  std::vector<std::string> known;
  for (const auto& def : oracle::all_targets()) {
    const std::string& name = def.spec.name;
    bool wanted = entry.every_target;
    for (const auto& t : info.targets) wanted = wanted || t == name;
    if (info.number == 10) wanted = has_node_tensor(def);
    // 23: rows of more than 64 values need a feature width (heads alone stay few).
    if (info.number == 23) wanted = has_node_tensor(def) && !oracle::width_attributes(def.spec).empty();
    if (info.number == 24) wanted = has_node_tensor(def, false) && !node_inputs_all_beyond_matrices(def);
    if (info.number == 25) wanted = has_node_tensor(def, false) && has_attribute(def, "heads") && has_attribute(def, "features");
    if (info.number == 12) wanted = bias_target(def);
    if (wanted) known.push_back(name);
  }
  info.targets = std::move(known);
  for (const BugClass& c : kBugClasses)
    if (c.number == info.number) {
      info.bug_class = c.bug_class;
      info.bug_class_description = c.description;
      info.single_evaluation = c.single_evaluation;
      info.after_previous_call = c.after_previous_call;
      info.in_system_precision = c.in_system_precision;
    }
  info.shape = shape_of(info.number);
  for (const ShowsWith& w : shows_with())
    if (w.number == info.number) {
      for (const auto& [name, value] : w.attributes) info.shows_with.set(name, std::string(value));
      info.needs_tied_values = w.tied_values;
    }
  return info;
}

}  // namespace

std::vector<ReplicaInfo> replica_catalogue() {
  std::vector<ReplicaInfo> out;
  for (const auto& entry : entries()) out.push_back(resolve_targets(entry));
  return out;
}

void reveal_values(const ReplicaInfo& info, Case& c) {
  if (info.values == ReplicaInfo::Values::dominant_destination_logits) {
    const auto it = c.parameters.find("att_dst");
    if (it != c.parameters.end())
      for (double& v : it->second.values()) v *= 1e2;
  }
}

ReplicaInfo find_replica(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& entry : entries()) {
    if (entry.info.name == name) return resolve_targets(entry);
    names.push_back(entry.info.name);
  }
  throw InputError(fmt::format("unknown replica '{}'; known replicas: {}", name, fmt::join(names, ", ")));
}

}  // namespace gnncheck

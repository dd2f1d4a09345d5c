// gnncheck/adapters/replicas/replica_entries.cpp — the table of CPU bug replicas (replica_entries.h):
// each one's number, name, origin, bug, the check that catches it, the shape it needs and the
// targets it is written for. A new replica is a row here, its bug class in replica_catalogue.cpp and
// its bug in a *_bugs.cpp file.
#include "adapters/replicas/replica_entries.h"

namespace gnncheck {
namespace {

// A replica that declares float16 storage with float32 sums (ReplicaInfo::declared_accumulation).
CatalogueEntry half_storage(CatalogueEntry entry, ReplicaInfo::Values values) {
  entry.info.declared_accumulation = Precision::float32;
  entry.info.values = values;
  return entry;
}

}  // namespace

std::vector<CatalogueEntry> replica_entries() {
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

}  // namespace gnncheck

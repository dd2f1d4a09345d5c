#!/usr/bin/env python3
"""torch adapter: gnncheck's ops as PyTorch functions and its layers as PyTorch Geometric modules.

Every target is a differentiable PyTorch computation; gradients come from autograd
(torch.autograd.grad of sum(output * grad_output)). Ops are written here with index_add /
scatter_reduce (no PyG needed). Layers use PyG's GCNConv, GINConv, GINEConv, GATConv, GATv2Conv, SAGEConv,
AGNNConv and RGCNConv when torch_geometric is installed, with the oracle's parameters copied into them.

    gnncheck run --adapter "python3 adapters/python/torch_adapter.py --device cuda"

Options: --device cpu|cuda (default: cuda when available), --dtype
float32|float64|float16|bfloat16 (default float32: every tensor, parameter and the arithmetic torch
does on them in that type, declared as that precision), --tf32 (allow TF32 matmuls and declare tf32), --no-pyg (ops only), --gspmm-reductions
torch|pyg and --segment-reduce scatter|torch (below).

attention (fused edge softmax and aggregation) is the adapter's edge softmax followed by the
weighted aggregation, differentiated by autograd through exp and the division: another formulation
of the fused op's backward than the oracle's closed form. sddmm_spmm (FusedMM) is the per-head
scores ⟨u[row], v[col]⟩ followed by the same aggregation.

gspmm (DGL's generalized SpMM) is PyTorch's own broadcasting and reductions: each edge's message
op(u[col_k], e[k]) from u.index_select over the sources and views [E, H or 1, F or 1] of u and e that
torch broadcasts (expand's backward sums a broadcast operand's gradient), reduced per destination
by Tensor.scatter_reduce(0, rows, messages, sum | mean | amax | amin, include_self=False). Ties of
max and min: the amax / amin backward splits the gradient evenly among the tied edges, a valid
subgradient (gnncheck accepts any convex combination). max and min start from their identity
(-inf / +inf), which an empty row keeps (empty_rows = identity) or the adapter sets to 0 (zero);
both conventions are implemented. They do not start from zeros: torch's amax / amin backward
counts the output's initial value among the tied entries even with include_self=False, so a row
whose max is exactly 0 would get k/(k+1) of its gradient (seen with torch 1.13; torch 2.x's
scatter_reduce_backward has the same formula in its source, not run here; gnncheck's differential check fails that form,
python/tests/test_torch_adapter.py). --gspmm-reductions pyg
reduces with PyG's own torch_geometric.utils.scatter(messages, rows, dim=0, dim_size=n_dst,
reduce=sum | mean | max | min) instead, and declares empty_rows = zero (PyG's scatter gives 0
there). PyG's max and min are that scatter_reduce_ on zeros wherever torch_scatter is not used (on
the CPU, and on CUDA without torch_scatter as on the H200 machine), so they are expected to fail
the differential check where a row's extreme is exactly 0 — PyTorch's backward, not the mapping.

gsddmm (DGL's generalized SDDMM) is the same broadcasting: each operand gathered from its side
(index_select over the edge's source for u, its destination for v, the edge itself for e) as a view
[E, H or 1, F or 1], then op(lhs, rhs), dot being (lhs * rhs).sum(-1); autograd scatters and sums.

segment_reduce is gspmm's scatter_reduce on x as the messages. With --segment-reduce torch it is
torch.segment_reduce(x, reduce, lengths=in-degrees) itself (an empty segment's mean, 0/0 there, set
to 0; empty data refused by torch: unsupported). Expected to fail the differential check at ties:
its max and min backward (ATen's SegmentReduce CPU and CUDA kernels) gives every tied row the whole
output gradient and then divides only the positive ones by the count of ties ("if (grad_input >
0) grad_input /= counter"), so a gradient <= 0 reaches every tied row in full — the "gradient
copied to every tied entry" bug class (python/tests/test_torch_adapter.py; docs/campaigns.md).
segment_aggregation is PyG's own VarAggregation and SoftmaxAggregation(learn=True)
where torch_geometric is used, and their formulas written with scatter_reduce otherwise (--no-pyg).

Typed graphs: gather_mm and rgcn read edge_type, each edge's relation, an index tensor that
arrives as numbers like every tensor; the adapter converts it to int64 (rounded in float64, before
any narrow dtype) and never differentiates it. gather_mm is weight.index_select(0, edge_type) and
one bmm of 1 × in_features rows; autograd sums each relation's weight gradient. rgcn is PyG's
RGCNConv(in, out, num_relations=R, num_bases=B or None, aggr='mean' | 'add', root_weight, bias) with
the case's weight, comp, root and bias (PyG's names and layouts), on (x, x[:n_dst]), edge_index and
edge_type; RGCNConv loops over the relations, aggregating each one's edges apart (a mean over that
relation's edges alone) and multiplying by its matrix. Its other path, read in rgcn_conv.py (PyG
2.x) and not run here: pyg-lib's segment_matmul, taken only with pyg-lib installed, without bases
and where torch_geometric.backend's size heuristic says so — which gnncheck's small cases do not
meet: at 8 × 4 features it takes about 270 relations, or 65,000 edges of one relation among 3. It
averages over all of a destination's edges at once ("TODO Re-weight according to edge type degree
for `aggr=mean`"), not per relation, and a transcription of it fails the differential check
(python/tests/test_torch_adapter.py). Without PyG (or with --no-pyg) rgcn is the same layer in
plain torch: per (destination, relation) sums by index_add, divided by their counts for mean, then
one product with the R matrices side by side.

Where PyG's definition of a layer differs from the oracle's (oracle/layers/*.h), the adapter maps it:
- self-loops: GCNConv/GATConv/GATv2Conv/AGNNConv add their own (and the attention layers first remove
  existing ones); the oracle appends one (i, i) to every destination row and keeps existing loops. The adapter
  builds the oracle's A + I itself and passes add_self_loops=False.
- non-square graphs: the oracle's destinations are the first n_dst sources; the layer runs on the
  n_src nodes and the first n_dst output rows are kept (GIN/SAGE take x[:n_dst] as the root features).
- gcn's degrees: PyG's gcn_norm gives each node one degree, its in-degree (deg = scatter over the
  edges' targets), and scales both endpoints by it: the oracle's source_degree=in
  (oracle/degree_norm.h), run as GCNConv(normalize=True), PyG's code end to end. GCNConv runs on
  max(n_dst, n_src) nodes (x padded with zero rows when n_dst > n_src), so a source j >= n_dst has
  in-degree 0 and factor 0, as the oracle defines it. gcn_norm has no other convention: for
  source_degree=out (D_dst^-1/2 A D_src^-1/2) and norm=row_mean (D_dst^-1 A) the adapter computes
  the edge weights from the aggregated graph's degrees and runs GCNConv(normalize=False) with them,
  PyG's documented way to use another normalization — the degree factors are then the adapter's,
  the linear map, the propagation and their backward PyG's. Every gcn case is compared, on every
  graph.
and declares what cannot be mapped away (IMPLEMENTS below, PROTOCOL.md §2), so that no case is drawn there:
- gat with attn_dropout > 0: PyG draws its own dropout mask, the oracle's mask is a function of
  dropout_seed (a case asking for it anyway is answered unsupported).
- zero_degree = one (a source degree of 0 taken as 1, GNNAdvisor's convention): gcn_norm gives 0.
Run on an H200 with torch 2.11 and PyG 2.8 (docs/campaigns.md, "The torch/PyG adapter on the
H200, completed"): 10^4 random differential and 10^4 adjoint cases per target pass on every target,
and 2·10^3 cases per target of the metamorphic, state, numerics and op_order checks. gather_mm and
rgcn came later: 500 cases per check (differential, adjoint, state_interleaved) pass on an H100
with torch 2.11 and PyG 2.8's RGCNConv, and on the CPU with torch 1.13 (docs/campaigns.md).

Each case's tensors go to the device in one copy and come back in one (upload / download), and the
PyG modules are kept between cases (ModuleCache): on a small graph the driver calls cost more than
the arithmetic (gat's adjoint on the H200: 22.4 → 17.4 s for 60 cases; docs/campaigns.md). For the
same reason the peak and live memory are measured only where gnncheck reads them
(case.measure_resources: its resources check): with these and gnncheck's own readings skipped
elsewhere, 16 processes at once ran 1.6–1.9 times faster.
"""

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gnncheck_adapter as kit  # noqa: E402

import torch  # noqa: E402


class Context:
    def __init__(self, device, dtype, pyg_scatter=None, segment_reduce="scatter", pyg_aggregations=None):
        self.device = torch.device(device)
        self.dtype = dtype
        self.pyg_scatter = pyg_scatter  # torch_geometric.utils.scatter with --gspmm-reductions pyg
        self.segment_reduce = segment_reduce  # --segment-reduce: scatter (scatter_reduce) or torch
        # segment_aggregation's modules by aggr (makers of torch_geometric.nn.aggr modules) where
        # torch_geometric is used; None: the adapter's own torch formulation.
        self.pyg_aggregations = pyg_aggregations


CTX = None


# ---------------------------------------------------------------------------------------------
# Helpers: case tensors to torch and back, autograd, graph views.

def upload(arrays, dtype):
    """{name: numpy array} on the device as `dtype`, through one host-to-device copy: a copy is a
    synchronizing driver call, which costs more than a small case's arithmetic (a kernel and a copy
    back took 1.57 ms on the H200 machine, docs/campaigns.md). Each tensor is a leaf of its own."""
    # Half precisions travel as float32 (NumPy has no bfloat16) and are rounded once, on the device.
    np_dtype = np.float64 if dtype == torch.float64 else np.float32
    flats = [np.ascontiguousarray(a, dtype=np_dtype).reshape(-1) for a in arrays.values()]
    flat = torch.from_numpy(np.concatenate(flats) if flats else np.empty(0, dtype=np_dtype)).to(CTX.device)
    flat = flat.to(dtype)
    tensors, start = {}, 0
    for (name, a), f in zip(arrays.items(), flats):
        tensors[name] = flat[start:start + f.size].view(np.shape(a)).detach()
        start += f.size
    return tensors


def download(tensors):
    """The tensors as float64 numpy arrays through one device-to-host copy (upload's reason)."""
    if not tensors:
        return []
    flat = torch.cat([t.detach().reshape(-1).to(torch.float64) for t in tensors]).to("cpu").numpy()
    arrays, start = [], 0
    for t in tensors:
        arrays.append(flat[start:start + t.numel()].reshape(tuple(t.shape)))
        start += t.numel()
    return arrays


# Index tensors (oracle/targets.h, TensorSlot::index_range): a choice per row, not a value — each
# edge's relation, integers sent as numbers like every tensor. Never differentiated. Known by name,
# and by an input entry's index_range where the case's manifest carries one (PROTOCOL.md).
INDEX_INPUTS = ("edge_type",)


def index_inputs(case):
    return set(INDEX_INPUTS) | {e["name"] for e in case.manifest.get("inputs", []) if e.get("index_range")}


def index_tensor(array):
    """An index tensor's numbers as int64 on the device: rounded on the host in float64, where they are
    exact (a narrow dtype such as bfloat16 would round 257 to 256)."""
    return torch.from_numpy(np.rint(np.asarray(array, dtype=np.float64)).astype(np.int64)).to(CTX.device)


class CaseTensors:
    """A case's inputs, parameters and output gradients on the device (one copy; an index tensor in
    a second one, as int64)."""

    def __init__(self, case, inputs_require_grad):
        index = index_inputs(case)
        values = {n: a for n, a in case.inputs.items() if n not in index}
        groups = (("inputs", values), ("parameters", case.parameters), ("grad_outputs", case.grad_outputs))
        on_device = upload({(g, n): a for g, arrays in groups for n, a in arrays.items()}, CTX.dtype)
        self.inputs = {n: index_tensor(a) if n in index else
                       on_device[("inputs", n)].requires_grad_(inputs_require_grad) for n, a in case.inputs.items()}
        self.parameters = {n: on_device[("parameters", n)] for n in case.parameters}
        self.grad_outputs = {n: on_device[("grad_outputs", n)] for n in case.grad_outputs}


class Edges:
    """The case's graph on the device: rows (destination) and cols (source) per edge id, CSC order."""

    def __init__(self, graph):
        self.n_dst, self.n_src, self.num_edges = graph.n_dst, graph.n_src, graph.num_edges
        # CSC position -> edge id; within a column positions follow increasing edge id (stable sort).
        perm = np.argsort(graph.col_idx, kind="stable")
        index = torch.from_numpy(np.stack([graph.row_of_edge, graph.col_idx.astype(np.int64), perm.astype(np.int64)]))
        self.rows, self.cols, self.edge_perm = index.to(CTX.device).unbind(0)  # one copy

    def in_degree(self):
        return torch.bincount(self.rows, minlength=self.n_dst).to(CTX.dtype)

    def out_degree(self):
        return torch.bincount(self.cols, minlength=self.n_src).to(CTX.dtype)


def sum_into(values, index, n):
    """out[index[e]] += values[e], along the first dimension."""
    out = values.new_zeros((n,) + tuple(values.shape[1:]))
    return out.index_add(0, index, values)


def answer_of(case, outputs, gradients):
    """The answer dict of {name: tensor} outputs and gradients, in the case's dtype (one copy back)."""
    names = list(outputs) + list(gradients)
    arrays = download(list(outputs.values()) + list(gradients.values()))
    values = {n: a.astype(case.dtype) for n, a in zip(names, arrays)}
    answer = {"outputs": {n: values[n] for n in outputs}}
    if gradients:
        answer["gradients"] = {n: values[n] for n in gradients}
    return answer


def measured(function):
    """function(case) with the device's peak memory over the case (peak_bytes in the answer) when
    gnncheck reads it (case.measure_resources): two synchronizations and two allocator queries,
    driver calls that cost more than a small case's arithmetic."""
    def run(case):
        measure = CTX.device.type == "cuda" and case.measure_resources
        if measure:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        try:
            answer = function(case)
        except (RuntimeError, NotImplementedError) as error:
            # torch has no kernel for this dtype on this device (float16 bmm on the CPU): a target
            # the adapter cannot compute here, not a wrong answer.
            if "not implemented for" not in str(error):
                raise
            raise kit.Unsupported("torch %s on %s: %s" % (torch.__version__, CTX.device, error)) from error
        if measure:
            torch.cuda.synchronize()
            answer["peak_bytes"] = int(torch.cuda.max_memory_allocated())
        return answer
    return run


def autograd_if(wanted):
    """Autograd on for a case that asks for gradients; off for a forward-only case (most of the
    adjoint check's evaluations), which then records no graph — the same forward kernels, less
    host work per call."""
    return torch.enable_grad() if wanted else torch.no_grad()


def evaluate(case, compute):
    """Runs compute(**inputs, **parameters) -> {output name: tensor}; adds autograd gradients when asked."""
    wants = case.wants_gradients
    t = CaseTensors(case, inputs_require_grad=wants)
    tensors = dict(t.inputs, **{n: p.requires_grad_(wants) for n, p in t.parameters.items()})
    with autograd_if(wants):
        outputs = compute(**tensors)
        gradients = {}
        if wants:
            names = [e["name"] for e in case.gradients]
            total = sum((outputs[name] * t.grad_outputs[name]).sum() for name in outputs)
            grads = torch.autograd.grad(total, [tensors[n] for n in names], allow_unused=True)
            gradients = {n: g if g is not None else torch.zeros_like(tensors[n]) for n, g in zip(names, grads)}
        return answer_of(case, outputs, gradients)


def heads_of(edge_values):
    return 1 if edge_values.dim() == 1 else edge_values.shape[1]


# ---------------------------------------------------------------------------------------------
# Ops (oracle/*.h definitions), as differentiable torch functions.

def op_spmm(case):
    g = Edges(case.graph)
    return evaluate(case, lambda x: {"y": sum_into(x[g.cols], g.rows, g.n_dst)})


def op_spmm_transposed(case):
    g = Edges(case.graph)
    return evaluate(case, lambda y: {"z": sum_into(y[g.rows], g.cols, g.n_src)})


def row_width(t):
    """Values per leading index (the product of the trailing dimensions; 1 for a 1-D tensor)."""
    width = 1
    for d in t.shape[1:]:
        width *= int(d)
    return width


def weighted_messages(edge_values, features, index):
    """edge_values [E, H] (or [E]) times the per-head rows features[index] ([E, H*C])."""
    heads = heads_of(edge_values)
    width = row_width(features)
    # Explicit sizes, never -1: on a graph without edges or nodes a -1 is ambiguous for torch.
    gathered = features[index].reshape(index.shape[0], heads, width // heads)
    return (edge_values.reshape(index.shape[0], heads, 1) * gathered).reshape(index.shape[0], width)


def op_spmm_ve(case):
    g = Edges(case.graph)
    return evaluate(case,
                    lambda edge_values, x: {"y": sum_into(weighted_messages(edge_values, x, g.cols), g.rows, g.n_dst)})


def op_spmm_ve_transposed(case):
    g = Edges(case.graph)
    return evaluate(case,
                    lambda edge_values, y: {"z": sum_into(weighted_messages(edge_values, y, g.rows), g.cols, g.n_src)})


def op_sddmm_dot(case):
    g = Edges(case.graph)
    heads = int(case.attribute("heads", 1))

    def compute(u, v):
        channels = row_width(u) // heads
        e = (u[g.rows].reshape(g.num_edges, heads, channels) * v[g.cols].reshape(g.num_edges, heads, channels)).sum(-1)
        return {"e": e.reshape(case.outputs[0]["shape"])}

    return evaluate(case, compute)


def op_sddmm_add(case):
    g = Edges(case.graph)
    return evaluate(case, lambda a, b: {"e": (a[g.rows] + b[g.cols]).reshape(case.outputs[0]["shape"])})


def edge_softmax(g, logits):
    """Softmax over each destination's in-edges with max subtraction (finite for finite logits)."""
    shape = logits.shape
    s = logits.reshape(g.num_edges, row_width(logits))
    row_max = s.new_full((g.n_dst, s.shape[1]), -float("inf"))
    row_max = row_max.scatter_reduce(0, g.rows.unsqueeze(1).expand_as(s), s.detach(), reduce="amax", include_self=True)
    ex = torch.exp(s - row_max[g.rows])
    alpha = ex / sum_into(ex, g.rows, g.n_dst)[g.rows]
    return alpha.reshape(shape)


def op_edge_softmax(case):
    g = Edges(case.graph)
    return evaluate(case, lambda logits: {"alpha": edge_softmax(g, logits)})


def op_attention(case):
    """Fused attention written unfused: the edge softmax, then the weighted aggregation; torch's
    autograd differentiates through exp and the division (not the softmax backward's closed form)."""
    g = Edges(case.graph)
    return evaluate(case, lambda logits, x: {
        "y": sum_into(weighted_messages(edge_softmax(g, logits), x, g.cols), g.rows, g.n_dst)})


def op_sddmm_spmm(case):
    """FusedMM written unfused: the per-head scores ⟨u[row], v[col]⟩, then the weighted aggregation."""
    g = Edges(case.graph)
    heads = int(case.attribute("heads", 1))

    def compute(u, v, x):
        channels = row_width(u) // heads
        scores = (u[g.rows].reshape(g.num_edges, heads, channels) *
                  v[g.cols].reshape(g.num_edges, heads, channels)).sum(-1)
        return {"y": sum_into(weighted_messages(scores, x, g.cols), g.rows, g.n_dst)}

    return evaluate(case, compute)


def op_eshuffle(case):
    g = Edges(case.graph)
    return evaluate(case, lambda x: {"y": x[g.edge_perm]})


def op_eshuffle_inverse(case):
    g = Edges(case.graph)
    inverse = torch.argsort(g.edge_perm)  # y[edge_perm[p]] = x[p]  <=>  y = x[inverse]
    return evaluate(case, lambda x: {"y": x[inverse]})


def source_in_degree(g):
    """Each source j's own in-degree (destination j's row length), 0 for j >= n_dst."""
    d = g.in_degree()[: g.n_src]
    return torch.cat([d, d.new_zeros(g.n_src - d.shape[0])])


def degree_norm_values(g, norm, source_degree):
    d_in = g.in_degree()
    if norm == "symmetric":
        if source_degree == "out":
            return torch.rsqrt(d_in[g.rows] * g.out_degree()[g.cols])
        if source_degree == "in":
            d_src = source_in_degree(g)[g.cols]
            return torch.where(d_src > 0, torch.rsqrt(d_in[g.rows] * d_src.clamp(min=1)), torch.zeros_like(d_src))
        raise kit.Unsupported("source_degree '%s' is not out or in" % source_degree)
    if norm == "row_mean":
        return 1.0 / d_in[g.rows]
    raise kit.Unsupported("norm '%s' is not symmetric or row_mean" % norm)


def op_normalized_spmm(case):
    g = Edges(case.graph)
    values = degree_norm_values(g, case.attribute("norm", "symmetric"), case.attribute("source_degree", "out"))
    return evaluate(case,
                    lambda x: {"y": sum_into(values.unsqueeze(1) * x[g.cols], g.rows, g.n_dst)})


# gspmm (oracle/gspmm.h): a message per edge from u and e read through their broadcasts, reduced per
# destination by PyTorch's scatter_reduce (or, with --gspmm-reductions pyg, PyG's scatter).

def broadcast_shape(broadcast, heads, features):
    """An operand's values per row as [heads, features] broadcasts them: none [H, F], features
    [H, 1] (one per head), heads [1, F] (one per feature), both [1, 1]."""
    shapes = {"none": (heads, features), "features": (heads, 1), "heads": (1, features), "both": (1, 1)}
    if broadcast not in shapes:
        raise kit.Unsupported("broadcast '%s' is not none, features, heads or both" % broadcast)
    return shapes[broadcast]


GSPMM_MESSAGES = {"copy_u": lambda u, e: u, "copy_e": lambda u, e: e, "add": torch.add, "sub": torch.sub,
                  "mul": torch.mul, "div": torch.div}


def gspmm_messages(g, attributes, u, e):
    """m [E, H·F]: op(u[col_k], e[k]) per edge k, each operand a view [E, H or 1, F or 1] that torch
    broadcasts; expand's backward sums a broadcast operand's gradient over the axes it was broadcast
    along. u or e is None where the message does not read it."""
    heads, features, message = int(attributes["heads"]), int(attributes["features"]), attributes["message"]
    if message not in GSPMM_MESSAGES:
        raise kit.Unsupported("message '%s' is not one of %s" % (message, ", ".join(GSPMM_MESSAGES)))
    # Explicit sizes, never -1: on a graph without edges a -1 is ambiguous for torch.
    if u is not None:
        u = u.index_select(0, g.cols).view((g.num_edges,) + broadcast_shape(attributes["u_broadcast"], heads, features))
    if e is not None:
        e = e.view((g.num_edges,) + broadcast_shape(attributes["e_broadcast"], heads, features))
    m = GSPMM_MESSAGES[message](u, e)
    return m.expand(g.num_edges, heads, features).reshape(g.num_edges, heads * features)


def scatter_reduce(out, index, src, reduce):
    """out.scatter_reduce(0, index, src, reduce, include_self=False), without torch 1.13's warning
    that scatter_reduce is in beta."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return out.scatter_reduce(0, index, src, reduce=reduce, include_self=False)


def torch_gspmm_reduction(g, reduce, messages, empty_rows):
    """y [n_dst, W]: the messages reduced per destination row by torch's scatter_reduce. sum and mean
    start from zeros (an empty row stays 0); max and min start from their identity -inf / +inf, and
    an empty row keeps it (empty_rows = identity) or is set to 0 (zero). Not from zeros: the amax /
    amin backward counts the output's initial value among the tied entries even with
    include_self=False, so on zeros a row whose extreme is exactly 0 would pass its gradient on
    only in part (k/(k+1) for k tied edges; torch 1.13 and 2.x have the same formula)."""
    index = g.rows.unsqueeze(1).expand(g.num_edges, messages.shape[1])
    shape = (g.n_dst, messages.shape[1])
    if reduce in ("sum", "mean"):
        return scatter_reduce(messages.new_zeros(shape), index, messages, reduce)
    if reduce not in ("max", "min"):
        raise kit.Unsupported("reduce '%s' is not sum, mean, max or min" % reduce)
    identity = -float("inf") if reduce == "max" else float("inf")
    y = scatter_reduce(messages.new_full(shape, identity), index, messages, "a" + reduce)
    if empty_rows == "identity":
        return y
    if empty_rows != "zero":
        raise kit.Unsupported("empty_rows '%s' is not zero or identity" % empty_rows)
    empty = torch.bincount(g.rows, minlength=g.n_dst) == 0
    return y.masked_fill(empty.unsqueeze(1), 0)


def pyg_gspmm_reduction(g, reduce, messages, empty_rows):
    """y [n_dst, W] through PyG's own torch_geometric.utils.scatter (reduce sum, mean, max, min), which
    gives 0 on an empty row for every reduction (empty_rows = zero, declared)."""
    if empty_rows != "zero":
        raise kit.Unsupported("empty_rows '%s': PyG's scatter gives 0 on an empty row" % empty_rows)
    with warnings.catch_warnings():  # "can be accelerated via the 'torch-scatter' package" on CUDA
        warnings.simplefilter("ignore")
        return CTX.pyg_scatter(messages, g.rows, dim=0, dim_size=g.n_dst, reduce=reduce)


def op_gspmm(case):
    g = Edges(case.graph)
    a = case.attributes
    reduction = pyg_gspmm_reduction if CTX.pyg_scatter is not None else torch_gspmm_reduction
    return evaluate(case, lambda u=None, e=None: {
        "y": reduction(g, a["reduce"], gspmm_messages(g, a, u, e), a["empty_rows"])})


# gsddmm (oracle/gsddmm.h): op(lhs, rhs) per edge, each operand gathered from its side (u: the
# edge's source, v: its destination, e: the edge) as a view [E, H or 1, F or 1] that torch
# broadcasts; dot is NumPy's (L * R).sum(-1). Autograd's gather and expand backwards scatter and sum.

GSDDMM_OPS = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "dot": torch.mul,
              "copy_lhs": lambda l, r: l, "copy_rhs": lambda l, r: r}


def gsddmm_operand(g, side, broadcast, heads, features, x):
    """Edge k's row of x as [E, H or 1, F or 1] (None stays None)."""
    if x is None:
        return None
    rows = {"u": g.cols, "v": g.rows, "e": None}
    if side not in rows:
        raise kit.Unsupported("operand side '%s' is not u, v or e" % side)
    if rows[side] is not None:
        x = x.index_select(0, rows[side])
    return x.view((g.num_edges,) + broadcast_shape(broadcast, heads, features))


def op_gsddmm(case):
    g = Edges(case.graph)
    a = case.attributes
    heads, features, op = int(a["heads"]), int(a["features"]), a["op"]
    if op not in GSDDMM_OPS:
        raise kit.Unsupported("op '%s' is not one of %s" % (op, ", ".join(GSDDMM_OPS)))
    lhs_name, rhs_name = "lhs_" + a["lhs"], "rhs_" + a["rhs"]

    def compute(**inputs):
        lhs = gsddmm_operand(g, a["lhs"], a["lhs_broadcast"], heads, features, inputs.get(lhs_name))
        rhs = gsddmm_operand(g, a["rhs"], a["rhs_broadcast"], heads, features, inputs.get(rhs_name))
        out = GSDDMM_OPS[op](lhs, rhs).expand(g.num_edges, heads, features)
        if op == "dot":
            return {"out": out.sum(-1)}
        return {"out": out.reshape(g.num_edges, heads * features)}
    return evaluate(case, compute)


def op_segment_reduce(case):
    """The segments of x's rows that the destinations' in-degrees give, reduced by scatter_reduce
    (gspmm's reduction: x is the messages), or with --segment-reduce torch by torch.segment_reduce
    itself, without `initial` (which takes part in the reduction: min with initial 0 over [1, 1]
    is 0). An empty segment's max and min are then -inf / +inf, kept (empty_rows = identity) or set
    to 0 (zero); its mean, 0/0 there, is set to 0."""
    g = Edges(case.graph)
    a = case.attributes
    reduce, empty_rows = a["reduce"], a["empty_rows"]
    if reduce not in ("sum", "mean", "max", "min"):
        raise kit.Unsupported("reduce '%s' is not sum, mean, max or min" % reduce)
    if empty_rows not in ("zero", "identity"):
        raise kit.Unsupported("empty_rows '%s' is not zero or identity" % empty_rows)
    if CTX.segment_reduce != "torch":
        return evaluate(case, lambda x: {"y": torch_gspmm_reduction(g, reduce, x, empty_rows)})
    if g.num_edges == 0:
        raise kit.Unsupported("torch.segment_reduce refuses empty data (\"Expected data.numel() > 0\")")
    lengths = torch.bincount(g.rows, minlength=g.n_dst)
    empty = (lengths == 0).unsqueeze(1)

    def compute(x):
        with warnings.catch_warnings():  # "segment_reduce is in beta" on some versions
            warnings.simplefilter("ignore")
            y = torch.segment_reduce(x, reduce, lengths=lengths, axis=0)
        if reduce == "mean" or (reduce in ("max", "min") and empty_rows == "zero"):
            y = y.masked_fill(empty, 0)
        return {"y": y}
    return evaluate(case, compute)


def op_segment_mm(case):
    """One weight matrix per destination's segment of edge rows (pyg-lib's segment_matmul, DGL's
    segment_mm): each row's own matrix gathered by its segment, y[k] = x[k] · weight[row_k], one
    batched product of 1 × in_features rows; autograd sums grad_weight over each segment."""
    g = Edges(case.graph)
    return evaluate(case, lambda x, weight: {"y": torch.bmm(x.unsqueeze(1), weight[g.rows]).squeeze(1)})


def gather_mm(x, weight, edge_type):
    """y[k] = x[k] · weight[edge_type[k]] (DGL's gather_mm with idx_b): each row's matrix gathered by
    its relation (index_select, whose backward sums grad_weight per relation), one batched product of
    1 × in_features rows. edge_type is int64 (CaseTensors converts the case's numbers)."""
    return torch.bmm(x.unsqueeze(1), weight.index_select(0, edge_type)).squeeze(1)


def op_gather_mm(case):
    return evaluate(case, lambda x, edge_type, weight: {"y": gather_mm(x, weight, edge_type)})


def torch_segment_aggregation(g, aggr, x, temperature):
    """PyG's var and softmax aggregations written with torch's scatter_reduce (without PyG): the
    mean of squares minus the squared mean, and the segment softmax of t·x (its largest value, detached, subtracted first)
    weighting x."""
    index = g.rows.unsqueeze(1).expand(g.num_edges, x.shape[1])
    shape = (g.n_dst, x.shape[1])
    if aggr == "var":
        mean = scatter_reduce(x.new_zeros(shape), index, x, "mean")
        return scatter_reduce(x.new_zeros(shape), index, x * x, "mean") - mean * mean
    scores = x * temperature
    top = scatter_reduce(x.new_full(shape, -float("inf")), index, scores.detach(), "amax")
    weights = (scores - top[g.rows]).exp()
    alpha = weights / sum_into(weights, g.rows, g.n_dst)[g.rows]
    return sum_into(alpha * x, g.rows, g.n_dst)


def op_segment_aggregation(case):
    """segment_aggregation through PyG's own aggregation modules (VarAggregation,
    SoftmaxAggregation(learn=True) with the case's t) where torch_geometric is used, else through
    torch_segment_aggregation."""
    g = Edges(case.graph)
    aggr = case.attributes["aggr"]
    if aggr not in ("var", "softmax"):
        raise kit.Unsupported("aggr '%s' is not var or softmax" % aggr)
    t = CaseTensors(case, inputs_require_grad=case.wants_gradients)
    if CTX.pyg_aggregations is None:
        temperature = t.parameters["t"].requires_grad_(case.wants_gradients) if aggr == "softmax" else None
        pmap = {"t": (temperature, False)} if aggr == "softmax" else {}
        return layer_answer(case, t, lambda x: torch_segment_aggregation(g, aggr, x, temperature), pmap)
    module = MODULES.get(("aggr", aggr), CTX.pyg_aggregations[aggr])
    pmap = {}
    if aggr == "softmax":
        with torch.no_grad():
            module.t.copy_(t.parameters["t"].reshape(module.t.shape))
        pmap["t"] = (module.t, False)
    return layer_answer(case, t, lambda x: module(x, g.rows, dim_size=g.n_dst), pmap)


OPS = {
    "spmm": op_spmm,
    "spmm_transposed": op_spmm_transposed,
    "spmm_ve": op_spmm_ve,
    "spmm_ve_transposed": op_spmm_ve_transposed,
    "sddmm_dot": op_sddmm_dot,
    "sddmm_add": op_sddmm_add,
    "edge_softmax": op_edge_softmax,
    "eshuffle": op_eshuffle,
    "eshuffle_inverse": op_eshuffle_inverse,
    "normalized_spmm": op_normalized_spmm,
    "gspmm": op_gspmm,
    "gsddmm": op_gsddmm,
    "segment_reduce": op_segment_reduce,
    "segment_mm": op_segment_mm,
    "gather_mm": op_gather_mm,
    "segment_aggregation": op_segment_aggregation,
    "attention": op_attention,
    "sddmm_spmm": op_sddmm_spmm,
}


# ---------------------------------------------------------------------------------------------
# Layers through PyTorch Geometric.

def aggregation_edge_index(n_dst, rows, cols, self_loops, device="cpu"):
    """PyG edge_index (source, target) of the oracle's aggregation graph: A, or A with one (i, i)
    appended to every destination row (existing self-loops kept), as oracle/layers/self_loops.h.
    rows/cols: each edge's destination and source (numpy, edge-id order)."""
    rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
    if self_loops:
        rows = np.concatenate([rows, np.arange(n_dst, dtype=np.int64)])
        cols = np.concatenate([cols, np.arange(n_dst, dtype=np.int64)])
    return torch.as_tensor(np.stack([cols, rows]), device=device)


def aggregation_edges(case, self_loops):
    g = case.graph
    return aggregation_edge_index(g.n_dst, g.row_of_edge, g.col_idx, self_loops, CTX.device)


def gcn_edge_weights(attributes, edge_index, num_nodes, dtype=torch.float64):
    """The edge weights GCNConv(normalize=False) needs for the case's normalization, or None where
    PyG's own gcn_norm computes it (norm=symmetric, source_degree=in). edge_index is the aggregated
    graph's (source, target) over num_nodes nodes. Raises kit.Unsupported for an unknown value."""
    norm, source_degree = attributes["norm"], attributes.get("source_degree", "out")
    if source_degree not in ("out", "in"):
        raise kit.Unsupported("source_degree '%s' is not out or in" % source_degree)
    if norm not in ("symmetric", "row_mean"):
        raise kit.Unsupported("norm '%s' is not symmetric or row_mean" % norm)
    if norm == "symmetric" and source_degree == "in":
        return None
    src, dst = edge_index[0], edge_index[1]
    in_deg = torch.bincount(dst, minlength=num_nodes).to(dtype)
    if norm == "row_mean":  # every edge's destination has in-degree >= 1 (the edge itself)
        return 1.0 / in_deg[dst]
    out_deg = torch.bincount(src, minlength=num_nodes).to(dtype)
    return torch.rsqrt(in_deg[dst] * out_deg[src])


def padded_rows(x, n):
    """x with zero rows appended up to n rows (GCNConv reads its node count from x)."""
    if x.shape[0] >= n:
        return x
    return torch.cat([x, x.new_zeros((n - x.shape[0],) + tuple(x.shape[1:]))])


def copy_linear(linear, weight_in_out, bias=None):
    """Sets a torch Linear-like module (weight [out, in]) from the oracle's [in, out] weight."""
    with torch.no_grad():
        linear.weight.copy_(weight_in_out.T)
        if bias is not None:
            linear.bias.copy_(bias)


class ModuleCache:
    """PyG modules by their constructor arguments, kept between cases: building one (its parameters
    initialised on the host, then copied to the device one by one) costs more than evaluating it on
    a small graph. Every case overwrites every parameter, so no value of one case reaches the next;
    the oldest of more than `size` modules is dropped."""

    def __init__(self, size=64):
        self.size, self.modules = size, {}

    def get(self, key, make):
        module = self.modules.pop(key, None)
        if module is None:
            module = make().to(CTX.device, CTX.dtype)
        self.modules[key] = module  # most recently used last
        if len(self.modules) > self.size:
            self.modules.pop(next(iter(self.modules)))
        return module


MODULES = ModuleCache()


def layer_answer(case, t, run, parameter_map):
    """Evaluates run(x) -> y with the module's parameters already set from the case (t: its tensors
    on the device); gradients of the case's inputs (x, and an edge input such as GINE's edge_attr,
    which run reads from t) and of the oracle's parameters (through parameter_map: oracle name ->
    (torch parameter, transpose?))."""
    x = t.inputs["x"]
    with autograd_if(case.wants_gradients):
        y = run(x)[: case.graph.n_dst]
        gradients = {}
        if case.wants_gradients:
            names = [e["name"] for e in case.gradients]
            targets = [t.inputs[n] if n in t.inputs else parameter_map[n][0] for n in names]
            grads = torch.autograd.grad((y * t.grad_outputs["y"]).sum(), targets, allow_unused=True)
            for n, target, grad in zip(names, targets, grads):
                grad = torch.zeros_like(target) if grad is None else grad
                if n not in t.inputs and parameter_map[n][1]:
                    grad = grad.T
                expected_shape = next(e["shape"] for e in case.gradients if e["name"] == n)
                gradients[n] = grad.reshape(expected_shape)
        return answer_of(case, {"y": y}, gradients)


def layer_gcn(case):
    from torch_geometric.nn import GCNConv

    a = case.attributes
    t = CaseTensors(case, inputs_require_grad=case.wants_gradients)
    edge_index = aggregation_edges(case, a["self_loops"])
    num_nodes = max(case.graph.n_dst, case.graph.n_src)
    edge_weight = gcn_edge_weights(a, edge_index, num_nodes, CTX.dtype)
    normalize = edge_weight is None
    conv = MODULES.get(("gcn", a["in_features"], a["out_features"], normalize, a["bias"]),
                       lambda: GCNConv(a["in_features"], a["out_features"], add_self_loops=False, normalize=normalize,
                                       bias=a["bias"]))
    copy_linear(conv.lin, t.parameters["weight"])
    pmap = {"weight": (conv.lin.weight, True)}
    if a["bias"]:
        with torch.no_grad():
            conv.bias.copy_(t.parameters["bias"])
        pmap["bias"] = (conv.bias, False)
    return layer_answer(case, t, lambda x: conv(padded_rows(x, num_nodes), edge_index, edge_weight), pmap)


def gin_family_answer(case, conv_class, with_edge_attr):
    """GINConv, or GINEConv (with_edge_attr: messages ReLU(x_j + edge_attr), edge_dim None), with the
    case's MLP and eps."""
    a = case.attributes
    t = CaseTensors(case, inputs_require_grad=case.wants_gradients)

    def make():
        mlp = torch.nn.Sequential(
            torch.nn.Linear(a["in_features"], a["hidden_features"], bias=a["bias"]),
            torch.nn.ReLU(),
            torch.nn.Linear(a["hidden_features"], a["out_features"], bias=a["bias"]),
        )
        # aggr: PyG's MessagePassing reduction ("add" for sum); max splits a tie's gradient evenly
        # (torch.scatter_reduce's amax), a valid subgradient.
        return conv_class(mlp, eps=0.0, train_eps=True, aggr={"sum": "add"}.get(aggr, aggr))

    aggr = a.get("aggr", "sum")
    key = (conv_class.__name__, a["in_features"], a["hidden_features"], a["out_features"], a["bias"], aggr)
    conv = MODULES.get(key, make)
    mlp = conv.nn
    p = t.parameters
    copy_linear(mlp[0], p["weight1"], p["bias1"] if a["bias"] else None)
    copy_linear(mlp[2], p["weight2"], p["bias2"] if a["bias"] else None)
    with torch.no_grad():
        conv.eps.copy_(p["eps"].reshape(conv.eps.shape))
    edge_index = aggregation_edges(case, False)  # edge-id order: edge_attr's rows
    n_dst = case.graph.n_dst
    pmap = {"weight1": (mlp[0].weight, True), "weight2": (mlp[2].weight, True), "eps": (conv.eps, False)}
    if a["bias"]:
        pmap.update({"bias1": (mlp[0].bias, False), "bias2": (mlp[2].bias, False)})
    size = (case.graph.n_src, n_dst)
    if with_edge_attr:
        return layer_answer(case, t, lambda x: conv((x, x[:n_dst]), edge_index, t.inputs["edge_attr"], size=size), pmap)
    return layer_answer(case, t, lambda x: conv((x, x[:n_dst]), edge_index, size=size), pmap)


def layer_gin(case):
    from torch_geometric.nn import GINConv

    return gin_family_answer(case, GINConv, False)


def layer_gine(case):
    from torch_geometric.nn import GINEConv

    return gin_family_answer(case, GINEConv, True)


def layer_gat(case):
    from torch_geometric.nn import GATConv

    a = case.attributes
    if a["attn_dropout"] > 0:
        raise kit.Unsupported("attn_dropout > 0: PyG draws its own dropout mask; the oracle's is a function of "
                              "dropout_seed, so the two cannot be compared")
    heads, channels = a["heads"], a["out_features"]
    t = CaseTensors(case, inputs_require_grad=case.wants_gradients)
    key = ("gat", a["in_features"], channels, heads, a["concat"], float(a["negative_slope"]), a["bias"])
    conv = MODULES.get(key, lambda: GATConv(a["in_features"], channels, heads=heads, concat=a["concat"],
                                            negative_slope=a["negative_slope"], dropout=0.0, add_self_loops=False,
                                            bias=a["bias"]))
    lin = conv.lin if getattr(conv, "lin", None) is not None else conv.lin_src
    p = t.parameters
    copy_linear(lin, p["weight"])
    with torch.no_grad():
        conv.att_src.copy_(p["att_src"].reshape(conv.att_src.shape))
        conv.att_dst.copy_(p["att_dst"].reshape(conv.att_dst.shape))
        if a["bias"]:
            conv.bias.copy_(p["bias"])
    pmap = {"weight": (lin.weight, True), "att_src": (conv.att_src, False), "att_dst": (conv.att_dst, False)}
    if a["bias"]:
        pmap["bias"] = (conv.bias, False)
    edge_index = aggregation_edges(case, a["self_loops"])
    conv.eval()
    return layer_answer(case, t, lambda x: conv(x, edge_index), pmap)


def layer_gatv2(case):
    from torch_geometric.nn import GATv2Conv

    a = case.attributes
    heads, channels = a["heads"], a["out_features"]
    t = CaseTensors(case, inputs_require_grad=case.wants_gradients)
    key = ("gatv2", a["in_features"], channels, heads, a["concat"], float(a["negative_slope"]), a["bias"])
    conv = MODULES.get(key, lambda: GATv2Conv(a["in_features"], channels, heads=heads, concat=a["concat"],
                                              negative_slope=a["negative_slope"], dropout=0.0, add_self_loops=False,
                                              bias=a["bias"], share_weights=False))
    p = t.parameters
    # lin_l transforms the sources (the messages), lin_r the destinations; their own biases are not
    # the oracle's (whose one bias is added after the heads are joined): zero, and not compared.
    zero = torch.zeros(heads * channels, device=CTX.device, dtype=CTX.dtype) if a["bias"] else None
    copy_linear(conv.lin_l, p["weight_src"], zero)
    copy_linear(conv.lin_r, p["weight_dst"], zero)
    with torch.no_grad():
        conv.att.copy_(p["att"].reshape(conv.att.shape))
        if a["bias"]:
            conv.bias.copy_(p["bias"])
    pmap = {"weight_src": (conv.lin_l.weight, True), "weight_dst": (conv.lin_r.weight, True), "att": (conv.att, False)}
    if a["bias"]:
        pmap["bias"] = (conv.bias, False)
    edge_index = aggregation_edges(case, a["self_loops"])
    conv.eval()
    return layer_answer(case, t, lambda x: conv(x, edge_index), pmap)


def layer_sage(case):
    from torch_geometric.nn import SAGEConv

    a = case.attributes
    t = CaseTensors(case, inputs_require_grad=case.wants_gradients)
    aggr, project = a.get("aggr", "mean"), a.get("project", False)
    conv = MODULES.get(("sage", a["in_features"], a["out_features"], a["bias"], aggr, project),
                       lambda: SAGEConv(a["in_features"], a["out_features"], aggr=aggr, project=project,
                                        root_weight=True, bias=a["bias"]))
    p = t.parameters
    copy_linear(conv.lin_l, p["weight_neigh"], p["bias"] if a["bias"] else None)
    copy_linear(conv.lin_r, p["weight_self"])
    pmap = {"weight_neigh": (conv.lin_l.weight, True), "weight_self": (conv.lin_r.weight, True)}
    if a["bias"]:
        pmap["bias"] = (conv.lin_l.bias, False)
    if project:  # PyG's projection of the neighbours' side: Linear(in, in) with its bias, then ReLU
        copy_linear(conv.lin, p["weight_pool"], p["bias_pool"])
        pmap.update({"weight_pool": (conv.lin.weight, True), "bias_pool": (conv.lin.bias, False)})
    edge_index = aggregation_edges(case, False)
    n_dst = case.graph.n_dst
    size = (case.graph.n_src, n_dst)
    return layer_answer(case, t, lambda x: conv((x, x[:n_dst]), edge_index, size=size), pmap)


def layer_agnn(case):
    from torch_geometric.nn import AGNNConv

    a = case.attributes
    t = CaseTensors(case, inputs_require_grad=case.wants_gradients)
    conv = MODULES.get(("agnn",), lambda: AGNNConv(requires_grad=True, add_self_loops=False))
    with torch.no_grad():
        conv.beta.copy_(t.parameters["beta"].reshape(conv.beta.shape))
    edge_index = aggregation_edges(case, a["self_loops"])
    return layer_answer(case, t, lambda x: conv(x, edge_index), {"beta": (conv.beta, False)})


# R-GCN (oracle/layers/rgcn.h): PyG's RGCNConv where torch_geometric is used, else the same layer in
# plain torch. Both read edge_type as int64 (CaseTensors) and the case's graph as the other layers do:
# edge_index (source, target), x as the pair (x, x[:n_dst]) so that the root term reads x[i].

RGCN_AGGR = {"mean": "mean", "sum": "add"}  # the case's aggr -> PyG's MessagePassing aggregation


def rgcn_setup(case):
    """(attributes, CaseTensors): the case's aggregation checked, its tensors on the device."""
    a = case.attributes
    if a["aggr"] not in RGCN_AGGR:
        raise kit.Unsupported("aggr '%s' is not mean or sum" % a["aggr"])
    t = CaseTensors(case, inputs_require_grad=case.wants_gradients)
    return a, t


def relation_weights(weight, comp):
    """W [R, in, out]: weight itself, or with bases comp [R, B] times the bases weight [B, in, out]."""
    if comp is None:
        return weight
    bases, in_features, out_features = weight.shape
    return (comp @ weight.reshape(bases, in_features * out_features)).reshape(comp.shape[0], in_features, out_features)


def torch_rgcn(g, a, x, edge_type, p):
    """y [n_dst, out]: each (destination, relation) pair's neighbours summed by index_add (divided by
    their count with aggr = mean; a pair without edges stays 0), all relations transformed at once as
    one product [n_dst, R·in] · [R·in, out], then x[i] · root and bias."""
    relations, n_dst, in_features = int(a["relations"]), g.n_dst, x.shape[1]
    pair = g.rows * relations + edge_type
    h = sum_into(x.index_select(0, g.cols), pair, n_dst * relations)
    if a["aggr"] == "mean":
        count = torch.bincount(pair, minlength=n_dst * relations).clamp(min=1).to(h.dtype)
        h = h / count.unsqueeze(1)
    w = relation_weights(p["weight"], p.get("comp"))
    y = h.reshape(n_dst, relations * in_features) @ w.reshape(relations * in_features, w.shape[2])
    if "root" in p:
        y = y + x[:n_dst] @ p["root"]
    return y + p["bias"] if "bias" in p else y


def layer_rgcn_torch(case):
    """R-GCN without PyG (torch_rgcn), its parameters the case's own leaves."""
    a, t = rgcn_setup(case)
    p = {n: v.requires_grad_(case.wants_gradients) for n, v in t.parameters.items()}
    g = Edges(case.graph)
    edge_type = t.inputs["edge_type"]
    return layer_answer(case, t, lambda x: torch_rgcn(g, a, x, edge_type, p), {n: (v, False) for n, v in p.items()})


def layer_rgcn(case):
    """PyG's RGCNConv(in, out, num_relations=R, num_bases=B or None, aggr, root_weight, bias) with the
    case's weight, comp, root and bias copied in (PyG's names and layouts: weight [R or B, in, out],
    comp [R, B], root [in, out], bias [out]), on (x, x[:n_dst]), edge_index and edge_type."""
    from torch_geometric.nn import RGCNConv

    a, t = rgcn_setup(case)
    bases = int(a["bases"]) or None
    key = ("rgcn", a["in_features"], a["out_features"], a["relations"], bases, a["aggr"], a["root_weight"], a["bias"])
    conv = MODULES.get(key, lambda: RGCNConv(a["in_features"], a["out_features"], num_relations=a["relations"],
                                             num_bases=bases, aggr=RGCN_AGGR[a["aggr"]], root_weight=a["root_weight"],
                                             bias=a["bias"]))
    pmap = {}
    with torch.no_grad():
        for name, value in t.parameters.items():
            getattr(conv, name).copy_(value)
            pmap[name] = (getattr(conv, name), False)
    edge_index = aggregation_edges(case, False)
    edge_type = t.inputs["edge_type"]
    n_dst = case.graph.n_dst
    return layer_answer(case, t, lambda x: conv((x, x[:n_dst]), edge_index, edge_type), pmap)


LAYERS = {"gcn": layer_gcn, "gin": layer_gin, "gine": layer_gine, "gat": layer_gat, "gatv2": layer_gatv2,
          "sage": layer_sage, "agnn": layer_agnn, "rgcn": layer_rgcn}
# Layers the adapter also computes without torch_geometric (--no-pyg, or PyG not installed).
TORCH_LAYERS = {"rgcn": layer_rgcn_torch}
# What the adapter implements where it is fewer values than a target has (PROTOCOL.md §2): a source
# degree of 0 gets factor 0 (gcn_norm masks 1/sqrt(0) to 0; the adapter's own factors do the same),
# and GAT runs without attention dropout (PyG draws its own mask; the oracle's is a function of
# dropout_seed), and edge_softmax keeps duplicate edges as separate entries (PyG's softmax). gnncheck
# draws no case outside these.
IMPLEMENTS = {"normalized_spmm": {"zero_degree": ["zero"]}, "gcn": {"zero_degree": ["zero"]},
              "gat": {"attn_dropout": [0.0]}, "edge_softmax": {"duplicate_edges": ["separate"]},
              # Opt-in attributes (added to these layers later; asked only where declared). max only
              # with --pyg-max: PyG's max aggregation is scatter_reduce(amax, include_self=False) on
              # zeros, whose backward (torch 1.13 to 2.11) counts the excluded initial 0 as a tied
              # entry, so a row whose maximum is exactly 0 passes on half its gradient (caught by
              # `full` on the H100, docs/campaigns.md).
              "sage": {"aggr": ["mean"], "project": [False, True]}, "gin": {"aggr": ["sum", "mean"]},
              # Every value of rgcn's modes, through RGCNConv and without PyG alike (bases: any count,
              # PyG's num_bases; 0 is num_bases=None). gather_mm has no mode: every case is answered.
              "rgcn": {"aggr": ["mean", "sum"], "root_weight": [False, True], "bias": [False, True]}}
PYG_MAX = {"sage": {"aggr": ["mean", "max"], "project": [False, True]}, "gin": {"aggr": ["sum", "mean", "max"]}}


DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
          "bfloat16": torch.bfloat16}


def main():
    global CTX
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", choices=list(DTYPES), default="float32")
    parser.add_argument("--tf32", action="store_true", help="allow TF32 matmuls (declared as tf32)")
    parser.add_argument("--no-pyg", action="store_true",
                        help="no torch_geometric, even when installed: the ops, and rgcn in plain torch")
    parser.add_argument("--gspmm-reductions", choices=["torch", "pyg"], default="torch",
                        help="gspmm's reduction: torch's scatter_reduce (default) or PyG's "
                             "torch_geometric.utils.scatter (needs torch_geometric)")
    parser.add_argument("--segment-reduce", choices=["scatter", "torch"], default="scatter",
                        help="segment_reduce by scatter_reduce (default) or by torch.segment_reduce, whose max and "
                             "min backward copies a gradient <= 0 to every tied row (below)")
    parser.add_argument("--pyg-max", action="store_true",
                        help="declare sage's and gin's max aggregation too (PyG's scatter_reduce amax backward passes "
                             "on half the gradient where a row's maximum is exactly 0: expected to fail)")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    implements = dict(IMPLEMENTS, **(PYG_MAX if args.pyg_max else {}))
    pyg_scatter = None
    if args.gspmm_reductions == "pyg":
        try:
            from torch_geometric.utils import scatter as pyg_scatter
        except ImportError as error:
            parser.error("--gspmm-reductions pyg needs torch_geometric: %s" % error)
        implements["gspmm"] = {"empty_rows": ["zero"]}  # PyG's scatter gives 0 on an empty row
    CTX = Context(args.device, DTYPES[args.dtype], pyg_scatter,
                  args.segment_reduce)
    precision = "tf32" if args.tf32 and args.dtype == "float32" else args.dtype
    targets = {name: (precision, measured(fn), implements.get(name)) for name, fn in OPS.items()}
    pyg_version = None
    if not args.no_pyg:
        try:
            import torch_geometric
            from torch_geometric.nn import aggr as pyg_aggr

            pyg_version = torch_geometric.__version__
            targets.update({name: (precision, measured(fn), implements.get(name)) for name, fn in LAYERS.items()})
            CTX.pyg_aggregations = {"var": pyg_aggr.VarAggregation,
                                    "softmax": lambda: pyg_aggr.SoftmaxAggregation(learn=True)}
        except ImportError:
            pass
    if pyg_version is None:
        targets.update({name: (precision, measured(fn), implements.get(name)) for name, fn in TORCH_LAYERS.items()})
    sys.stderr.write("torch adapter: torch %s on %s, %s, torch_geometric %s, gspmm reductions by %s\n" %
                     (torch.__version__, CTX.device, precision, pyg_version or "not used", args.gspmm_reductions))
    # Between cases the adapter should hold no tensor of a case: device memory that torch's allocator
    # still counts as allocated is what a leak (tensors kept alive across cases) shows. torch's own
    # count, not torch.cuda.mem_get_info(): the device-wide figure moves with every other process on
    # the GPU and with the allocator's cache, which a correct system keeps.
    live_bytes = torch.cuda.memory_allocated if CTX.device.type == "cuda" else None
    # Device-level use as well: what the driver counts for this process (NVML), which also holds
    # memory no torch allocator sees (a cuRAND generator or a cudaMalloc per call in an extension).
    device_bytes = kit.process_device_bytes if CTX.device.type == "cuda" else None
    kit.serve(name="torch" if CTX.device.type == "cpu" else "torch_cuda", targets=targets, live_bytes=live_bytes,
              device_bytes=device_bytes)


if __name__ == "__main__":
    main()

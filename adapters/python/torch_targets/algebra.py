"""The generalized SpMM and SDDMM (DGL's gspmm and gsddmm) and the segment ops (segment_reduce,
segment_aggregation) through PyTorch's broadcasting and scatter_reduce, or PyG's own scatter and
aggregation modules.

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
segment_aggregation is PyG's own VarAggregation, StdAggregation, MulAggregation and
SoftmaxAggregation(learn=True) where torch_geometric is used, and their formulas written with
scatter_reduce otherwise (--no-pyg): std as PyG's var.clamp(min=1e-5).sqrt() with every value
<= sqrt(1e-5) set to 0, mul as PyG's scatter 'mul' on the CPU, scatter_reduce(prod, include_self=True)
on ones (an empty segment gives 1; its backward is the product of the others where a segment holds
one zero, and 0 where it holds more).
"""

import math
import warnings

import torch

import gnncheck_adapter as kit
from . import context
from .context import CaseTensors, Edges, MODULES, evaluate, layer_answer, sum_into


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
        return context.CTX.pyg_scatter(messages, g.rows, dim=0, dim_size=g.n_dst, reduce=reduce)


def op_gspmm(case):
    g = Edges(case.graph)
    a = case.attributes
    reduction = pyg_gspmm_reduction if context.CTX.pyg_scatter is not None else torch_gspmm_reduction
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
    if context.CTX.segment_reduce != "torch":
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


def torch_segment_aggregation(g, aggr, x, temperature):
    """PyG's var, std, mul and softmax aggregations written with torch's scatter_reduce (without
    PyG): the mean of squares minus the squared mean, its clamped and masked square root, the
    product on ones, and the segment softmax of t·x (its largest value, detached, subtracted first)
    weighting x."""
    index = g.rows.unsqueeze(1).expand(g.num_edges, x.shape[1])
    shape = (g.n_dst, x.shape[1])
    if aggr in ("var", "std"):
        mean = scatter_reduce(x.new_zeros(shape), index, x, "mean")
        var = scatter_reduce(x.new_zeros(shape), index, x * x, "mean") - mean * mean
        if aggr == "var":
            return var
        out = var.clamp(min=1e-5).sqrt()
        return out.masked_fill(out <= math.sqrt(1e-5), 0.0)
    if aggr == "mul":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return x.new_ones(shape).scatter_reduce(0, index, x, reduce="prod", include_self=True)
    scores = x * temperature
    top = scatter_reduce(x.new_full(shape, -float("inf")), index, scores.detach(), "amax")
    weights = (scores - top[g.rows]).exp()
    alpha = weights / sum_into(weights, g.rows, g.n_dst)[g.rows]
    return sum_into(alpha * x, g.rows, g.n_dst)


def op_segment_aggregation(case):
    """segment_aggregation through PyG's own aggregation modules (VarAggregation, StdAggregation,
    MulAggregation, SoftmaxAggregation(learn=True) with the case's t) where torch_geometric is used,
    else through torch_segment_aggregation."""
    g = Edges(case.graph)
    aggr = case.attributes["aggr"]
    if aggr not in ("var", "std", "mul", "softmax"):
        raise kit.Unsupported("aggr '%s' is not var, std, mul or softmax" % aggr)
    t = CaseTensors(case, inputs_require_grad=case.wants_gradients)
    if context.CTX.pyg_aggregations is None:
        temperature = t.parameters["t"].requires_grad_(case.wants_gradients) if aggr == "softmax" else None
        pmap = {"t": (temperature, False)} if aggr == "softmax" else {}
        return layer_answer(case, t, lambda x: torch_segment_aggregation(g, aggr, x, temperature), pmap)
    module = MODULES.get(("aggr", aggr), context.CTX.pyg_aggregations[aggr])
    pmap = {}
    if aggr == "softmax":
        with torch.no_grad():
            module.t.copy_(t.parameters["t"].reshape(module.t.shape))
        pmap["t"] = (module.t, False)
    return layer_answer(case, t, lambda x: module(x, g.rows, dim_size=g.n_dst), pmap)

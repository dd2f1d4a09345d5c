"""The sparse ops (spmm, spmm_ve, the SDDMMs, edge softmax, eShuffle, the degree normalizations, and
the fused attention and sddmm_spmm) as differentiable torch functions, following the oracle's
definitions (oracle/*.h); autograd gives their backward.

attention (fused edge softmax and aggregation) is the adapter's edge softmax followed by the
weighted aggregation, differentiated by autograd through exp and the division: another formulation
of the fused op's backward than the oracle's closed form. sddmm_spmm (FusedMM) is the per-head
scores ⟨u[row], v[col]⟩ followed by the same aggregation.
"""

import torch

import gnncheck_adapter as kit
from .context import Edges, evaluate, heads_of, sum_into


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

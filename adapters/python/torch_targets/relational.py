"""The typed-graph targets: segment_mm, gather_mm, typed_linear and the R-GCN and RGAT layers (PyG's RGCNConv and
RGATConv, or the same layers in plain torch).

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

rgat is PyG's RGATConv(in, out, num_relations=R, attention_mechanism='across-relation',
attention_mode='additive-self-attention', heads, dim=1, concat, negative_slope, bias), its default
configuration, every option named so that a change of PyG's defaults cannot change the layer (older
releases defaulted to within-relation), with the case's weight [R, in, H·C], q and k
[H·C, H] and bias copied in (PyG's names and layouts), on x, edge_index and edge_type. RGATConv takes
x alone (x_i and x_j both index it), so on a block it aggregates onto n_src rows of which the first
n_dst are kept; its extra parameters (w, l1, b1, l2, b2: mod's) are never read. Without PyG (or with
--no-pyg) rgat is the same layer in plain torch: each edge's W_r gathered (index_select) and both ends
projected by bmm, the logits through out_i·q + out_j·k, edge_softmax over each destination's in-edges
(sparse_ops), messages alpha·out_j summed by index_add.
"""

import torch

import gnncheck_adapter as kit
from . import context
from .context import CaseTensors, Edges, MODULES, evaluate, layer_answer, sum_into
from .layers import aggregation_edges
from .sparse_ops import edge_softmax


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


def op_typed_linear(case):
    """One weight matrix per node type: PyG's HeteroLinear(in, out, num_types, bias=False) where
    torch_geometric is used, its weight [T, in, out] (PyG's layout) the case's, passed in by
    functional_call so that autograd reaches it; HeteroLinear sorts the nodes by type where they are
    not sorted, multiplies each type's rows (naive loop or pyg-lib's segment_matmul, whichever it times
    faster) and puts y back in node order. Without PyG: gather_mm on the nodes. node_type arrives as
    int64 (CaseTensors, by its index_range)."""
    make = context.CTX.pyg_hetero_linear
    if make is None:
        return evaluate(case, lambda x, node_type, weight: {"y": gather_mm(x, weight, node_type)})
    a = case.attributes
    key = ("typed_linear", a["in_features"], a["out_features"], a["node_types"])
    module = MODULES.get(key, lambda: make(a["in_features"], a["out_features"], a["node_types"], bias=False))
    call = torch.func.functional_call if hasattr(torch, "func") else torch.nn.utils.stateless.functional_call
    return evaluate(case, lambda x, node_type, weight: {"y": call(module, {"weight": weight}, (x, node_type))})


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


# RGAT (oracle/layers/rgat.h): PyG's RGATConv where torch_geometric is used, else the same layer in
# plain torch. Both read edge_type as int64 (CaseTensors).

def rgat_setup(case):
    """(attributes, CaseTensors): the case's tensors on the device."""
    return case.attributes, CaseTensors(case, inputs_require_grad=case.wants_gradients)


def torch_rgat(g, a, x, edge_type, p):
    """y [n_dst, H·C] or [n_dst, C]: out_i = x[row]·W_r and out_j = x[col]·W_r per edge (W_r gathered by
    index_select, one bmm each), logits LeakyReLU(out_i·q + out_j·k), edge_softmax per destination
    and head, messages alpha·out_j summed by index_add, heads joined, then the bias."""
    heads, channels = int(a["heads"]), int(a["out_features"])
    w = p["weight"].index_select(0, edge_type)
    out_i = torch.bmm(x.index_select(0, g.rows).unsqueeze(1), w).squeeze(1)
    out_j = torch.bmm(x.index_select(0, g.cols).unsqueeze(1), w).squeeze(1)
    logits = torch.nn.functional.leaky_relu(out_i @ p["q"] + out_j @ p["k"], float(a["negative_slope"]))
    alpha = edge_softmax(g, logits)
    messages = (alpha.unsqueeze(-1) * out_j.view(-1, heads, channels)).reshape(-1, heads * channels)
    out = sum_into(messages, g.rows, g.n_dst)
    y = out if a["concat"] else out.view(g.n_dst, heads, channels).mean(dim=1)
    return y + p["bias"] if "bias" in p else y


def layer_rgat_torch(case):
    """RGAT without PyG (torch_rgat), its parameters the case's own leaves."""
    a, t = rgat_setup(case)
    p = {n: v.requires_grad_(case.wants_gradients) for n, v in t.parameters.items()}
    g = Edges(case.graph)
    edge_type = t.inputs["edge_type"]
    return layer_answer(case, t, lambda x: torch_rgat(g, a, x, edge_type, p), {n: (v, False) for n, v in p.items()})


def layer_rgat(case):
    """PyG's RGATConv in its default configuration (across-relation, additive self-attention, dim 1) with
    heads, concat, negative_slope and bias from the case, its weight, q, k and bias copied in, on x,
    edge_index and edge_type; y's rows past n_dst (a block's other sources) are dropped."""
    from torch_geometric.nn import RGATConv

    a, t = rgat_setup(case)
    key = ("rgat", a["in_features"], a["out_features"], a["heads"], a["relations"], a["concat"], a["bias"],
           a["negative_slope"])
    conv = MODULES.get(key, lambda: RGATConv(a["in_features"], a["out_features"], num_relations=a["relations"],
                                             attention_mechanism="across-relation",
                                             attention_mode="additive-self-attention", heads=a["heads"], dim=1,
                                             concat=a["concat"], negative_slope=a["negative_slope"], dropout=0.0,
                                             bias=a["bias"]))
    pmap = {}
    with torch.no_grad():
        for name, value in t.parameters.items():
            getattr(conv, name).copy_(value)
            pmap[name] = (getattr(conv, name), False)
    edge_index = aggregation_edges(case, False)
    edge_type = t.inputs["edge_type"]
    return layer_answer(case, t, lambda x: conv(x, edge_index, edge_type), pmap)

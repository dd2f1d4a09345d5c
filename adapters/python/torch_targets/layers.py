"""The layers through PyTorch Geometric (GCNConv, GINConv, GINEConv, GATConv, GATv2Conv, SAGEConv,
AGNNConv), with the oracle's parameters copied into them.

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
"""

import numpy as np
import torch

import gnncheck_adapter as kit
from . import context
from .context import CaseTensors, MODULES, layer_answer


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
    return aggregation_edge_index(g.n_dst, g.row_of_edge, g.col_idx, self_loops, context.CTX.device)


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


def layer_gcn(case):
    from torch_geometric.nn import GCNConv

    a = case.attributes
    t = CaseTensors(case, inputs_require_grad=case.wants_gradients)
    edge_index = aggregation_edges(case, a["self_loops"])
    num_nodes = max(case.graph.n_dst, case.graph.n_src)
    edge_weight = gcn_edge_weights(a, edge_index, num_nodes, context.CTX.dtype)
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
    zero = torch.zeros(heads * channels, device=context.CTX.device, dtype=context.CTX.dtype) if a["bias"] else None
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

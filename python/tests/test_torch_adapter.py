"""The torch adapter's GCN mapping (adapters/python/torch_adapter.py): which cases PyG's GCNConv can
answer, and that the graph the adapter hands it — A or A + I, x padded to max(n_dst, n_src) rows —
with PyG's gcn_norm formula is the oracle's source_degree=in on every graph, square or not.

PyG itself is not installed here; `pyg_gcn_norm` below is PyG 2.x's gcn_norm for
add_self_loops=False (torch_geometric/nn/conv/gcn_conv.py: deg = scatter-add of the edge weights
over the targets, deg^-1/2 with inf set to 0, weight = dinv[source] * w * dinv[target]). The GPU
machine runs the adapter against the real GCNConv."""

import os
import sys

import numpy as np
import pytest
import torch

import gnncheck

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "adapters", "python"))
import torch_adapter  # noqa: E402


def pyg_gcn_norm(edge_index, num_nodes, dtype):
    src, dst = edge_index[0], edge_index[1]
    weight = torch.ones(edge_index.shape[1], dtype=dtype)
    deg = torch.zeros(num_nodes, dtype=dtype).scatter_add_(0, dst, weight)
    dinv = deg.pow(-0.5)
    dinv = dinv.masked_fill(dinv == float("inf"), 0)
    return dinv[src] * weight * dinv[dst]


def gcn_through_the_adapter_mapping(case):
    """What layer_gcn computes with GCNConv(add_self_loops=False, normalize=True), written out."""
    g, a = case.graph, case.attributes
    edge_index = torch_adapter.aggregation_edge_index(
        g.n_dst, g.row_of_edge.numpy(), g.col_idx.numpy(), a["self_loops"])
    num_nodes = max(g.n_dst, g.n_src)
    reason = torch_adapter.gcn_unsupported_reason(a, edge_index, num_nodes)
    if reason is not None:
        raise gnncheck.Unsupported(reason)
    x = torch_adapter.padded_rows(case.inputs["x"], num_nodes)
    h = x @ case.parameters["weight"]
    w = pyg_gcn_norm(edge_index, num_nodes, h.dtype)
    y = h.new_zeros((num_nodes, h.shape[1])).index_add_(0, edge_index[1], w[:, None] * h[edge_index[0]])
    y = y[: g.n_dst]
    return {"y": y + case.parameters["bias"] if "bias" in case.parameters else y}


SUITE = """
name: torch-adapter-gcn
seed: 5
cases_per_property: 6
graphs:
  block:
    family: erdos_renyi
    params: {n_dst: 7, n_src: 12, p: 0.3, duplicate_fraction: 0.1, empty_row_fraction: 0.2}
  tall:
    family: erdos_renyi
    params: {n_dst: 12, n_src: 7, p: 0.3, duplicate_fraction: 0.1}
entries:
  - name: directed
    systems: cpu_float32
    targets: [{name: gcn, attributes: {source_degree: [SOURCE], self_loops: [true, false]}}]
    checks: [differential, adjoint]
    graphs: skewed
  - name: block
    systems: cpu_float32
    targets: [{name: gcn, attributes: {source_degree: [SOURCE], self_loops: [true, false]}}]
    checks: [differential, adjoint]
    graphs: block
  - name: tall
    systems: cpu_float32
    targets: [{name: gcn, attributes: {source_degree: [SOURCE], self_loops: [false]}}]
    checks: [differential]
    graphs: tall
"""


def suite_file(tmp_path, source_degree):
    path = tmp_path / ("gcn_%s.yaml" % source_degree)
    path.write_text(SUITE.replace("SOURCE", source_degree))
    return str(path)


def test_pyg_convention_is_source_degree_in_on_every_graph(tmp_path):
    run = gnncheck.check("gcn", gcn_through_the_adapter_mapping, suite=suite_file(tmp_path, "in"))
    assert len(run) == 5, [v.one_line() for v in run]
    assert all(v.outcome == "pass" and v.conclusive_cases > 0 for v in run), [v.one_line() for v in run]


def test_source_degree_out_is_declined_where_the_conventions_differ(tmp_path):
    """On graphs whose in- and out-degrees differ PyG cannot compute the out convention: the
    adapter declines (unsupported), it does not answer with the other function."""
    run = gnncheck.check("gcn", gcn_through_the_adapter_mapping, suite=suite_file(tmp_path, "out"))
    assert run, "no verdicts"
    assert all(v.outcome not in ("pass", "fail") and v.conclusive_cases == 0 for v in run), [v.one_line() for v in run]


def test_the_decision_per_graph():
    symmetric = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])  # (source, target) pairs both ways
    directed = torch.tensor([[0, 0, 1], [1, 2, 2]])
    reason = torch_adapter.gcn_unsupported_reason
    assert reason({"norm": "symmetric", "source_degree": "in"}, directed, 3) is None
    assert reason({"norm": "symmetric", "source_degree": "out"}, symmetric, 3) is None
    assert "in-degree" in reason({"norm": "symmetric", "source_degree": "out"}, directed, 3)
    assert "symmetric normalization" in reason({"norm": "row_mean", "source_degree": "in"}, directed, 3)
    assert "is not out or in" in reason({"norm": "symmetric", "source_degree": "both"}, directed, 3)


def test_padded_rows_and_edges_follow_the_oracles_aggregation_graph():
    edge_index = torch_adapter.aggregation_edge_index(2, np.array([0, 1, 1]), np.array([3, 0, 2]), True)
    assert edge_index.tolist() == [[3, 0, 2, 0, 1], [0, 1, 1, 0, 1]]  # self-loops (0,0), (1,1) appended
    x = torch.ones(2, 3)
    assert torch_adapter.padded_rows(x, 4).tolist() == [[1.0] * 3] * 2 + [[0.0] * 3] * 2
    assert torch_adapter.padded_rows(x, 2) is x

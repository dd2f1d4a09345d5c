"""The torch adapter's GCN mapping (adapters/python/torch_adapter.py): the graph the adapter hands
GCNConv — A or A + I, x padded to max(n_dst, n_src) rows — with PyG's gcn_norm is the oracle's
source_degree=in on every graph, square or not; the edge weights it passes with normalize=False are
the oracle's source_degree=out and row_mean; and the two conventions are told apart.

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


def gcn_through_the_adapter_mapping(case, always_gcn_norm=False):
    """What layer_gcn computes with GCNConv(add_self_loops=False, normalize=...), written out."""
    g, a = case.graph, case.attributes
    edge_index = torch_adapter.aggregation_edge_index(
        g.n_dst, g.row_of_edge.numpy(), g.col_idx.numpy(), a["self_loops"])
    num_nodes = max(g.n_dst, g.n_src)
    x = torch_adapter.padded_rows(case.inputs["x"], num_nodes)
    h = x @ case.parameters["weight"]
    w = None if always_gcn_norm else torch_adapter.gcn_edge_weights(a, edge_index, num_nodes, h.dtype)
    if w is None:
        w = pyg_gcn_norm(edge_index, num_nodes, h.dtype)
    y = h.new_zeros((num_nodes, h.shape[1])).index_add_(0, edge_index[1], w[:, None] * h[edge_index[0]])
    y = y[: g.n_dst]
    return {"y": y + case.parameters["bias"] if "bias" in case.parameters else y}


def pyg_convention_everywhere(case):
    """An adapter that maps every case to gcn_norm, whatever its source_degree (the confusion the
    attribute exists to expose)."""
    return gcn_through_the_adapter_mapping(case, always_gcn_norm=True)


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
    targets: [{name: gcn, attributes: {source_degree: [SOURCE], self_loops: [true, false], norm: [NORM]}}]
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


def suite_file(tmp_path, source_degree, norm="symmetric"):
    path = tmp_path / ("gcn_%s_%s.yaml" % (source_degree, norm))
    path.write_text(SUITE.replace("SOURCE", source_degree).replace("NORM", norm))
    return str(path)


@pytest.mark.parametrize("source_degree,norm", [("in", "symmetric"), ("out", "symmetric"), ("out", "row_mean")])
def test_every_convention_is_compared_on_every_graph(tmp_path, source_degree, norm):
    run = gnncheck.check("gcn", gcn_through_the_adapter_mapping, suite=suite_file(tmp_path, source_degree, norm))
    assert len(run) == 5, [v.one_line() for v in run]
    assert all(v.outcome == "pass" and v.conclusive_cases == 6 for v in run), [v.one_line() for v in run]


def test_gcn_norm_for_source_degree_out_fails_where_the_degrees_differ(tmp_path):
    """differential sees it; adjoint cannot (the wrong convention is still a function with a matching
    backward), which is why the convention must be declared and not left to the adapter."""
    run = gnncheck.check("gcn", pyg_convention_everywhere, suite=suite_file(tmp_path, "out"),
                         only=["directed/differential"])
    assert len(run) == 1 and run[0].outcome == "fail", [v.one_line() for v in run]


def test_the_edge_weights_per_convention():
    directed = torch.tensor([[0, 0, 1], [1, 2, 2]])  # (source, target): in-degrees 0, 1, 2; out-degrees 2, 1, 0
    weights = torch_adapter.gcn_edge_weights
    assert weights({"norm": "symmetric", "source_degree": "in"}, directed, 3) is None  # PyG's gcn_norm
    assert torch.allclose(weights({"norm": "symmetric", "source_degree": "out"}, directed, 3),
                          torch.tensor([1 / 2 ** 0.5, 1 / 2, 1 / 2 ** 0.5], dtype=torch.float64))
    assert torch.allclose(weights({"norm": "row_mean", "source_degree": "out"}, directed, 3),
                          torch.tensor([1.0, 0.5, 0.5], dtype=torch.float64))
    with pytest.raises(torch_adapter.kit.Unsupported, match="is not out or in"):
        weights({"norm": "symmetric", "source_degree": "both"}, directed, 3)


def test_padded_rows_and_edges_follow_the_oracles_aggregation_graph():
    edge_index = torch_adapter.aggregation_edge_index(2, np.array([0, 1, 1]), np.array([3, 0, 2]), True)
    assert edge_index.tolist() == [[3, 0, 2, 0, 1], [0, 1, 1, 0, 1]]  # self-loops (0,0), (1,1) appended
    x = torch.ones(2, 3)
    assert torch_adapter.padded_rows(x, 4).tolist() == [[1.0] * 3] * 2 + [[0.0] * 3] * 2
    assert torch_adapter.padded_rows(x, 2) is x


OPS_SUITE = """
name: torch-adapter-ops
seed: 11
cases_per_property: 25
graphs:
  small: {family: random, max_nodes: 12, max_avg_degree: 3}
entries:
  - {name: ops, systems: cpu_float32, targets: ops, checks: [differential, adjoint, state_interleaved], graphs: small}
"""


def test_every_op_passes_through_the_process_protocol(tmp_path):
    """The adapter as gnncheck runs it (one process, the case's tensors moved in one copy each way):
    a correct system, so every op passes every check on random graphs (empty ones, duplicate edges,
    several heads, rectangular shapes among them)."""
    import json
    import subprocess

    if not os.environ.get("GNNCHECK_BUILD_DIR"):
        pytest.skip("GNNCHECK_BUILD_DIR is not set (ctest sets it): this test runs the gnncheck command, which "
                    "the Python package does not carry")
    gnncheck = os.path.join(os.environ["GNNCHECK_BUILD_DIR"], "suites", "gnncheck")
    adapter = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "adapters", "python", "torch_adapter.py")
    suite = tmp_path / "ops.yaml"
    suite.write_text(OPS_SUITE)
    command = [gnncheck, "run", str(suite), "--adapter", "%s %s --device cpu --no-pyg" % (sys.executable, adapter),
               "--jobs", "1", "--progress", "plain", "--report", str(tmp_path / "report")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "report" / "report.json").read_text())["results"]
    assert len(results) == 30  # 10 ops x 3 checks
    for r in results:
        assert r["verdict"] == "pass" and r["conclusive"] > 0, r

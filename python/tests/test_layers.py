"""Layers: an nn.Module factory with its parameters mapped by name, a function of the case's named
parameters, and what happens when the mapping does not fit."""

import pytest
import torch

import gnncheck
import example_kernels as k


def test_gcn_module_factory_passes_the_ci_suite():
    run = gnncheck.assert_correct("gcn", k.gcn_forward, module=k.gcn_module, parameters=k.GCN_PARAMETERS)
    # ci's bipartite-tall entry (more destinations than sources) is not applicable to a GCN with
    # self-loops: neutral, never a pass; every other result passes on conclusive cases.
    assert all(v.outcome in ("pass", "not applicable") for v in run), [v.one_line() for v in run]
    assert all(v.conclusive_cases > 0 for v in run if v.outcome == "pass"), [v.one_line() for v in run]
    assert any(v.outcome == "pass" for v in run)
    assert {v.system for v in run} == {"gcn_module"}


def gcn_function(case):
    """GCN written against case.parameters (the catalogue's names and layouts: weight [in, out])."""
    layer = k.GCN(1, 1, bias=False, self_loops=case.attributes["self_loops"], norm=case.attributes["norm"],
                  source_degree=case.attributes["source_degree"])
    x, p = case.inputs["x"], case.parameters
    aggregated = layer.forward.__func__  # reuse the aggregation with an identity linear map
    layer.lin = torch.nn.Identity()
    y = aggregated(layer, x @ p["weight"], case.graph)
    return {"y": y + p["bias"] if "bias" in p else y}


def test_gcn_as_a_function_of_named_parameters_passes():
    seen = set()

    def forward(case):
        seen.update(case.parameters)
        assert all(t.requires_grad == case.wants_gradients for t in case.parameters.values())
        return gcn_function(case)

    gnncheck.assert_correct("gcn", forward)
    assert seen == {"weight", "bias"}


def test_a_wrong_normalization_side_fails():
    class SourceSideInDegree(k.GCN):
        """Normalizes the source by its in-degree (PyG's gcn_norm on a directed graph): wrong where
        in- and out-degrees differ."""

        def forward(self, x, graph):
            rows, cols = graph.row_of_edge, graph.col_idx
            if self.self_loops:
                loops = torch.arange(graph.n_dst)
                rows, cols = torch.cat([rows, loops]), torch.cat([cols, loops])
            deg = torch.bincount(rows, minlength=max(graph.n_dst, x.shape[0])).to(x.dtype)
            inv = torch.where(deg > 0, deg.clamp(min=1).rsqrt(), torch.zeros_like(deg))
            h = self.lin(x)
            y = h.new_zeros((graph.n_dst, h.shape[1])).index_add_(0, rows, (inv[rows] * inv[cols])[:, None] * h[cols])
            return y + self.bias if self.bias is not None else y

    def factory(case):
        a = case.attributes
        return SourceSideInDegree(a["in_features"], a["out_features"], a["bias"], a["self_loops"], a["norm"])

    run = gnncheck.check("gcn", k.gcn_forward, module=factory, parameters=k.GCN_PARAMETERS, only=["op-order"])
    (verdict,) = run
    assert verdict.outcome == "fail" and verdict.system == "factory", verdict.one_line()


def test_mapping_by_name_that_does_not_fit_names_both_lists():
    with pytest.raises(gnncheck.ParameterMappingError) as info:
        gnncheck.check("gcn", k.gcn_forward, module=k.gcn_module)  # by name: lin.weight is not a catalogue name
    text = str(info.value)
    assert "module parameters: ['bias', 'lin.weight']" in text or "module parameters: ['lin.weight']" in text
    assert "case parameters:" in text and "'weight'" in text
    assert "module parameters without a case parameter: lin.weight" in text


def test_a_parameter_missing_from_the_module_is_named():
    def factory(case):
        a = case.attributes
        return k.GCN(a["in_features"], a["out_features"], bias=False, self_loops=a["self_loops"], norm=a["norm"],
                     source_degree=a["source_degree"])

    with pytest.raises(gnncheck.ParameterMappingError, match="case parameters no module parameter is mapped to: bias"):
        gnncheck.check("gcn", k.gcn_forward, module=factory, parameters=k.GCN_PARAMETERS)


def test_a_layout_mismatch_suggests_transposed():
    with pytest.raises(gnncheck.ParameterMappingError, match=r"map it as gnncheck.transposed\('weight'\)"):
        gnncheck.check("gcn", k.gcn_forward, module=k.gcn_module, parameters={"lin.weight": "weight", "bias": "bias"})


def torch_sparse_softmax(case):
    """edge_softmax through torch.sparse.softmax on a COO tensor of the edges (duplicates included):
    torch coalesces it first, so duplicates' logits are summed into one entry, and each edge reads
    its entry's alpha back."""
    g = case.graph
    logits = case.inputs["logits"]
    dst, src = g.row_of_edge, g.col_idx
    heads = logits.shape[1]
    a = torch.sparse_coo_tensor(torch.stack([dst, src]), logits, (g.n_dst, g.n_src, heads))
    alpha = torch.sparse.softmax(a, dim=1).coalesce()
    # The coalesced entries in (dst, src) order; each edge's entry by its key.
    idx = alpha.indices()
    keys = idx[0] * g.n_src + idx[1]
    position = torch.searchsorted(keys, dst * g.n_src + src)
    return {"alpha": alpha.values()[position]}


def test_torch_sparse_softmax_is_the_coalesced_convention():
    """PyTorch's own sparse softmax passes edge_softmax declared duplicate_edges = coalesced, on
    graphs with duplicate edges; declared separate (the default), it fails where a row has duplicates."""
    run = gnncheck.assert_correct("edge_softmax", torch_sparse_softmax, precision="float64",
                                  implements={"duplicate_edges": "coalesced"}, suite="ci")
    assert all(v.outcome in ("pass", "not applicable") for v in run), [v.one_line() for v in run]
    assert sum(v.outcome == "pass" for v in run) >= 10, [v.one_line() for v in run]
    with pytest.raises(gnncheck.CheckFailed) as failed:
        gnncheck.assert_correct("edge_softmax", torch_sparse_softmax, precision="float64", suite="ci")
    assert "duplicate" in str(failed.value), str(failed.value)

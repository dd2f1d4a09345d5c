"""Index tensors through the package: gather_mm's and rgcn's edge_type (each edge's relation, sent as
numbers like every tensor) reaches the callable as int64 — a torch.long tensor or a numpy int64
array — that never requires grad, and callables that index with it pass the ci suite."""

import numpy as np
import torch

import gnncheck


def relations_of(case, integer_dtype, seen):
    """The case's edge_type, after checking what python/API.md promises of it."""
    edge_type = case.inputs["edge_type"]
    assert edge_type.dtype == integer_dtype and tuple(edge_type.shape) == (case.num_edges,)
    assert not getattr(edge_type, "requires_grad", False)
    assert ((edge_type >= 0) & (edge_type < case.attributes["relations"])).all()
    seen.update(int(r) for r in edge_type)
    return edge_type


def assert_passes(run):
    assert all(v.outcome in ("pass", "not applicable") for v in run), [v.one_line() for v in run]
    assert any(v.outcome == "pass" for v in run), [v.one_line() for v in run]
    assert all(v.conclusive_cases > 0 for v in run if v.outcome == "pass"), [v.one_line() for v in run]


def test_the_catalogue_names_the_index_tensors_range():
    targets = {t["name"]: t for t in gnncheck.targets()}
    for target in ("gather_mm", "rgcn", "rgat"):
        ranges = {s["name"]: s["index_range"] for s in targets[target]["inputs"]}
        assert ranges["edge_type"] == "relations" and ranges["x"] == "", ranges
        assert all(s["index_range"] == "" for s in targets[target]["parameters"] + targets[target]["outputs"])


def test_a_torch_gather_mm_gets_edge_type_as_int64_and_passes_the_ci_suite():
    seen = set()

    def gather_mm(case):
        edge_type = relations_of(case, torch.int64, seen)
        x, weight = case.inputs["x"], case.parameters["weight"]
        return {"y": torch.bmm(x.unsqueeze(1), weight.index_select(0, edge_type)).squeeze(1)}

    assert_passes(gnncheck.check("gather_mm", gather_mm, suite="ci"))
    assert len(seen) > 1  # typed graphs: more than one relation was drawn


def test_a_numpy_gather_mm_gets_edge_type_as_int64_and_passes_the_ci_suite():
    seen = set()

    def gather_mm(case):
        edge_type = relations_of(case, np.int64, seen)
        return {"y": np.einsum("kf,kfo->ko", case.inputs["x"], case.parameters["weight"][edge_type])}

    def backward(case, outputs):
        edge_type, x, weight = case.inputs["edge_type"], case.inputs["x"], case.parameters["weight"]
        grad_y = case.grad_outputs["y"]
        grad_weight = np.zeros_like(weight)
        np.add.at(grad_weight, edge_type, np.einsum("kf,ko->kfo", x, grad_y))
        return {"x": np.einsum("ko,kfo->kf", grad_y, weight[edge_type]), "weight": grad_weight}

    assert_passes(gnncheck.check("gather_mm", gather_mm, backward=backward, framework="numpy", suite="ci"))
    assert len(seen) > 1


def test_an_rgcn_function_of_named_parameters_passes_the_ci_suite():
    """R-GCN written against case.parameters: per (destination, relation) means or sums, the
    relations' matrices (or their basis decomposition), the root term on x[i] and the bias."""
    seen = set()

    def rgcn(case):
        edge_type = relations_of(case, torch.int64, seen)
        a, p, g, x = case.attributes, case.parameters, case.graph, case.inputs["x"]
        relations, n_dst = a["relations"], case.n_dst
        pair = g.row_of_edge * relations + edge_type
        h = x.new_zeros((n_dst * relations, x.shape[1])).index_add(0, pair, x[g.col_idx])
        if a["aggr"] == "mean":
            h = h / torch.bincount(pair, minlength=n_dst * relations).clamp(min=1).to(x.dtype).unsqueeze(1)
        weight = p["weight"]
        if "comp" in p:
            weight = (p["comp"] @ weight.reshape(weight.shape[0], -1)).reshape(relations, *weight.shape[1:])
        y = torch.einsum("nrf,rfo->no", h.reshape(n_dst, relations, x.shape[1]), weight)
        if "root" in p:
            y = y + x[:n_dst] @ p["root"]
        return {"y": y + p["bias"] if "bias" in p else y}

    assert_passes(gnncheck.check("rgcn", rgcn, suite="ci"))
    assert len(seen) > 1

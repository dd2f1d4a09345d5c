#!/usr/bin/env python3
"""agnn_pyg_formulation_adapter: AGNN as PyTorch Geometric's AGNNConv computes it, on the CPU, without PyG.

PyG's AGNNConv (torch_geometric/nn/conv/agnn_conv.py, 2.x) is F.normalize, a per-edge dot product of
the normalized rows times beta, PyG's scatter softmax (torch_geometric/utils/softmax.py with an edge
index: a detached scatter max subtracted, exp, a scatter sum plus 1e-16, a division) and a scatter
sum of x_j * alpha; its gradients are torch autograd's through exactly those operations. That
formulation differs from the oracle's (oracle/layers/agnn.h, the fused edge_softmax backward
α(ḡ − Σαḡ) and x/‖x‖'s projection form): the same function, other roundings. This adapter runs it
in float32 with torch's CPU kernels so that those roundings can be met where PyG is not installed;
it declares float32 and serves only `agnn` (self-loops as torch_adapter.py maps them: the oracle's
A + I built here).

    gnncheck check --target agnn --adapter "python3 adapters/python/agnn_pyg_formulation_adapter.py"

--interleave K sums each message's features in the order 0, K, 2K, …, 1, K+1, … instead of 0, 1, 2, …
(the features are permuted before x_j * alpha and back after the aggregation: the same function, the
reduction order of a GPU kernel whose lanes take every K-th element). With K = 4 the saved H200 case
of checks/tolerance.md's section "AGNN's floor" gives PyG-on-CUDA's beta gradient bit for bit.

--bug drops a gradient on purpose (a wrong AGNN every check must fail): `beta` (no beta gradient),
`attention` (the attention's x gradient dropped: the normalized rows
are constants of the backward; beta's gradient kept), `a_for_at` (the aggregation's x gradient
sent along A instead of Aᵀ: grad_x[dst] += alpha·ȳ[src], the forward unchanged).
"""

import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gnncheck_adapter as kit  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

BUG = None
INTERLEAVE = 1


def aggregation_edges(case):
    """(source, destination) per edge of the oracle's aggregation graph: A, then one (i, i) per
    destination row when self_loops is on (oracle/layers/self_loops.h)."""
    g = case.graph
    rows = np.asarray(g.row_of_edge, dtype=np.int64)
    cols = np.asarray(g.col_idx, dtype=np.int64)
    if case.attribute("self_loops", True):
        rows = np.concatenate([rows, np.arange(g.n_dst, dtype=np.int64)])
        cols = np.concatenate([cols, np.arange(g.n_dst, dtype=np.int64)])
    return torch.as_tensor(cols), torch.as_tensor(rows)


def scatter_sum(values, index, n):
    out = values.new_zeros((n,) + tuple(values.shape[1:]))
    expanded = index.view(-1, *([1] * (values.dim() - 1))).expand_as(values)
    return out.scatter_add_(0, expanded, values)


def scatter_softmax(logits, index, n):
    """PyG's softmax over the edges of each destination: max detached, + 1e-16 in the denominator."""
    # torch 1.13 marks scatter_reduce as beta (a warning per call); torch 2.x, PyG's own choice there, does not.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row_max = logits.new_zeros(n).scatter_reduce_(0, index, logits.detach(), reduce="amax", include_self=False)
    ex = (logits - row_max.index_select(0, index)).exp()
    total = scatter_sum(ex, index, n) + 1e-16
    return ex / total.index_select(0, index)


def agnn_forward(case, x, beta):
    src, dst = aggregation_edges(case)
    n = x.shape[0]  # PyG propagates over the n_src nodes of x; the first n_dst rows are kept
    x_norm = F.normalize(x, p=2.0, dim=-1)
    if BUG == "attention":
        x_norm = x_norm.detach()
    logits = (beta if BUG != "beta" else beta.detach()) * (x_norm.index_select(0, dst) * x_norm.index_select(0, src)).sum(dim=-1)
    alpha = scatter_softmax(logits, dst, n)
    order = interleaved_order(x.shape[1], INTERLEAVE)
    if BUG == "a_for_at":
        y = AggregationWithABackward.apply(alpha, x, src, dst, n)
    else:
        gathered = x.index_select(0, src).index_select(1, order)
        y = scatter_sum(gathered * alpha.view(-1, 1), dst, n).index_select(1, torch.argsort(order))
    return y[: case.graph.n_dst]


class AggregationWithABackward(torch.autograd.Function):
    """y = Σ_e alpha_e·x_src(e) into dst(e), with a wrong x gradient: along A (grad_x[dst] += alpha·ȳ[src])."""

    @staticmethod
    def forward(ctx, alpha, x, src, dst, n):
        ctx.save_for_backward(alpha, x, src, dst)
        ctx.n = n
        return scatter_sum(x.index_select(0, src) * alpha.view(-1, 1), dst, n)

    @staticmethod
    def backward(ctx, grad_y):
        alpha, x, src, dst = ctx.saved_tensors
        grad_alpha = (grad_y.index_select(0, dst) * x.index_select(0, src)).sum(dim=-1)
        grad_x = scatter_sum(grad_y.index_select(0, src) * alpha.view(-1, 1), dst, ctx.n)
        return grad_alpha, grad_x, None, None, None


def interleaved_order(features, stride):
    """0, stride, 2·stride, …, 1, stride + 1, …: every feature once."""
    return torch.as_tensor([c for lane in range(stride) for c in range(lane, features, stride)], dtype=torch.int64)


def agnn(case):
    wants = case.wants_gradients
    x = torch.as_tensor(case.inputs["x"]).to(torch.float32).requires_grad_(wants)
    beta = torch.as_tensor(case.parameters["beta"]).to(torch.float32).requires_grad_(wants)
    with torch.enable_grad():
        y = agnn_forward(case, x, beta)
        answer = {"outputs": {"y": y.detach().numpy().astype(case.dtype)}}
        if wants:
            grad_y = torch.as_tensor(case.grad_outputs["y"]).to(torch.float32)
            gx, gbeta = torch.autograd.grad((y * grad_y).sum(), [x, beta], allow_unused=True)
            gx = torch.zeros_like(x) if gx is None else gx
            gbeta = torch.zeros_like(beta) if gbeta is None else gbeta
            given = {"x": gx, "beta": gbeta}
            answer["gradients"] = {e["name"]: given[e["name"]].detach().numpy().astype(case.dtype)
                                   for e in case.gradients}
    return answer


def main():
    global BUG, INTERLEAVE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bug", choices=["beta", "attention", "a_for_at"], default=None,
                        help="a wrong AGNN on purpose (see the module's text)")
    parser.add_argument("--interleave", type=int, default=1, help="feature order of the message reduction (see above)")
    args = parser.parse_args()
    if args.interleave < 1:
        parser.error("--interleave must be at least 1, got %d" % args.interleave)
    BUG, INTERLEAVE = args.bug, args.interleave
    torch.set_num_threads(1)  # one summation order per run: the scatter sums walk edges in id order
    name = "agnn_pyg_formulation" + ("_bug_" + BUG if BUG else "")
    kit.serve(name=name, targets={"agnn": ("float32", agnn)})


if __name__ == "__main__":
    main()

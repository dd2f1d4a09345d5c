#!/usr/bin/python3
"""scipy adapter: gnncheck's SpMM, transposed SpMM and SDDMM computed by scipy.sparse (float64).

Real third-party code under test: the products are scipy.sparse's CSR kernels; the SDDMM forward
gathers the endpoint rows with numpy (scipy has no SDDMM) and its backward is two scipy products.

    gnncheck run --adapter "/usr/bin/python3 adapters/python/scipy_adapter.py"

Needs numpy and scipy (Debian: python3-numpy python3-scipy).
"""

import os
import sys

import numpy as np
import scipy
import scipy.sparse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gnncheck_adapter as kit  # noqa: E402


def spmm(case):
    A = case.graph.to_scipy()
    out = {"outputs": {"y": np.asarray(A @ case.inputs["x"])}}
    if case.wants_gradients:
        out["gradients"] = {"x": np.asarray(A.T @ case.grad_outputs["y"])}
    return out


def spmm_transposed(case):
    A = case.graph.to_scipy()
    out = {"outputs": {"z": np.asarray(A.T @ case.inputs["y"])}}
    if case.wants_gradients:
        out["gradients"] = {"y": np.asarray(A @ case.grad_outputs["z"])}
    return out


def sddmm_dot(case):
    """e[k, h] = <U[row_k, h, :], V[col_k, h, :]>; U is [n_dst, H*C], V is [n_src, H*C]."""
    g = case.graph
    heads = int(case.attribute("heads", 1))
    u = case.inputs["u"]
    v = case.inputs["v"]
    features = u.shape[1] // heads
    u3 = u.reshape(g.n_dst, heads, features)
    v3 = v.reshape(g.n_src, heads, features)
    rows = g.row_of_edge
    e = np.einsum("ehc,ehc->eh", u3[rows], v3[g.col_idx])
    out = {"outputs": {"e": e.reshape(case.outputs[0]["shape"])}}
    if case.wants_gradients:
        grad_e = case.grad_outputs["e"].reshape(g.num_edges, heads)
        grad_u = np.empty_like(u3)
        grad_v = np.empty_like(v3)
        for h in range(heads):
            weighted = g.to_scipy(grad_e[:, h])
            grad_u[:, h, :] = weighted @ v3[:, h, :]
            grad_v[:, h, :] = weighted.T @ u3[:, h, :]
        out["gradients"] = {"u": grad_u.reshape(u.shape), "v": grad_v.reshape(v.shape)}
    return out


if __name__ == "__main__":
    sys.stderr.write("scipy adapter: numpy %s, scipy %s\n" % (np.__version__, scipy.__version__))
    kit.serve(
        name="scipy",
        targets={
            "spmm": ("float64", spmm),
            "spmm_transposed": ("float64", spmm_transposed),
            "sddmm_dot": ("float64", sddmm_dot),
        },
    )

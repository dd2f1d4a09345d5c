#!/usr/bin/env python3
"""A correct GraphSAGE-mean in float64 with numpy, written as an adapter from before `sage` had its
`aggr` and `project` attributes: it declares nothing about them and computes the mean of x.

With --declare-max it declares aggr = [mean, max] (and computes max too); with --log FILE it appends
each case's attributes to FILE as a JSON line, for tests that look at what was drawn. A case asking
for a projection, or for max without --declare-max, is answered `error`, so a case drawn outside
what it implements can never pass.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gnncheck_adapter as kit  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--declare-max", action="store_true")
parser.add_argument("--log")
args = parser.parse_args()


def sage(case):
    a = case.attributes
    if args.log:
        with open(args.log, "a") as f:
            f.write(json.dumps(a) + "\n")
    aggr = a.get("aggr", "mean")
    if a.get("project", False) or (aggr == "max" and not args.declare_max):
        raise RuntimeError("asked for %s: this system implements the mean of x only" % a)
    g = case.graph
    x, p = case.inputs["x"], case.parameters
    rows, cols = g.row_of_edge, g.col_idx
    width = x.shape[1]
    if aggr == "mean":
        degree = np.maximum(np.diff(g.row_ptr), 1).astype(np.float64)
        A = g.to_scipy(1.0 / degree[rows])
        agg = A @ x
    else:  # max per column; the first edge of a row holding it takes the gradient; an empty row gives 0
        agg = np.zeros((g.n_dst, width))
        selected = np.full((g.n_dst, width), -1)
        for e in range(g.num_edges):
            i, j = rows[e], cols[e]
            better = (selected[i] < 0) | (x[j] > agg[i])
            agg[i] = np.where(better, x[j], agg[i])
            selected[i] = np.where(better, e, selected[i])
    y = x[: g.n_dst] @ p["weight_self"] + agg @ p["weight_neigh"]
    if a["bias"]:
        y = y + p["bias"]
    out = {"outputs": {"y": y}}
    if case.wants_gradients:
        gy = case.grad_outputs["y"]
        g_agg = gy @ p["weight_neigh"].T
        if aggr == "mean":
            gx = A.T @ g_agg
        else:
            gx = np.zeros_like(x)
            for i in range(g.n_dst):
                for f in range(width):
                    if selected[i, f] >= 0:
                        gx[cols[selected[i, f]], f] += g_agg[i, f]
        gx[: g.n_dst] += gy @ p["weight_self"].T
        grads = {"x": gx, "weight_self": x[: g.n_dst].T @ gy, "weight_neigh": agg.T @ gy}
        if a["bias"]:
            grads["bias"] = gy.sum(axis=0)
        out["gradients"] = grads
    return out


if args.declare_max:
    kit.serve(name="sage_mean", targets={"sage": ("float64", sage, {"aggr": ["mean", "max"], "project": [False]})})
else:
    kit.serve(name="sage_mean", targets={"sage": ("float64", sage)})

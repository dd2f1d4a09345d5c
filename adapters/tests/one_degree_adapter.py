#!/usr/bin/env python3
"""A correct system that implements one convention only: normalized_spmm with one degree per node
(source_degree = in, a zero degree giving factor 0: PyG's gcn_norm), in float64 with numpy.

It declares so in its hello line (--undeclared: it does not, as an adapter written before
declarations existed), answers `error` for any case outside it — so a case drawn outside the
declaration can never pass — and with --log FILE appends each case's attributes to FILE as a JSON
line, for tests that look at what was drawn.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gnncheck_adapter as kit  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--undeclared", action="store_true")
parser.add_argument("--log")
args = parser.parse_args()


def normalized_spmm(case):
    a = case.attributes
    if args.log:
        with open(args.log, "a") as f:
            f.write(json.dumps(a) + "\n")
    if a["source_degree"] != "in" or a["zero_degree"] != "zero":
        raise RuntimeError("asked for %s: this system implements source_degree = in, zero_degree = zero only" % a)
    g = case.graph
    rows = g.row_of_edge
    in_degree = np.diff(g.row_ptr).astype(np.float64)
    source_degree = np.zeros(g.n_src)
    shared = min(g.n_dst, g.n_src)
    source_degree[:shared] = in_degree[:shared]
    if a["norm"] == "symmetric":
        with np.errstate(divide="ignore"):
            factor = np.where(source_degree[g.col_idx] > 0, 1.0 / np.sqrt(in_degree[rows] * source_degree[g.col_idx]), 0.0)
    else:
        factor = 1.0 / in_degree[rows]
    A = g.to_scipy(factor)
    out = {"outputs": {"y": A @ case.inputs["x"]}}
    if case.wants_gradients:
        out["gradients"] = {"x": A.T @ case.grad_outputs["y"]}
    return out


implements = None if args.undeclared else {"source_degree": ["in"], "zero_degree": "zero"}
kit.serve(name="one_degree", targets={"normalized_spmm": ("float64", normalized_spmm, implements)} if implements
          else {"normalized_spmm": ("float64", normalized_spmm)})

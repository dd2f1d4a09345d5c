#!/usr/bin/env python3
"""A correct segment_aggregation in float64 with numpy, written as an adapter from before the target
had std and mul: it declares nothing about aggr and computes var and softmax.

With --declare-std it declares aggr = [std] (and computes std too); with --log FILE it appends each
case's attributes to FILE as a JSON line, for tests that look at what was drawn. A case asking for
any other aggregation is answered `error`, so a case drawn outside what it implements never passes.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gnncheck_adapter as kit  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--declare-std", action="store_true")
parser.add_argument("--log")
args = parser.parse_args()


def segment_aggregation(case):
    a = case.attributes
    if args.log:
        with open(args.log, "a") as f:
            f.write(json.dumps(a) + "\n")
    aggr = a["aggr"]
    known = ("std",) if args.declare_std else ("var", "softmax")
    if aggr not in known:
        raise RuntimeError("asked for aggr = %s: this system implements %s only" % (aggr, ", ".join(known)))
    ptr, x = case.graph.row_ptr, case.inputs["x"]
    gy = case.grad_outputs.get("y")
    y, gx, gt = np.zeros((len(ptr) - 1, x.shape[1])), np.zeros_like(x), 0.0
    for i in range(len(ptr) - 1):
        seg = x[ptr[i]:ptr[i + 1]]
        if len(seg) == 0:
            continue
        mean = seg.mean(axis=0)
        var = (seg * seg).mean(axis=0) - mean * mean
        if aggr == "var":
            y[i] = var
            if gy is not None:
                gx[ptr[i]:ptr[i + 1]] = gy[i] * 2.0 / len(seg) * (seg - mean)
        elif aggr == "std":
            above = var > 1e-5
            y[i] = np.where(above, np.sqrt(np.where(above, var, 1.0)), 0.0)
            if gy is not None:
                gx[ptr[i]:ptr[i + 1]] = np.where(above, gy[i] * (seg - mean) / (len(seg) * np.where(above, y[i], 1.0)), 0.0)
        else:
            t = case.parameters["t"][0]
            w = np.exp(t * seg - (t * seg).max(axis=0))
            alpha = w / w.sum(axis=0)
            y[i] = (alpha * seg).sum(axis=0)
            if gy is not None:
                gx[ptr[i]:ptr[i + 1]] = gy[i] * alpha * (1.0 + t * (seg - y[i]))
                gt += float((gy[i] * (alpha * seg * (seg - y[i])).sum(axis=0)).sum())
    out = {"outputs": {"y": y}}
    if gy is not None:
        out["gradients"] = {"x": gx}
        if aggr == "softmax":
            out["gradients"]["t"] = np.array([gt])
    return out


if args.declare_std:
    kit.serve(name="segment_var_softmax",
              targets={"segment_aggregation": ("float64", segment_aggregation, {"aggr": ["std"]})})
else:
    kit.serve(name="segment_var_softmax", targets={"segment_aggregation": ("float64", segment_aggregation)})

"""An adapter built on the kit whose system prints on stdout without newlines, from Python and from
the C level; the kit must keep every protocol line intact (process_system_test)."""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import gnncheck_adapter as kit  # noqa: E402


def spmm(case):
    print("progress: ", end="")  # no newline: would glue itself to a protocol line on stdout
    os.write(1, b"[C-level chatter without newline]")
    g = case.graph
    x = case.inputs["x"]
    y = np.zeros((g.n_dst, x.shape[1]))
    np.add.at(y, g.row_of_edge, x[g.col_idx])
    answer = {"outputs": {"y": y}}
    if case.wants_gradients:
        gx = np.zeros_like(x)
        np.add.at(gx, g.col_idx, case.grad_outputs["y"][g.row_of_edge])
        answer["gradients"] = {"x": gx}
    if case.seed == 5:
        raise kit.Unsupported("seed 5 is outside this system's scope")
    if case.seed == 6:
        raise MemoryError("simulated allocation failure")
    return answer


print("imported", end="")  # before the hello line, also without newline
kit.serve(name="chatty", targets={"spmm": ("float64", spmm)})

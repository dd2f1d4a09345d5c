"""An adapter whose system prints on stdout without newlines, from Python and from the C level.

Default: built on the kit, which must keep every protocol line intact (process_system_test).
--glued: speaks the protocol itself on the real stdout, as a hand-written adapter might, and glues
every protocol line to text printed before it without a newline ("Loading...gnncheck-hello {...}",
"50%gnncheck-done /tmp/..."): gnncheck must still recognise both lines (PROTOCOL.md §1).
"""

import json
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


def serve_glued():
    out = sys.stdout
    out.write("Loading model...")
    out.flush()
    hello = {"protocol": 1, "name": "glued", "targets": {"spmm": "float64"}}
    out.write("gnncheck-hello " + json.dumps(hello) + "\n")
    out.flush()
    for line in sys.stdin:
        directory = line.rstrip("\n")
        case = kit.read_case(directory)
        answer = spmm(case)  # prints "progress: [C-level chatter without newline]" on this same stdout
        kit.write_tensors(case, answer)
        kit.write_result(directory, "ok")
        out.write(" 100%")
        out.write("gnncheck-done " + directory + "\n")
        out.flush()


if len(sys.argv) == 2 and sys.argv[1] == "--glued":
    serve_glued()
else:
    print("imported", end="")  # before the hello line, also without newline
    kit.serve(name="chatty", targets={"spmm": ("float64", spmm)})

"""gnncheck.check_scale: `gnncheck scale` on a Python callable, in process (torch on the cpu).

A correct SpMM and a correct GCN pass on R-MAT graphs of 10^5–10^6 edges with 200 sampled rows; the
A-for-Aᵀ backward is caught by a nonzero gradient outside the sampled rows' neighbourhood; bad
options raise UsageError naming the parameter; a callable that raises or declines is an error,
never a pass; the graph and the sampled rows are those of `gnncheck scale` with the same graph and
seed; and the printed re-run line repeats exactly the failing scale case."""

import json
import os
import re
import subprocess
import sys
import time

import pytest
import torch

import gnncheck
import example_kernels as k
from rerun_support import rerun_line, run as run_command

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "rerun", "failing_scale_example.py")


def gnncheck_command():
    """The `gnncheck` executable of the build tree this package was built in."""
    candidates = [os.path.join(os.environ.get("GNNCHECK_BUILD_DIR", ""), "suites", "gnncheck"),
                  os.path.normpath(os.path.join(os.path.dirname(gnncheck.__file__), "..", "..", "suites", "gnncheck"))]
    found = [c for c in candidates if os.path.isfile(c) and os.access(c, os.X_OK)]
    if not found:
        pytest.skip("the gnncheck command is not built beside this package (looked at %s)" % ", ".join(candidates))
    return found[0]


def test_a_correct_spmm_passes_with_one_evaluation_of_the_whole_graph(tmp_path):
    seen = []

    def forward(case):
        seen.append((case.n_dst, case.num_edges, case.inputs["x"].device.type, case.inputs["x"].dtype,
                     sorted(case.grad_outputs)))
        return k.spmm_forward(case)

    start = time.perf_counter()
    run = gnncheck.assert_correct_at_scale("spmm", forward, graph="rmat:16", rows=200, seed=3, report_dir=tmp_path)
    seconds = time.perf_counter() - start
    print("spmm, rmat:16, 200 rows: %s in %.2f s (%s)" % (run.verdict.outcome, seconds, run.seconds))
    assert run.passed and run.verdict.outcome == "pass" and run.verdict.check == "scale"
    assert len(seen) == 1, seen  # one evaluation, forward and backward, of the whole graph
    n_dst, num_edges, device, dtype, grads = seen[0]
    assert n_dst == 65536 and num_edges > 9 * 10 ** 5 and device == "cpu" and dtype == torch.float32 and grads == ["y"]
    assert run.graph == "rmat:16" and "65536×65536" in run.graph_summary and run.seed == 3
    assert sum(run.strata.values()) == 200 and run.strata["highest in-degree"] == 50 and run.strata["first row"] == 1
    assert {c["tensor"] for c in run.comparisons} == {"output y", "gradient x", "gradient x outside the neighbourhood"}
    assert run.compared_elements > 0 and run.zero_checked_elements > 0
    w = run.worst
    assert w["ratio"] <= 1 and w["bound"] > 0 and abs(w["actual"] - w["expected"]) <= w["bound"] and w["where"]
    assert run.verdict.metric <= run.verdict.bound and run.verdict.precision == "float32"
    assert run.callable_seconds is not None and run.callable_seconds <= run.seconds["system"]
    assert "PASS scale forward/spmm on rmat:16" in run.summary and "worst:" in run.summary
    assert run.summary.count("re-run:") == 1 and run.rerun in run.summary and "GNNCHECK_SEED=3" in run.rerun
    for name in ("report.json", "junit.xml", "summary.md", "index.html", "scale_rows.json"):
        assert (tmp_path / name).is_file(), name
    report = json.loads((tmp_path / "report.json").read_text())
    (result,) = report["results"]
    assert result["check"] == "scale" and result["verdict"] == "pass" and result["seed"] == 3
    assert seconds < 30


def test_a_correct_gcn_module_passes():
    for norm in ("symmetric", "row_mean"):
        run = gnncheck.assert_correct_at_scale("gcn", k.gcn_forward, module=k.gcn_module, parameters=k.GCN_PARAMETERS,
                                               graph="rmat:15", rows=200, norm=norm, features=8, out_features=4)
        print("gcn %s, rmat:15: %s, worst %.3g of its bound, %.2f s" % (norm, run.verdict.outcome, run.worst["ratio"],
                                                                         run.seconds["total"]))
        assert {"gradient weight", "gradient bias", "gradient x outside the neighbourhood"} <= {c["tensor"] for c in run.comparisons}


def test_the_example_kernels_gcn_function_and_numpy_backward_pass():
    import numpy as np

    def numpy_forward(case):
        g, x = case.graph, case.inputs["x"]
        rows = np.repeat(np.arange(g.n_dst), np.diff(g.row_ptr))
        y = np.zeros((g.n_dst, x.shape[1]), dtype=x.dtype)
        np.add.at(y, rows, x[g.col_idx])
        return {"y": y}

    def numpy_backward(case, outputs):
        g, gy = case.graph, case.grad_outputs["y"]
        rows = np.repeat(np.arange(g.n_dst), np.diff(g.row_ptr))
        gx = np.zeros((g.n_src, gy.shape[1]), dtype=gy.dtype)
        np.add.at(gx, g.col_idx, gy[rows])
        return {"x": gx}

    run = gnncheck.assert_correct_at_scale("spmm", numpy_forward, backward=numpy_backward, framework="numpy",
                                           graph="rmat:13", rows=100)
    assert run.verdict.outcome == "pass"


def test_the_a_for_a_transposed_backward_is_caught():
    with pytest.raises(gnncheck.CheckFailed) as failed:
        gnncheck.assert_correct_at_scale("spmm", k.buggy_spmm_forward, graph="rmat:14", rows=200, seed=5)
    message = str(failed.value)
    print(message)
    run = failed.value.run
    assert run.verdict.outcome == "fail" and not run.passed
    assert "FAIL scale buggy_spmm_forward/spmm on rmat:14" in message and "seed 5" in message
    assert "highest in-degree" in message and "random" in message  # the strata
    assert re.search(r"worst: gradient x outside the neighbourhood \[\d+, \d+\] at source \d+.*: system -?[0-9.e+-]+, exact 0, "
                     r"bound 0", message), message
    assert message.count("re-run:") == 1 and failed.value.rerun and failed.value.rerun in message
    assert "GNNCHECK_SEED=5" in failed.value.rerun and "GNNCHECK_SCALE_ONLY=buggy_spmm_forward/spmm" in failed.value.rerun
    assert run.worst["bound"] == 0 and run.worst["actual"] != 0 and run.worst["expected"] == 0


@pytest.mark.parametrize("options, expected", [
    ({"graph": "grid:5"}, "graph 'grid:5': not a file, and not kronecker:SCALE, rmat:SCALE[,EDGE_FACTOR]"),
    ({"graph": "rmat:x"}, "graph 'rmat:x': SCALE 'x' is not an integer"),
    ({"graph": "kronecker:14,4"}, "graph 'kronecker:14,4': kronecker takes SCALE only"),
    ({"graph": None}, "graph: required"),
    ({"graph": 14}, "graph=14: expected a string"),
    ({"rows": 0}, "rows must be at least 1, got 0"),
    ({"rows": 2.5}, "rows=2.5: expected an integer"),
    ({"hub_edges": -1}, "hub_edges must be at least 0, got -1"),
    ({"hub_sources": -1}, "hub_sources must be at least 0, got -1"),
    ({"magnitude": 0.0}, "magnitude must be a positive finite number, got 0"),
    ({"magnitude": "big"}, "magnitude='big': expected a positive finite number"),
    ({"seed": -2}, "seed=-2: expected a non-negative integer"),
    ({"heads": 2}, "heads: target spmm has no 'heads' attribute"),
    ({"out_features": 3}, "out_features: target spmm has no 'out_features' attribute"),
    ({"features": 0}, "features 0: target 'spmm': attribute 'features' must be at least 1, got 0"),
    ({"target": "gcn", "norm": "sideways"}, "norm sideways: unknown degree normalization 'sideways': expected symmetric or row_mean"),
    ({"target": "gcn", "hidden_features": 8}, "hidden_features: target gcn has no 'hidden_features' attribute"),
    ({"target": "spmm_transposed"}, "target spmm_transposed: not supported by gnncheck scale; supported targets: spmm, spmm_ve"),
    ({"target": "spmx"}, "unknown target 'spmx'"),
    ({"precision": "float8"}, "precision 'float8': expected one of"),
])
def test_bad_options_raise_usage_error_naming_the_parameter(options, expected):
    calls = []
    args = {"target": "spmm", "graph": "rmat:8", "rows": 10}
    args.update(options)
    with pytest.raises(gnncheck.UsageError) as raised:
        gnncheck.check_scale(args.pop("target"), lambda case: calls.append(case), **args)
    assert expected in str(raised.value), str(raised.value)
    assert not calls  # refused before the callable ran


def test_the_supported_targets_are_the_engines():
    assert gnncheck.scale_targets() == ["spmm", "spmm_ve", "sddmm_dot", "sddmm_add", "edge_softmax", "normalized_spmm",
                                        "attention", "sddmm_spmm", "gcn", "gin", "gat", "sage", "agnn", "gine", "gatv2"]
    assert set(gnncheck.scale_targets()) <= {t["name"] for t in gnncheck.targets()}


@pytest.mark.parametrize("forward, expected", [
    (lambda case: (_ for _ in ()).throw(RuntimeError("kernel launch failed")), "RuntimeError: kernel launch failed"),
    (lambda case: (_ for _ in ()).throw(gnncheck.Unsupported("square graphs of at most 10^4 rows")),
     "answered unsupported: square graphs of at most 10^4 rows"),
    (lambda case: {"y": k.spmm_forward(case)["y"][:-1]}, "output 'y' must be [n_dst, features] = ["),
])
def test_a_callable_that_raises_or_answers_wrongly_is_an_error_never_a_pass(forward, expected):
    run = gnncheck.check_scale("spmm", forward, graph="rmat:10", rows=50)
    assert run.verdict.outcome == "error" and not run.passed and run.verdict.conclusive_cases == 0
    assert expected in run.verdict.message, run.verdict.message
    assert expected in run.summary and "ERROR scale" in run.summary
    with pytest.raises(gnncheck.CheckFailed, match="error"):
        gnncheck.assert_correct_at_scale("spmm", forward, graph="rmat:10", rows=50)


def test_a_nan_answer_at_scale_fails_the_check_naming_the_element():
    run = gnncheck.check_scale("spmm", lambda case: {"y": k.spmm_forward(case)["y"] * float("nan")}, graph="rmat:10", rows=50)
    assert run.verdict.outcome == "fail" and not run.passed, run.verdict.message
    assert "nan" in run.verdict.message, run.verdict.message


def test_the_graph_and_the_sampled_rows_are_the_commands(tmp_path):
    """The same graph and seed: the same graph, the same rows with the same strata and in-degrees."""
    command = [gnncheck_command(), "scale", "--system", "cpu_float32", "--target", "spmm", "--graph", "rmat:13,8", "--rows", "150",
               "--seed", "7", "--report", str(tmp_path / "command")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    run = gnncheck.assert_correct_at_scale("spmm", k.spmm_forward, graph="rmat:13,8", rows=150, seed=7,
                                           report_dir=tmp_path / "python")
    ours = json.loads((tmp_path / "python" / "scale_rows.json").read_text())
    theirs = json.loads((tmp_path / "command" / "scale_rows.json").read_text())
    assert ours["graph_summary"] == theirs["graph_summary"] == run.graph_summary
    assert ours["rows"] == theirs["rows"] and ours["strata"] == theirs["strata"]
    assert ours["neighbourhood"] == theirs["neighbourhood"]
    assert [list(r) for r in run.rows] == [[r["row"], r["stratum"], r["in_degree"]] for r in theirs["rows"]]


def _worst(output):
    match = re.search(r"worst: .*bound \S+ \(\S+ the bound\)", output)
    assert match, output
    return match.group(0)


def test_the_pytest_rerun_line_repeats_exactly_the_failing_scale_case(tmp_path):
    first = run_command([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "--rootdir", HERE,
                  "--basetemp", str(tmp_path / "first"), EXAMPLE + "::test_spmm_at_scale"], env_extra={"EXAMPLE_SEED": "4"})
    assert first.returncode == 1, first.stdout + first.stderr
    assert "CheckFailed" in first.stdout and "correct spmm: pass" in first.stdout
    line = rerun_line(first.stdout)
    assert "GNNCHECK_SEED=4" in line and "GNNCHECK_SCALE_ONLY=buggy_spmm_forward/spmm" in line
    assert "rerun/failing_scale_example.py::test_spmm_at_scale" in line
    # The line works as printed, with the test's own seed gone: GNNCHECK_SEED replaces it.
    again = run_command(line + " -s --basetemp " + str(tmp_path / "again"), shell=True, env_extra={"EXAMPLE_SEED": "999"})
    assert again.returncode == 1, again.stdout + again.stderr
    assert "correct spmm: skipped" in again.stdout  # narrowed to the failing scale check
    assert _worst(again.stdout) == _worst(first.stdout)
    assert "seed 4" in again.stdout and rerun_line(again.stdout) == line


def test_the_script_rerun_line_repeats_the_failure():
    first = run_command([sys.executable, EXAMPLE])
    assert first.returncode == 1 and "gnncheck.CheckFailed" in first.stderr, first.stderr
    line = rerun_line(first.stderr)
    assert line.endswith(EXAMPLE) and "GNNCHECK_SEED=1" in line
    again = run_command(line, shell=True)
    assert again.returncode == 1
    assert _worst(again.stderr) == _worst(first.stderr)


def test_a_graph_file_is_read_as_the_command_reads_it(tmp_path):
    path = tmp_path / "ring.mtx"
    n = 300
    edges = [(i, (i + 1) % n) for i in range(n)] + [(i, (i + 7) % n) for i in range(0, n, 3)]
    path.write_text("%%%%MatrixMarket matrix coordinate pattern general\n%d %d %d\n" % (n, n, len(edges)) +
                    "".join("%d %d\n" % (r + 1, c + 1) for r, c in edges))
    run = gnncheck.assert_correct_at_scale("spmm", k.spmm_forward, graph=path, rows=40)  # a path-like object
    assert run.graph == str(path) and "%d edges" % len(edges) in run.graph_summary
    with pytest.raises(gnncheck.UsageError, match="graph '.*missing.mtx': not a file"):
        gnncheck.check_scale("spmm", k.spmm_forward, graph=tmp_path / "missing.mtx")

"""SpMM as a torch.autograd.Function: the correct one passes the ci suite, the A-for-Aᵀ one fails
with a shrunk counterexample, and the case object is what python/API.md says it is."""

import os
import re
import subprocess
import sys
import time

import pytest
import torch

import gnncheck
import example_kernels as k


def test_correct_autograd_function_passes_the_ci_suite():
    start = time.perf_counter()
    run = gnncheck.assert_correct("spmm", k.spmm_forward, precision="float32", suite="ci", device="cpu")
    seconds = time.perf_counter() - start
    print("assert_correct('spmm', suite='ci'): %.2f s for %d verdicts" % (seconds, len(run)))
    assert len(run) >= 8
    assert all(v.outcome == "pass" and v.conclusive_cases > 0 for v in run), [v.one_line() for v in run]
    assert {v.check for v in run} >= {"differential", "adjoint", "metamorphic_relabel", "state_interleaved", "op_order"}
    assert all(v.precision == "float32" and v.system == "spmm_forward" for v in run)
    assert os.path.isfile(os.path.join(run.report_dir, "report.json"))


def test_backward_with_A_for_A_transposed_fails_with_a_shrunk_counterexample():
    run = gnncheck.check("spmm", k.buggy_spmm_forward, precision="float32", suite="ci")
    assert not run.passed
    differential = next(v for v in run if v.entry == "differential" and v.check == "differential")
    assert differential.outcome == "fail"
    assert "gradient x" in differential.message and "Worst element" in differential.message
    assert differential.counterexample and os.path.isdir(differential.counterexample)
    saved = differential.load_counterexample()
    assert saved["check"] == "differential" and saved["target"] == "spmm"
    assert saved["n_dst"] <= 4 and saved["n_src"] <= 4, saved
    # The adjoint check needs no oracle at all and catches it too.
    assert next(v for v in run if v.entry == "differential" and v.check == "adjoint").outcome == "fail"
    # On non-square graphs the kernel declares itself out of scope: not tested, which is not a pass.
    assert {v.outcome for v in run if v.entry == "bipartite"} == {"not tested"}


def test_assert_correct_raises_check_failed_with_the_failure_story(tmp_path):
    with pytest.raises(gnncheck.CheckFailed) as info:
        gnncheck.assert_correct("spmm", k.buggy_spmm_forward, report_dir=tmp_path / "report")
    error = info.value
    assert isinstance(error, AssertionError)
    text = str(error)
    for needle in ("system 'buggy_spmm_forward'", "target 'spmm'", "gradient x", "got ", "expected ", "bound",
                   "Case seed ", "counterexample (shrunk): " + str(tmp_path / "report" / "cases"), "re-run: "):
        assert needle in text, (needle, text)
    assert "gnncheck-replay" not in text and "RC_PARAMS" not in text  # the command's hints do not apply here
    assert text.count("re-run: ") == 1
    # What the kernel computed instead, named from the engine's catalogue of known-wrong variants.
    assert "Diagnosis: matches: backward uses A where Aᵀ is needed (the TC-GNN bug class)" in text, text
    assert os.path.isfile(tmp_path / "report" / "summary.md")


def test_repro_re_runs_a_saved_counterexample():
    run = gnncheck.check("spmm", k.buggy_spmm_forward, only=["differential/differential"])
    (failed,) = run
    still = gnncheck.repro(failed.counterexample, k.buggy_spmm_forward, raise_on_failure=False)
    assert still.outcome == "fail" and still.check == "differential" and still.precision == "float32"
    fixed = gnncheck.repro(failed.counterexample, k.spmm_forward)
    assert fixed.outcome == "pass"
    with pytest.raises(gnncheck.CheckFailed):
        gnncheck.repro(failed.counterexample, k.buggy_spmm_forward)


def test_the_case_object():
    seen = []

    def forward(case):
        seen.append(case)
        return k.spmm_forward(case)

    gnncheck.assert_correct("spmm", forward, precision="float64", only=["bipartite"])
    assert seen
    for case in seen:
        assert case.target == "spmm" and case.precision == "float64" and case.framework == "torch"
        x = case.inputs["x"]
        assert x.dtype == torch.float64 and x.device.type == "cpu" and x.shape[0] == case.n_src
        assert x.requires_grad == case.wants_gradients
        assert case.graph.row_ptr.dtype == torch.int64 and case.graph.col_idx.dtype == torch.int64
        assert case.graph.row_ptr.shape[0] == case.n_dst + 1 and case.graph.col_idx.shape[0] == case.num_edges
        assert case.graph.edge_index.shape == (2, case.num_edges)
        assert case.attributes["features"] == x.shape[1]
        assert case.parameters == {}
        if case.wants_gradients:
            assert case.grad_outputs["y"].shape == (case.n_dst, x.shape[1])
    assert any(c.n_dst != c.n_src for c in seen)  # the bipartite entry's graphs are non-square
    assert any(c.wants_gradients for c in seen) and any(not c.wants_gradients for c in seen)


@pytest.mark.parametrize("precision, dtype", [("float32", torch.float32), ("tf32", torch.float32), ("float64", torch.float64)])
def test_declared_precision_sets_the_dtype_and_the_bound(precision, dtype):
    dtypes = set()

    def forward(case):
        dtypes.add(case.inputs["x"].dtype)
        return k.spmm_forward(case)

    run = gnncheck.assert_correct("spmm", forward, precision=precision, only=["differential"])
    assert dtypes == {dtype}
    assert {v.precision for v in run} == {precision}


def test_a_half_precision_kernel_passes_when_declared_bfloat16():
    def forward(case):
        # Computes in bfloat16 inside, as an AMP region would; returns bfloat16.
        x = case.inputs["x"].to(torch.bfloat16)
        return {"y": k.SpMM.apply(case.graph.row_ptr, case.graph.col_idx, case.n_dst, x)}

    gnncheck.assert_correct("spmm", forward, precision="bfloat16", only=["differential"])
    with pytest.raises(gnncheck.CheckFailed):
        gnncheck.assert_correct("spmm", forward, precision="float32", only=["differential/differential"])


def test_float32_accumulation_is_declared_shown_and_refused_when_coarser():
    def stored_in_bfloat16_summed_in_float32(case):
        x = case.inputs["x"].to(torch.bfloat16).to(torch.float32)
        y = k.SpMM.apply(case.graph.row_ptr, case.graph.col_idx, case.n_dst, x)
        return {"y": y.to(torch.bfloat16)}

    run = gnncheck.assert_correct("spmm", stored_in_bfloat16_summed_in_float32, precision="bfloat16",
                                  accumulation="float32", only=["differential", "hubs-multigraph"])
    assert {v.precision for v in run} == {"bfloat16 (float32 accumulation)"}
    with pytest.raises(gnncheck.UsageError, match="accumulation 'float16' is coarser than the precision 'bfloat16'"):
        gnncheck.check("spmm", stored_in_bfloat16_summed_in_float32, precision="bfloat16", accumulation="float16")
    with pytest.raises(gnncheck.UsageError, match="accumulation 'fp32'"):
        gnncheck.check("spmm", stored_in_bfloat16_summed_in_float32, precision="bfloat16", accumulation="fp32")


def spmm_ve(case):
    """Edge-weighted SpMM per head, written with torch's differentiable indexing ops."""
    w, x = case.inputs["edge_values"], case.inputs["x"]
    g = case.graph
    heads, width = w.shape[1], x.shape[1]
    # Explicit sizes, never -1: on a graph without edges a -1 is ambiguous to torch.
    messages = (w[:, :, None] * x[g.col_idx].reshape(g.num_edges, heads, width // heads)).reshape(g.num_edges, width)
    return {"y": x.new_zeros((g.n_dst, x.shape[1])).index_add(0, g.row_of_edge, messages)}


def test_several_differentiable_inputs():
    run = gnncheck.assert_correct("spmm_ve", spmm_ve, only=["differential"])
    assert all(v.passed for v in run)


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _readme_timing_claims():
    """The README's figures for assert_correct's time, by suite: {suite: (low, high)}."""
    with open(os.path.join(REPO, "python", "README.md"), encoding="utf-8") as f:
        text = " ".join(f.read().split())
    start = text.find("Time of `gnncheck.assert_correct(\"spmm\", example_kernels.spmm_forward, suite=…)`")
    assert start >= 0, "python/README.md states no measured time of assert_correct"
    paragraph = text[start:text.find("## ", start)]
    claims = {}
    for suite, low, high in re.findall(r"`(\w+)` \([^)]*\) (\d+\.\d+)(?:–(\d+\.\d+))? s", paragraph):
        claims[suite] = (float(low), float(high or low))
    return paragraph, claims


def test_the_readmes_timing_claims_are_recorded_measurements():
    paragraph, claims = _readme_timing_claims()
    assert {"ci", "full"} <= set(claims), paragraph
    with open(os.path.join(REPO, "docs", "python-compatibility.md"), encoding="utf-8") as f:
        docs = f.read()
    timings = docs[docs.index("## Timings"):]
    for suite, (low, high) in claims.items():
        row = "%s–%s" % (("%.3f" % low).rstrip("0"), ("%.3f" % high).rstrip("0")) if high != low else "%g" % low
        assert re.search(r"\| `%s` \([^|]*\) \| %s \|" % (suite, re.escape(row)), timings), (suite, row)
    # The figures themselves are measurements of a benchmark (docs/python-compatibility.md gives its
    # command), not of this test: a test's verdict never depends on the machine's load (on the GPU
    # machine, next to ten other gnncheck processes, this call took 5.8 s against 0.07–0.1 s alone).


def test_the_leaks_suite_on_the_cpu_says_what_would_measure_it():
    # In a fresh process, as a user's would be.
    code = ("import gnncheck, example_kernels as k\n"
            "run = gnncheck.check('spmm', k.spmm_forward, suite='leaks')\n"
            "assert {v.check for v in run} == {'resources'}, run\n"
            "print(run.passed)\nprint(run[0].message)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         cwd=os.path.dirname(os.path.abspath(__file__)))
    assert out.returncode == 0, out.stderr
    passed, message = out.stdout.split("\n", 1)
    # Also where torch has loaded the CUDA driver: that process's device memory is no measure of a
    # cpu kernel, so it cannot pass on it.
    assert passed == "False", out.stdout
    assert "device='cuda'" in message and "gnncheck run leaks --adapter" in message, message
    assert "live_bytes()" not in message, message

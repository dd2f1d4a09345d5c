"""What the callable does wrong becomes a verdict, never a crash of the run or of pytest; what the
caller does wrong is an exception that says what to change."""

import time

import pytest
import torch

import gnncheck
import example_kernels as k


def test_a_forward_that_raises_is_an_error_with_its_traceback():
    def exploding_forward(case):
        raise ValueError("kernel launch failed: too many blocks")

    run = gnncheck.check("spmm", exploding_forward)
    assert run and {v.outcome for v in run} == {"error"}
    message = run[0].message
    assert "ValueError: kernel launch failed: too many blocks" in message
    assert "exploding_forward" in message and "Traceback" in message
    with pytest.raises(gnncheck.CheckFailed, match="kernel launch failed"):
        gnncheck.assert_correct("spmm", exploding_forward, only=["differential/differential"])


def test_a_forward_that_fails_only_sometimes_is_shrunk_to_a_small_case():
    def fails_on_duplicate_edges(case):
        cols = case.graph.col_idx
        for i in range(case.n_dst):
            row = cols[case.graph.row_ptr[i]:case.graph.row_ptr[i + 1]]
            if row.unique().numel() != row.numel():
                raise RuntimeError("duplicate edge in row %d" % i)
        return k.spmm_forward(case)

    (verdict,) = gnncheck.check("spmm", fails_on_duplicate_edges, only=["differential/differential"])
    assert verdict.outcome == "error" and "duplicate edge" in verdict.message
    saved = verdict.load_counterexample()
    assert saved["num_edges"] == 2, saved  # the smallest graph with a duplicate edge


@pytest.mark.parametrize("answer, expected", [
    (lambda case: {"y": k.spmm_forward(case)["y"][:, :0]}, "shape"),
    (lambda case: {}, "output 'y' is missing"),
    (lambda case: {"y": k.spmm_forward(case)["y"], "z": case.inputs["x"]}, "output 'z' is not one of the target's outputs"),
    (lambda case: {"y": k.spmm_forward(case)["y"] * float("nan")}, "although every input is finite"),
    (lambda case: "y", "forward returned a str"),
])
def test_malformed_answers_are_named(answer, expected):
    run = gnncheck.check("spmm", answer, only=["differential/differential"])
    (verdict,) = run
    assert verdict.outcome == "error", verdict.one_line()
    assert expected in verdict.message, verdict.message


def test_a_kernel_without_autograd_is_told_to_pass_backward():
    def detached(case):
        with torch.no_grad():
            return k.spmm_forward(case)

    (verdict,) = gnncheck.check("spmm", detached, only=["differential/differential"])
    assert verdict.outcome == "error" and "does not require grad" in verdict.message and "backward=" in verdict.message


def test_a_kernel_without_autograd_passes_with_backward():
    def forward(case):
        assert not case.inputs["x"].requires_grad
        case.saved["graph"] = case.graph
        return {"y": k.csr_spmm(case.graph.row_ptr, case.graph.col_idx, case.n_dst, case.inputs["x"])}

    def backward(case, outputs):
        g = case.saved["graph"]
        return {"x": k.csr_spmm_transposed(g.row_ptr, g.col_idx, case.n_src, case.grad_outputs["y"])}

    gnncheck.assert_correct("spmm", forward, backward=backward)


def test_a_target_the_callable_never_answers_is_not_a_pass():
    def nothing(case):
        raise gnncheck.Unsupported("not implemented yet")

    run = gnncheck.check("spmm", nothing)
    assert {v.outcome for v in run} == {"not tested"} and not run.passed
    assert "not implemented yet" in run[0].message
    with pytest.raises(gnncheck.CheckFailed, match="NOT TESTED"):
        gnncheck.assert_correct("spmm", nothing)


def write_suite(tmp_path, checks, target="spmm"):
    path = tmp_path / "suite.yaml"
    path.write_text("name: mine\nseed: 7\ncases_per_property: 4\nentries:\n"
                    "  - name: only\n    systems: cpu_float32\n    targets: %s\n    checks: [%s]\n" % (target, ", ".join(checks)))
    return path


def test_a_check_that_applies_to_no_case_is_not_applicable(tmp_path):
    # The finite-difference gradient check is for float64 systems only.
    run = gnncheck.assert_correct("spmm", k.spmm_forward, suite=write_suite(tmp_path, ["gradient", "differential"]))
    assert {v.check: v.outcome for v in run} == {"gradient": "not applicable", "differential": "pass"}
    assert run.suite_name == "mine" and run.seed == 7
    # A run in which the callable concluded nothing at all verified nothing: not a pass.
    with pytest.raises(gnncheck.CheckFailed, match="concluded nothing"):
        gnncheck.assert_correct("spmm", k.spmm_forward, suite=write_suite(tmp_path, ["gradient"]))


def test_usage_errors_are_raised_at_once(tmp_path):
    with pytest.raises(gnncheck.UsageError, match="unknown target 'spmv'"):
        gnncheck.check("spmv", k.spmm_forward)
    with pytest.raises(gnncheck.UsageError, match="precision 'float8'"):
        gnncheck.check("spmm", k.spmm_forward, precision="float8")
    with pytest.raises(gnncheck.UsageError, match="pass backward="):
        gnncheck.check("spmm", lambda case: {}, framework="numpy")
    with pytest.raises(ValueError, match="no entry of suite 'mine' checks target 'gcn'"):
        gnncheck.check("gcn", k.spmm_forward, suite=write_suite(tmp_path, ["differential"]))
    with pytest.raises(ValueError, match="suite 'no-such-suite' not found"):
        gnncheck.check("spmm", k.spmm_forward, suite="no-such-suite")
    with pytest.raises(ValueError, match="no entry named 'nope'"):
        gnncheck.check("spmm", k.spmm_forward, only=["nope"])
    # A seed the engine cannot hold is named, not passed on to fail as a binding's type error.
    for seed in (-1, 2 ** 64, "7", 1.5, True):
        with pytest.raises(gnncheck.UsageError, match=r"seed=.*: expected .*integer"):
            gnncheck.check("spmm", k.spmm_forward, seed=seed)


def test_a_seed_from_the_environment_out_of_range_is_named(monkeypatch):
    for value in ("-3", str(2 ** 64), "seven"):
        monkeypatch.setenv("GNNCHECK_SEED", value)
        with pytest.raises(gnncheck.UsageError, match="GNNCHECK_SEED='%s': expected a non-negative integer below 2\\*\\*64" % value):
            gnncheck.check("spmm", k.spmm_forward)


def test_keyboard_interrupt_stops_the_run():
    calls = []

    def interrupted(case):
        calls.append(1)
        raise KeyboardInterrupt

    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        gnncheck.check("spmm", interrupted)
    assert len(calls) == 1 and time.perf_counter() - start < 5

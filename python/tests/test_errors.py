"""What the callable does wrong becomes a verdict, never a crash of the run or of pytest; what the
caller does wrong is an exception that says what to change."""

import os
import re
import time
import traceback

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
    (lambda case: {"y": k.spmm_forward(case)["y"][:, :0]}, "output 'y' must be [n_dst, features] = ["),
    (lambda case: {}, "output 'y' is missing"),
    (lambda case: {"y": k.spmm_forward(case)["y"], "z": case.inputs["x"]}, "output 'z' is not one of the target's outputs"),
    (lambda case: "y", "forward returned a str"),
])
def test_malformed_answers_are_named(answer, expected):
    run = gnncheck.check("spmm", answer, only=["differential/differential"])
    (verdict,) = run
    assert verdict.outcome == "error", verdict.one_line()
    assert expected in verdict.message, verdict.message


def test_a_nan_answer_to_finite_inputs_is_a_wrong_answer_not_a_broken_system():
    """NaN where the exact result is finite fails the check that compared it, with the element."""
    run = gnncheck.check("spmm", lambda case: {"y": k.spmm_forward(case)["y"] * float("nan")},
                         only=["differential/differential"])
    (verdict,) = run
    assert verdict.outcome == "fail", verdict.one_line()
    assert "nan" in verdict.message, verdict.message


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


def test_a_wrong_output_shape_is_named_before_autograd_sees_it():
    # With gradients asked, torch.autograd.grad would meet the shape first ("Mismatch in shape:
    # grad_output[0] …", with torch's traceback): gnncheck names it first, in one line.
    def too_narrow(case):
        return {"y": k.spmm_forward(case)["y"][:, :1]}

    (verdict,) = gnncheck.check("spmm", too_narrow, only=["differential/differential"])
    assert verdict.outcome == "error"
    assert re.search(r"output 'y' must be \[n_dst, features\] = \[\d+, \d+\], got \[\d+, 1\]", verdict.message), verdict.message
    assert "Mismatch in shape" not in verdict.message and "Traceback" not in verdict.message


@pytest.mark.parametrize("options, expected", [
    ({"suite": ""}, "suite='': expected a shipped suite's name"),
    ({"suite": None}, "suite=None: expected a shipped suite's name"),
    ({"device": "gpu"}, "device='gpu': expected 'cpu', 'cuda' or 'cuda:N'"),
    ({"device": "cpu:1"}, "device='cpu:1': expected 'cpu', 'cuda' or 'cuda:N'"),
    ({"device": 0}, "device=0: expected 'cpu', 'cuda' or 'cuda:N'"),
    ({"only": "differential"}, "only='differential': expected a list of 'entry' or 'entry/check' items"),
    ({"report_dir": ""}, "report_dir='': expected the path of a directory"),
])
def test_bad_options_are_usage_errors_naming_the_field(options, expected):
    with pytest.raises(gnncheck.UsageError) as info:
        gnncheck.check("spmm", k.spmm_forward, **options)
    assert str(info.value).startswith(expected), str(info.value)
    assert "\n" not in str(info.value)


def test_a_parameter_mapping_error_is_raised_without_gnnchecks_own_frames():
    with pytest.raises(gnncheck.ParameterMappingError) as info:
        gnncheck.check("gcn", k.gcn_forward, module=k.gcn_module, parameters={"lin.weight": "weight", "bias": "bias"})
    assert "gnncheck.transposed('weight')" in str(info.value)
    frames = traceback.extract_tb(info.value.__traceback__)
    package = os.path.dirname(gnncheck.__file__)
    own = [f for f in frames if f.filename.startswith(package) and not f.filename.endswith("_run.py")]
    assert not own, traceback.format_list(frames)  # no frame of the evaluator, the binding or the module binding
    assert len(frames) <= 3, traceback.format_list(frames)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_a_cuda_only_kernel_on_the_default_cpu_device_is_told_to_use_cuda():
    def cuda_only(case):
        if not case.inputs["x"].is_cuda:
            raise RuntimeError("my_ext.spmm: x must be a CUDA tensor")
        return k.spmm_forward(case)

    (verdict,) = gnncheck.check("spmm", cuda_only, only=["differential/differential"])
    assert verdict.outcome == "error"
    assert "x must be a CUDA tensor" in verdict.message
    assert "device='cpu', the default" in verdict.message and "device='cuda'" in verdict.message
    # A kernel that fails for its own reasons is not sent to another device.
    (other,) = gnncheck.check("spmm", lambda case: 1 / 0, only=["differential/differential"])
    assert "device=" not in other.message


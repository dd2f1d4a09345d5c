"""The package with CUDA tensors: every tensor of a case on the GPU, the same checks and bounds as on
the cpu. A correct torch SpMM (autograd.Function over CSR index ops) passes the ci suite; the
A-for-Aᵀ backward fails with a counterexample of at most 4 nodes; at scale (gnncheck.check_scale on
R-MAT graphs of 10^5–10^6 edges) the correct SpMM and the GCN module pass and the A-for-Aᵀ backward
is caught. Run by ctest as python_package_cuda, which reports "skipped" where torch sees no CUDA device."""

import os
import time

import pytest
import torch

import gnncheck
import example_kernels as k


def test_correct_spmm_on_cuda_passes_the_ci_suite():
    devices = set()

    def forward(case):
        devices.update({case.inputs["x"].device.type, case.graph.row_ptr.device.type, case.graph.col_idx.device.type})
        return k.spmm_forward(case)

    start = time.perf_counter()
    run = gnncheck.assert_correct("spmm", forward, precision="float32", suite="ci", device="cuda")
    seconds = time.perf_counter() - start
    print("cuda: assert_correct('spmm', suite='ci'): %.2f s, %d verdicts, %d conclusive cases" % (
        seconds, len(run), sum(v.conclusive_cases for v in run)))
    assert devices == {"cuda"}
    assert all(v.outcome == "pass" and v.conclusive_cases > 0 for v in run), [v.one_line() for v in run]
    assert {v.check for v in run} >= {"differential", "adjoint", "metamorphic_relabel", "state_interleaved", "op_order"}


def test_a_for_a_transposed_backward_on_cuda_fails_with_a_small_counterexample():
    run = gnncheck.check("spmm", k.buggy_spmm_forward, precision="float32", suite="ci", device="cuda")
    assert not run.passed
    differential = next(v for v in run if v.entry == "differential" and v.check == "differential")
    adjoint = next(v for v in run if v.entry == "differential" and v.check == "adjoint")
    saved = differential.load_counterexample()
    print("cuda: A-for-Aᵀ: %s; counterexample %d×%d, %d edges; adjoint %s" % (
        differential.outcome, saved["n_dst"], saved["n_src"], saved["num_edges"], adjoint.outcome))
    assert differential.outcome == "fail" and "gradient x" in differential.message
    assert os.path.isdir(differential.counterexample)
    assert saved["n_dst"] <= 4 and saved["n_src"] <= 4, saved
    assert adjoint.outcome == "fail"


def test_gcn_module_on_cuda_passes():
    run = gnncheck.assert_correct("gcn", k.gcn_forward, module=k.gcn_module, parameters=k.GCN_PARAMETERS, device="cuda")
    print("cuda: assert_correct('gcn', module): %d verdicts, %d conclusive cases" % (
        len(run), sum(v.conclusive_cases for v in run)))
    # As on the cpu (test_layers.py): ci's bipartite-tall entry is not applicable to a layer.
    assert all(v.outcome in ("pass", "not applicable") for v in run), [v.one_line() for v in run]
    assert all(v.conclusive_cases > 0 for v in run if v.outcome == "pass"), [v.one_line() for v in run]
    assert any(v.outcome == "pass" for v in run)


def test_correct_spmm_on_cuda_passes_at_scale_and_the_a_for_a_transposed_backward_is_caught():
    devices = set()

    def forward(case):
        devices.update({case.inputs["x"].device.type, case.graph.row_ptr.device.type, case.graph.col_idx.device.type,
                        case.grad_outputs["y"].device.type})
        return k.spmm_forward(case)

    run = gnncheck.assert_correct_at_scale("spmm", forward, graph="rmat:16", rows=200, device="cuda")
    print("cuda: check_scale('spmm', rmat:16, 200 rows): %s, worst %.3g of its bound; graph %.2f s, the callable %.3f s, "
          "total %.2f s, device peak %.3f GiB" % (run.verdict.outcome, run.worst["ratio"], run.seconds["graph"],
                                                  run.callable_seconds, run.seconds["total"], run.device_peak_bytes / 2 ** 30))
    assert devices == {"cuda"} and run.device == "cuda"
    assert run.device_peak_bytes > 0
    caught = gnncheck.check_scale("spmm", k.buggy_spmm_forward, graph="rmat:16", rows=200, device="cuda")
    assert caught.verdict.outcome == "fail", caught.summary
    assert caught.worst["tensor"] == "gradient x outside the neighbourhood" and caught.worst["bound"] == 0


def test_gcn_module_on_cuda_passes_at_scale():
    run = gnncheck.assert_correct_at_scale("gcn", k.gcn_forward, module=k.gcn_module, parameters=k.GCN_PARAMETERS,
                                           graph="rmat:15", rows=200, device="cuda")
    assert {"gradient weight", "gradient bias"} <= {c["tensor"] for c in run.comparisons}


def test_a_module_built_on_cuda_while_the_device_is_left_at_cpu_is_named():
    def on_cuda(case):
        return k.gcn_module(case).cuda()

    with pytest.raises(gnncheck.UsageError, match=r"the module factory built its module on cuda:0, but the check runs on "
                                                  r"cpu \(device='cpu', the default\): pass device='cuda:0'"):
        gnncheck.check("gcn", k.gcn_forward, module=on_cuda, parameters=k.GCN_PARAMETERS)


# ---- Streams: outputs are read after the caller's current stream, as the next op would read them ----

def test_a_forward_that_never_joins_its_side_stream_fails():
    # Its kernel runs on a stream of its own and the caller's stream is never made to wait: a
    # downstream op reads the output before it is written. Reading after torch.cuda.synchronize()
    # (the whole device) hid that; gnncheck reads after the current stream only.
    run = gnncheck.check("spmm", k.side_stream_unjoined_spmm_forward, device="cuda", only=["differential/differential"])
    (verdict,) = run
    print("cuda: side stream never joined: %s; %s" % (verdict.outcome, (verdict.message or "").splitlines()[-1][:160]))
    assert verdict.outcome == "fail", verdict.message
    assert "output y" in verdict.message


def test_a_forward_that_joins_its_side_stream_passes():
    run = gnncheck.assert_correct("spmm", k.side_stream_joined_spmm_forward, device="cuda")
    print("cuda: side stream joined (current_stream().wait_stream(side)): %d verdicts pass, %d conclusive cases" % (
        len(run), sum(v.conclusive_cases for v in run)))


def test_a_triton_spmm_passes_the_ci_suite():
    pytest.importorskip("triton", reason="Triton is not installed here")
    start = time.perf_counter()
    run = gnncheck.assert_correct("spmm", k.triton_spmm_forward, device="cuda")
    print("cuda: Triton SpMM (edge-parallel atomic adds): %d verdicts pass, %d conclusive cases, %.2f s" % (
        len(run), sum(v.conclusive_cases for v in run), time.perf_counter() - start))


# ---- Leaks: the `leaks` suite, in the caller's words ----

def test_the_leaks_suite_catches_a_mebibyte_a_call_and_says_the_rate():
    run = gnncheck.check("spmm", k.leaking_spmm_forward, suite="leaks", device="cuda")
    failing = [v for v in run if v.outcome == "fail"]
    assert failing, [v.one_line() for v in run]
    message = failing[0].message
    print("cuda: leaks suite on 1 MiB a call: %s" % message.splitlines()[-1][:300])
    assert "torch.cuda.memory_allocated()" in message and "live_bytes() reported by the system" not in message, message
    assert "1048576 bytes (1 MiB) per call" in message, message
    clean = gnncheck.assert_correct("spmm", k.spmm_forward, suite="leaks", device="cuda")
    assert {v.check for v in clean} == {"resources"}

"""Test files as a kernel author writes them, one correct kernel and one with TC-GNN's bug;
test_xdist.py runs them under `pytest -n 2` and without it. (Not named test_*.py: collected only
when named.) Each gnncheck call appends where it ran to $SPLIT_LOG (one JSON line)."""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import gnncheck  # noqa: E402
import example_kernels as k  # noqa: E402

SUITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "split.yaml")


def log(request, run):
    with open(os.environ["SPLIT_LOG"], "a") as f:
        f.write(json.dumps({"worker": os.environ.get("PYTEST_XDIST_WORKER"), "nodeid": request.node.nodeid,
                            "report_dir": run.report_dir, "cases": sum(v.cases or 0 for v in run),
                            "outcomes": sorted(v.outcome for v in run)}) + "\n")


def test_correct_spmm(gnncheck_check, request):
    run = gnncheck_check.check("spmm", k.spmm_forward, suite=SUITE)
    log(request, run)
    assert run.passed


@pytest.mark.gnncheck(suite=SUITE)
def test_buggy_spmm(request):
    try:
        log(request, gnncheck.assert_correct("spmm", k.buggy_spmm_forward))
    except gnncheck.CheckFailed as e:
        log(request, e.run)
        raise

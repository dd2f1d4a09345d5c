"""pytest -n 2 (pytest-xdist) spreads each check's cases over the workers: the plugin makes each
gnncheck test two items, one share each; the workers run disjoint shares whose union is the whole
run (the session's merged report equals the unsplit run's), a failing kernel still fails, with a
re-run line that runs the whole check, and a share that never ran fails the session."""

import json
import os
import re
import sys

import pytest

from rerun_support import run

pytest.importorskip("xdist", reason="pytest-xdist is not installed (Debian/Ubuntu: apt-get install python3-pytest-xdist)")

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "xdist", "split_example.py")


def pytest_run(tmp_path, name, *args):
    log = tmp_path / (name + ".log")
    reports = tmp_path / (name + "-reports")
    result = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", HERE, "--basetemp",
                  str(tmp_path / (name + "-tmp")), "--gnncheck-dir", str(reports)] + list(args) + [EXAMPLE],
                 env_extra={"SPLIT_LOG": str(log)})
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return result, calls, reports


def report(folder):
    """report.json without timings, the folder written as DIR."""
    with open(os.path.join(folder, "report.json")) as f:
        j = json.loads(f.read().replace(str(folder), "DIR"))
    for key in ("seconds", "started_utc"):
        j.pop(key, None)
    for r in j["results"]:
        r.pop("seconds", None)
        r.pop("repro", None)  # a re-run line names the test's rootdir and PYTHONPATH, alike; the counterexample's folder differs
    return j


def test_two_workers_run_disjoint_shares_whose_merge_is_the_whole_run(tmp_path):
    split, calls, reports = pytest_run(tmp_path, "split", "-p", "xdist", "-n", "2", "-rA")
    out = split.stdout + split.stderr
    assert split.returncode == 1, out  # the buggy kernel fails
    correct = [c for c in calls if "test_correct_spmm" in c["nodeid"]]
    assert sorted(c["nodeid"].split("[")[1] for c in correct) == ["gnncheck_share1of2]", "gnncheck_share2of2]"], calls
    assert {c["worker"] for c in calls} == {"gw0", "gw1"}, calls
    assert {c["worker"] for c in correct} == {"gw0", "gw1"}, "each worker runs one share of the check: %s" % calls

    # Disjoint shares: each share's report ran its own chunks of every check, none twice.
    chunks = {}
    for c in correct:
        with open(os.path.join(c["report_dir"], "report.json")) as f:
            shard = json.load(f)
        assert (shard["share"]["part"], shard["share"]["of"]) in {(1, 2), (2, 2)}
        for r in shard["results"]:
            ran = {row[0] for row in r["chunks"]["ran"]}
            key = (r["entry"], r["check"])
            assert not ran & chunks.get(key, set()), "chunk run by both shares: %s %s" % (key, ran)
            chunks[key] = chunks.get(key, set()) | ran
    assert chunks == {("ops", "differential"): {0, 1, 2, 3}, ("ops", "adjoint"): {0, 1, 2, 3}}, chunks

    # The union is the whole run: merged at the end of the session into the test's folder, equal to
    # the unsplit run's report of the same test.
    assert "gnncheck: checks split over xdist workers" in out, out
    whole, whole_calls, whole_reports = pytest_run(tmp_path, "whole")
    assert whole.returncode == 1, whole.stdout
    merged = os.path.join(os.path.dirname(correct[0]["report_dir"]))
    unsplit = [c for c in whole_calls if "test_correct_spmm" in c["nodeid"]][0]["report_dir"]
    assert os.path.relpath(merged, str(reports)) == os.path.relpath(unsplit, str(whole_reports))
    assert report(merged) == report(unsplit)
    assert sum(c["cases"] for c in correct) == [c for c in whole_calls if "test_correct_spmm" in c["nodeid"]][0]["cases"] == 400


def test_a_failing_kernel_fails_in_its_shares_with_the_whole_checks_rerun_line(tmp_path):
    split, calls, _ = pytest_run(tmp_path, "bug", "-p", "xdist", "-n", "2", "-k", "buggy")
    out = split.stdout + split.stderr
    assert split.returncode == 1, out
    assert "FAILED" in out and "test_buggy_spmm[gnncheck_share" in out, out
    assert any("fail" in c["outcomes"] for c in calls), calls
    # Each share's failure and the merged summary print re-run lines: the test's own, never a share's.
    lines = set(re.findall(r"^(?:E\s+)?\s*re-run: (.*)$", out, re.M))
    assert lines and all("xdist/split_example.py::test_buggy_spmm " in l + " " and "gnncheck_share" not in l for l in lines), lines
    line = min(lines)
    again = run(line + " -p no:cacheprovider -p no:xdist --basetemp " + str(tmp_path / "again"), shell=True,
                env_extra={"SPLIT_LOG": str(tmp_path / "again.log")})
    assert again.returncode == 1 and "CheckFailed" in again.stdout, again.stdout + again.stderr
    # The merged report of the failing check fails the session too, listed with its re-run line.
    assert "FAILED xdist/split_example.py::test_buggy_spmm" in out and "re-run: " in out, out


def test_a_share_that_did_not_run_fails_the_session_though_every_item_passed(tmp_path):
    split, calls, _ = pytest_run(tmp_path, "half", "-p", "xdist", "-n", "2", "-k", "correct and share1of2")
    out = split.stdout + split.stderr
    assert len(calls) == 1 and "1 passed" in out, out
    assert split.returncode == 1, out
    assert "FAILED xdist/split_example.py::test_correct_spmm" in out and "not tested" in out, out
    assert "shard 2/2" in out, out

"""The printed re-run line reproduces the failure: run a failing test (and script) in a subprocess,
take the one `re-run:` line from its output, run that line, and compare."""

import os
import re
import sys

import pytest

from rerun_support import rerun_line, run

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "rerun", "failing_example.py")


def failure_of(output):
    """The leading failure's engine message: check, system, target, tensor, worst element, seed."""
    match = re.search(r"differential check FAILED: .*?[Ss]eed \d+\.", output, re.S)
    assert match, output
    return re.sub(r"\s*\n(E\s+)?", " ", match.group(0))


@pytest.mark.parametrize("seed", ["1", "2024"])
def test_the_pytest_rerun_line_reproduces_the_failure(seed, tmp_path):
    first = run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", HERE,
                 "--basetemp", str(tmp_path / "first"), EXAMPLE + "::test_buggy_spmm"], env_extra={"EXAMPLE_SEED": seed})
    assert first.returncode == 1, first.stdout + first.stderr
    assert "CheckFailed" in first.stdout
    line = rerun_line(first.stdout)
    assert "GNNCHECK_SEED=%s" % seed in line and "GNNCHECK_ONLY=ci/differential/differential" in line
    assert "rerun/failing_example.py::test_buggy_spmm" in line
    # The line runs with the test's own seed gone: the environment's GNNCHECK_SEED replaces it.
    again = run(line + " --basetemp " + str(tmp_path / "again"), shell=True, env_extra={"EXAMPLE_SEED": "999"})
    assert again.returncode == 1, again.stdout + again.stderr
    assert failure_of(again.stdout) == failure_of(first.stdout)
    assert "1 of 1 results did not pass" in again.stdout  # narrowed to the failing check


def test_the_script_rerun_line_reproduces_the_failure():
    first = run([sys.executable, EXAMPLE])
    assert first.returncode == 1 and "gnncheck.CheckFailed" in first.stderr, first.stderr
    line = rerun_line(first.stderr)
    assert line.endswith(EXAMPLE)
    again = run(line, shell=True)
    assert again.returncode == 1
    assert failure_of(again.stderr) == failure_of(first.stderr)

"""What a pytest run leaves behind: every surface (the failure message, summary.md, index.html,
report.json, a saved case's case.json and system.json) names the re-run line that works for a
Python callable, never `gnncheck repro` or an adapter; saved counterexamples are kept under the
project's .gnncheck/ (configurable), where the printed lines find them after pytest has removed its
temporary folders; a printed GNNCHECK_ONLY narrows a test's own only= instead of adding to it."""

import json
import os
import shutil
import subprocess
import sys

import pytest

import gnncheck
import example_kernels as k
from rerun_support import rerun_line, run

HERE = os.path.dirname(os.path.abspath(__file__))

PROJECT_TEST = '''
import sys
sys.path.insert(0, %r)
import gnncheck
import example_kernels as k

def test_buggy_spmm():
    gnncheck.assert_correct("spmm", k.buggy_spmm_forward, only=["differential/differential"])
''' % HERE


def project(tmp_path):
    """A downstream project: a pytest.ini at its root and one failing test."""
    root = tmp_path / "proj"
    (root / "tests").mkdir(parents=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    (root / "tests" / "test_spmm.py").write_text(PROJECT_TEST)
    return root


def run_pytest(root, *args, env_extra=None):
    env = {name: value for name, value in os.environ.items() if name not in ("GNNCHECK_DIR",)}
    env.update(env_extra or {})
    env.pop("GNNCHECK_SEED", None)
    env.pop("GNNCHECK_ONLY", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args, "tests/test_spmm.py"],
                          cwd=str(root), capture_output=True, text=True, env=env, timeout=300)


def counterexample_of(output):
    lines = [line.split("counterexample (shrunk): ", 1)[1].strip() for line in output.splitlines()
             if "counterexample (shrunk): " in line]
    assert lines, output
    return lines[0]


def test_saved_counterexamples_outlive_pytests_temporary_folders(tmp_path):
    root = project(tmp_path)
    basetemp = tmp_path / "basetemp"
    first = run_pytest(root, "--basetemp", str(basetemp))
    assert first.returncode == 1, first.stdout + first.stderr
    case_dir = counterexample_of(first.stdout)
    assert case_dir.startswith(str(root / ".gnncheck" / "tests" / "test_spmm.py" / "test_buggy_spmm")), case_dir
    shutil.rmtree(basetemp, ignore_errors=True)  # what pytest does to the temporary folders of older runs
    assert os.path.isfile(os.path.join(case_dir, "case.json"))
    assert gnncheck.load_counterexample(case_dir)["target"] == "spmm"
    # Configurable: --gnncheck-dir, GNNCHECK_DIR, the ini's gnncheck_dir (relative to the rootdir).
    option = run_pytest(root, "--gnncheck-dir", "kept")
    assert counterexample_of(option.stdout).startswith(str(root / "kept" / "tests")), option.stdout
    env = run_pytest(root, env_extra={"GNNCHECK_DIR": str(tmp_path / "elsewhere")})
    assert counterexample_of(env.stdout).startswith(str(tmp_path / "elsewhere" / "tests")), env.stdout
    (root / "pytest.ini").write_text("[pytest]\ngnncheck_dir = from-ini\n")
    ini = run_pytest(root)
    assert counterexample_of(ini.stdout).startswith(str(root / "from-ini" / "tests")), ini.stdout


def test_every_report_surface_names_the_rerun_line_that_works(tmp_path):
    root = project(tmp_path)
    first = run_pytest(root, "--basetemp", str(tmp_path / "basetemp"))
    assert first.returncode == 1, first.stdout + first.stderr
    line = rerun_line(first.stdout)
    assert "GNNCHECK_ONLY=ci/differential/differential" in line and "tests/test_spmm.py::test_buggy_spmm" in line
    case_dir = counterexample_of(first.stdout)
    report_dir = os.path.dirname(os.path.dirname(case_dir))
    texts = {}
    for name in ("summary.md", "index.html", "report.json"):
        with open(os.path.join(report_dir, name), encoding="utf-8") as f:
            texts[name] = f.read()
    for name in ("case.json", "system.json"):
        with open(os.path.join(case_dir, name), encoding="utf-8") as f:
            texts[name] = f.read()
    for name, text in texts.items():
        assert "gnncheck repro" not in text and "gnncheck run" not in text, name
        assert "adapter" not in text, name  # the callable is not an adapter
    html_line = line.replace("&", "&amp;").replace("'", "&#39;").replace("<", "&lt;").replace(">", "&gt;")
    assert line in texts["summary.md"] and (line in texts["index.html"] or html_line in texts["index.html"])
    system = json.loads(texts["system.json"])
    assert system["kind"] == "python" and system["rerun"] == line
    assert json.loads(texts["case.json"])["rerun"] == line
    report = json.loads(texts["report.json"])
    assert {s["kind"] for s in report["systems"]} == {"python"}
    assert [r["repro"] for r in report["results"] if not r["expectation_held"]] == [line]
    # The line works: the same failure again.
    again = run(line + " --basetemp " + str(tmp_path / "again"), shell=True)
    assert again.returncode == 1 and "1 of 1 results did not pass" in again.stdout, again.stdout + again.stderr
    # The command, asked anyway, says what the saved case is and which line re-runs it.
    command = os.path.join(os.environ.get("GNNCHECK_BUILD_DIR", ""), "suites", "gnncheck")
    if os.path.isfile(command):
        out = subprocess.run([command, "repro", case_dir], capture_output=True, text=True, timeout=120)
        assert out.returncode == 2 and "is a Python callable checked in process" in out.stderr + out.stdout, out
        assert line in out.stderr + out.stdout


def count_calls(forward):
    calls = []

    def counted(case):
        calls.append(1)
        return forward(case)

    return counted, calls


def test_a_printed_gnncheck_only_narrows_the_tests_own_only(monkeypatch):
    forward, calls = count_calls(k.buggy_spmm_forward)
    alone = gnncheck.check("spmm", forward, only=["differential/differential"])
    n = len(calls)
    monkeypatch.setenv("GNNCHECK_ONLY", "ci/differential/differential")
    del calls[:]
    narrowed = gnncheck.check("spmm", forward, only=["differential/differential"])
    assert len(calls) == n, (len(calls), n)  # once, not twice
    assert [(v.entry, v.check, v.outcome) for v in narrowed] == [(v.entry, v.check, v.outcome) for v in alone]
    # An entry of the call's own only= is narrowed to the printed check.
    (one,) = gnncheck.check("spmm", forward, only=["differential"])
    assert (one.entry, one.check) == ("differential", "differential")
    # A call the printed line does not reach runs nothing and holds.
    del calls[:]
    other = gnncheck.check("spmm", forward, only=["state"])
    assert not calls and other.passed and [v.outcome for v in other] == ["skipped"]
    assert "GNNCHECK_ONLY=ci/differential/differential" in other[0].message

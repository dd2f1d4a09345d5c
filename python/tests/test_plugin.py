"""The pytest plugin: loaded from the package's entry point, a marker and a fixture."""

import os

import pytest

import gnncheck
import example_kernels as k
from gnncheck.pytest_plugin import reports_folder


def test_the_plugin_is_loaded_from_the_entry_point(request):
    plugin = request.config.pluginmanager.get_plugin("gnncheck")
    assert plugin is not None and plugin.__name__ == "gnncheck.pytest_plugin"


def test_reports_go_to_the_tests_own_folder(request):
    # ROOTDIR/.gnncheck by default; ctest sets GNNCHECK_DIR (test_reports.py runs the default).
    folder = os.path.join(reports_folder(request.config), "test_plugin.py", "test_reports_go_to_the_tests_own_folder")
    run = gnncheck.assert_correct("spmm", k.spmm_forward, only=["differential"])
    assert run.report_dir == folder
    assert os.path.isfile(os.path.join(folder, "report.json"))
    second = gnncheck.assert_correct("spmm", k.spmm_forward, only=["state"])
    assert second.report_dir == folder + "-2"


@pytest.mark.gnncheck(precision="float64", only=["metamorphic"])
def test_the_marker_sets_defaults():
    run = gnncheck.assert_correct("spmm", k.spmm_forward)
    assert {v.precision for v in run} == {"float64"} and {v.entry for v in run} == {"metamorphic"}
    explicit = gnncheck.assert_correct("spmm", k.spmm_forward, precision="float32")
    assert {v.precision for v in explicit} == {"float32"}


def test_the_fixture(gnncheck_check, request):
    run = gnncheck_check("spmm", k.spmm_forward, only=["differential"])
    assert run.passed and run.report_dir.startswith(reports_folder(request.config))
    verdicts = gnncheck_check.check("spmm", k.buggy_spmm_forward, only=["differential/differential"])
    assert verdicts.failures
    with pytest.raises(gnncheck.CheckFailed) as info:
        gnncheck_check("spmm", k.buggy_spmm_forward, only=["differential/differential"])
    assert "test_plugin.py::test_the_fixture" in info.value.rerun


@pytest.mark.gnncheck(sute="ci")
def test_a_misspelled_marker_option_is_an_error():
    with pytest.raises(gnncheck.UsageError, match="unknown options sute"):
        gnncheck.check("spmm", k.spmm_forward)

"""gnncheck's pytest plugin: a test file needs nothing but ``import gnncheck``.

Loaded by pytest automatically through the ``pytest11`` entry point ``gnncheck`` (the package's
dist-info, installed by ``cmake --install`` and also written into the build tree's python/ folder,
so ``PYTHONPATH=build/python`` is enough). Where plugin autoloading is off
(PYTEST_DISABLE_PLUGIN_AUTOLOAD), load it with ``-p gnncheck.pytest_plugin``.

It gives every gnncheck call inside a test the test's node id and pytest's rootdir (for the re-run
line) and the test's own report directory, ROOTDIR/.gnncheck/<test path>/<test name>, which keeps
its report and saved counterexamples after pytest has removed its temporary folders (so the
printed counterexample and re-run line still find them). The folder is configurable, first found
wins: ``--gnncheck-dir DIR``, ``GNNCHECK_DIR`` in the environment, ``gnncheck_dir = DIR`` in the
ini file (relative paths: to the rootdir). It provides:

- the marker ``@pytest.mark.gnncheck(suite=..., device=..., precision=..., framework=..., seed=...,
  only=..., progress=...)``: defaults for every gnncheck call in the marked test (explicit
  arguments win);
- the fixture ``gnncheck_check``: ``gnncheck_check("spmm", forward)`` is gnncheck.assert_correct,
  with ``.check(...)`` and ``.repro(...)`` alongside.
"""

import os

import pytest

from . import _context, _run

DEFAULT_REPORTS = ".gnncheck"


def pytest_addoption(parser):
    help_text = ("where gnncheck keeps each test's report and saved counterexamples (one folder per test; default "
                 "ROOTDIR/%s; relative to the rootdir)" % DEFAULT_REPORTS)
    parser.addoption("--gnncheck-dir", dest="gnncheck_dir", default=None, metavar="DIR", help=help_text)
    parser.addini("gnncheck_dir", help_text, default=None)


def reports_folder(config):
    """--gnncheck-dir, else $GNNCHECK_DIR, else the ini's gnncheck_dir, else ROOTDIR/.gnncheck (absolute)."""
    chosen = config.getoption("gnncheck_dir", default=None) or os.environ.get("GNNCHECK_DIR") or \
        config.getini("gnncheck_dir") or DEFAULT_REPORTS
    return os.path.abspath(os.path.join(str(config.rootpath), os.path.expanduser(str(chosen))))


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "gnncheck(**options): defaults (suite, device, precision, framework, seed, only, progress, name) for every "
        "gnncheck.check / assert_correct call in this test")


@pytest.fixture(autouse=True)
def _gnncheck_test_context(request):
    marker = request.node.get_closest_marker("gnncheck")
    context = _context.TestContext(nodeid=request.node.nodeid, rootdir=str(request.config.rootpath), request=request,
                                   defaults=dict(marker.kwargs) if marker else {}, reports=reports_folder(request.config))
    _context.push(context)
    yield
    _context.pop(context)


class Checker:
    """gnncheck's calls bound to the running test (its report directory and re-run line)."""

    def __call__(self, target, forward=None, **options):
        __tracebackhide__ = True
        return _run.assert_correct(target, forward, **options)

    assert_correct = __call__

    @staticmethod
    def check(target, forward=None, **options):
        return _run.check(target, forward, **options)

    @staticmethod
    def repro(case_dir, forward=None, **options):
        __tracebackhide__ = True
        return _run.repro(case_dir, forward, **options)


@pytest.fixture
def gnncheck_check():
    """gnncheck.assert_correct for this test: ``gnncheck_check("spmm", forward, precision="float32")``."""
    return Checker()

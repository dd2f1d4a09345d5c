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

Under pytest-xdist (``pytest -n K``) the cases of each check are spread over the K workers. xdist
deals out test items, and a test that calls gnncheck is one item, so each test that uses the marker
or the fixture becomes K items, ``test_x[gnncheck_share1of3]`` … ``[gnncheck_share3of3]``; item P runs
share P of K of every gnncheck call's run (``gnncheck run --share P/K``: the chunks of 64 cases dealt
out, suites/SCHEMA.md) into <the test's report folder>/share-P-of-K, and fails on its own share's
failures with the test's own re-run line (which runs the whole check). At the end of the session
the controller merges each call's K reports into the test's report folder — the unsplit run's
report — and a merged run that fails (a share that did not run, a callable that concluded nothing
anywhere) fails the session, listed under "gnncheck: checks split over xdist workers".
``--gnncheck-no-split`` keeps every test one item.
"""

import json
import os
import re

import pytest

from . import _context, _run

DEFAULT_REPORTS = ".gnncheck"
SHARE_FIXTURE = "_gnncheck_share"
_SHARE_ID = re.compile(r"gnncheck_share(\d+)of(\d+)")


def pytest_addoption(parser):
    help_text = ("where gnncheck keeps each test's report and saved counterexamples (one folder per test; default "
                 "ROOTDIR/%s; relative to the rootdir)" % DEFAULT_REPORTS)
    parser.addoption("--gnncheck-dir", dest="gnncheck_dir", default=None, metavar="DIR", help=help_text)
    parser.addini("gnncheck_dir", help_text, default=None)
    parser.addoption("--gnncheck-no-split", dest="gnncheck_no_split", action="store_true", default=False,
                     help="under pytest-xdist, keep each gnncheck test one item (default: K items, one share of "
                          "its cases each, merged at the end of the session)")


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


def xdist_workers():
    """K of `pytest -n K` in a pytest-xdist worker (every worker collects the same items), else 1."""
    try:
        return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) if os.environ.get("PYTEST_XDIST_WORKER") else 1
    except ValueError:
        return 1


def pytest_generate_tests(metafunc):
    """Under xdist, a test that uses gnncheck (its marker or fixture) becomes one item per share."""
    workers = xdist_workers()
    if workers < 2 or metafunc.config.getoption("gnncheck_no_split", default=False):
        return
    if "gnncheck_check" not in metafunc.fixturenames and metafunc.definition.get_closest_marker("gnncheck") is None:
        return
    metafunc.fixturenames.append(SHARE_FIXTURE)
    metafunc.parametrize(SHARE_FIXTURE, [(p, workers) for p in range(1, workers + 1)], indirect=True,
                         ids=["gnncheck_share%dof%d" % (p, workers) for p in range(1, workers + 1)])


def pytest_collection_modifyitems(items):
    """Share items ordered by share (every test's share 1, then every share 2, …; a stable sort, the
    same in every worker): xdist hands out runs of consecutive items, so one test's shares go to
    different workers rather than one after the other to the same."""
    def part(item):
        callspec = getattr(item, "callspec", None)
        share = callspec.params.get(SHARE_FIXTURE) if callspec is not None else None
        return share[0] if share else 0
    if any(part(item) for item in items):
        items.sort(key=part)


@pytest.fixture
def _gnncheck_share(request):
    """(part, of) of a share item (pytest_generate_tests)."""
    return request.param


def without_share_id(nodeid):
    """The test's node id without the share's parameter id: what re-runs the whole check."""
    nodeid = re.sub(r"\[%s\]$" % _SHARE_ID.pattern, "", nodeid)
    nodeid = re.sub(r"-%s(?=[-\]])" % _SHARE_ID.pattern, "", nodeid)
    return re.sub(r"\[%s-" % _SHARE_ID.pattern, "[", nodeid)


@pytest.fixture(autouse=True)
def _gnncheck_test_context(request):
    marker = request.node.get_closest_marker("gnncheck")
    callspec = getattr(request.node, "callspec", None)
    share = callspec.params.get(SHARE_FIXTURE) if callspec is not None else None
    nodeid = without_share_id(request.node.nodeid) if share else request.node.nodeid
    context = _context.TestContext(nodeid=nodeid, rootdir=str(request.config.rootpath), request=request,
                                   defaults=dict(marker.kwargs) if marker else {}, reports=reports_folder(request.config),
                                   share=tuple(share) if share else None)
    _context.push(context)
    yield
    _context.pop(context)


# ---- the controller: every call's shares merged at the end of the session ----------------------

_shares = {}  # the controller's: merged folder -> {part: the share's record}


def pytest_runtest_logreport(report):
    """Gathers the share records the items' reports carry (sent by the workers under xdist)."""
    for name, value in getattr(report, "user_properties", ()):
        if name == _context.SHARE_PROPERTY:
            record = json.loads(value)
            _shares.setdefault(record["merged"], {})[record["part"]] = record


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if hasattr(config, "workerinput"):  # an xdist worker: its controller merges
        return
    merged = []
    for folder, records in sorted(_shares.items()):
        first = next(iter(records.values()))
        dirs = [r["dir"] for _, r in sorted(records.items()) if os.path.isfile(os.path.join(r["dir"], "report.json"))]
        try:
            run = _run._core.merge_reports(dirs, folder)
        except Exception as e:  # shards that do not merge (gnncheck's own message) fail the session
            merged.append((first, None, "the shares' reports do not merge: %s" % e))
            continue
        merged.append((first, run, None))
    config._gnncheck_merged = merged
    _shares.clear()
    failed = any(run is None or not _merged_passed(run) for _, run, _ in merged)
    if failed and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _merged_passed(run):
    return bool(run["results"]) and not run["interrupted_by"] and all(r["expectation_held"] for r in run["results"])


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    merged = getattr(config, "_gnncheck_merged", [])
    if not merged:
        return
    tr = terminalreporter
    tr.section("gnncheck: checks split over xdist workers, their shares merged")
    for record, run, error in merged:
        where = "%s (%s on %s)" % (record["test"], record["system"], record["target"])
        if run is None:
            tr.write_line("FAILED %s: %s" % (where, error), red=True)
            continue
        results = run["results"]
        cases = sum(r["cases"] or 0 for r in results)
        if _merged_passed(run):
            tr.write_line("passed %s: %d results, %d cases in %d shares; report %s" % (
                where, len(results), cases, record["of"], record["merged"]))
            continue
        unmet = [r for r in results if not r["expectation_held"]]
        tr.write_line("FAILED %s: %d of %d results did not pass (%d cases in %d shares); report %s" % (
            where, len(unmet), len(results), cases, record["of"], record["merged"]), red=True)
        for r in unmet:
            first = (r["message"] or "").splitlines()[0][:300] if r["message"] else ""
            tr.write_line("  %s %s/%s: %s" % (r["outcome"], r["entry"], r["check"], first))
            if r.get("engine_repro"):
                tr.write_line("    re-run: %s" % r["engine_repro"])


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

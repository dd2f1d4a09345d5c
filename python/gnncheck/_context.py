"""What gnncheck knows about the pytest test it runs in (set by gnncheck.pytest_plugin).

The plugin's autouse fixture records the test's node id, pytest's rootdir, the folder that keeps
the reports of every test (ROOTDIR/.gnncheck unless configured: pytest_plugin says how) and the
keyword arguments of its ``gnncheck`` marker. Without the plugin, PYTEST_CURRENT_TEST still gives
the node id (the current directory stands in for the rootdir, and reports are kept under
$GNNCHECK_DIR when it is set).
"""

import json
import os
import re
import sys

SHARE_PROPERTY = "gnncheck_share_report"


def test_folder(nodeid):
    """A test's folder under the reports folder, from its node id: tests/test_x.py::test_a[1] ->
    tests/test_x.py/test_a_1_ (one folder per path segment, other characters as _)."""
    parts = []
    for part in nodeid.replace("::", "/").split("/"):
        part = re.sub(r"[^A-Za-z0-9_.=-]+", "_", part)
        parts.append("_" if part in ("", ".", "..") else part)
    return os.path.join(*parts)


class TestContext:
    def __init__(self, nodeid, rootdir=None, request=None, defaults=None, reports=None, share=None):
        self.nodeid = nodeid  # of a share item (pytest_plugin): the test's own, without the share's id
        self.rootdir = rootdir
        self.request = request
        self.defaults = dict(defaults or {})
        self.reports = reports  # the folder that keeps every test's reports; None: temporary folders
        self.share = share  # (part, of): run that shard of every gnncheck call's run; None: whole runs
        self._report_dirs = 0

    def record_share(self, record):
        """Tells the pytest session (through the item's user_properties, which pytest-xdist sends to
        the controller) where a share's report is and where the merged report goes."""
        if self.request is not None:
            self.request.node.user_properties.append((SHARE_PROPERTY, json.dumps(record)))

    def new_report_dir(self):
        """REPORTS/<the test's folder>, then <the test's folder>-2, … for further calls in the same
        test; None where no reports folder is configured (a temporary folder is used)."""
        if self.reports is None:
            return None
        self._report_dirs += 1
        folder = test_folder(self.nodeid)
        if self._report_dirs > 1:
            folder += "-%d" % self._report_dirs
        return os.path.join(self.reports, folder)


_stack = []


def push(context):
    _stack.append(context)


def pop(context):
    if _stack and _stack[-1] is context:
        _stack.pop()


def current():
    """The running test, or None outside pytest."""
    if _stack:
        return _stack[-1]
    running = os.environ.get("PYTEST_CURRENT_TEST")  # "path::name (call)"
    # Child processes inherit the variable: only a process that runs pytest itself is in a test.
    if running and "_pytest" in sys.modules:
        reports = os.environ.get("GNNCHECK_DIR") or None
        return TestContext(running.rsplit(" ", 1)[0], reports=os.path.abspath(reports) if reports else None)
    return None

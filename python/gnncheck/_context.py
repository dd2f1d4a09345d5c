"""What gnncheck knows about the pytest test it runs in (set by gnncheck.pytest_plugin).

The plugin's autouse fixture records the test's node id, pytest's rootdir, the test's tmp_path (made
only when a check needs a report directory) and the keyword arguments of its ``gnncheck`` marker.
Without the plugin, PYTEST_CURRENT_TEST still gives the node id (and the current directory stands in
for the rootdir).
"""

import os
import sys


class TestContext:
    def __init__(self, nodeid, rootdir=None, request=None, defaults=None):
        self.nodeid = nodeid
        self.rootdir = rootdir
        self.request = request
        self.defaults = dict(defaults or {})
        self._report_dirs = 0

    def new_report_dir(self):
        """<tmp_path>/gnncheck, then gnncheck-2, … for further calls in the same test; None without the plugin."""
        if self.request is None:
            return None
        tmp_path = self.request.getfixturevalue("tmp_path")
        self._report_dirs += 1
        name = "gnncheck" if self._report_dirs == 1 else "gnncheck-%d" % self._report_dirs
        return str(tmp_path / name)


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
        return TestContext(running.rsplit(" ", 1)[0])
    return None

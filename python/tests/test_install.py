"""`cmake --install` puts an importable package into the prefix's site-packages, with its pytest
entry point, and the installed package finds the installed suites."""

import glob
import os
import subprocess
import sys

import pytest

BUILD_DIR = os.environ.get("GNNCHECK_BUILD_DIR")


@pytest.mark.skipif(not BUILD_DIR, reason="GNNCHECK_BUILD_DIR is not set (ctest sets it)")
def test_the_installed_package(tmp_path):
    prefix = tmp_path / "prefix"
    install = subprocess.run(["cmake", "--install", BUILD_DIR, "--prefix", str(prefix)], capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    (site,) = glob.glob(str(prefix / "lib" / "python3*" / "*-packages"))
    assert os.path.isdir(os.path.join(site, "gnncheck-%s.dist-info" % __import__("gnncheck").__version__))
    code = ("import gnncheck, numpy as np, importlib.metadata as m\n"
            "assert gnncheck.__file__.startswith(%r), gnncheck.__file__\n"
            "assert any(e.name == 'gnncheck' for e in m.entry_points(group='pytest11'))\n"
            "def fwd(case):\n"
            "    rows = case.graph.row_of_edge\n"
            "    y = np.zeros((case.n_dst,) + case.inputs['x'].shape[1:], case.dtype)\n"
            "    np.add.at(y, rows, case.inputs['x'][case.graph.col_idx])\n"
            "    return {'y': y}\n"
            "def bwd(case, out):\n"
            "    g = np.zeros_like(case.inputs['x'])\n"
            "    np.add.at(g, case.graph.col_idx, case.grad_outputs['y'][case.graph.row_of_edge])\n"
            "    return {'x': g}\n"
            "run = gnncheck.assert_correct('spmm', fwd, backward=bwd, framework='numpy', only=['differential'])\n"
            "print(run.suite_path)\n") % site
    env = dict(os.environ, PYTHONPATH=site)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(prefix / "share" / "gnncheck" / "suites" / "ci.yaml")

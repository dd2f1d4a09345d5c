"""A test file as a kernel author writes it, with a bug; test_rerun.py runs it in a subprocess.
(Not named test_*.py so that it is collected only when named explicitly.)"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import gnncheck  # noqa: E402
import example_kernels as k  # noqa: E402


def test_buggy_spmm():
    gnncheck.assert_correct("spmm", k.buggy_spmm_forward, precision="float32", suite="ci", device="cpu",
                            seed=int(os.environ.get("EXAMPLE_SEED", "1")))


if __name__ == "__main__":  # the same check as a script
    test_buggy_spmm()

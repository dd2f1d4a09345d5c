"""A scale test as a kernel author writes it, with a bug; test_scale.py runs it in a subprocess.
(Not named test_*.py so that it is collected only when named explicitly.) The correct SpMM runs
first, so the re-run line's narrowing (GNNCHECK_SCALE_ONLY) shows: it is skipped on the re-run."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import gnncheck  # noqa: E402
import example_kernels as k  # noqa: E402


def test_spmm_at_scale():
    seed = int(os.environ.get("EXAMPLE_SEED", "1"))
    correct = gnncheck.assert_correct_at_scale("spmm", k.spmm_forward, graph="rmat:12", rows=100, seed=seed)
    print("correct spmm: %s" % correct.verdict.outcome)
    gnncheck.assert_correct_at_scale("spmm", k.buggy_spmm_forward, graph="rmat:12", rows=100, seed=seed)


if __name__ == "__main__":  # the same check as a script
    test_spmm_at_scale()

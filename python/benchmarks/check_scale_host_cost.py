"""What a scale check costs on the host: check_scale of the correct torch SpMM on the cpu, with the
graph's build time, the callable's own seconds, the oracle's part and the process's peak RSS.

    cd python/tests && PYTHONPATH=../../build/python OMP_NUM_THREADS=1 python3 ../benchmarks/check_scale_host_cost.py rmat:20

Prints one line (python/check-scale.md, "Cost"; the table in docs/python-compatibility.md).
"""

import os
import resource
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

import gnncheck  # noqa: E402
import example_kernels as k  # noqa: E402
import torch  # noqa: E402,F401  (imported before the baseline, as a test would have it)


def peak_rss_gib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20  # Linux: KiB


def main(graph, rows=1000):
    before = peak_rss_gib()
    seen = {}

    def forward(case):
        seen.update(edges=case.num_edges, nodes=case.n_dst, rss=peak_rss_gib())
        return k.spmm_forward(case)

    run = gnncheck.check_scale("spmm", forward, graph=graph, rows=rows)
    s = run.seconds
    print("%s: %s, %d nodes, %d edges; graph %.2f s, system %.2f s (the callable %.2f s), oracle part %.2f s, total %.2f s; "
          "peak RSS %.2f GiB before the check, %.2f GiB at the callable's entry, %.2f GiB at the end" % (
              graph, run.verdict.outcome, seen["nodes"], seen["edges"], s["graph"], s["system"], run.callable_seconds,
              s["oracle"], s["total"], before, seen["rss"], peak_rss_gib()))
    return 0 if run.passed else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2], *[int(a) for a in sys.argv[2:3]]))

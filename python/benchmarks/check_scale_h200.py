"""gnncheck.check_scale on one GPU: torch CUDA kernels and PyG's GCNConv on graphs of 10^7–10^8 edges.

    PYTHONPATH=BUILD/python python3 python/benchmarks/check_scale_h200.py            # the H200 figures
    PYTHONPATH=BUILD/python python3 python/benchmarks/check_scale_h200.py --quick --device cpu   # a smoke run, any machine

Every case is one check_scale call (python/check-scale.md): the graph built on the host, the
callable run once on the whole graph with its tensors on the device, the sampled rows held to the
exact oracle. A correct torch SpMM (python/tests/example_kernels.py) must pass on rmat:22 and
kronecker:22, the A-for-Aᵀ backward must be caught on rmat:22, and PyG's GCNConv must pass on rmat:20
(GCNConv(normalize=False) with the oracle's out-degree weights over A + I: R-MAT is directed, and
PyG's own gcn_norm uses in-degrees, which a scale check does not support) and on kronecker:20
(GCNConv end to end, its own gcn_norm: the graph is symmetric, so in- and out-degrees agree). It
prints one line per case with its seconds and a table; the exit status is 0 when every case met its
expectation, 1 otherwise.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

import gnncheck  # noqa: E402
import example_kernels as k  # noqa: E402
import torch  # noqa: E402

GCNCONV_PARAMETERS = {"lin.weight": gnncheck.transposed("weight"), "bias": "bias"}


def gcnconv_module(normalize):
    def make(case):
        from torch_geometric.nn import GCNConv

        a = case.attributes
        return GCNConv(a["in_features"], a["out_features"], bias=a["bias"], normalize=normalize, add_self_loops=normalize)

    make.__name__ = "gcnconv_gcn_norm" if normalize else "gcnconv_out_degree_weights"
    return make


def gcnconv_forward_with_out_degree_weights(case):
    """GCNConv(normalize=False) over A + I with w = (d_i o_j)^-1/2, the degrees of A + I (the oracle's
    norm = symmetric, source_degree = out)."""
    a, g, x = case.attributes, case.graph, case.inputs["x"]
    assert a["norm"] == "symmetric" and a["source_degree"] == "out" and a["self_loops"], a
    loops = torch.arange(g.n_dst, device=x.device)
    src, dst = torch.cat([g.col_idx, loops]), torch.cat([g.row_of_edge, loops])
    in_deg = torch.bincount(dst, minlength=g.n_dst).to(x.dtype)
    out_deg = torch.bincount(src, minlength=g.n_src).to(x.dtype)
    weight = torch.rsqrt(in_deg[dst] * out_deg[src])
    return {"y": case.module(x, torch.stack([src, dst]), weight)}


def gcnconv_forward_end_to_end(case):
    """GCNConv with its own self-loops and gcn_norm: equal to the oracle's GCN on a symmetric graph."""
    return {"y": case.module(case.inputs["x"], case.graph.edge_index)}


def cases(quick):
    big, kron, pyg, pyg_kron = ("rmat:14", "kronecker:12", "rmat:13", "kronecker:11") if quick else \
                               ("rmat:22", "kronecker:22", "rmat:20", "kronecker:20")
    return [
        ("torch spmm (autograd.Function)", "spmm", k.spmm_forward, {}, big, "pass"),
        ("torch spmm, backward uses A for Aᵀ", "spmm", k.buggy_spmm_forward, {}, big, "fail"),
        ("torch spmm (autograd.Function)", "spmm", k.spmm_forward, {}, kron, "pass"),
        ("PyG GCNConv(normalize=False), out-degree weights", "gcn", gcnconv_forward_with_out_degree_weights,
         {"module": gcnconv_module(False), "parameters": GCNCONV_PARAMETERS}, pyg, "pass"),
        ("PyG GCNConv end to end (gcn_norm)", "gcn", gcnconv_forward_end_to_end,
         {"module": gcnconv_module(True), "parameters": GCNCONV_PARAMETERS}, pyg_kron, "pass"),
    ]


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="small graphs (a smoke run of this script)")
    parser.add_argument("--cases", default="", help="comma-separated case numbers (1-based) to run; default all")
    args = parser.parse_args(argv)
    chosen = {int(n) for n in args.cases.split(",") if n.strip()}
    if chosen - set(range(1, len(cases(args.quick)) + 1)):
        parser.error("--cases: numbers 1 to %d, got %s" % (len(cases(args.quick)), args.cases))
    if args.device.startswith("cuda"):
        torch.zeros(1, device=args.device)  # CUDA's start-up, outside every case's seconds
        print("device: %s; torch %s, CUDA %s" % (torch.cuda.get_device_name(args.device), torch.__version__, torch.version.cuda))
    try:
        import torch_geometric
        print("PyG %s" % torch_geometric.__version__)
    except ImportError as e:
        print("PyG cannot be imported (%s): its cases are errors" % e)
    rows = []
    for number, (label, target, forward, extra, graph, expected) in enumerate(cases(args.quick), 1):
        if chosen and number not in chosen:
            continue
        start = time.perf_counter()
        run = gnncheck.check_scale(target, forward, graph=graph, rows=args.rows, device=args.device, **extra)
        wall = time.perf_counter() - start
        outcome = run.verdict.outcome
        held = outcome == expected
        s = run.seconds
        peak = run.device_peak_bytes / 2 ** 30 if run.device_peak_bytes else float("nan")
        worst = run.worst["ratio"] if run.worst else float("nan")
        print("%s %s on %s (%s): %s, expected %s; worst %.3g of its bound (%s); graph on the host %.2f s, inputs %.2f s, "
              "system %.2f s (the callable %s s), oracle part %.2f s, compare %.2f s, total %.2f s (wall %.2f s); "
              "device peak %.2f GiB" % (
                  "OK  " if held else "MISS", label, graph, run.graph_summary, outcome, expected, worst,
                  run.worst["tensor"] if run.worst else "-", s.get("graph", 0), s.get("inputs", 0), s.get("system", 0),
                  "%.2f" % run.callable_seconds if run.callable_seconds is not None else "-", s.get("oracle", 0),
                  s.get("compare", 0), s.get("total", 0), wall, peak))
        if not held:
            print(run.summary)
        sys.stdout.flush()
        rows.append((held, label, graph, outcome, expected, run.graph_summary, s, run.callable_seconds, peak))
    print()
    print("| case | graph | verdict (expected) | graph on host s | system s (callable s) | oracle part s | total s | device peak GiB |")
    print("|---|---|---|---|---|---|---|---|")
    for held, label, graph, outcome, expected, summary, s, callable_seconds, peak in rows:
        print("| %s | `%s` (%s) | %s (%s) | %.2f | %.2f (%s) | %.2f | %.2f | %.2f |" % (
            label, graph, summary, outcome, expected, s.get("graph", 0), s.get("system", 0),
            "%.2f" % callable_seconds if callable_seconds is not None else "-", s.get("oracle", 0), s.get("total", 0), peak))
    missed = [r for r in rows if not r[0]]
    print("\n%d of %d cases met their expectation" % (len(rows) - len(missed), len(rows)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

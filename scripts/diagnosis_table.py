#!/usr/bin/env python3
"""The table of docs/diagnosis.md: every CPU bug replica run through the `ci` suite in place of its
systems (`gnncheck run ci --system REPLICA --expect caught`), and for every failing result the
diagnosis report.json carries — which variant was named, and whether its bug class is the replica's own.
With --gpu, the GPU replicas instead (a CUDA build on a machine with a device): gpu-replica-N is the
GPU reference with CPU replica N's bug in one kernel, so its own class is replica N's.

    scripts/diagnosis_table.py build/suites/gnncheck [--suite ci] [--out DIR] [--gpu]

Prints the Markdown table, the fraction named and the run times on stdout.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

# The CPU replicas and their bug classes (adapters/replicas/replica_catalogue.cpp, kBugClasses).
REPLICAS = [
    ("tcgnn_backward_uses_A", "a_for_at"),
    ("tcgnn_agnn_attention_grad", "agnn_attention_grad"),
    ("gnnadvisor_sqrt_degree", "degree_power"),
    ("gnnadvisor_norm_backward_order", "degree_side"),
    ("gat_backward_untransposed_attention", "a_for_at"),
    ("tlpgnn_no_attention_grad", "gradient_dropped"),
    ("shared_edge_buffer", "stale_state"),
    ("fusegnn_softmax_no_max", "softmax_no_max"),
    ("dgnn_memory_growth", "memory_growth"),
    ("width_not_multiple_of_32", "width_tail"),
    ("missing_eshuffle", "missing_eshuffle"),
    ("missing_bias_grad", "gradient_dropped"),
    ("backward_assumes_square", "square_only_backward"),
    ("hub_row_race", "lost_updates"),
    ("tf32_edge_value_grad", "scaled_edge_gradient"),
    ("forward_not_repeatable", "nondeterministic"),
    ("gspmm_tie_gradient_to_every_edge", "tie_gradient_copied"),
    ("gspmm_stale_argmax", "stale_state"),
    ("gspmm_edge_gradient_at_source_index", "index_confusion"),
    ("gspmm_mean_source_degree", "degree_side"),
    ("gspmm_div_no_quotient_term", "quotient_term_dropped"),
    ("gspmm_broadcast_grad_not_summed", "broadcast_not_summed"),
    ("wide_rows_partial_tile_dropped", "width_tail"),
    ("square_features_read_transposed", "layout_from_shape"),
    ("heads_and_features_swapped", "layout_from_shape"),
    ("gine_edge_attr_grad_dropped", "gradient_dropped"),
    ("gatv2_att_grad_from_pre_activation", "pre_activation_used"),
]

# The GPU replicas by the number of the CPU replica whose bug they carry
# (adapters/replicas/gpu/gpu_replica_catalogue.cpp).
GPU_REPLICAS = [("gpu-replica-%d" % n, REPLICAS[n - 1][1]) for n in (1, 5, 8, 10, 11)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("gnncheck")
    parser.add_argument("--suite", default="ci")
    parser.add_argument("--out", default=None, help="where the reports go (default: a temporary folder)")
    parser.add_argument("--gpu", action="store_true", help="the GPU replicas instead of the CPU ones")
    args = parser.parse_args()
    replicas = GPU_REPLICAS if args.gpu else REPLICAS
    out = args.out or tempfile.mkdtemp(prefix="gnncheck-diagnosis-")
    rows, seconds = [], {}
    for replica, own_class in replicas:
        report = os.path.join(out, replica)
        start = time.perf_counter()
        subprocess.run([args.gnncheck, "run", args.suite, "--system", replica, "--expect", "caught", "--report", report,
                        "--progress", "plain"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        seconds[replica] = time.perf_counter() - start
        with open(os.path.join(report, "report.json")) as f:
            results = json.load(f)["results"]
        for r in results:
            if r["system"] != replica or r["verdict"] != "fail":
                continue
            d = r.get("diagnosis")
            among = "no"
            if d is None:
                printed, own = "— (answer correct on the case alone)", "no"
            elif d["matched"]:
                printed = "%s (%s)" % (d["variant"], d["bug_class"])
                if d["also_matching"]:
                    printed += "; also " + ", ".join(d["also_matching"])
                own = "yes" if d["bug_class"] == own_class else "no"
                among = "yes" if own_class in d["matching_classes"] else "no"
            else:
                printed = "no known variant matches" + ("; " + "; ".join(d["shared"]) if d["shared"] else "")
                own = "no"
            rows.append((replica, r["target"], r["check"], printed, own, among))
    print("| replica | target | check | diagnosis printed | named by its own class | own class among the matches |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| %s |" % " | ".join(row))
    named = sum(1 for r in rows if r[4] == "yes")
    among = sum(1 for r in rows if r[5] == "yes")
    print("\n%d of %d failures named by the replica's own class (%.0f%%); the own class among the matches in %d (%.0f%%)."
          % (named, len(rows), 100.0 * named / max(1, len(rows)), among, 100.0 * among / max(1, len(rows))))
    by_replica = {}
    for r in rows:
        n, m, total = by_replica.get(r[0], (0, 0, 0))
        by_replica[r[0]] = (n + (r[4] == "yes"), m + (r[5] == "yes"), total + 1)
    print("\n| replica | failures | named by its own class | own class among the matches | `gnncheck run %s` seconds |"
          % args.suite)
    print("|---|---|---|---|---|")
    for replica, _ in replicas:
        n, m, total = by_replica.get(replica, (0, 0, 0))
        print("| %s | %d | %d | %d | %.1f |" % (replica, total, n, m, seconds[replica]))
    return 0


if __name__ == "__main__":
    sys.exit(main())

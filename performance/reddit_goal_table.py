#!/usr/bin/env python3
"""Prints issue 8's goal table from one run's JSON files (standard library only).

    python3 performance/reddit_goal_table.py LOG_DIR

reads LOG_DIR/ours.json (gnncheck_gpu_reddit_bench), LOG_DIR/pyg.json (pyg_reddit_bench.py) and, when
present, LOG_DIR/verify.json (gnncheck_gpu_reddit_verify); writes LOG_DIR/goals.md and prints it.
"""
import json
import os
import sys

# model: (speed-up goal over PyG's faster path or None, peak goal GiB, the paper's GraphPy peak in GB)
GOALS = {"gcn": (3.0, 2.5, 2.1), "gin": (2.0, 4.0, 4.0), "gat1": (3.0, 10.0, 13.3), "gat3": (None, 24.0, 30.9)}
NAMES = {"gcn": "GCN (16)", "gin": "GIN (64)", "gat1": "GAT-1 (16)", "gat3": "GAT-3 (16)"}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        return {"error": str(e), "models": []}


def main():
    log = sys.argv[1] if len(sys.argv) > 1 else "."
    ours = {m["model"]: m for m in load(os.path.join(log, "ours.json")).get("models", [])}
    pyg = load(os.path.join(log, "pyg.json")).get("models", [])
    lines = ["| model | ours ms/epoch | PyG edge_index | PyG torch.sparse CSR | speed-up vs faster PyG | goal | "
             "ours peak GiB (graph/act/saved/wksp) | PyG peak GiB | peak goal | GraphPy GB | GPU busy | all met? |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for key, (speed_goal, peak_goal, graphpy) in GOALS.items():
        o = ours.get(key)
        paths = {p["path"]: p for p in pyg if p["model"] == key}

        def pyg_cell(path):
            p = paths.get(path)
            if p is None:
                return "not run"
            if p["status"] != "ok":
                return p["status"]
            return f"{p['mean_epoch_ms']:.1f} ms, {p['peak_gib']:.1f} GiB"

        ok_paths = [p for p in paths.values() if p["status"] == "ok"]
        fastest = min(ok_paths, key=lambda p: p["mean_epoch_ms"]) if ok_paths else None
        if not o or o.get("status") != "ok":
            lines.append(f"| {NAMES[key]} | {o.get('error', 'failed') if o else 'not run'} | {pyg_cell('edge_index')} | "
                         f"{pyg_cell('csr')} | — | — | — | — | — | {graphpy} | — | no |")
            continue
        ms = o["mean_epoch_ms"]
        ratio = fastest["mean_epoch_ms"] / ms if fastest else None
        speed_ok = True if speed_goal is None else (ratio is not None and ratio >= speed_goal)
        peak = o["peak_gib"]
        split = o["peak_split_bytes"]
        g = lambda c: split.get(c, 0) / 2**30
        peak_ok = peak <= peak_goal
        busy = 1.0 - o["mean_idle_share"]
        busy_ok = busy >= 0.95
        beat_graphpy = o["peak_bytes"] / 1e9 < graphpy
        pyg_peak = f"{fastest['peak_gib']:.1f} ({fastest['path']})" if fastest else "—"
        lines.append(
            f"| {NAMES[key]} | {ms:.1f} | {pyg_cell('edge_index')} | {pyg_cell('csr')} | "
            f"{f'{ratio:.2f}×' if ratio else '—'} | {f'≥ {speed_goal:g}×' if speed_goal else '—'} "
            f"{'met' if speed_ok else 'NOT met'} | {peak:.2f} ({g('graph'):.2f}/{g('activations'):.2f}/"
            f"{g('saved_for_backward'):.2f}/{g('workspace'):.2f}) | {pyg_peak} | ≤ {peak_goal:g} "
            f"{'met' if peak_ok else 'NOT met'} | {graphpy} ({'beaten' if beat_graphpy else 'NOT beaten'}) | "
            f"{100 * busy:.1f}% {'met' if busy_ok else 'NOT met'} | "
            f"{'yes' if speed_ok and peak_ok and busy_ok and beat_graphpy else 'no'} |")
    # Framework overhead: the Reddit-shaped graph (from the training runs above), Cora-shaped and
    # sampled mini-batches (overhead benchmarks), ours beside PyG's.
    pyg_by_key = {(p["model"], p["path"]): p for p in pyg}
    lines += ["", "| setting | model | ours wall ms | ours GPU-busy | ours idle | PyG wall ms | PyG GPU-busy | PyG idle |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for key in GOALS:
        o = ours.get(key)
        if not o or o.get("status") != "ok":
            continue
        walls = [it["wall_ms"] for it in o["overhead"]]
        busys = [it["busy_ms"] for it in o["overhead"]]
        p = pyg_by_key.get((key, "edge_index"))
        if p and p.get("status") == "ok" and p["overhead"]["busy_ms"] is not None:
            pc = (f"{p['overhead']['wall_ms']:.2f} | {p['overhead']['busy_ms']:.2f} | "
                  f"{100 * p['overhead']['idle_share']:.1f}%")
        else:
            pc = "— | — | —"
        lines.append(f"| Reddit-shaped, full graph | {key} | {sum(walls) / len(walls):.2f} | {sum(busys) / len(busys):.2f} | "
                     f"{100 * (1 - sum(busys) / sum(walls)):.1f}% | {pc} |")
    ours_o = {(r["setting"], r["model"]): r for r in load(os.path.join(log, "overhead_ours.json")).get("settings", [])}
    pyg_o = {(r["setting"], r["model"]): r for r in load(os.path.join(log, "overhead_pyg.json")).get("settings", [])}
    for k in ours_o.keys() | pyg_o.keys():
        cells = []
        for side in (ours_o, pyg_o):
            r = side.get(k)
            cells.append(f"{r['mean_wall_ms']:.2f} | {r['mean_busy_ms']:.2f} | {100 * r['idle_share']:.1f}%" if r
                         else "— | — | —")
        lines.append(f"| {k[0]} | {k[1]} | {cells[0]} | {cells[1]} |")
    verify = load(os.path.join(log, "verify.json"))
    if "total_s" in verify:
        lines.append("")
        lines.append(f"GAT-1 layer forward + backward vs the oracle on the Reddit-shaped graph: {verify['total_s']:.1f} s "
                     f"end to end (goal < 60 s: {'met' if verify['total_s'] < 60 else 'NOT met'}); verdict: "
                     f"{verify.get('verdict', '?')}")
    text = "\n".join(lines)
    with open(os.path.join(log, "goals.md"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()

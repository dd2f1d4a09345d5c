#!/usr/bin/env python3
"""Framework overhead of PyTorch Geometric on the graphs and blocks gnncheck_gpu_overhead_bench wrote.

Per training iteration (forward, cross-entropy, backward, Adam; torch.cuda.synchronize at its end):
wall time against GPU-busy time — the union of the GPU kernel, memcpy and memset intervals that
torch.profiler records in that iteration — and the idle share, for
  * the Cora-shaped graph (BLOCKS_DIR/cora.bin), two-layer GCN and GAT-1 (hidden 16), full graph;
  * every sampled batch (BLOCKS_DIR/batch*_block*_{row_ptr,col_idx}.npy: the same three bipartite
    blocks as the GPU reference), three-layer GCN and GAT-1. Block l's destinations are its first
    n_dst sources: GCNConv runs over the block's n_src nodes and keeps the first n_dst rows (PyG's
    NeighborLoader idiom); GATConv takes the bipartite pair (x_src, x_dst). Input features are
    random of the Reddit width (602) — only shapes matter for time.

    python3 performance/pyg_overhead_bench.py --blocks-dir /tmp/blocks --json overhead_pyg.json
"""
import argparse
import glob
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pyg_reddit_bench import load, profiled_step  # noqa: E402


class Stack(nn.Module):
    def __init__(self, kind, widths, classes):
        super().__init__()
        from torch_geometric.nn import GATConv, GCNConv
        self.kind = kind
        dims = widths + [classes]
        if kind == "gcn":
            self.convs = nn.ModuleList(GCNConv(dims[i], dims[i + 1]) for i in range(len(dims) - 1))
        else:
            self.convs = nn.ModuleList(GATConv((dims[i], dims[i]), dims[i + 1], heads=1)
                                       for i in range(len(dims) - 1))

    def forward(self, x, layers):
        """layers: (edge_index over local ids, n_dst) per layer, input side first."""
        for i, (conv, (edge_index, n_dst)) in enumerate(zip(self.convs, layers)):
            if self.kind == "gcn":
                x = conv(x, edge_index)[:n_dst]
            else:
                x = conv((x, x[:n_dst]), edge_index)
            if i + 1 < len(self.convs):
                x = F.relu(x)
        return x


def iterations(model, x, layers, y, warmup, count):
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x, layers), y)
        loss.backward()
        opt.step()

    for _ in range(warmup):
        step()
    out = []
    for _ in range(count):
        wall, busy = profiled_step(step)
        if busy is None:
            sys.exit("torch.profiler recorded no GPU activity: cannot measure GPU-busy time")
        out.append({"wall_ms": wall, "busy_ms": busy, "idle_share": 1.0 - busy / wall})
    return out


def summarize(setting, model, edges, its):
    wall = sum(i["wall_ms"] for i in its)
    busy = sum(i["busy_ms"] for i in its)
    n = len(its)
    print(f"{setting:<26} {model:<5} {edges:>9} edges  wall {wall / n:8.3f} ms  GPU-busy {busy / n:8.3f} ms  "
          f"idle {100 * (1 - busy / wall):5.1f}%", flush=True)
    return {"setting": setting, "model": model, "edges": edges, "mean_wall_ms": wall / n, "mean_busy_ms": busy / n,
            "idle_share": 1 - busy / wall, "iterations": its}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks-dir", required=True)
    ap.add_argument("--json")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=5)
    args = ap.parse_args()
    dev = torch.device("cuda")
    results = []
    cora = load(os.path.join(args.blocks_dir, "cora.bin"))
    n = cora["nodes"]
    deg = torch.from_numpy(cora["row_ptr"]).diff()
    dst = torch.repeat_interleave(torch.arange(n), deg)
    edge_index = torch.stack([torch.from_numpy(cora["col_idx"]).long(), dst]).to(dev)
    x = torch.from_numpy(cora["x"]).to(dev)
    y = torch.from_numpy(cora["labels"]).long().to(dev)
    mask = torch.from_numpy(cora["mask"]).bool().to(dev)
    for kind in ("gcn", "gat1"):
        torch.manual_seed(7)
        model = Stack("gcn" if kind == "gcn" else "gat", [cora["features"], 16], cora["classes"]).to(dev)
        # Full graph: every layer over all nodes; the loss over the training mask.
        layers = [(edge_index, n), (edge_index, n)]

        class Masked(nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x, layers):
                return self.inner(x, layers)[mask]

        results.append(summarize("Cora-shaped, full graph", kind, edge_index.size(1) + n,
                                 iterations(Masked(model), x, layers, y[mask], args.warmup, args.iterations)))
    batches = sorted({p.split("_block")[0] for p in glob.glob(os.path.join(args.blocks_dir, "batch*_block0_row_ptr.npy"))})
    for kind in ("gcn", "gat1"):
        its, edges = [], 0
        for stem in batches:
            layers = []
            for l in range(3):
                row_ptr = torch.from_numpy(np.load(f"{stem}_block{l}_row_ptr.npy"))
                col = torch.from_numpy(np.load(f"{stem}_block{l}_col_idx.npy"))
                n_dst = row_ptr.numel() - 1
                dst = torch.repeat_interleave(torch.arange(n_dst), row_ptr.diff())
                layers.append((torch.stack([col, dst]).to(dev), n_dst))
                edges += col.numel()
            n_input = np.load(f"{stem}_input_nodes.npy").shape[0]
            g = torch.Generator().manual_seed(1)
            x = (torch.rand(n_input, 602, generator=g) * 2 - 1).to(dev)
            y = torch.randint(0, 41, (layers[-1][1],), generator=g).to(dev)
            torch.manual_seed(7)
            model = Stack("gcn" if kind == "gcn" else "gat", [602, 16, 16], 41).to(dev)
            its += iterations(model, x, layers, y, args.warmup, args.iterations)
        results.append(summarize("sampled blocks (256; 10,10,10)", kind, edges // max(len(batches), 1), its))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"settings": results}, f, indent=1)


if __name__ == "__main__":
    main()

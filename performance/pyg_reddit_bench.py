#!/usr/bin/env python3
"""PyTorch Geometric on exactly the graph gnncheck_gpu_reddit_bench trained on (issue 8).

Reads the file written by `gnncheck_gpu_reddit_bench --data FILE` (format: performance/reddit_graph.h),
trains the same two-layer models (GCN hidden 16, GIN hidden 64 with a two-linear MLP, GAT with 1 and
3 heads hidden 16; ReLU between layers, cross-entropy over the training mask, Adam lr 0.01) full-graph
through both of PyG's paths — `edge_index` (message passing with scatter) and a `torch.sparse` CSR
adjacency (one SpMM per layer; GCN's adjacency pre-normalized) — and records per model and path:
epoch time (torch.cuda.synchronize after each epoch, after warm-up), torch.cuda.max_memory_allocated
(total, and above the inputs that were already on the device), and framework overhead from
torch.profiler (wall time of one profiled epoch vs the union of its GPU kernel/memcpy/memset
intervals). Out of memory is a result, not a crash.

    python3 performance/pyg_reddit_bench.py --data /tmp/reddit.bin --json pyg.json
"""
import argparse
import gc
import json
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

MAGIC = b"GNNCKRD1"


def load(path):
    with open(path, "rb") as f:
        magic = f.read(8)
        if magic != MAGIC:
            sys.exit(f"{path}: not a Reddit-shaped data file (first 8 bytes {magic!r}, expected {MAGIC!r})")
        header = np.frombuffer(f.read(56), dtype="<i8")
    nodes, edges, features, classes = (int(v) for v in header[:4])
    loops_appended = int(header[6]) == 1
    offset = 64
    def take(dtype, count):
        nonlocal offset
        a = np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=(count,))
        offset += count * np.dtype(dtype).itemsize
        return a
    row_ptr = take("<i8", nodes + 1)
    col_idx = take("<i4", edges)
    x = take("<f4", nodes * features).reshape(nodes, features)
    labels = take("<i4", nodes)
    mask = take("u1", nodes)
    row_ptr = np.array(row_ptr)  # copies: torch wants writable arrays
    col_idx = np.array(col_idx)
    if loops_appended:  # the GPU side's A + I: drop each row's last entry, PyG adds loops itself
        keep = np.ones(edges, dtype=bool)
        keep[row_ptr[1:] - 1] = False
        col_idx = col_idx[keep]
        row_ptr = row_ptr - np.arange(nodes + 1)
        edges -= nodes
    return dict(nodes=nodes, edges=edges, features=features, classes=classes, row_ptr=row_ptr,
                col_idx=col_idx, x=np.array(x), labels=np.array(labels), mask=np.array(mask))


def build_models(kind, features, classes, path):
    from torch_geometric.nn import GATConv, GCNConv, GINConv
    csr = path == "csr"
    if kind == "gcn":
        # csr: the adjacency is passed pre-normalized (D^-1/2 (A+I) D^-1/2), so no normalization here.
        layers = [GCNConv(features, 16, normalize=not csr, add_self_loops=not csr),
                  GCNConv(16, classes, normalize=not csr, add_self_loops=not csr)]
    elif kind == "gin":
        mlp = lambda i, h, o: nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, o))
        layers = [GINConv(mlp(features, 64, 64)), GINConv(mlp(64, 64, classes))]
    else:
        heads = 1 if kind == "gat1" else 3
        layers = [GATConv(features, 16, heads=heads), GATConv(16 * heads, classes, heads=1)]
    return nn.ModuleList(layers)


class TwoLayer(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = layers

    def forward(self, x, adj):
        x = F.relu(self.layers[0](x, adj))
        return self.layers[1](x, adj)


def adjacency(data, kind, path, device):
    """edge_index (source, target) with PyG adding self-loops itself, or a torch.sparse CSR adj_t."""
    n = data["nodes"]
    row_ptr = torch.from_numpy(data["row_ptr"]).to(device)
    col = torch.from_numpy(data["col_idx"]).to(device).long()
    deg = row_ptr[1:] - row_ptr[:-1]
    if path == "edge_index":
        dst = torch.repeat_interleave(torch.arange(n, device=device), deg)
        return torch.stack([col, dst])  # row i of the CSR lists the in-edges of i
    dst = torch.repeat_interleave(torch.arange(n, device=device), deg)
    if kind == "gcn":  # pre-normalized D^-1/2 (A+I) D^-1/2, a self-loop added to each row as in gnncheck
        loops = torch.arange(n, device=device)
        dst = torch.cat([dst, loops])
        col = torch.cat([col, loops])
        d = (deg + 1).float().pow(-0.5)
        values = d[dst] * d[col]
    else:
        values = torch.ones(col.numel(), device=device)
    # torch's CSR wants sorted, distinct columns per row: coalescing sums duplicate edges into one
    # entry of value 2 (the same product).
    coo = torch.sparse_coo_tensor(torch.stack([dst, col]), values, (n, n)).coalesce()
    return coo.to_sparse_csr()


def gpu_intervals(prof):
    """(start, end) in microseconds of every GPU activity (kernel, memcpy, memset) the profiler saw."""
    out = []
    try:  # kineto's raw records: one per device activity
        for e in prof.profiler.kineto_results.events():
            if e.device_type() == torch.autograd.DeviceType.CUDA:
                start = e.start_ns() / 1000.0
                out.append((start, start + e.duration_ns() / 1000.0))
    except (AttributeError, RuntimeError):
        out = []
    if not out:  # the parsed events, where the raw records are not exposed
        for e in prof.events():
            if e.device_type == torch.autograd.DeviceType.CUDA:
                out.append((e.time_range.start, e.time_range.end))
    return out


def busy_ms(prof):
    """Union of the GPU activity intervals of a profiled region, in ms (None if none were recorded)."""
    intervals = sorted(gpu_intervals(prof))
    if not intervals:
        return None
    total, end = 0.0, -1.0
    for s, t in intervals:
        if s > end:
            total += t - s
            end = t
        elif t > end:
            total += t - end
            end = t
    return total / 1000.0


def profiled_step(step):
    """One call of step() under torch.profiler, with a device barrier before and after: (wall ms, GPU-busy
    ms or None when the profiler recorded no GPU activity)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t0) * 1000.0
    return wall, busy_ms(prof)


def train(data, kind, path, warmup, epochs, device):
    x = torch.from_numpy(data["x"]).to(device)
    y = torch.from_numpy(data["labels"]).to(device).long()
    mask = torch.from_numpy(data["mask"]).to(device).bool()
    adj = adjacency(data, kind, path, device)
    torch.cuda.synchronize()
    inputs = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(7)
    model = TwoLayer(build_models(kind, data["features"], data["classes"], path)).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def step():
        opt.zero_grad(set_to_none=True)
        out = model(x, adj)
        loss = F.cross_entropy(out[mask], y[mask])
        loss.backward()
        opt.step()
        return loss

    losses, times = [], []
    for e in range(warmup + epochs):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = step()
        torch.cuda.synchronize()
        if e >= warmup:
            times.append((time.perf_counter() - t0) * 1000.0)
        losses.append(loss.item())
    wall, busy = profiled_step(step)
    peak = torch.cuda.max_memory_allocated()
    return dict(status="ok", epoch_ms=times, mean_epoch_ms=sum(times) / len(times), losses=losses,
                inputs_gib=inputs / 2**30, peak_gib=peak / 2**30, peak_above_inputs_gib=(peak - inputs) / 2**30,
                overhead={"wall_ms": wall, "busy_ms": busy,
                          "idle_share": None if busy is None else 1.0 - busy / wall})


def run(data, kind, path, warmup, epochs, device):
    """train() in its own frame, so that every tensor of a failed run is freed before the next one."""
    rec = {"model": kind, "path": path}
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    try:
        rec.update(train(data, kind, path, warmup, epochs, device))
    except torch.cuda.OutOfMemoryError as e:
        rec.update(status="out of memory", error=str(e).splitlines()[0],
                   peak_gib=torch.cuda.max_memory_allocated() / 2**30)
    except Exception as e:  # an unsupported path is a reported result too
        rec.update(status="error", error=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    gc.collect()
    torch.cuda.empty_cache()
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--json")
    ap.add_argument("--models", default="gcn,gin,gat1,gat3")
    ap.add_argument("--paths", default="edge_index,csr")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=5)
    args = ap.parse_args()
    import torch_geometric
    device = torch.device("cuda")
    t0 = time.perf_counter()
    data = load(args.data)
    print(f"loaded {args.data}: {data['nodes']} nodes, {data['edges']} edges, {data['features']} features, "
          f"{data['classes']} classes in {time.perf_counter() - t0:.1f} s; PyG {torch_geometric.__version__}, "
          f"torch {torch.__version__}, {torch.cuda.get_device_name()}", flush=True)
    results = []
    for kind in args.models.split(","):
        for path in args.paths.split(","):
            if kind.startswith("gat") and path == "csr":
                results.append({"model": kind, "path": path, "status": "not run",
                                "error": "GATConv needs per-edge messages; PyG has no torch.sparse SpMM path for it"})
                continue
            t = time.perf_counter()
            rec = run(data, kind, path, args.warmup, args.epochs, device)
            rec["total_s"] = time.perf_counter() - t
            results.append(rec)
            if rec["status"] == "ok":
                idle = rec["overhead"]["idle_share"]
                print(f"{kind:5} {path:10} {rec['mean_epoch_ms']:9.2f} ms/epoch  peak {rec['peak_gib']:7.2f} GiB "
                      f"({rec['peak_above_inputs_gib']:.2f} above {rec['inputs_gib']:.2f} inputs)  idle "
                      f"{'n/a' if idle is None else f'{100 * idle:.1f}%'}  loss {rec['losses'][0]:.4f} -> "
                      f"{rec['losses'][-1]:.4f}  ({rec['total_s']:.1f} s)", flush=True)
            else:
                print(f"{kind:5} {path:10} {rec['status']}: {rec.get('error', '')}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "pyg": torch_geometric.__version__,
                       "torch": torch.__version__, "warmup": args.warmup, "epochs": args.epochs,
                       "models": results}, f, indent=1)


if __name__ == "__main__":
    main()

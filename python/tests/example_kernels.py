"""Kernels as PyTorch extension authors write them: a torch.autograd.Function over a CSR SpMM whose
forward and backward are separate "kernels", correct and with the A-for-Aᵀ bug of TC-GNN (the
backward aggregates with A where Aᵀ is needed), and a GCN layer as an nn.Module.

The "kernels" are plain torch code on CSR arrays, standing in for a CUDA extension's entry points.
"""

import torch

import gnncheck


def csr_spmm(row_ptr, col_idx, n_rows, x):
    """y[i] = sum over e in row i of x[col_idx[e]] (y has n_rows rows)."""
    rows = torch.repeat_interleave(torch.arange(n_rows, device=x.device), row_ptr[1:] - row_ptr[:-1])
    return x.new_zeros((n_rows,) + tuple(x.shape[1:])).index_add_(0, rows, x[col_idx])


def csr_spmm_transposed(row_ptr, col_idx, n_cols, y):
    """z[j] = sum over edges e with col_idx[e] = j of y[row of e]: Aᵀ y (z has n_cols rows)."""
    n_rows = row_ptr.shape[0] - 1
    rows = torch.repeat_interleave(torch.arange(n_rows, device=y.device), row_ptr[1:] - row_ptr[:-1])
    return y.new_zeros((n_cols,) + tuple(y.shape[1:])).index_add_(0, col_idx, y[rows])


class SpMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, row_ptr, col_idx, n_dst, x):
        ctx.save_for_backward(row_ptr, col_idx)
        ctx.n_src = x.shape[0]
        return csr_spmm(row_ptr, col_idx, n_dst, x)

    @staticmethod
    def backward(ctx, grad_y):
        row_ptr, col_idx = ctx.saved_tensors
        return None, None, None, csr_spmm_transposed(row_ptr, col_idx, ctx.n_src, grad_y)


class SpMMBackwardUsesA(torch.autograd.Function):
    """TC-GNN's bug: the backward runs the forward kernel again, on A instead of Aᵀ."""

    @staticmethod
    def forward(ctx, row_ptr, col_idx, n_dst, x):
        if n_dst != x.shape[0]:
            # Like the kernels it replicates, it assumes a square adjacency.
            raise gnncheck.Unsupported("the kernel assumes a square adjacency; this graph is %d x %d" % (n_dst, x.shape[0]))
        ctx.save_for_backward(row_ptr, col_idx)
        return csr_spmm(row_ptr, col_idx, n_dst, x)

    @staticmethod
    def backward(ctx, grad_y):
        row_ptr, col_idx = ctx.saved_tensors
        return None, None, None, csr_spmm(row_ptr, col_idx, grad_y.shape[0], grad_y)


def spmm_forward(case):
    x = case.inputs["x"]
    return {"y": SpMM.apply(case.graph.row_ptr, case.graph.col_idx, case.n_dst, x)}


def buggy_spmm_forward(case):
    x = case.inputs["x"]
    return {"y": SpMMBackwardUsesA.apply(case.graph.row_ptr, case.graph.col_idx, case.n_dst, x)}


class GCN(torch.nn.Module):
    """GCN (Kipf & Welling) as the oracle defines it: y = D_dst^-1/2 (A [+ I]) D_src^-1/2 x W + b,
    the degrees those of the aggregated graph; D_src the sources' out-degrees (source_degree="out")
    or their own in-degrees (source_degree="in", 0 beyond n_dst: PyG's gcn_norm); a node of degree 0
    contributes and receives 0."""

    def __init__(self, in_features, out_features, bias=True, self_loops=True, norm="symmetric", source_degree="out"):
        super().__init__()
        self.lin = torch.nn.Linear(in_features, out_features, bias=False)
        self.bias = torch.nn.Parameter(torch.zeros(out_features)) if bias else None
        self.self_loops = self_loops
        self.norm = norm
        self.source_degree = source_degree

    def forward(self, x, graph):
        n_dst = graph.n_dst
        rows, cols = graph.row_of_edge, graph.col_idx
        if self.self_loops:
            loops = torch.arange(n_dst, device=x.device)
            rows, cols = torch.cat([rows, loops]), torch.cat([cols, loops])
        in_deg = torch.bincount(rows, minlength=n_dst).to(x.dtype)
        out_deg = torch.bincount(cols, minlength=x.shape[0]).to(x.dtype)
        if self.source_degree == "in":  # source j's own in-degree as destination j
            out_deg = torch.bincount(rows, minlength=max(n_dst, x.shape[0]))[: x.shape[0]].to(x.dtype)
        inv_sqrt = lambda d: torch.where(d > 0, d.clamp(min=1).rsqrt(), torch.zeros_like(d))  # noqa: E731
        if self.norm == "symmetric":
            w = inv_sqrt(in_deg)[rows] * inv_sqrt(out_deg)[cols]
        else:
            w = torch.where(in_deg > 0, 1 / in_deg.clamp(min=1), torch.zeros_like(in_deg))[rows]
        h = self.lin(x)
        y = h.new_zeros((n_dst, h.shape[1])).index_add_(0, rows, w[:, None] * h[cols])
        return y + self.bias if self.bias is not None else y


def gcn_module(case):
    a = case.attributes
    return GCN(a["in_features"], a["out_features"], bias=a["bias"], self_loops=a["self_loops"], norm=a["norm"],
               source_degree=a["source_degree"])


def gcn_forward(case):
    return {"y": case.module(case.inputs["x"], case.graph)}


GCN_PARAMETERS = {"lin.weight": gnncheck.transposed("weight"), "bias": "bias"}


# ---- CUDA streams: a kernel on a side stream of its own --------------------------------------
# A forward that launches on a stream it made and returns without making the caller's current
# stream wait for it: the next op of the caller (here: gnncheck reading the output) runs before the
# kernel has written. The side stream first sleeps, so the read is reliably stale.

SIDE_STREAM_SLEEP_CYCLES = 20_000_000  # ~10 ms on an H200 (1.98 GHz)


class SpMMOnSideStream(torch.autograd.Function):
    @staticmethod
    def forward(ctx, row_ptr, col_idx, n_dst, x, join):
        ctx.save_for_backward(row_ptr, col_idx)
        ctx.n_src = x.shape[0]
        caller = torch.cuda.current_stream(x.device)
        side = torch.cuda.Stream(device=x.device)
        y = x.new_zeros((n_dst,) + tuple(x.shape[1:]))  # allocated and zeroed on the caller's stream
        # The destination of each edge, on the caller's stream: repeat_interleave waits on the host
        # for its output size, which would also make this thread wait for the side stream.
        rows = torch.repeat_interleave(torch.arange(n_dst, device=x.device), row_ptr[1:] - row_ptr[:-1])
        side.wait_stream(caller)  # the inputs and y are ready before the side stream reads them
        with torch.cuda.stream(side):
            torch.cuda._sleep(SIDE_STREAM_SLEEP_CYCLES)
            y.index_add_(0, rows, x[col_idx])  # no host synchronization: the launch returns at once
        for t in (row_ptr, col_idx, rows, x, y):
            t.record_stream(side)  # the allocator keeps them until the side stream is done
        if join:
            caller.wait_stream(side)  # the correct kernel: the caller's next op waits for the side stream
        return y

    @staticmethod
    def backward(ctx, grad_y):
        row_ptr, col_idx = ctx.saved_tensors
        return None, None, None, csr_spmm_transposed(row_ptr, col_idx, ctx.n_src, grad_y), None


def side_stream_unjoined_spmm_forward(case):
    """The bug: the output is read before the side stream has written it."""
    return {"y": SpMMOnSideStream.apply(case.graph.row_ptr, case.graph.col_idx, case.n_dst, case.inputs["x"], False)}


def side_stream_joined_spmm_forward(case):
    """Correct: current_stream().wait_stream(side) before returning."""
    return {"y": SpMMOnSideStream.apply(case.graph.row_ptr, case.graph.col_idx, case.n_dst, case.inputs["x"], True)}


# ---- A leak: every call keeps 1 MiB of device memory alive --------------------------------------

_kept = []


def leaking_spmm_forward(case):
    _kept.append(torch.empty(1 << 18, dtype=torch.float32, device=case.inputs["x"].device))  # 1 MiB a call
    return spmm_forward(case)


# ---- Triton: an edge-parallel SpMM whose forward and backward are Triton kernels -------------------

def triton_spmm_forward(case):
    """y = A x with the Triton kernel of triton_kernels.py (forward: scatter into destinations;
    backward: the same kernel with sources and destinations swapped, Aᵀ)."""
    import triton_kernels

    return {"y": triton_kernels.TritonSpMM.apply(case.graph.row_ptr, case.graph.col_idx, case.graph.row_of_edge, case.n_dst,
                                                 case.inputs["x"])}

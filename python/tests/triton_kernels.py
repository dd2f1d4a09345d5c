"""A Triton SpMM as a kernel author writes one: an edge-parallel gather-scatter kernel
(out[dst[e]] += inp[src[e]] by atomic adds), used for the forward (y = A x: dst = the edge's row,
src = its column) and the backward (grad_x = Aᵀ grad_y: the two swapped). Imported only where
Triton is (test_cuda.py skips without it)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gather_scatter(dst_ptr, src_ptr, inp_ptr, out_ptr, num_edges, features, BLOCK_E: tl.constexpr,
                    BLOCK_F: tl.constexpr):
    e = tl.program_id(0) * BLOCK_E + tl.arange(0, BLOCK_E)
    in_range = e < num_edges
    dst = tl.load(dst_ptr + e, mask=in_range, other=0)
    src = tl.load(src_ptr + e, mask=in_range, other=0)
    for f0 in range(0, features, BLOCK_F):
        f = f0 + tl.arange(0, BLOCK_F)
        mask = in_range[:, None] & (f < features)[None, :]
        values = tl.load(inp_ptr + src[:, None] * features + f[None, :], mask=mask, other=0.0)
        tl.atomic_add(out_ptr + dst[:, None] * features + f[None, :], values, mask=mask)


def gather_scatter(dst, src, inp, n_out):
    """out[dst[e]] += inp[src[e]] for every edge e; out has n_out rows."""
    inp = inp.contiguous()
    out = torch.zeros((n_out,) + tuple(inp.shape[1:]), dtype=inp.dtype, device=inp.device)
    num_edges = dst.shape[0]
    features = 1
    for width in inp.shape[1:]:
        features *= int(width)
    if num_edges == 0 or features == 0:
        return out
    block_e = 64
    _gather_scatter[(triton.cdiv(num_edges, block_e),)](dst, src, inp, out, num_edges, features, BLOCK_E=block_e,
                                                         BLOCK_F=32)
    return out


class TritonSpMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, row_ptr, col_idx, row_of_edge, n_dst, x):
        ctx.save_for_backward(col_idx, row_of_edge)
        ctx.n_src = x.shape[0]
        return gather_scatter(row_of_edge, col_idx, x, n_dst)

    @staticmethod
    def backward(ctx, grad_y):
        col_idx, row_of_edge = ctx.saved_tensors
        return None, None, None, None, gather_scatter(col_idx, row_of_edge, grad_y, ctx.n_src)

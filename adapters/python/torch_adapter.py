#!/usr/bin/env python3
"""torch adapter: gnncheck's ops as PyTorch functions and its layers as PyTorch Geometric modules.

Every target is a differentiable PyTorch computation; gradients come from autograd
(torch.autograd.grad of sum(output * grad_output)). Ops are written with index_add /
scatter_reduce (no PyG needed). Layers use PyG's GCNConv, GINConv, GINEConv, GATConv, GATv2Conv, SAGEConv,
AGNNConv, RGCNConv and RGATConv when torch_geometric is installed, with the oracle's parameters copied into them.

    gnncheck run --adapter "python3 adapters/python/torch_adapter.py --device cuda"

Options: --device cpu|cuda (default: cuda when available), --dtype
float32|float64|float16|bfloat16 (default float32: every tensor, parameter and the arithmetic torch
does on them in that type, declared as that precision), --tf32 (allow TF32 matmuls and declare tf32), --no-pyg (ops only), --gspmm-reductions
torch|pyg and --segment-reduce scatter|torch (torch_targets/algebra.py).

The targets' mappings are in torch_targets/, one module per family, each with its notes:
sparse_ops (spmm … attention, sddmm_spmm), algebra (gspmm, gsddmm, segment_reduce,
segment_aggregation), layers (the PyG layers and how PyG's definitions are mapped onto the
oracle's), relational (segment_mm, gather_mm, typed_linear, rgcn, rgat); context holds the dtype and device.

Run on an H200 with torch 2.11 and PyG 2.8 (docs/campaigns.md, "The torch/PyG adapter on the
H200, completed"): 10^4 random differential and 10^4 adjoint cases per target pass on every target,
and 2·10^3 cases per target of the metamorphic, state, numerics and op_order checks. gather_mm and
rgcn came later: 500 cases per check (differential, adjoint, state_interleaved) pass on an H100
with torch 2.11 and PyG 2.8's RGCNConv, and on the CPU with torch 1.13 (docs/campaigns.md).

Each case's tensors go to the device in one copy and come back in one (upload / download), and the
PyG modules are kept between cases (ModuleCache): on a small graph the driver calls cost more than
the arithmetic (gat's adjoint on the H200: 22.4 → 17.4 s for 60 cases; docs/campaigns.md). For the
same reason the peak and live memory are measured only where gnncheck reads them
(case.measure_resources: its resources check): with these and gnncheck's own readings skipped
elsewhere, 16 processes at once ran 1.6–1.9 times faster.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gnncheck_adapter as kit  # noqa: E402

import torch  # noqa: E402

from torch_targets import context  # noqa: E402
from torch_targets.algebra import op_gsddmm, op_gspmm, op_segment_aggregation, op_segment_reduce  # noqa: E402
from torch_targets.context import Context, measured  # noqa: E402
from torch_targets.layers import (layer_agnn, layer_gat, layer_gatv2, layer_gcn, layer_gin,  # noqa: E402
                                  layer_gine, layer_sage)
from torch_targets.relational import (layer_rgat, layer_rgat_torch, layer_rgcn, layer_rgcn_torch,  # noqa: E402
                                      op_gather_mm, op_segment_mm, op_typed_linear)
from torch_targets.sparse_ops import (op_attention, op_edge_softmax, op_eshuffle, op_eshuffle_inverse,  # noqa: E402
                                      op_normalized_spmm, op_sddmm_add, op_sddmm_dot, op_sddmm_spmm, op_spmm,
                                      op_spmm_transposed, op_spmm_ve, op_spmm_ve_transposed)


OPS = {
    "spmm": op_spmm,
    "spmm_transposed": op_spmm_transposed,
    "spmm_ve": op_spmm_ve,
    "spmm_ve_transposed": op_spmm_ve_transposed,
    "sddmm_dot": op_sddmm_dot,
    "sddmm_add": op_sddmm_add,
    "edge_softmax": op_edge_softmax,
    "eshuffle": op_eshuffle,
    "eshuffle_inverse": op_eshuffle_inverse,
    "normalized_spmm": op_normalized_spmm,
    "gspmm": op_gspmm,
    "gsddmm": op_gsddmm,
    "segment_reduce": op_segment_reduce,
    "segment_mm": op_segment_mm,
    "gather_mm": op_gather_mm,
    "typed_linear": op_typed_linear,
    "segment_aggregation": op_segment_aggregation,
    "attention": op_attention,
    "sddmm_spmm": op_sddmm_spmm,
}


LAYERS = {"gcn": layer_gcn, "gin": layer_gin, "gine": layer_gine, "gat": layer_gat, "gatv2": layer_gatv2,
          "sage": layer_sage, "agnn": layer_agnn, "rgcn": layer_rgcn, "rgat": layer_rgat}
# Layers the adapter also computes without torch_geometric (--no-pyg, or PyG not installed).
TORCH_LAYERS = {"rgcn": layer_rgcn_torch, "rgat": layer_rgat_torch}
# What the adapter implements where it is fewer values than a target has (PROTOCOL.md §2): a source
# degree of 0 gets factor 0 (gcn_norm masks 1/sqrt(0) to 0; the adapter's own factors do the same),
# and GAT runs without attention dropout (PyG draws its own mask; the oracle's is a function of
# dropout_seed), and edge_softmax keeps duplicate edges as separate entries (PyG's softmax). gnncheck
# draws no case outside these.
IMPLEMENTS = {"normalized_spmm": {"zero_degree": ["zero"]}, "gcn": {"zero_degree": ["zero"]},
              "gat": {"attn_dropout": [0.0]}, "edge_softmax": {"duplicate_edges": ["separate"]},
              # Opt-in attributes (added to these layers later; asked only where declared). max only
              # with --pyg-max: PyG's max aggregation is scatter_reduce(amax, include_self=False) on
              # zeros, whose backward (torch 1.13 to 2.11) counts the excluded initial 0 as a tied
              # entry, so a row whose maximum is exactly 0 passes on half its gradient (caught by
              # `full` on the H100, docs/campaigns.md).
              "sage": {"aggr": ["mean"], "project": [False, True]}, "gin": {"aggr": ["sum", "mean"]},
              # Every value of rgcn's modes, through RGCNConv and without PyG alike (bases: any count,
              # PyG's num_bases; 0 is num_bases=None). gather_mm has no mode: every case is answered.
              "rgcn": {"aggr": ["mean", "sum"], "root_weight": [False, True], "bias": [False, True]},
              # std and mul were added to segment_aggregation later: asked only where aggr is declared.
              "segment_aggregation": {"aggr": ["var", "softmax", "std", "mul"]}}
PYG_MAX = {"sage": {"aggr": ["mean", "max"], "project": [False, True]}, "gin": {"aggr": ["sum", "mean", "max"]}}


DTYPES = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
          "bfloat16": torch.bfloat16}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", choices=list(DTYPES), default="float32")
    parser.add_argument("--tf32", action="store_true", help="allow TF32 matmuls (declared as tf32)")
    parser.add_argument("--no-pyg", action="store_true",
                        help="no torch_geometric, even when installed: the ops, and rgcn and rgat in plain torch")
    parser.add_argument("--gspmm-reductions", choices=["torch", "pyg"], default="torch",
                        help="gspmm's reduction: torch's scatter_reduce (default) or PyG's "
                             "torch_geometric.utils.scatter (needs torch_geometric)")
    parser.add_argument("--segment-reduce", choices=["scatter", "torch"], default="scatter",
                        help="segment_reduce by scatter_reduce (default) or by torch.segment_reduce, whose max and "
                             "min backward copies a gradient <= 0 to every tied row (below)")
    parser.add_argument("--pyg-max", action="store_true",
                        help="declare sage's and gin's max aggregation too (PyG's scatter_reduce amax backward passes "
                             "on half the gradient where a row's maximum is exactly 0: expected to fail)")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    torch.backends.cudnn.allow_tf32 = args.tf32
    implements = dict(IMPLEMENTS, **(PYG_MAX if args.pyg_max else {}))
    pyg_scatter = None
    if args.gspmm_reductions == "pyg":
        try:
            from torch_geometric.utils import scatter as pyg_scatter
        except ImportError as error:
            parser.error("--gspmm-reductions pyg needs torch_geometric: %s" % error)
        implements["gspmm"] = {"empty_rows": ["zero"]}  # PyG's scatter gives 0 on an empty row
    context.CTX = Context(args.device, DTYPES[args.dtype], pyg_scatter,
                  args.segment_reduce)
    precision = "tf32" if args.tf32 and args.dtype == "float32" else args.dtype
    targets = {name: (precision, measured(fn), implements.get(name)) for name, fn in OPS.items()}
    pyg_version = None
    if not args.no_pyg:
        try:
            import torch_geometric
            from torch_geometric.nn import aggr as pyg_aggr

            pyg_version = torch_geometric.__version__
            targets.update({name: (precision, measured(fn), implements.get(name)) for name, fn in LAYERS.items()})
            context.CTX.pyg_aggregations = {"var": pyg_aggr.VarAggregation, "std": pyg_aggr.StdAggregation,
                                            "mul": pyg_aggr.MulAggregation,
                                            "softmax": lambda: pyg_aggr.SoftmaxAggregation(learn=True)}
            from torch_geometric.nn import HeteroLinear
            context.CTX.pyg_hetero_linear = HeteroLinear
        except ImportError:
            pass
    if pyg_version is None:
        targets.update({name: (precision, measured(fn), implements.get(name)) for name, fn in TORCH_LAYERS.items()})
    sys.stderr.write("torch adapter: torch %s on %s, %s, torch_geometric %s, gspmm reductions by %s\n" %
                     (torch.__version__, context.CTX.device, precision, pyg_version or "not used", args.gspmm_reductions))
    # Between cases the adapter should hold no tensor of a case: device memory that torch's allocator
    # still counts as allocated is what a leak (tensors kept alive across cases) shows. torch's own
    # count, not torch.cuda.mem_get_info(): the device-wide figure moves with every other process on
    # the GPU and with the allocator's cache, which a correct system keeps.
    live_bytes = torch.cuda.memory_allocated if context.CTX.device.type == "cuda" else None
    # Device-level use as well: what the driver counts for this process (NVML), which also holds
    # memory no torch allocator sees (a cuRAND generator or a cudaMalloc per call in an extension).
    device_bytes = kit.process_device_bytes if context.CTX.device.type == "cuda" else None
    kit.serve(name="torch" if context.CTX.device.type == "cpu" else "torch_cuda", targets=targets, live_bytes=live_bytes,
              device_bytes=device_bytes)


if __name__ == "__main__":
    main()

"""The adapter's dtype and device, and what every target shares: a case's tensors to the device and
back in one copy each, index tensors as int64, the graph's views on the device, autograd over a
computation, the PyG modules kept between cases, and the peak memory where gnncheck reads it.
"""

import numpy as np
import torch

import gnncheck_adapter as kit


class Context:
    def __init__(self, device, dtype, pyg_scatter=None, segment_reduce="scatter", pyg_aggregations=None):
        self.device = torch.device(device)
        self.dtype = dtype
        self.pyg_scatter = pyg_scatter  # torch_geometric.utils.scatter with --gspmm-reductions pyg
        self.segment_reduce = segment_reduce  # --segment-reduce: scatter (scatter_reduce) or torch
        # segment_aggregation's modules by aggr (makers of torch_geometric.nn.aggr modules) where
        # torch_geometric is used; None: the adapter's own torch formulation.
        self.pyg_aggregations = pyg_aggregations
        # typed_linear's module maker (torch_geometric.nn.HeteroLinear) where torch_geometric is used;
        # None: gather_mm on the nodes in plain torch.
        self.pyg_hetero_linear = None


CTX = None  # the one Context, set by the entry point (torch_adapter.py main)


def upload(arrays, dtype):
    """{name: numpy array} on the device as `dtype`, through one host-to-device copy: a copy is a
    synchronizing driver call, which costs more than a small case's arithmetic (a kernel and a copy
    back took 1.57 ms on the H200 machine, docs/campaigns.md). Each tensor is a leaf of its own."""
    # Half precisions travel as float32 (NumPy has no bfloat16) and are rounded once, on the device.
    np_dtype = np.float64 if dtype == torch.float64 else np.float32
    flats = [np.ascontiguousarray(a, dtype=np_dtype).reshape(-1) for a in arrays.values()]
    flat = torch.from_numpy(np.concatenate(flats) if flats else np.empty(0, dtype=np_dtype)).to(CTX.device)
    flat = flat.to(dtype)
    tensors, start = {}, 0
    for (name, a), f in zip(arrays.items(), flats):
        tensors[name] = flat[start:start + f.size].view(np.shape(a)).detach()
        start += f.size
    return tensors


def download(tensors):
    """The tensors as float64 numpy arrays through one device-to-host copy (upload's reason)."""
    if not tensors:
        return []
    flat = torch.cat([t.detach().reshape(-1).to(torch.float64) for t in tensors]).to("cpu").numpy()
    arrays, start = [], 0
    for t in tensors:
        arrays.append(flat[start:start + t.numel()].reshape(tuple(t.shape)))
        start += t.numel()
    return arrays


# Index tensors (oracle/targets.h, TensorSlot::index_range): a choice per row, not a value — each
# edge's relation, integers sent as numbers like every tensor. Never differentiated. Known by name,
# and by an input entry's index_range where the case's manifest carries one (PROTOCOL.md).
INDEX_INPUTS = ("edge_type",)


def index_inputs(case):
    return set(INDEX_INPUTS) | {e["name"] for e in case.manifest.get("inputs", []) if e.get("index_range")}


def index_tensor(array):
    """An index tensor's numbers as int64 on the device: rounded on the host in float64, where they are
    exact (a narrow dtype such as bfloat16 would round 257 to 256)."""
    return torch.from_numpy(np.rint(np.asarray(array, dtype=np.float64)).astype(np.int64)).to(CTX.device)


class CaseTensors:
    """A case's inputs, parameters and output gradients on the device (one copy; an index tensor in
    a second one, as int64)."""

    def __init__(self, case, inputs_require_grad):
        index = index_inputs(case)
        values = {n: a for n, a in case.inputs.items() if n not in index}
        groups = (("inputs", values), ("parameters", case.parameters), ("grad_outputs", case.grad_outputs))
        on_device = upload({(g, n): a for g, arrays in groups for n, a in arrays.items()}, CTX.dtype)
        self.inputs = {n: index_tensor(a) if n in index else
                       on_device[("inputs", n)].requires_grad_(inputs_require_grad) for n, a in case.inputs.items()}
        self.parameters = {n: on_device[("parameters", n)] for n in case.parameters}
        self.grad_outputs = {n: on_device[("grad_outputs", n)] for n in case.grad_outputs}


class Edges:
    """The case's graph on the device: rows (destination) and cols (source) per edge id, CSC order."""

    def __init__(self, graph):
        self.n_dst, self.n_src, self.num_edges = graph.n_dst, graph.n_src, graph.num_edges
        # CSC position -> edge id; within a column positions follow increasing edge id (stable sort).
        perm = np.argsort(graph.col_idx, kind="stable")
        index = torch.from_numpy(np.stack([graph.row_of_edge, graph.col_idx.astype(np.int64), perm.astype(np.int64)]))
        self.rows, self.cols, self.edge_perm = index.to(CTX.device).unbind(0)  # one copy

    def in_degree(self):
        return torch.bincount(self.rows, minlength=self.n_dst).to(CTX.dtype)

    def out_degree(self):
        return torch.bincount(self.cols, minlength=self.n_src).to(CTX.dtype)


def sum_into(values, index, n):
    """out[index[e]] += values[e], along the first dimension."""
    out = values.new_zeros((n,) + tuple(values.shape[1:]))
    return out.index_add(0, index, values)


def answer_of(case, outputs, gradients):
    """The answer dict of {name: tensor} outputs and gradients, in the case's dtype (one copy back)."""
    names = list(outputs) + list(gradients)
    arrays = download(list(outputs.values()) + list(gradients.values()))
    values = {n: a.astype(case.dtype) for n, a in zip(names, arrays)}
    answer = {"outputs": {n: values[n] for n in outputs}}
    if gradients:
        answer["gradients"] = {n: values[n] for n in gradients}
    return answer


def measured(function):
    """function(case) with the device's peak memory over the case (peak_bytes in the answer) when
    gnncheck reads it (case.measure_resources): two synchronizations and two allocator queries,
    driver calls that cost more than a small case's arithmetic."""
    def run(case):
        measure = CTX.device.type == "cuda" and case.measure_resources
        if measure:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        try:
            answer = function(case)
        except (RuntimeError, NotImplementedError) as error:
            # torch has no kernel for this dtype on this device (float16 bmm on the CPU): a target
            # the adapter cannot compute here, not a wrong answer.
            if "not implemented for" not in str(error):
                raise
            raise kit.Unsupported("torch %s on %s: %s" % (torch.__version__, CTX.device, error)) from error
        if measure:
            torch.cuda.synchronize()
            answer["peak_bytes"] = int(torch.cuda.max_memory_allocated())
        return answer
    return run


def autograd_if(wanted):
    """Autograd on for a case that asks for gradients; off for a forward-only case (most of the
    adjoint check's evaluations), which then records no graph — the same forward kernels, less
    host work per call."""
    return torch.enable_grad() if wanted else torch.no_grad()


def evaluate(case, compute):
    """Runs compute(**inputs, **parameters) -> {output name: tensor}; adds autograd gradients when asked."""
    wants = case.wants_gradients
    t = CaseTensors(case, inputs_require_grad=wants)
    tensors = dict(t.inputs, **{n: p.requires_grad_(wants) for n, p in t.parameters.items()})
    with autograd_if(wants):
        outputs = compute(**tensors)
        gradients = {}
        if wants:
            names = [e["name"] for e in case.gradients]
            total = sum((outputs[name] * t.grad_outputs[name]).sum() for name in outputs)
            grads = torch.autograd.grad(total, [tensors[n] for n in names], allow_unused=True)
            gradients = {n: g if g is not None else torch.zeros_like(tensors[n]) for n, g in zip(names, grads)}
        return answer_of(case, outputs, gradients)


def heads_of(edge_values):
    return 1 if edge_values.dim() == 1 else edge_values.shape[1]


class ModuleCache:
    """PyG modules by their constructor arguments, kept between cases: building one (its parameters
    initialised on the host, then copied to the device one by one) costs more than evaluating it on
    a small graph. Every case overwrites every parameter, so no value of one case reaches the next;
    the oldest of more than `size` modules is dropped."""

    def __init__(self, size=64):
        self.size, self.modules = size, {}

    def get(self, key, make):
        module = self.modules.pop(key, None)
        if module is None:
            module = make().to(CTX.device, CTX.dtype)
        self.modules[key] = module  # most recently used last
        if len(self.modules) > self.size:
            self.modules.pop(next(iter(self.modules)))
        return module


MODULES = ModuleCache()


def layer_answer(case, t, run, parameter_map):
    """Evaluates run(x) -> y with the module's parameters already set from the case (t: its tensors
    on the device); gradients of the case's inputs (x, and an edge input such as GINE's edge_attr,
    which run reads from t) and of the oracle's parameters (through parameter_map: oracle name ->
    (torch parameter, transpose?))."""
    x = t.inputs["x"]
    with autograd_if(case.wants_gradients):
        y = run(x)[: case.graph.n_dst]
        gradients = {}
        if case.wants_gradients:
            names = [e["name"] for e in case.gradients]
            targets = [t.inputs[n] if n in t.inputs else parameter_map[n][0] for n in names]
            grads = torch.autograd.grad((y * t.grad_outputs["y"]).sum(), targets, allow_unused=True)
            for n, target, grad in zip(names, targets, grads):
                grad = torch.zeros_like(target) if grad is None else grad
                if n not in t.inputs and parameter_map[n][1]:
                    grad = grad.T
                expected_shape = next(e["shape"] for e in case.gradients if e["name"] == n)
                gradients[n] = grad.reshape(expected_shape)
        return answer_of(case, {"y": y}, gradients)

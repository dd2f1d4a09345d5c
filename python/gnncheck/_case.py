"""The case a callable under test receives: the graph and the tensors of one generated case.

Every tensor is of the framework the check runs with (torch tensors on ``case.device``, or numpy
arrays) and of ``case.dtype``: float64 when the declared precision is float64, float32 for float32,
tf32, bfloat16 and float16 (narrower formats are computed inside the kernel, as an AMP region
would; the tolerance model uses the declared precision's unit roundoff). Graph indices are int64,
and so are index tensors (an input whose catalogue slot has an ``index_range``, such as ``edge_type``:
each edge's relation, an integer in [0, attributes[index_range])), which never require grad.
"""


class Graph:
    """The sparse matrix A (n_dst x n_src) in CSR.

    Row i lists the in-edges of destination i, so ``y = A x`` is ``y[i] = sum over e in row i of
    x[col_idx[e]]``. An edge's id is its position in ``col_idx``; every edge tensor ([E] or [E, H]) is
    in that order. Duplicate edges, self-loops, empty rows and non-square shapes occur and must be
    handled exactly.
    """

    def __init__(self, n_dst, n_src, row_ptr, col_idx, backend):
        self.n_dst = int(n_dst)
        self.n_src = int(n_src)
        self.row_ptr = row_ptr  # int64, n_dst + 1 entries
        self.col_idx = col_idx  # int64, num_edges entries (the source of each edge)
        self.num_edges = int(col_idx.shape[0])
        self._backend = backend
        self._row_of_edge = None

    @property
    def row_of_edge(self):
        """The destination of every edge, in edge-id order (row-ordered COO), int64."""
        if self._row_of_edge is None:
            self._row_of_edge = self._backend.repeat_rows(self.row_ptr, self.n_dst)
        return self._row_of_edge

    @property
    def edge_index(self):
        """[2, E] int64: row 0 the source, row 1 the destination of each edge (PyG's convention)."""
        return self._backend.stack([self.col_idx, self.row_of_edge])

    def __repr__(self):
        return "Graph(%d x %d, %d edges)" % (self.n_dst, self.n_src, self.num_edges)


class Case:
    """One evaluation request, as the callable under test sees it.

    target         the op or layer ("spmm", "gcn", ...)
    seed           the seed the case was generated from (for messages)
    attributes     every attribute of the target, defaults filled in (dict of bool, int, float, str)
    graph          the Graph; n_dst, n_src, num_edges are repeated here
    inputs         {name: tensor}; requires_grad where the input is differentiable and gradients are wanted;
                   an index tensor (edge_type) is int64, never requiring grad
    parameters     {name: tensor} of a layer's learnable parameters (empty for ops), by the catalogue's names
    grad_outputs   {name: tensor}, the gradient of each output; empty when only the forward is asked
    wants_gradients  whether gradients are asked (forward-only evaluations happen too)
    precision, dtype, device, framework   what the check runs with
    module         the nn.Module a module factory made for this case (parameters overwritten), else None
    saved          an empty dict a forward may leave state in for its backward= callable
    spec           the target's catalogue entry (gnncheck.targets())
    """

    def __init__(self, raw, spec, backend, precision, wants_inputs_grad):
        self.target = raw["target"]
        self.seed = raw["seed"]
        self.attributes = dict(raw["attributes"])
        self.spec = spec
        self.precision = precision
        self.framework = backend.name
        self.device = backend.device
        self.dtype = backend.dtype
        self.graph = Graph(raw["n_dst"], raw["n_src"], backend.indices(raw["row_ptr"]), backend.indices(raw["col_idx"]), backend)
        self.n_dst = self.graph.n_dst
        self.n_src = self.graph.n_src
        self.num_edges = self.graph.num_edges
        self.grad_outputs = {name: backend.floats(a, False) for name, a in raw["grad_outputs"].items()}
        self.wants_gradients = bool(self.grad_outputs)
        differentiable = {s["name"] for s in spec["inputs"] + spec["parameters"] if s["differentiable"]}
        grad = self.wants_gradients and wants_inputs_grad
        # Index tensors travel as numbers (exact integers); the callable gets them as integers.
        index = {s["name"] for s in spec["inputs"] if s.get("index_range")}
        self.inputs = {n: backend.indices(a) if n in index else backend.floats(a, grad and n in differentiable)
                       for n, a in raw["inputs"].items()}
        self.parameters = {n: backend.floats(a, grad and n in differentiable) for n, a in raw["parameters"].items()}
        self.module = None
        self.saved = {}

    def tensor(self, name):
        """An input or parameter by name."""
        return self.inputs[name] if name in self.inputs else self.parameters[name]

    def __repr__(self):
        return "Case(%s on %r, seed %d, %s)" % (self.target, self.graph, self.seed,
                                                "forward and backward" if self.wants_gradients else "forward only")

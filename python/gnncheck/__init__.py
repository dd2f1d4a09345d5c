"""gnncheck: is your GNN kernel's forward and backward the same function as an exact reference?

One call, from pytest or anywhere, runs gnncheck's engine in this process — the same random graph
generators, float64 oracle, error-analysis tolerance model, checks, shrinking and saved
counterexamples as the ``gnncheck`` command — on a Python callable::

    import gnncheck

    def forward(case):
        x = case.inputs["x"]      # a torch tensor on case.device, requires_grad where differentiable
        return {"y": my_ext.spmm(case.graph.row_ptr, case.graph.col_idx, case.n_dst, x)}

    gnncheck.assert_correct("spmm", forward, precision="float32", suite="ci", device="cpu")

The backward that is tested is the extension's own: gnncheck calls ``torch.autograd.grad`` of the
returned outputs with the case's output gradients. See python/API.md for the case object, layers
(nn.Module factories and parameter mapping) and precisions, python/README.md for the pytest plugin
and re-run lines.

``gnncheck.check_scale(target, forward, graph="rmat:20,10", rows=1000)`` runs ``gnncheck scale`` on the
same callable: one evaluation on a big graph, its sampled rows and every gradient held to the exact
oracle (``assert_correct_at_scale`` raises CheckFailed).
"""

try:
    from . import _core
except ImportError as e:
    try:
        from ._build import PYTHON as _BUILT_FOR  # written by the build next to the extension
    except ImportError:  # python/gnncheck of the source tree, shadowing the built package
        _BUILT_FOR = None
    import sys as _sys

    raise ImportError(
        "gnncheck's compiled engine (gnncheck._core) cannot be imported from %s by %s (Python %d.%d): %s. %s" % (
            __path__[0], _sys.executable, _sys.version_info[0], _sys.version_info[1], e,
            "It was built for %s; use that interpreter, or configure with -DPython3_EXECUTABLE=..." % _BUILT_FOR
            if _BUILT_FOR else "This is the source tree's package, which has no compiled engine: build it "
            "(cmake --build build) and import build/python (PYTHONPATH=build/python) from another directory")) from e

from ._case import Case, Graph
from ._run import CheckFailed, CheckRun, Verdict, assert_correct, check, repro, load_counterexample
from ._scale import ScaleRun, assert_correct_at_scale, check_scale, scale_targets
from ._system import ParameterMappingError, Transposed, Unsupported, UsageError, transposed

__version__ = _core.version

for _public in (Case, Graph, CheckFailed, CheckRun, ScaleRun, Verdict, ParameterMappingError, Transposed, Unsupported, UsageError):
    _public.__module__ = __name__  # shown as gnncheck.CheckFailed, not gnncheck._run.CheckFailed


def targets():
    """The catalogue: every op and layer, with its inputs, parameters, outputs, attributes, formula and
    conventions (dicts)."""
    return _core.targets()


def describe(target):
    """What ``target`` computes and every convention a correct implementation must match — the exact
    formula, self-loops on non-square graphs, which degree each side uses, empty rows, bias shapes —
    then its tensors with their shapes and its attributes: the text of ``gnncheck list TARGET``, read
    from the engine's catalogue (adapters/PROTOCOL.md §10 is the same text for every target).

        print(gnncheck.describe("gcn"))

    An unknown target raises ValueError naming the known ones."""
    return _core.describe_target(target)


__all__ = [
    "Case",
    "CheckFailed",
    "CheckRun",
    "Graph",
    "ParameterMappingError",
    "ScaleRun",
    "Transposed",
    "Unsupported",
    "UsageError",
    "Verdict",
    "assert_correct",
    "assert_correct_at_scale",
    "check",
    "check_scale",
    "describe",
    "load_counterexample",
    "repro",
    "scale_targets",
    "targets",
    "transposed",
]

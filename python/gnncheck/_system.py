"""The callable under test as the engine's system: one case dict in, one answer dict out.

Evaluator is what python/src/python_system.cpp calls for every case (with the GIL held). It builds
the Case in the chosen framework, runs the forward, obtains the gradients (torch.autograd.grad of
the returned outputs with the case's output gradients, or the user's backward=), and answers in
float64 numpy arrays; the C++ side validates names, shapes and finiteness against the catalogue.
Nothing the callable does can end the run: an exception is status "error" with its traceback, and
gnncheck.Unsupported is status "unsupported". Only KeyboardInterrupt/SystemExit and usage errors
(a parameter mapping that cannot work) stop it: they are kept in ``abort`` and re-raised by
gnncheck.check once the engine has returned.
"""

import os
import re
import sys
import time
import traceback

from ._case import Case

# numpy, imported when the first check builds its framework: `import gnncheck` itself needs neither
# numpy nor torch.
np = None


def _import_numpy():
    global np
    if np is None:
        try:
            import numpy
        except ImportError as e:
            raise ImportError("gnncheck's checks need numpy, which %s cannot import (%s); Debian/Ubuntu: "
                             "apt-get install python3-numpy" % (sys.executable, e)) from e
        np = numpy

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class Unsupported(Exception):
    """Raise from a forward for a case outside the system's scope (say why); the case is discarded.

    A check whose every case was unsupported is "not tested", which is not a pass: narrow the suite
    (only=...) when a kernel has a documented scope, e.g. square graphs only.
    """


class UsageError(ValueError):
    """gnncheck was called in a way that cannot work (raised by check() itself, not a verdict)."""


class ParameterMappingError(UsageError):
    """A module's named parameters and the target's parameters do not match by the given mapping."""


class Transposed:
    """Maps a module parameter to a catalogue parameter stored transposed (nn.Linear keeps weight as
    [out, in]; the catalogue's weights are [in, out]): ``parameters={"lin.weight": transposed("weight")}``."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "transposed(%r)" % self.name


def transposed(name):
    return Transposed(name)


def _short_traceback(exc):
    """The exception with its traceback, without the frames of gnncheck itself."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith(_PACKAGE_DIR)]
    text = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(exc), exc))
    return "%s: %s\nTraceback (most recent call last, gnncheck's own frames left out):\n%s" % (
        type(exc).__name__, exc, text.rstrip())


# ---------------------------------------------------------------------------------------------
# Frameworks

def precision_dtype_name(precision):
    """float64 data for a float64 system; float32 data for float32 and everything narrower."""
    return "float64" if precision == "float64" else "float32"


def answer_array(value):
    """A returned output or gradient as the engine reads it: a float64 numpy array in C order holding
    the same values and shape, whatever the layout (Fortran order, transposed or sliced views,
    negative or zero strides, read-only, 0-size, 0-d) and, for a torch tensor, whatever its device,
    dtype (bfloat16 included), autograd state or view bits. Anything else is handed on unchanged:
    the engine names the tensor and its type. np.asarray copies only where it must, on NumPy 1.x
    and 2.x alike (np.ascontiguousarray would make a 0-d array 1-d)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        t = value.detach()
        if t.layout != torch.strided:
            t = t.to_dense()
        if t.is_complex():
            return value  # the engine names it; a complex tensor is no answer to a real target
        t = t.to(device="cpu", dtype=torch.float64)
        if hasattr(t, "resolve_neg"):  # torch >= 1.10: a negative view (torch._neg_view) numpy cannot take
            t = t.resolve_neg()
        return t.contiguous().numpy()
    if isinstance(value, np.ndarray) or np.isscalar(value):
        return np.asarray(value, dtype=np.float64, order="C")
    return value


def integer_array(array):
    """An int64 array in C order of the graph's indices (int64 already) or of an index tensor, whose
    integers the engine sends as numbers (float64, exact): rounded, never truncated."""
    array = np.asarray(array)
    if array.dtype.kind == "f":
        array = np.rint(array)
    return np.ascontiguousarray(array, dtype=np.int64)


class NumpyBackend:
    name = "numpy"

    def __init__(self, precision, device):
        if str(device) != "cpu":
            raise UsageError("framework 'numpy' runs on the cpu only, not on device %r" % (device,))
        self.device = "cpu"
        self.dtype = np.dtype(precision_dtype_name(precision))

    def floats(self, array, requires_grad):
        return np.ascontiguousarray(array, dtype=self.dtype)

    def indices(self, array):
        return integer_array(array)

    def repeat_rows(self, row_ptr, n_dst):
        return np.repeat(np.arange(n_dst, dtype=np.int64), np.diff(row_ptr))

    def stack(self, arrays):
        return np.stack(arrays)

    def to_numpy(self, value):
        return answer_array(value)

    def is_tensor(self, value):
        return isinstance(value, np.ndarray)

    def begin(self):
        pass

    def end(self):
        return None

    def live_bytes(self):
        return None


_DEVICE = re.compile(r"^(cpu|cuda)(:(\d+))?$")


def check_device(device):
    """device=: "cpu", "cuda" or "cuda:N" (or a torch.device of those); anything else is a UsageError
    that says so in one line. Returns the device as a string."""
    text = str(device) if type(device).__name__ == "device" else device
    match = _DEVICE.match(text) if isinstance(text, str) else None
    if match is None or (match.group(1) == "cpu" and match.group(2)):
        raise UsageError("device=%r: expected 'cpu', 'cuda' or 'cuda:N' (the device the case's tensors are put on)" % (device,))
    return text


class TorchBackend:
    name = "torch"

    def __init__(self, precision, device):
        import torch

        self.torch = torch
        self.device = torch.device(check_device(device))
        if self.device.type == "cuda":
            if not torch.cuda.is_available():
                raise UsageError("device=%r: torch.cuda.is_available() is False here" % (device,))
            if self.device.index is not None and self.device.index >= torch.cuda.device_count():
                raise UsageError("device=%r: torch sees %d CUDA device(s) here (cuda:0 … cuda:%d)" % (
                    device, torch.cuda.device_count(), torch.cuda.device_count() - 1))
        self.dtype = getattr(torch, precision_dtype_name(precision))
        self.cuda = self.device.type == "cuda"

    def floats(self, array, requires_grad):
        t = self.torch.from_numpy(np.ascontiguousarray(array)).to(device=self.device, dtype=self.dtype)
        return t.requires_grad_(requires_grad)

    def indices(self, array):
        return self.torch.from_numpy(integer_array(array)).to(self.device)

    def repeat_rows(self, row_ptr, n_dst):
        counts = row_ptr[1:] - row_ptr[:-1]
        return self.torch.repeat_interleave(self.torch.arange(n_dst, device=self.device), counts)

    def stack(self, tensors):
        return self.torch.stack(tensors)

    def to_numpy(self, value):
        return answer_array(value)

    def is_tensor(self, value):
        return isinstance(value, self.torch.Tensor)

    # The callable's outputs and gradients are read the way the next op of the caller would read
    # them: ordered after the caller's current stream, and after nothing else. A kernel that runs
    # on a stream of its own and returns without making the current stream wait for it is read
    # before it has written, and fails, as it would in a model. Never torch.cuda.synchronize(),
    # which waits for every stream and hides exactly that bug.
    def begin(self):
        if self.cuda:
            self.torch.cuda.current_stream(self.device).synchronize()
            self.torch.cuda.reset_peak_memory_stats(self.device)

    def end(self):
        """Waits for the caller's current stream; the peak device memory of the evaluation (None on the cpu)."""
        if not self.cuda:
            return None
        done = self.torch.cuda.Event()
        done.record(self.torch.cuda.current_stream(self.device))
        done.synchronize()
        return int(self.torch.cuda.max_memory_allocated(self.device))

    def live_bytes(self):
        return int(self.torch.cuda.memory_allocated(self.device)) if self.cuda else None


def make_backend(framework, precision, device):
    _import_numpy()
    if framework == "torch":
        return TorchBackend(precision, device)
    if framework == "numpy":
        return NumpyBackend(precision, device)
    raise UsageError("framework %r: expected 'auto', 'torch' or 'numpy'" % (framework,))


def detect_framework(framework, module):
    """'auto': torch when a module factory is given or torch can be imported, numpy otherwise."""
    if framework != "auto":
        return framework
    if module is not None:
        return "torch"
    try:
        import torch  # noqa: F401
    except ImportError:
        return "numpy"
    return "torch"


# ---------------------------------------------------------------------------------------------
# Module factories: parameters overwritten by name

def _shape(t):
    return list(t.shape)


def bind_parameters(module, case, mapping):
    """Overwrites the module's named parameters with the case's parameters and returns
    [(catalogue name, module parameter, transposed)].

    mapping: {module parameter name: catalogue name or transposed(catalogue name)}; None maps every
    module parameter to the catalogue parameter of the same name. Every module parameter must be
    mapped and every parameter of the case must be the image of exactly one module parameter; an
    entry naming neither a parameter of the module nor one of the case is skipped (optional
    parameters such as a bias that is off for this case).
    """
    torch = __import__("torch")
    named = dict(module.named_parameters())
    if mapping is None:
        targets = {n: (n, False) for n in named if n in case.parameters}
    else:
        targets = {k: (v.name, True) if isinstance(v, Transposed) else (v, False) for k, v in mapping.items()}
    # An entry whose module parameter and case parameter are both absent is an optional parameter
    # that is off for this case (a layer built with bias=False for attribute bias = false).
    targets = {k: v for k, v in targets.items() if k in named or v[0] in case.parameters}
    problems = []
    unknown = sorted(k for k in targets if k not in named)
    if unknown:
        problems.append("mapped but not parameters of the module: %s" % ", ".join(unknown))
    unmapped = sorted(n for n in named if n not in targets)
    if unmapped:
        problems.append("module parameters without a case parameter: %s" % ", ".join(unmapped))
    images = [name for k, (name, _) in targets.items() if k in named]
    missing = sorted(p for p in case.parameters if p not in images)
    if missing:
        problems.append("case parameters no module parameter is mapped to: %s" % ", ".join(missing))
    extra = sorted(set(p for p in images if p not in case.parameters))
    if extra:
        problems.append("mapped to parameters this case does not have: %s" % ", ".join(extra))
    doubled = sorted(set(p for p in images if images.count(p) > 1))
    if doubled:
        problems.append("case parameters mapped more than once: %s" % ", ".join(doubled))
    if problems:
        raise ParameterMappingError(
            "target %s: the module's parameters do not match the case's (attributes %s).\n"
            "  module parameters: %s\n  case parameters:   %s\n  mapping: %s\n  %s" % (
                case.target, case.attributes, sorted(named), sorted(case.parameters),
                "by name (parameters=None)" if mapping is None else mapping, "\n  ".join(problems)))
    bound = []
    with torch.no_grad():
        for module_name, (case_name, is_transposed) in targets.items():
            p = named[module_name]
            value = case.parameters[case_name].detach()
            if is_transposed:
                if value.dim() != 2:
                    raise ParameterMappingError("transposed(%r): case parameter %r has shape %s, not a matrix" % (
                        case_name, case_name, _shape(value)))
                value = value.t()
            if _shape(p) != _shape(value):
                hint = ""
                if value.dim() == 2 and _shape(p) == _shape(value.t()):
                    hint = " — map it as %s" % ("%r" % case_name if is_transposed else "gnncheck.transposed(%r)" % case_name)
                raise ParameterMappingError("module parameter %r has shape %s; case parameter %r%s has shape %s%s" % (
                    module_name, _shape(p), case_name, " (transposed)" if is_transposed else "", _shape(value), hint))
            p.copy_(value)
            p.requires_grad_(True)
            bound.append((case_name, p, is_transposed))
    return bound


# ---------------------------------------------------------------------------------------------
# The evaluator

class _AnswerProblem(Exception):
    """The callable answered, but not in a form gnncheck can read (reported as status error)."""


class _InvalidAnswer(Exception):
    """The callable answered a tensor of the wrong shape (status invalid_output, as the engine says it)."""


# An exception of a kernel that wanted its tensors elsewhere (a CUDA-only extension, a Triton
# kernel, a device mismatch): on the cpu, the message says how to check it on CUDA.
_WANTS_A_DEVICE = re.compile(r"cuda|gpu|triton|device", re.I)


class Evaluator:
    def __init__(self, spec, forward, backward, module, parameters, precision, backend, device_defaulted=False):
        self.spec = spec
        self.forward = forward
        self.backward = backward
        self.module_factory = module
        self.parameter_mapping = parameters
        self.precision = precision
        self.backend = backend
        self.device_defaulted = device_defaulted  # device="cpu" by default, not asked for
        self.output_names = [s["name"] for s in spec["outputs"]]
        self.abort = None  # KeyboardInterrupt, SystemExit or UsageError: re-raised after the run
        self.last_seconds = None     # the last evaluation's forward and backward alone (a scale check reports it)
        self.last_peak_bytes = None  # … and its peak device memory (None on the cpu)

    def live_bytes(self):
        return self.backend.live_bytes()

    def __call__(self, raw):
        if self.abort is not None:
            return {"status": "error", "message": "not evaluated: the run is stopping (%s)" % type(self.abort).__name__}
        try:
            return self._evaluate(raw)
        except Unsupported as e:
            return {"status": "unsupported", "message": str(e) or "the callable raised gnncheck.Unsupported"}
        except UsageError as e:
            self.abort = e
            return {"status": "error", "message": str(e)}
        except _AnswerProblem as e:
            return {"status": "error", "message": str(e)}
        except _InvalidAnswer as e:
            return {"status": "invalid_output", "message": str(e)}
        except Exception as e:  # the callable's own failure: a verdict, never a crash of the run
            return {"status": "error", "message": "the callable raised " + _short_traceback(e) + self._device_hint(e)}
        except BaseException as e:  # KeyboardInterrupt, SystemExit: stop the run, re-raise afterwards
            self.abort = e
            return {"status": "error", "message": "interrupted (%s)" % type(e).__name__}

    def _device_hint(self, exc):
        if str(self.backend.device) != "cpu":
            return ""
        if not _WANTS_A_DEVICE.search("%s: %s" % (type(exc).__name__, exc)):
            return ""
        return ("\nThe case's tensors were on the cpu (device='cpu'%s): a kernel that runs on CUDA is checked with "
                "device='cuda'." % (", the default" if self.device_defaulted else ""))

    def _check_output_shapes(self, raw, outputs):
        """Each returned output's shape against the catalogue's, before autograd or the engine meets it."""
        for name, (dims, named) in (raw.get("output_shapes") or {}).items():
            value = outputs.get(name)
            shape = getattr(value, "shape", None)
            if shape is None:
                continue  # missing or not a tensor: named further on
            got, expected = [int(d) for d in shape], [int(d) for d in dims]
            if got != expected:
                numbers = "[%s]" % ", ".join(map(str, expected))
                raise _InvalidAnswer("output %r must be %s, got [%s]" % (
                    name, numbers if not named or named == numbers else "%s = %s" % (named, numbers),
                    ", ".join(map(str, got))))

    def _module_on_the_case_device(self, module):
        """A module a factory built on another device than the check's, when the device was left at its default."""
        if not self.device_defaulted:
            return
        for p in list(module.parameters()) + list(module.buffers()):
            if p.device.type == "cuda" and p.device.type != self.backend.device.type:
                raise UsageError("the module factory built its module on %s, but the check runs on %s (device=%r, the "
                                 "default): pass device=%r" % (p.device, self.backend.device, str(self.backend.device),
                                                               str(p.device)))

    def _evaluate(self, raw):
        autograd = self.backend.name == "torch" and self.backward is None
        case = Case(raw, self.spec, self.backend, self.precision, wants_inputs_grad=autograd)
        if case.wants_gradients and self.backend.name == "numpy" and self.backward is None:
            raise UsageError("framework 'numpy' has no autograd: pass backward=")
        self.backend.begin()
        start = time.perf_counter()
        grad_context = self.backend.torch.enable_grad() if self.backend.name == "torch" else _nullcontext()
        with grad_context:
            bound = None
            if self.module_factory is not None:
                module = self.module_factory(case)
                if not isinstance(module, self.backend.torch.nn.Module):
                    raise UsageError("the module factory returned a %s, not a torch.nn.Module" % type(module).__name__)
                self._module_on_the_case_device(module)
                module = module.to(device=self.backend.device, dtype=self.backend.dtype)
                bound = bind_parameters(module, case, self.parameter_mapping)
                if not (case.wants_gradients and autograd):
                    for _, p, _ in bound:
                        p.requires_grad_(False)
                case.module = module
            outputs = self._outputs(self.forward(case))
            self._check_output_shapes(raw, outputs)
            gradients = None
            if case.wants_gradients:
                if self.backward is not None:
                    gradients = self.backward(case, outputs)
                    if not isinstance(gradients, dict):
                        raise _AnswerProblem("backward returned a %s, not a dict {input or parameter name: gradient}"
                                             % type(gradients).__name__)
                else:
                    gradients = self._autograd(case, outputs, bound)
        peak = self.backend.end()
        seconds = time.perf_counter() - start
        self.last_seconds, self.last_peak_bytes = seconds, peak
        answer = {"status": "ok", "seconds": seconds, "peak_bytes": peak,
                  "outputs": {n: self.backend.to_numpy(v) for n, v in outputs.items()}}
        if gradients is not None:
            answer["gradients"] = {n: self.backend.to_numpy(v) for n, v in gradients.items()}
        return answer

    def _outputs(self, returned):
        if isinstance(returned, dict):
            return returned
        if len(self.output_names) == 1 and (self.backend.is_tensor(returned) or isinstance(returned, np.ndarray)):
            return {self.output_names[0]: returned}
        raise _AnswerProblem("forward returned a %s; expected a dict {output name: tensor} with the outputs %s" % (
            type(returned).__name__, ", ".join(self.output_names)))

    def _autograd(self, case, outputs, bound):
        torch = self.backend.torch
        leaves = []  # (gradient name, tensor, transposed)
        differentiable = [s["name"] for s in self.spec["inputs"] if s["differentiable"]]
        for name in differentiable:
            if name in case.inputs:
                leaves.append((name, case.inputs[name], False))
        if bound is not None:
            leaves.extend(bound)
        else:
            for s in self.spec["parameters"]:
                if s["differentiable"] and s["name"] in case.parameters:
                    leaves.append((s["name"], case.parameters[s["name"]], False))
        roots, grads_of_roots = [], []
        for name in self.output_names:
            if name not in outputs:
                continue  # the engine reports the missing output
            y = outputs[name]
            if not isinstance(y, torch.Tensor):
                raise _AnswerProblem("output %r is a %s, not a torch tensor" % (name, type(y).__name__))
            if not y.requires_grad:
                raise _AnswerProblem(
                    "output %r does not require grad: it is not connected to the inputs through autograd "
                    "(return the result of your torch.autograd.Function's .apply; a system without autograd "
                    "passes backward=)" % name)
            roots.append(y)
            grads_of_roots.append(case.grad_outputs[name].to(dtype=y.dtype))
        grads = torch.autograd.grad(roots, [t for _, t, _ in leaves], grads_of_roots, allow_unused=True)
        out = {}
        for (name, t, is_transposed), g in zip(leaves, grads):
            g = torch.zeros_like(t) if g is None else g  # unused: its gradient is zero
            out[name] = g.t() if is_transposed else g
        return out


class _nullcontext:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False

"""gnncheck_adapter: the adapter side of gnncheck's protocol (adapters/PROTOCOL.md), numpy only.

An adapter is one function per target plus a call to serve():

    import gnncheck_adapter as kit

    def spmm(case):
        A = case.graph.to_scipy()
        out = {"outputs": {"y": A @ case.inputs["x"]}}
        if case.wants_gradients:
            out["gradients"] = {"x": A.T @ case.grad_outputs["y"]}
        return out

    kit.serve(name="mine", targets={"spmm": ("float64", spmm)})

A target function receives a Case and returns {"outputs": {name: array}, "gradients": {name: array}}
(gradients only when case.wants_gradients), optionally with "peak_bytes" (the evaluation's peak
memory) and "live_bytes" (memory the system still holds after it, e.g. device memory; serve()'s
live_bytes callback measures it instead, for every case whose figures gnncheck reads:
case.measure_resources, set by its resources check alone). Arrays are written with the values
and dtype they are returned in: return them in case.dtype and the shapes of case.outputs /
case.gradients — gnncheck checks both, and does not convert for you. Any layout is fine (Fortran
order, transposed or sliced views, negative strides, read-only, 0-size): the file holds the values
in C order. A torch tensor may be returned as it is (requires_grad, non-contiguous, on any device):
it is detached and copied to the host; one of a dtype numpy lacks (torch.bfloat16) is an error that
says to return it in case.dtype. Raise Unsupported("why") for a case outside the system's
scope; any other exception is reported as status "error" with its message (the traceback goes to
stderr, which gnncheck quotes).
"""

import ast
import json
import os
import sys
import time
import traceback

import numpy as np

PROTOCOL_VERSION = 1
PRECISIONS = ("float64", "float32", "tf32", "bfloat16", "float16")


class Unsupported(Exception):
    """Raised by a target function for a case its system does not compute; the text says why."""


class Graph:
    """The case's sparse matrix A (n_dst x n_src) in CSR; an edge's id is its position in col_idx."""

    def __init__(self, n_dst, n_src, row_ptr, col_idx):
        self.n_dst = int(n_dst)
        self.n_src = int(n_src)
        self.row_ptr = row_ptr
        self.col_idx = col_idx
        self.num_edges = int(col_idx.shape[0])

    @property
    def row_of_edge(self):
        """Destination of every edge, in edge-id order (row-ordered COO)."""
        return np.repeat(np.arange(self.n_dst, dtype=np.int64), np.diff(self.row_ptr))

    def to_scipy(self, values=None, dtype=np.float64):
        """A as a scipy.sparse CSR matrix; `values` are the edge values in edge-id order (default 1).
        Duplicate edges stay separate entries, which scipy's products sum, as the oracle does."""
        import scipy.sparse  # only adapters that use it need scipy

        data = np.ones(self.num_edges, dtype=dtype) if values is None else np.asarray(values)
        return scipy.sparse.csr_matrix((data, self.col_idx, self.row_ptr), shape=(self.n_dst, self.n_src))


class Case:
    """One case directory, read: target, attributes, graph and tensors as numpy arrays."""

    def __init__(self, directory, manifest):
        self.directory = directory
        self.manifest = manifest
        self.target = manifest["target"]
        self.seed = manifest["seed"]
        self.dtype = np.dtype(manifest["dtype"])
        self.attributes = manifest["attributes"]
        g = manifest["graph"]
        self.graph = Graph(g["n_dst"], g["n_src"], self._load(g["row_ptr"]), self._load(g["col_idx"]))
        self.inputs = {e["name"]: self._load(e["file"]) for e in manifest["inputs"]}
        self.parameters = {e["name"]: self._load(e["file"]) for e in manifest["parameters"]}
        self.grad_outputs = {e["name"]: self._load(e["file"]) for e in manifest["grad_outputs"]}
        self.outputs = manifest["outputs"]      # [{name, file, shape, dtype}] to write
        self.gradients = manifest["gradients"]  # same; empty when forward only
        self.wants_gradients = bool(self.grad_outputs)
        # Whether gnncheck reads this evaluation's memory figures (peak_bytes, live_bytes,
        # device_bytes): only its resources check does. When False they may be skipped.
        self.measure_resources = bool(manifest.get("measure_resources", True))

    def _load(self, file_name):
        return read_npy(os.path.join(self.directory, file_name))

    def tensor(self, name):
        """An input or parameter by name."""
        if name in self.inputs:
            return self.inputs[name]
        return self.parameters[name]

    def attribute(self, name, default=None):
        return self.attributes.get(name, default)


def read_file(path):
    """The whole file as bytes through open, fstat, read and close alone: Python's open() adds a
    stat, a terminal test and seeks per file, and in a sandbox that traps every system call (gVisor)
    those calls cost more than the small tensors of a case take to read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        size = os.fstat(fd).st_size
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, max(size - total, 0) + 1)  # one byte more: a file that grew is read to its end
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_file(path, data):
    """Writes bytes to path (created or truncated) with open, write and close alone (read_file's reason)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def read_npy(path):
    """np.load(path, allow_pickle=False), without its cost per file: numpy runs Python's tokenizer over
    every version 1 or 2 header (a filter for files written by Python 2), which took most of an
    adapter's time on the small tensors of a case. Reads the file in one read (read_file), the plain
    C-order header gnncheck writes with ast.literal_eval and the data as a writable copy; anything
    else (Fortran order, a structured or object dtype, another version) goes to np.load."""
    raw = read_file(path)
    if len(raw) >= 12 and raw[:6] == b"\x93NUMPY" and raw[6] in (1, 2, 3):
        if raw[6] == 1:
            length, start = int.from_bytes(raw[8:10], "little"), 10
        else:
            length, start = int.from_bytes(raw[8:12], "little"), 12
        try:
            header = ast.literal_eval(raw[start:start + length].decode("latin1" if raw[6] < 3 else "utf8"))
        except (ValueError, SyntaxError, UnicodeDecodeError):
            header = None
        if (isinstance(header, dict) and set(header) == {"descr", "fortran_order", "shape"}
                and header["fortran_order"] is False and isinstance(header["descr"], str)
                and isinstance(header["shape"], tuple) and all(isinstance(n, int) and n >= 0 for n in header["shape"])):
            dtype = np.dtype(header["descr"])
            count = 1
            for n in header["shape"]:
                count *= n
            if not dtype.hasobject and dtype.fields is None:
                data_start = start + length
                if len(raw) - data_start != count * dtype.itemsize:
                    raise ValueError("%s: the header declares %d elements, the file holds %d bytes after it"
                                     % (path, count, len(raw) - data_start))
                data = np.frombuffer(raw, dtype=dtype, count=count, offset=data_start) if count else np.empty(0, dtype)
                return data.reshape(header["shape"]).copy()
    return np.load(path, allow_pickle=False)


def as_numpy(value, what="the array"):
    """value as a numpy array with the same values, shape and dtype, whatever its layout.

    A torch tensor is detached and copied to the host (requires_grad, non-contiguous, on a CUDA
    device, a negative or conjugate view); torch is not imported for it. A dtype numpy has no
    counterpart for (torch.bfloat16, float8, complex32) raises a TypeError naming `what` and what to
    return instead. Anything else goes through np.asarray."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        t = value.detach()
        if t.layout != torch.strided:
            t = t.to_dense()
        if t.device.type != "cpu":
            t = t.cpu()
        for resolve in ("resolve_conj", "resolve_neg"):  # torch >= 1.10: views numpy cannot take
            if hasattr(t, resolve):
                t = getattr(t, resolve)()
        try:
            return t.numpy()
        except (TypeError, RuntimeError) as e:
            raise TypeError("%s is a torch tensor of dtype %s, which numpy has no dtype for (%s): return it in "
                            "case.dtype, e.g. tensor.to(torch.float32) for a float32 case" % (what, t.dtype, e)) from None
    return np.asarray(value)


def write_npy(path, array):
    """np.save(path, array) for an array of a plain dtype, in one write (read_file's reason): a
    version 1.0 header as numpy writes it (the dict padded with spaces and a newline so that the data
    starts at a multiple of 64 bytes), then the values in C order, little-endian (adapters/PROTOCOL.md,
    section 3), whatever the array's layout and byte order. A torch tensor is taken as as_numpy takes
    it. Arrays of other dtypes (structured, object) go to np.save."""
    array = as_numpy(array)
    if array.dtype.hasobject or array.dtype.fields is not None:
        np.save(path, array)
        return
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))  # the same values, little-endian
    # np.asarray copies only when the layout needs it, on NumPy 1.x and 2.x alike (np.array(...,
    # copy=False) raises under NumPy 2 when a copy is needed); np.ascontiguousarray would make a 0-d
    # array 1-d.
    array = np.asarray(array, order="C")
    text = "{'descr': %r, 'fortran_order': False, 'shape': %r, }" % (np.lib.format.dtype_to_descr(array.dtype),
                                                                     tuple(array.shape))
    padding = 64 - (10 + len(text) + 1) % 64
    header = (text + " " * (padding % 64) + "\n").encode("latin1")
    if len(header) > 65535:
        np.save(path, array)
        return
    write_file(path, b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + array.tobytes())


def read_case(directory):
    manifest = json.loads(read_file(os.path.join(directory, "case.json")).decode("utf-8"))
    if manifest.get("protocol") != PROTOCOL_VERSION:
        raise ValueError("case.json speaks protocol %r; this kit speaks %d" % (manifest.get("protocol"), PROTOCOL_VERSION))
    return Case(directory, manifest)


def write_tensors(case, answer):
    """Writes the returned outputs and gradients under the file names case.json asks for."""
    for key, entries in (("outputs", case.outputs), ("gradients", case.gradients)):
        given = answer.get(key) or {}
        for entry in entries:
            if entry["name"] in given:
                what = "%s %r" % (key[:-1], entry["name"])
                write_npy(os.path.join(case.directory, entry["file"]), as_numpy(given[entry["name"]], what))


def process_device_bytes(pid=None):
    """Device memory the driver counts for process pid (default: this one), summed over every GPU, from
    NVML (libnvidia-ml.so.1, part of the NVIDIA driver) through ctypes: everything the process holds on
    the device, whichever allocator or library took it. None where NVML is missing or does not list
    the process (another PID namespace, or no CUDA context yet)."""
    import ctypes

    class ProcessInfo(ctypes.Structure):  # nvmlProcessInfo_t
        _fields_ = [("pid", ctypes.c_uint), ("usedGpuMemory", ctypes.c_ulonglong),
                    ("gpuInstanceId", ctypes.c_uint), ("computeInstanceId", ctypes.c_uint)]

    global _NVML
    if _NVML is None:
        try:
            lib = ctypes.CDLL("libnvidia-ml.so.1")
            _NVML = lib if lib.nvmlInit_v2() == 0 else False
        except (OSError, AttributeError):
            _NVML = False
    if not _NVML:
        return None
    pid = os.getpid() if pid is None else pid
    count = ctypes.c_uint(0)
    if _NVML.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0:
        return None
    total, listed = 0, False
    for index in range(count.value):
        device = ctypes.c_void_p()
        if _NVML.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(device)) != 0:
            return None
        size = ctypes.c_uint(256)
        infos = (ProcessInfo * 256)()
        if _NVML.nvmlDeviceGetComputeRunningProcesses_v3(device, ctypes.byref(size), infos) != 0:
            return None
        for info in infos[:size.value]:
            if info.pid == pid and info.usedGpuMemory != 2**64 - 1:
                total += info.usedGpuMemory
                listed = True
    return total if listed else None


_NVML = None


def write_result(directory, status, message="", seconds=None, peak_bytes=None, result_file="result.json",
                 live_bytes=None, device_bytes=None):
    result = {"status": status, "message": message}
    if seconds is not None:
        result["seconds"] = seconds
    if peak_bytes is not None:
        result["peak_bytes"] = int(peak_bytes)
    if live_bytes is not None:
        result["live_bytes"] = int(live_bytes)
    if device_bytes is not None:
        result["device_bytes"] = int(device_bytes)
    write_file(os.path.join(directory, result_file), json.dumps(result).encode("utf-8"))  # one write


def answer_case(directory, targets, live_bytes=None, device_bytes=None):
    """Evaluates one case directory with the matching target function and writes its answer.
    live_bytes: a function measuring the memory the system holds once the target function returned.
    device_bytes: a function measuring the device memory the process holds as the driver counts it."""
    try:
        case = read_case(directory)
    except Exception as e:  # a case we cannot read is reported, not fatal
        traceback.print_exc(file=sys.stderr)
        write_result(directory, "error", "the adapter could not read the case: %s" % e)
        return
    result_file = case.manifest.get("result", "result.json")
    if case.target not in targets:
        write_result(directory, "unsupported", "this adapter does not compute '%s'" % case.target, result_file=result_file)
        return
    function = targets[case.target][1]
    try:
        start = time.perf_counter()
        answer = function(case) or {}
        seconds = time.perf_counter() - start
        write_tensors(case, answer)
        held = answer.get("live_bytes")
        if held is None and live_bytes is not None and case.measure_resources:
            held = live_bytes()
        on_device = answer.get("device_bytes")
        if on_device is None and device_bytes is not None and case.measure_resources:
            on_device = device_bytes()  # NVML: a driver call, made only where gnncheck reads it
        write_result(directory, "ok", seconds=seconds, peak_bytes=answer.get("peak_bytes"), result_file=result_file,
                     live_bytes=held, device_bytes=on_device)
    except Unsupported as e:
        write_result(directory, "unsupported", str(e), result_file=result_file)
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        write_result(directory, "error", "%s: %s" % (type(e).__name__, e), result_file=result_file)


def serve(name, targets, live_bytes=None, device_bytes=None):
    """Runs the adapter loop: hello line, then one case per stdin line until end of input.

    targets maps a target name to (precision, function), precision one of PRECISIONS, or to
    (precision, function, implements): implements = {attribute: value or [values]} declares what the
    system implements where it is fewer values than the target has — a convention, a mode or a shape
    ({"source_degree": "in"}, {"heads": [1]}; PROTOCOL.md §2). gnncheck then draws every case within
    it and says in its report what was not covered.
    live_bytes (optional) returns the bytes the system holds between cases (device memory for a GPU
    system); it is reported with every answer gnncheck measures (case.measure_resources) so that its
    resources check sees a device leak.
    device_bytes (optional) returns the device memory the process holds as the driver counts it
    (process_device_bytes: every allocator and library included, not only the framework's own);
    reported with the same answers as result.json's device_bytes.
    The hello is written on a line of its own and flushed before any case is read.
    """
    declared = {}
    for target, entry in targets.items():
        if not isinstance(entry, tuple) or len(entry) not in (2, 3):
            raise ValueError("target %s: expected (precision, function) or (precision, function, implements), got %r"
                             % (target, entry))
        precision, function = entry[0], entry[1]
        implements = entry[2] if len(entry) == 3 else None
        if implements is not None and not isinstance(implements, dict):
            raise ValueError("target %s: implements must be a dict {attribute: value or [values]}, got %r"
                             % (target, implements))
        declared[target] = {"precision": precision, "attributes": implements} if implements else precision
        if precision not in PRECISIONS:
            raise ValueError("target %s: precision %r is not one of %s" % (target, precision, ", ".join(PRECISIONS)))
        if not callable(function):
            raise ValueError("target %s: %r is not callable" % (target, function))
    # Protocol lines go to a private copy of stdout; whatever the system prints (Python or C code)
    # goes to stderr, so it can never corrupt a protocol line.
    sys.stdout.flush()
    protocol_out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    hello = {"protocol": PROTOCOL_VERSION, "name": name, "targets": declared}
    # The leading newline ends any line printed before serve() without one (gnncheck ignores it).
    protocol_out.write("\ngnncheck-hello " + json.dumps(hello) + "\n")
    protocol_out.flush()
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        directory = line.rstrip("\n")
        if not directory:
            continue
        answer_case(directory, targets, live_bytes, device_bytes)
        protocol_out.write("gnncheck-done " + directory + "\n")
        protocol_out.flush()

"""Every layout a user's array or tensor can have, read by its values and never by its memory order:
by the adapter kit (write_npy / read_npy round trip, and a served case answered with such arrays)
and by the package (a forward and backward returning them pass). NumPy 1.24 through 2.x: under
NumPy 2, np.array with copy set to False raises "Unable to avoid copy" for any array not already in C order.

Layouts: C order, Fortran order, transposed and sliced views, negative strides, zero strides
(broadcast), read-only, unaligned, big-endian, 0-size, 0-d; torch tensors that require grad, are
non-contiguous (transposed, sliced, expanded), carry a negative-view bit, or live on a CUDA device
(those tests run where torch sees one and are skipped with the reason elsewhere); a torch.bfloat16
answer from an adapter is an error that says what to return. torch tests are skipped, with the
reason, where torch is missing (the numpy ones run everywhere)."""

import json
import os

import numpy as np
import pytest

import gnncheck
from gnncheck.adapter_kit import gnncheck_adapter as kit

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch cannot be imported here")
needs_cuda = pytest.mark.skipif(torch is None or not torch.cuda.is_available(),
                                reason="torch sees no CUDA device here (torch.cuda.is_available() is false)"
                                if torch is not None else "torch cannot be imported here")


# ---------------------------------------------------------------------------------------------
# Layouts: each takes a C-order numpy array and returns one with the same values in another layout.

def _unaligned(a):
    raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
    out = raw[1:].view(a.dtype).reshape(a.shape)
    out[...] = a
    return out


def _read_only(a):
    out = a.copy()
    out.flags.writeable = False
    return out


NUMPY_LAYOUTS = {
    "c_order": lambda a: a,
    "fortran_order": lambda a: np.asarray(a, order="F"),  # np.asfortranarray makes a 0-d array 1-d
    "transposed_view": lambda a: np.ascontiguousarray(a.T).T if a.ndim == 2 else a,
    "sliced_view": lambda a: np.stack([a, np.zeros_like(a)], axis=-1)[..., 0] if a.ndim else a,
    "column_slice": lambda a: np.concatenate([a, np.ones_like(a)], axis=-1)[..., :a.shape[-1]] if a.ndim else a,
    "negative_strides": lambda a: np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1] if a.ndim == 2 else a,
    "negative_row_stride": lambda a: np.ascontiguousarray(a[::-1])[::-1] if a.ndim else a,
    "read_only": _read_only,
    "unaligned": _unaligned,
    "big_endian": lambda a: a.astype(a.dtype.newbyteorder(">")),
    "read_only_fortran": lambda a: _read_only(np.asarray(a, order="F")),
}


def _zero_strides(a):
    """A broadcast view (strides 0) of the first row; only used where every row is that row."""
    return np.broadcast_to(a[:1], a.shape)


def torch_layouts():
    layouts = {
        "contiguous": lambda t: t,
        "requires_grad": lambda t: t.clone().requires_grad_(True) * 1,
        "transposed": lambda t: t.t().contiguous().t() if t.dim() == 2 else t,
        "sliced": lambda t: torch.stack([t, torch.zeros_like(t)], dim=-1)[..., 0] if t.dim() else t,
        "narrowed": lambda t: torch.cat([t, torch.ones_like(t)], dim=-1)[..., :t.shape[-1]] if t.dim() else t,
        "requires_grad_transposed": lambda t: t.t().contiguous().t().requires_grad_(True) * 1 if t.dim() == 2 else t,
    }
    if hasattr(torch, "_neg_view"):
        layouts["negative_view_bit"] = lambda t: torch._neg_view(-t)
    return layouts


def matrices():
    """Matrices with distinct values (a swapped axis or a reversed order would show), a 0-size one
    each way, a single row, and a 0-d array."""
    return {
        "4x6_float64": np.arange(1.0, 25.0).reshape(4, 6) * 0.5,
        "3x5_float32": (np.arange(15, dtype=np.float32).reshape(3, 5) - 7) / 3,
        "0x5": np.zeros((0, 5)),
        "5x0": np.zeros((5, 0), dtype=np.float32),
        "1x7_int64": np.arange(7, dtype=np.int64).reshape(1, 7) - 3,
        "0d": np.array(2.5),
        "1d": np.arange(5.0),
    }


def _npy_data(path):
    raw = open(path, "rb").read()
    assert raw[:8] == b"\x93NUMPY\x01\x00"
    length = int.from_bytes(raw[8:10], "little")
    header = eval(raw[10:10 + length].decode("latin1"))  # the header is a Python literal
    return header, raw[10 + length:]


# ---------------------------------------------------------------------------------------------
# The adapter kit: write_npy and read_npy

@pytest.mark.parametrize("layout", sorted(NUMPY_LAYOUTS))
@pytest.mark.parametrize("name", sorted(matrices()))
def test_kit_write_npy_writes_the_values_in_c_order_little_endian(tmp_path, name, layout):
    a = matrices()[name]
    laid_out = NUMPY_LAYOUTS[layout](a)
    assert np.array_equal(laid_out, a) and laid_out.shape == a.shape
    path = str(tmp_path / "a.npy")
    kit.write_npy(path, laid_out)
    header, data = _npy_data(path)
    little = a.dtype.newbyteorder("<")
    assert header == {"descr": np.lib.format.dtype_to_descr(little), "fortran_order": False, "shape": a.shape}
    assert data == np.ascontiguousarray(a, dtype=little).tobytes()
    for back in (np.load(path), kit.read_npy(path)):
        assert back.shape == a.shape and back.dtype == little and np.array_equal(back, a)


def test_kit_write_npy_of_broadcast_views(tmp_path):
    """Zero strides (np.broadcast_to: read-only, every row the same memory)."""
    for a in (np.broadcast_to(np.arange(6.0), (4, 6)), np.broadcast_to(np.float32(3), (2, 3)),
              np.broadcast_to(np.arange(3.0)[:, None], (3, 0))):
        path = str(tmp_path / "b.npy")
        kit.write_npy(path, a)
        back = kit.read_npy(path)
        assert back.shape == a.shape and back.dtype == a.dtype and np.array_equal(back, a)
        assert back.flags.c_contiguous and back.flags.writeable


def test_the_reported_one_liner(tmp_path):
    """issue 34's reproduction: a transposed float32 array."""
    path = str(tmp_path / "t.npy")
    kit.write_npy(path, np.zeros((2, 3), np.float32).T)
    assert np.load(path).shape == (3, 2) and np.load(path).dtype == np.float32


@needs_torch
@pytest.mark.parametrize("layout", sorted(torch_layouts()) if torch is not None else [])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kit_write_npy_of_torch_tensors(tmp_path, layout, dtype):
    a = np.arange(1.0, 25.0, dtype=dtype).reshape(4, 6)
    t = torch_layouts()[layout](torch.from_numpy(a.copy()))
    path = str(tmp_path / "t.npy")
    kit.write_npy(path, t)
    back = kit.read_npy(path)
    assert back.dtype == a.dtype and back.shape == a.shape and np.array_equal(back, a)


@needs_torch
def test_kit_says_what_to_return_for_a_bfloat16_tensor(tmp_path):
    t = torch.ones(2, 3, dtype=torch.bfloat16, requires_grad=True) * 1
    with pytest.raises(TypeError, match=r"output 'y' is a torch tensor of dtype torch.bfloat16, which numpy has no "
                                        r"dtype for .*return it in case.dtype, e.g. tensor.to\(torch.float32\)"):
        kit.as_numpy(t, "output 'y'")


# ---------------------------------------------------------------------------------------------
# The adapter kit: a served case (answer_case, as serve() runs it) answered in every layout

def _spmm_case(directory, dtype, wants_gradients):
    """A 3 x 4 graph with a duplicate edge and an empty row; x is 4 x 5, y is 3 x 5."""
    row_ptr = np.array([0, 3, 3, 5], dtype=np.int64)
    col_idx = np.array([1, 1, 3, 0, 2], dtype=np.int64)
    x = np.arange(20, dtype=np.float64).reshape(4, 5) / 7
    gy = np.arange(15, dtype=np.float64).reshape(3, 5) - 5
    kit.write_npy(os.path.join(directory, "row_ptr.npy"), row_ptr)
    kit.write_npy(os.path.join(directory, "col_idx.npy"), col_idx)
    kit.write_npy(os.path.join(directory, "x.npy"), x.astype(dtype))
    manifest = {"protocol": 1, "target": "spmm", "seed": 1, "dtype": dtype, "attributes": {"features": 5},
                "graph": {"n_dst": 3, "n_src": 4, "num_edges": 5, "row_ptr": "row_ptr.npy", "col_idx": "col_idx.npy"},
                "inputs": [{"name": "x", "kind": "src_nodes", "differentiable": True, "file": "x.npy",
                            "shape": [4, 5], "dtype": dtype}],
                "parameters": [], "grad_outputs": [], "gradients": [],
                "outputs": [{"name": "y", "file": "y.npy", "shape": [3, 5], "dtype": dtype}],
                "result": "result.json", "measure_resources": False}
    if wants_gradients:
        kit.write_npy(os.path.join(directory, "gy.npy"), gy.astype(dtype))
        manifest["grad_outputs"] = [{"name": "y", "file": "gy.npy", "shape": [3, 5], "dtype": dtype}]
        manifest["gradients"] = [{"name": "x", "file": "gx.npy", "shape": [4, 5], "dtype": dtype}]
    with open(os.path.join(directory, "case.json"), "w") as f:
        json.dump(manifest, f)


def _numpy_spmm(case):
    g = case.graph
    y = np.zeros((g.n_dst,) + case.inputs["x"].shape[1:], dtype=case.dtype)
    np.add.at(y, g.row_of_edge, case.inputs["x"][g.col_idx])
    out = {"outputs": {"y": y}}
    if case.wants_gradients:
        gx = np.zeros_like(case.inputs["x"])
        np.add.at(gx, g.col_idx, case.grad_outputs["y"][g.row_of_edge])
        out["gradients"] = {"x": gx}
    return out


def _serve_one(tmp_path, dtype, relayout):
    """Answers one spmm case through answer_case with relayout applied to the C-order answers;
    returns result.json, the case directory and those C-order answers (y, the gradient of x)."""
    d = tmp_path / "case"
    d.mkdir()
    _spmm_case(str(d), dtype, wants_gradients=True)
    computed = {}

    def target(case):
        out = _numpy_spmm(case)
        computed.update(y=out["outputs"]["y"], gx=out["gradients"]["x"])
        return {"outputs": {"y": relayout(out["outputs"]["y"])}, "gradients": {"x": relayout(out["gradients"]["x"])}}

    kit.answer_case(str(d), {"spmm": (dtype, target)})
    result = json.loads((d / "result.json").read_text())
    assert computed["y"].flags.c_contiguous and computed["y"].dtype == np.dtype(dtype)
    return result, d, computed["y"], computed["gx"]


@pytest.mark.parametrize("layout", sorted(NUMPY_LAYOUTS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kit_serves_a_case_answered_in_any_numpy_layout(tmp_path, layout, dtype):
    result, d, want_y, want_gx = _serve_one(tmp_path, dtype, NUMPY_LAYOUTS[layout])
    assert result["status"] == "ok", result
    for file, want in (("y.npy", want_y), ("gx.npy", want_gx)):
        header, data = _npy_data(str(d / file))
        assert header["fortran_order"] is False and header["descr"] == np.dtype(dtype).newbyteorder("<").str
        assert data == np.ascontiguousarray(want).tobytes(), file


@needs_torch
@pytest.mark.parametrize("layout", sorted(torch_layouts()) if torch is not None else [])
def test_kit_serves_a_case_answered_with_torch_tensors(tmp_path, layout):
    result, d, want_y, want_gx = _serve_one(tmp_path, "float32", lambda a: torch_layouts()[layout](torch.from_numpy(a)))
    assert result["status"] == "ok", result
    assert np.array_equal(kit.read_npy(str(d / "y.npy")), want_y)
    assert np.array_equal(kit.read_npy(str(d / "gx.npy")), want_gx)


@needs_cuda
@pytest.mark.parametrize("layout", ["contiguous", "requires_grad", "transposed", "sliced"])
def test_kit_serves_a_case_answered_with_cuda_tensors(tmp_path, layout):
    relayout = torch_layouts()[layout]
    result, d, want_y, want_gx = _serve_one(tmp_path, "float32", lambda a: relayout(torch.from_numpy(a).cuda()))
    assert result["status"] == "ok", result
    assert np.array_equal(kit.read_npy(str(d / "y.npy")), want_y)
    assert np.array_equal(kit.read_npy(str(d / "gx.npy")), want_gx)


@needs_torch
def test_kit_answers_a_bfloat16_tensor_with_an_error_that_says_what_to_return(tmp_path):
    result, d, _, _ = _serve_one(tmp_path, "float32", lambda a: torch.from_numpy(a).to(torch.bfloat16))
    assert result["status"] == "error"
    assert "output 'y' is a torch tensor of dtype torch.bfloat16" in result["message"]
    assert "return it in case.dtype" in result["message"]


# ---------------------------------------------------------------------------------------------
# The package: a forward (and backward) returning such arrays and tensors passes

def _np_spmm(row_ptr, col_idx, n_rows, x):
    y = np.zeros((n_rows,) + x.shape[1:], dtype=x.dtype)
    np.add.at(y, np.repeat(np.arange(n_rows), np.diff(row_ptr)), x[col_idx])
    return y


def _np_spmm_t(case, gy):
    g = case.graph
    gx = np.zeros((case.n_src,) + gy.shape[1:], dtype=gy.dtype)
    np.add.at(gx, g.col_idx, gy[g.row_of_edge])
    return gx


@pytest.mark.parametrize("layout", sorted(NUMPY_LAYOUTS))
def test_package_reads_numpy_answers_in_any_layout(layout):
    relayout = NUMPY_LAYOUTS[layout]

    def forward(case):
        return {"y": relayout(_np_spmm(case.graph.row_ptr, case.graph.col_idx, case.n_dst, case.inputs["x"]))}

    def backward(case, outputs):
        return {"x": relayout(_np_spmm_t(case, case.grad_outputs["y"]))}

    run = gnncheck.assert_correct("spmm", forward, backward=backward, framework="numpy", precision="float64",
                                  only=["differential"])
    assert all(v.outcome == "pass" and v.conclusive_cases > 0 for v in run), [v.one_line() for v in run]


def test_package_reads_a_single_array_answer_in_fortran_order():
    """forward may return the one output bare (no dict)."""
    def forward(case):
        return np.asfortranarray(_np_spmm(case.graph.row_ptr, case.graph.col_idx, case.n_dst, case.inputs["x"]))

    def backward(case, outputs):
        return {"x": np.asfortranarray(_np_spmm_t(case, case.grad_outputs["y"]))}

    gnncheck.assert_correct("spmm", forward, backward=backward, framework="numpy", only=["differential"])


def test_package_answer_arrays_keep_values_and_shape():
    """The conversion itself, for layouts the engine's cases may not produce (0-size, 0-d, broadcast)."""
    from gnncheck._system import answer_array, _import_numpy

    _import_numpy()
    for name, a in matrices().items():
        for layout, relayout in list(NUMPY_LAYOUTS.items()) + [("zero_strides", _zero_strides)]:
            src = relayout(a) if layout != "zero_strides" or a.ndim == 2 else a
            got = answer_array(src)
            want = _zero_strides(a) if layout == "zero_strides" and a.ndim == 2 else a
            assert got.dtype == np.float64 and got.flags.c_contiguous, (name, layout)
            assert got.shape == want.shape and np.array_equal(got, want), (name, layout)
    assert answer_array([1, 2]) == [1, 2]  # not an array: handed on for the engine to name


@needs_torch
def test_package_answer_arrays_of_torch_tensors():
    from gnncheck._system import answer_array, _import_numpy

    _import_numpy()
    a = np.arange(1.0, 25.0).reshape(4, 6)
    for layout, relayout in torch_layouts().items():
        for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
            got = answer_array(relayout(torch.from_numpy(a).to(dtype)))
            # 1 … 24 are exact in every one of these dtypes
            assert got.dtype == np.float64 and got.shape == a.shape and np.array_equal(got, a), (layout, dtype)
    for t in (torch.zeros(0, 5), torch.zeros(5, 0).t(), torch.tensor(2.5), torch.ones(1, 6).expand(4, 6)):
        got = answer_array(t)
        assert got.shape == tuple(t.shape) and np.array_equal(got, t.numpy())


def _torch_spmm(case, x):
    import example_kernels as k

    return k.csr_spmm(case.graph.row_ptr, case.graph.col_idx, case.n_dst, x)


def _torch_spmm_t(case, gy):
    import example_kernels as k

    return k.csr_spmm_transposed(case.graph.row_ptr, case.graph.col_idx, case.n_src, gy)


def _check_torch_layout(layout, device):
    relayout = torch_layouts()[layout]

    def forward(case):
        return {"y": relayout(_torch_spmm(case, case.inputs["x"]))}

    def backward(case, outputs):
        return {"x": relayout(_torch_spmm_t(case, case.grad_outputs["y"]))}

    run = gnncheck.assert_correct("spmm", forward, backward=backward, framework="torch", precision="float32",
                                  device=device, only=["differential"])
    assert all(v.outcome == "pass" and v.conclusive_cases > 0 for v in run), [v.one_line() for v in run]


@needs_torch
@pytest.mark.parametrize("layout", sorted(torch_layouts()) if torch is not None else [])
def test_package_reads_torch_answers_in_any_layout(layout):
    _check_torch_layout(layout, "cpu")


@needs_torch
@pytest.mark.parametrize("as_numpy", [False, True])
def test_package_autograd_outputs_as_non_contiguous_views(as_numpy):
    """Autograd (no backward=): the output a transposed-back, sliced view of the result; and a torch
    forward that answers numpy arrays is refused with the reason, not misread."""
    import example_kernels as k

    def forward(case):
        y = k.SpMM.apply(case.graph.row_ptr, case.graph.col_idx, case.n_dst, case.inputs["x"])
        y = torch.stack([y.t(), torch.zeros_like(y.t())], dim=-1)[..., 0].t()
        return {"y": y.detach().numpy() if as_numpy else y}

    run = gnncheck.check("spmm", forward, precision="float32", only=["differential"])
    if as_numpy:
        assert {v.outcome for v in run} == {"error"}, [v.one_line() for v in run]
    else:
        assert run.passed, [v.one_line() for v in run]


@needs_cuda
@pytest.mark.parametrize("layout", ["contiguous", "requires_grad", "transposed", "sliced", "narrowed"])
def test_package_reads_cuda_torch_answers_in_any_layout(layout):
    _check_torch_layout(layout, "cuda")


@needs_cuda
def test_package_reads_cpu_answers_of_a_cuda_system():
    """A system on the GPU whose forward hands back host tensors and Fortran-order numpy arrays."""
    def forward(case):
        return {"y": np.asfortranarray(_torch_spmm(case, case.inputs["x"]).cpu().numpy())}

    def backward(case, outputs):
        return {"x": _torch_spmm_t(case, case.grad_outputs["y"]).cpu().t().contiguous().t()}

    gnncheck.assert_correct("spmm", forward, backward=backward, framework="torch", precision="float32",
                            device="cuda", only=["differential"])

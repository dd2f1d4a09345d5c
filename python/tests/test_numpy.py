"""The package without torch: numpy callables (framework="numpy", backward= required), the
catalogue, and the adapter kit copied into the package."""

import os
import subprocess
import sys

import numpy as np
import pytest

import gnncheck


def spmm(row_ptr, col_idx, n_rows, x):
    rows = np.repeat(np.arange(n_rows), np.diff(row_ptr))
    y = np.zeros((n_rows,) + x.shape[1:], dtype=x.dtype)
    np.add.at(y, rows, x[col_idx])
    return y


def forward(case):
    assert isinstance(case.inputs["x"], np.ndarray) and case.inputs["x"].dtype == case.dtype
    return {"y": spmm(case.graph.row_ptr, case.graph.col_idx, case.n_dst, case.inputs["x"])}


def backward(case, outputs):
    g = case.graph
    rows = g.row_of_edge
    gx = np.zeros((case.n_src,) + case.grad_outputs["y"].shape[1:], dtype=case.dtype)
    np.add.at(gx, g.col_idx, case.grad_outputs["y"][rows])
    return {"x": gx}


def backward_uses_a(case, outputs):
    if case.n_dst != case.n_src:
        raise gnncheck.Unsupported("square graphs only")
    return {"x": spmm(case.graph.row_ptr, case.graph.col_idx, case.n_dst, case.grad_outputs["y"])}


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_numpy_spmm_passes(precision):
    run = gnncheck.assert_correct("spmm", forward, backward=backward, framework="numpy", precision=precision)
    assert all(v.passed for v in run)


def test_numpy_backward_with_a_fails():
    run = gnncheck.check("spmm", forward, backward=backward_uses_a, framework="numpy", only=["differential"])
    assert {v.outcome for v in run} == {"fail"}
    assert all(v.load_counterexample()["n_dst"] <= 4 for v in run)


def test_import_needs_no_torch():
    # A fresh interpreter with torch made unimportable still imports gnncheck and runs numpy checks.
    code = ("import sys; sys.modules['torch'] = None\n"
            "import gnncheck\n"
            "from gnncheck._system import detect_framework\n"
            "assert detect_framework('auto', None) == 'numpy'\n"
            "print(gnncheck.__version__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ.copy())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == gnncheck.__version__


def test_the_catalogue():
    targets = {t["name"]: t for t in gnncheck.targets()}
    assert {"spmm", "sddmm_dot", "edge_softmax", "gcn", "gin", "gat", "sage", "agnn"} <= set(targets)
    assert [p["name"] for p in targets["gcn"]["parameters"]] == ["weight", "bias"]
    assert [s["name"] for s in targets["spmm_ve"]["inputs"]] == ["edge_values", "x"]


def test_the_adapter_kit_is_part_of_the_package():
    from gnncheck import adapter_kit
    from gnncheck.adapter_kit import gnncheck_adapter

    assert gnncheck_adapter.PROTOCOL_VERSION == 1
    for name in ("gnncheck_adapter", "torch_adapter", "scipy_adapter"):
        assert os.path.isfile(adapter_kit.path(name))


def test_the_adapter_kit_reads_npy_files_as_numpy_does(tmp_path):
    """read_npy is np.load without the header tokenizer: same dtype, shape, values and a writable
    array for every file np.save writes; other layouts fall back to np.load; a short file is an error."""
    from gnncheck.adapter_kit import gnncheck_adapter as kit

    arrays = [np.arange(12, dtype=np.float32).reshape(3, 4), np.array(3.5), np.zeros((0, 5)),
              np.arange(7, dtype=np.int64), np.asfortranarray(np.arange(6.0).reshape(2, 3)),
              np.arange(6, dtype=">f8").reshape(2, 3), np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")]),
              np.ones((2, 2, 2), dtype=np.float16), np.array([], dtype=np.int64)]
    for i, a in enumerate(arrays):
        path = str(tmp_path / ("%d.npy" % i))
        np.save(path, a)
        got, want = kit.read_npy(path), np.load(path)
        assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want), i
        assert got.flags.writeable
    short = str(tmp_path / "short.npy")
    np.save(short, np.arange(10.0))
    with open(short, "r+b") as f:
        f.truncate(os.path.getsize(short) - 8)
    with pytest.raises(ValueError, match="declares 10 elements, the file holds 72 bytes"):
        kit.read_npy(short)


def test_the_adapter_kit_writes_npy_files_as_numpy_does(tmp_path):
    """write_npy is np.save in one write: the same bytes as np.save of the C-order array where numpy
    adds no spare header room (numpy >= 1.24 pads some headers for growth in place), a file np.load
    reads back exactly with its data 64-byte aligned for every array, and np.save itself for what it
    does not write (structured dtypes)."""
    from gnncheck.adapter_kit import gnncheck_adapter as kit

    arrays = [np.arange(12, dtype=np.float32).reshape(3, 4), np.array(3.5), np.zeros((0, 5)),
              np.arange(7, dtype=np.int64), np.asfortranarray(np.arange(6.0).reshape(2, 3)),
              np.arange(6.0).reshape(2, 3)[:, ::2], np.ones((2, 2, 2), dtype=np.float16), np.array([], dtype=np.int32),
              np.zeros((1,) * 20, dtype=np.float64), np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")])]
    for i, a in enumerate(arrays):
        ours, numpy_s = str(tmp_path / ("%d.ours.npy" % i)), str(tmp_path / ("%d.numpy.npy" % i))
        kit.write_npy(ours, a)
        np.save(numpy_s, np.array(a, order="C"))
        mine, theirs = open(ours, "rb").read(), open(numpy_s, "rb").read()
        header_end = 10 + int.from_bytes(mine[8:10], "little")
        assert header_end % 64 == 0 and mine[header_end - 1:header_end] == b"\n", i
        assert mine[header_end:] == theirs[len(theirs) - (len(mine) - header_end):], i
        if len(mine) == len(theirs):
            assert mine == theirs, i
        assert np.array_equal(np.load(ours), a) and np.load(ours).shape == a.shape, i
        back = kit.read_npy(ours)
        assert back.shape == a.shape and np.array_equal(back, a), i
    # A file that grew after its size was read is read to its end.
    grown = tmp_path / "grown.bin"
    grown.write_bytes(b"x" * 5000)
    assert kit.read_file(str(grown)) == b"x" * 5000


def test_the_adapter_kit_measures_memory_only_where_gnncheck_reads_it(tmp_path):
    """serve()'s live_bytes and device_bytes callbacks (NVML, allocator queries: driver calls) run
    for a case whose case.json says measure_resources (the resources check's), and for a case of an
    older gnncheck that does not say; never for the other checks' cases."""
    import json

    from gnncheck.adapter_kit import gnncheck_adapter as kit

    calls = []

    def spmm_answer(case):
        return {"outputs": {"y": np.zeros((1, 1), dtype=case.dtype)}}

    def live():
        calls.append("live")
        return 5

    def device():
        calls.append("device")
        return 7

    for flag in (True, False, None):
        d = tmp_path / str(flag)
        d.mkdir()
        kit.write_npy(str(d / "row_ptr.npy"), np.array([0, 0], dtype=np.int64))
        kit.write_npy(str(d / "col_idx.npy"), np.array([], dtype=np.int64))
        kit.write_npy(str(d / "x.npy"), np.zeros((1, 1), dtype=np.float64))
        manifest = {"protocol": 1, "target": "spmm", "seed": 1, "dtype": "float64", "attributes": {"features": 1},
                    "graph": {"n_dst": 1, "n_src": 1, "num_edges": 0, "row_ptr": "row_ptr.npy",
                              "col_idx": "col_idx.npy"},
                    "inputs": [{"name": "x", "kind": "src_nodes", "differentiable": True, "file": "x.npy",
                                "shape": [1, 1], "dtype": "float64"}],
                    "parameters": [], "grad_outputs": [], "gradients": [],
                    "outputs": [{"name": "y", "file": "y.npy", "shape": [1, 1], "dtype": "float64"}],
                    "result": "result.json"}
        if flag is not None:
            manifest["measure_resources"] = flag
        (d / "case.json").write_text(json.dumps(manifest))
        del calls[:]
        kit.answer_case(str(d), {"spmm": ("float64", spmm_answer)}, live, device)
        result = json.loads((d / "result.json").read_text())
        assert result["status"] == "ok", result
        measured = flag is not False
        assert calls == (["live", "device"] if measured else []), flag
        assert (result.get("live_bytes"), result.get("device_bytes")) == ((5, 7) if measured else (None, None)), flag

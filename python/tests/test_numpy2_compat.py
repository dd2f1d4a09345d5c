"""Every Python file gnncheck ships keeps to what NumPy 1.24 through 2.x all accept.

CI runs NumPy 1.24 (Debian 12), where np.array(a, copy=False) still copies when it must; NumPy 2
raises "Unable to avoid copy" there, and removed a list of aliases and functions. A test that only
ran the code under 1.24 would not see either, so this one reads the files: each use below is named
with its file, line and what to write instead. The behaviour under NumPy 2 itself is run on the GPU
machine (docs/python-compatibility.md)."""

import os
import re
import subprocess

import pytest

SOURCE_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# (pattern, what to write instead). Names removed from the main namespace by NumPy 2.0 (NEP 52) and
# the ones deprecated in 2.x whose removal has begun; `copy=False` for its changed meaning.
REMOVED = ("float_ complex_ cfloat clongfloat longcomplex singlecomplex longfloat string_ unicode_ bool8 int0 "
           "uint0 object0 str0 bytes0 void0 NaN NAN Inf Infinity infty PINF NINF PZERO NZERO product cumproduct "
           "sometrue alltrue in1d row_stack trapz msort asfarray find_common_type round_ cast source lookfor who "
           "safe_eval deprecate deprecate_with_doc disp issubclass_ issctype maximum_sctype obj2sctype "
           "sctype2char sctypes set_string_function recfromcsv recfromtxt mat add_newdoc_ufunc byte_bounds "
           "geterrobj seterrobj fastCopyAndTranspose compare_chararrays format_parser DataSource tracemalloc_domain "
           "compat core").split()
RULES = [
    (re.compile(r"\bcopy\s*=\s*False\b"),
     "NumPy 2 raises where a copy is needed: np.asarray(a) (copies only if it must) or copy=None"),
    (re.compile(r"\b(?:np|numpy)\.(%s)\b" % "|".join(REMOVED)),
     "removed or deprecated in NumPy 2 (float_ -> float64, NaN -> nan, Inf -> inf, product -> prod, in1d -> isin, "
     "row_stack -> vstack, trapz -> trapezoid (2.x) or a sum, round_ -> round, np.core -> public names)"),
    (re.compile(r"\.(itemset|tostring)\("), "ndarray.itemset/tostring are gone in NumPy 2: a[i] = v, a.tobytes()"),
    (re.compile(r"(?<!np)(?<!numpy)\.ptp\("), "ndarray.ptp is gone in NumPy 2: np.ptp(a)"),
]
NEWBYTEORDER = re.compile(r"\.newbyteorder\(")
DTYPE_BEFORE = re.compile(r"(dtype|dtype\([^()]*\))$")  # dtype.newbyteorder stays; ndarray.newbyteorder is gone


def shipped_python_files():
    """git ls-files '*.py' '*.py.in' of the source tree; without git, the same folders walked."""
    try:
        out = subprocess.run(["git", "ls-files", "*.py", "*.py.in"], cwd=SOURCE_DIR, capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip():
            return sorted(out.stdout.split())
    except OSError:
        pass
    found = []
    for top in ("adapters", "python", "performance", "reports", "scripts", "examples"):
        for root, dirs, files in os.walk(os.path.join(SOURCE_DIR, top)):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build")) and d != "__pycache__"]
            found += [os.path.relpath(os.path.join(root, f), SOURCE_DIR) for f in files if f.endswith((".py", ".py.in"))]
    return sorted(found)


def problems_in(text):
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith(("'", '"')) else line
        for pattern, advice in RULES:
            for m in pattern.finditer(code):
                found.append("line %d: %s — %s" % (number, m.group(0), advice))
        for m in NEWBYTEORDER.finditer(code):
            if not DTYPE_BEFORE.search(code[:m.start()]):
                found.append("line %d: ndarray.newbyteorder is gone in NumPy 2: a.view(a.dtype.newbyteorder())" % number)
    return found


def test_the_rules_find_what_they_are_for():
    bad = ("a = np.array(x, order='C', copy=False)\nb = np.float_(1) + np.NaN\nc = np.product(s)\n"
           "d = x.newbyteorder('>')\ne = np.in1d(a, b)\nf = np.core.multiarray\n")
    assert len(problems_in(bad)) == 7
    good = ("a = np.asarray(x, order='C')\nb = np.float64(1) + np.nan\nc = np.prod(s)\n"
            "d = x.dtype.newbyteorder('>')\ne = np.dtype(t).newbyteorder('<')\nf = np.isin(a, b)\ng = np.ptp(a)\n")
    assert problems_in(good) == []


def test_no_shipped_python_file_uses_what_numpy_2_removed_or_changed():
    files = shipped_python_files()
    assert "adapters/python/gnncheck_adapter.py" in files and "python/gnncheck/_system.py" in files
    me = os.path.relpath(os.path.abspath(__file__), SOURCE_DIR)
    report = []
    for name in files:
        if name == me:
            continue
        with open(os.path.join(SOURCE_DIR, name), encoding="utf-8") as f:
            report += ["%s %s" % (name, p) for p in problems_in(f.read())]
    assert not report, "\n".join(report)

"""Runs pytest for one ctest test; exits 77 (ctest: skipped) with the reason when a need is missing.

    python3 run_pytest.py [--needs torch] [--needs cuda] -- <pytest arguments>

`--needs cuda`: torch must see a CUDA device (torch.cuda.is_available()). `--needs xdist`: pytest-xdist.
"""

import importlib
import sys


def main(argv):
    needs = []
    while argv and argv[0] != "--":
        if argv[0] == "--needs" and len(argv) > 1:
            needs.append(argv[1])
            argv = argv[2:]
        else:
            sys.stderr.write("run_pytest.py: unexpected argument %r\n" % argv[0])
            return 2
    args = argv[1:]
    modules = [n for n in needs if n != "cuda"] + (["torch"] if "cuda" in needs and "torch" not in needs else [])
    packages = {"xdist": "python3-pytest-xdist"}
    for module, package in [("pytest", "python3-pytest")] + [(n, packages.get(n, "python3-" + n)) for n in modules]:
        try:
            importlib.import_module(module)
        except ImportError as e:
            print("skipped: %s cannot be imported by %s (%s; Debian/Ubuntu: apt-get install %s)" % (
                module, sys.executable, e, package))
            return 77
    if "cuda" in needs:
        import torch

        if not torch.cuda.is_available():
            print("skipped: torch %s in %s sees no CUDA device (torch.cuda.is_available() is false)" % (
                torch.__version__, sys.executable))
            return 77
    import pytest

    return int(pytest.main(args))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

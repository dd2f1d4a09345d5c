#!/usr/bin/env python3
"""check_layering.py on scratch trees: a layered tree passes; an upward include, a folder cycle, an
internal header used from outside, library code including test code and a deferred CMake call each
fail it, naming the file and line."""
import pathlib
import subprocess
import sys
import tempfile

CHECKER = pathlib.Path(__file__).with_name("check_layering.py")


def run(files):
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        return subprocess.run([sys.executable, str(CHECKER), str(root), "--order", "low", "mid", "high",
                               "--top", "app", "--internal", "mid/inner.h=mid"], capture_output=True, text=True)


BASE = {
    "low/a.h": "#pragma once\n#include <vector>\n",
    "mid/inner.h": "#pragma once\n",
    "mid/b.cpp": '#include "low/a.h"\n#include "mid/inner.h"\n',
    "high/c.cpp": '#include "mid/b.h"\n#include "low/a.h"\n',
    "high/tests/c_test.cpp": '#include "app/main.h"\n',  # a test is a leaf: noted, not failed
    "app/main.cpp": '#include "high/c.h"\n',
    "low/CMakeLists.txt": "add_library(low a.cpp)\n",
}


def expect(name, files, returncode, needle):
    result = run(files)
    output = result.stdout + result.stderr
    if result.returncode != returncode or needle not in output:
        print(f"FAIL {name}: exit {result.returncode} (expected {returncode}), expected '{needle}' in:\n{output}")
        return False
    print(f"ok   {name}")
    return True


cases = [
    ("layered tree passes", BASE, 0, "layering holds"),
    ("upward include", {**BASE, "low/a.cpp": '#include "mid/b.h"\n'}, 1, 'low/a.cpp:1: #include "mid/b.h": upward include'),
    ("folder cycle", {**BASE, "low/a.cpp": '#include "high/c.h"\n'}, 1, "folder cycle: high ↔ low ↔ mid"),
    ("internal header", {**BASE, "high/d.cpp": '\n#include "mid/inner.h"\n'}, 1, "high/d.cpp:2: #include \"mid/inner.h\": 'mid/inner.h' is internal to 'mid'"),
    ("library includes test code", {**BASE, "high/e.cpp": '#include "high/tests/support.h"\n'}, 1, "library code includes test code"),
    ("folder not in the order", {**BASE, "stray/f.cpp": "int f();\n"}, 1, "folder 'stray' is in neither"),
    ("deferred CMake call", {**BASE, "mid/CMakeLists.txt": "cmake_language(DEFER CALL f)\n"}, 1, "mid/CMakeLists.txt:1: cmake_language(DEFER"),
]
sys.exit(0 if all([expect(*c) for c in cases]) else 1)

#!/usr/bin/env python3
"""Holds every source file to the declared folder order (README.md, "Where things are").

    check_layering.py ROOT --order core oracle ... suites --top python fuzz examples
                      [--internal oracle/sparse_kernels.h=oracle ...]

Library code in folder F may include only F and the folders before F in --order; folders named in
--top stand above every layered folder. Code under `tests/` or `benchmarks/` is a leaf (nothing
includes it), so it may also use folders above its own (each such include is listed as a note);
library code never includes test code. An --internal header is included only from its folder.
No CMake file may use `cmake_language(DEFER`. Every violation is printed as FILE:LINE with the
rule it breaks; the folder graph's cycles, if any, are printed too. Exit 1 on any violation.
"""
import argparse
import pathlib
import re
import subprocess
import sys

SOURCE_SUFFIXES = {".h", ".hpp", ".c", ".cpp", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def tracked_files(root):
    """The files git knows (ignored build trees left out); every file under ROOT outside a git checkout."""
    git = subprocess.run(["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, text=True)
    if git.returncode == 0 and (root / ".git").exists():
        names = git.stdout.splitlines()
    else:
        names = [str(p.relative_to(root)) for p in root.rglob("*")
                 if not any(part.startswith((".", "build")) for part in p.relative_to(root).parts)]
    return sorted(pathlib.PurePosixPath(p) for p in names if (root / p).is_file())


def include_folder(path, folders):
    """The top-level folder an include path resolves to, or None for a system/third-party header."""
    first = path.split("/", 1)[0]
    if first == "gnncheck":  # the C plugin ABI, adapters/include/gnncheck/plugin.h
        return "adapters"
    return first if first in folders and "/" in path else None


def cycles(edges, nodes):
    """Strongly connected components with more than one folder (Tarjan)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root", type=pathlib.Path)
    parser.add_argument("--order", nargs="+", required=True, help="layered folders, bottom first")
    parser.add_argument("--top", nargs="*", default=[], help="folders above every layered folder")
    parser.add_argument("--internal", nargs="*", default=[], help="HEADER=FOLDER: included only from FOLDER")
    args = parser.parse_args()

    rank = {folder: i for i, folder in enumerate(args.order)}
    top = set(args.top)
    internal = {}
    for item in args.internal:
        header, sep, folder = item.partition("=")
        if not sep:
            parser.error(f"--internal {item}: expected HEADER=FOLDER")
        internal[header] = folder
    files = tracked_files(args.root)
    folders = {f.parts[0] for f in files if len(f.parts) > 1}
    problems, edges, leaves_above = [], {}, []

    for f in files:
        if len(f.parts) < 2 or f.suffix not in SOURCE_SUFFIXES:
            continue
        folder = f.parts[0]
        if folder not in rank and folder not in top:
            problems.append(f"{f}: folder '{folder}' is in neither the folder order nor the top folders")
            continue
        # Tests and benchmark programs are leaves (nothing includes them), so they may use folders
        # above their own without making a cycle; they are listed, not failed.
        is_test = "tests" in f.parts[1:-1] or "benchmarks" in f.parts[1:-1]
        text = (args.root / f).read_text(encoding="utf-8", errors="replace")
        for line_number, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            path = m.group(1)
            target = include_folder(path, folders)
            if target is None:
                continue
            where = f"{f}:{line_number}: #include \"{path}\""
            upward = (target in top and folder not in top) or (
                folder in rank and target in rank and rank[target] > rank[folder])
            if is_test:
                if upward:
                    leaves_above.append(f"{where} (test or benchmark code, a leaf)")
            else:
                if target != folder:
                    edges.setdefault(folder, set()).add(target)
                if upward:
                    problems.append(f"{where}: upward include ('{target}' comes after '{folder}' in the folder order)")
            if "tests" in pathlib.PurePosixPath(path).parts[1:-1] and not is_test:
                problems.append(f"{where}: library code includes test code")
            if path in internal and internal[path] != folder:
                problems.append(f"{where}: '{path}' is internal to '{internal[path]}'")

    for f in files:
        if f.name == "CMakeLists.txt" or f.suffix == ".cmake":
            for line_number, line in enumerate((args.root / f).read_text(encoding="utf-8").splitlines(), 1):
                if re.search(r"cmake_language\s*\(\s*DEFER", line) and not line.lstrip().startswith("#"):
                    problems.append(f"{f}:{line_number}: cmake_language(DEFER …): configure folders in the folder order instead")

    for component in cycles(edges, folders):
        problems.append(f"folder cycle: {' ↔ '.join(component)}")
    for line in leaves_above:
        print(f"note: {line}")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layering problem(s); the folder order is: {' < '.join(args.order)}")
        return 1
    print(f"layering holds over {len(files)} files: {' < '.join(args.order)} < {{{', '.join(sorted(top))}}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Print the import graph of bai_lib: each module's imports of the package's own modules (those
inside functions included), the import cycles, the imports that run back up the layers of
tests/test_layers.py, the private names imported across modules and the module sizes.

    python scripts/import_graph.py [--root DIR]

``--root`` reads another checkout (for a before/after comparison); the layers are always those
of this checkout's tests/test_layers.py.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "tests"))

import test_layers as layers  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE, help="checkout to read")
    args = parser.parse_args()
    layers.ROOT, layers.PKG = args.root.resolve(), args.root.resolve() / "bai_lib"
    graph = layers._import_graph()
    paths = {layers._module_name(p): p for p in layers.PKG.rglob("*.py")}
    size = {m: len(p.read_text().splitlines()) for m, p in paths.items()}
    short = lambda m: m.removeprefix("bai_lib.") if m != "bai_lib" else "bai_lib"  # noqa: E731
    for m in sorted(graph):
        print(f"{short(m):28s} {size[m]:4d}  -> {', '.join(sorted(map(short, graph[m]))) or '-'}")
    print("\ncycles:", layers._cycles(graph) or "none")
    up = []
    for a, targets in graph.items():
        for b in targets:
            try:
                if layers._rank(b) > layers._rank(a):
                    up.append(f"{short(a)} -> {short(b)}")
            except AssertionError as err:  # a module the layers do not know
                up.append(str(err))
    print("upward imports:", sorted(set(up)) or "none")
    private = []
    for name, path, tree in layers._parsed_modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level and node.module:
                private += [f"{short(name)}: from {'.' * node.level}{node.module} import {a.name}"
                            for a in node.names if a.name.startswith("_")]
    print("private names across modules:", private or "none")
    long = [f"{short(m)} ({n})" for m, n in sorted(size.items()) if n > layers.MAX_MODULE_LINES]
    print(f"modules over {layers.MAX_MODULE_LINES} lines:", long or "none")

if __name__ == "__main__":
    main()

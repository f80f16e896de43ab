"""The library's modules form layers: no import cycle, counting imports inside functions too.

Reads every ``bai_lib/**/*.py`` with ``ast`` (nothing is imported), builds the graph of
``from . import x`` / ``from .x import y`` / ``import bai_lib.x`` edges between the package's
modules, and fails on any cycle, naming it. A package's ``__init__`` is left out as a target
of ``from . import x`` when ``x`` is a module (``from . import _validate`` inside
``bai_lib/x.py`` names the module ``_validate``, not the package).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "bai_lib"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                # "from . import kernels" names modules; "from .simulation import simulate" a module
                named = [f"{stem}.{a.name}" for a in node.names if f"{stem}.{a.name}" in modules]
                targets = named or [stem]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for t in targets:
                while t and t not in modules:   # the longest prefix that is a module of ours
                    t = t.rpartition(".")[0]
                if t and t != name:
                    graph[name].add(t)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_import_graph_has_no_cycle():
    graph = _import_graph()
    assert graph["bai_lib.simulation"] >= {"bai_lib.kernels", "bai_lib.priors"}, graph
    assert not _cycles(graph), f"import cycles: {_cycles(graph)}"


def test_a_cycle_is_found():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def _parsed_modules():
    for path in sorted(PKG.rglob("*.py")):
        yield _module_name(path), path, ast.parse(path.read_text())


def test_no_private_name_is_imported_from_another_module():
    """``from .x import _y`` would tie a module to another's internals; modules named with an
    underscore (``_validate``, ``_rng``) are imported whole or by their public names."""
    modules = {p.stem for p in PKG.rglob("*.py")}
    found = []
    for name, path, tree in _parsed_modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("bai_lib")):
                found += [f"{name}: from {'.' * node.level}{node.module or ''} import {a.name}"
                          for a in node.names if a.name.startswith("_")
                          and not (node.module is None and a.name in modules)]
    assert not found, found


ALGORITHM_CLASSES = {"Algorithm", "Elimination", "NoElim", "TwoArmElimination", "TTTS", "TTUCB",
                     "EBTC", "TrackAndStop", "LUCB", "SamplingRule"}


def _class_tests(tree):
    """``isinstance(x, C)``, ``issubclass(x, C)`` and ``type(x) in / is / == C`` naming a class of
    ``ALGORITHM_CLASSES``."""
    def names(node):
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & ALGORITHM_CLASSES

    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
            if names(node.args[1]):
                yield node.lineno
        if (isinstance(node, ast.Compare) and isinstance(node.left, ast.Call)
                and isinstance(node.left.func, ast.Name) and node.left.func.id == "type"):
            if any(names(c) for c in node.comparators):
                yield node.lineno


def test_only_the_algorithms_package_tests_the_class_of_a_specification():
    """Above ``bai_lib.algorithms`` a specification is asked what it can do (its capability
    methods), never which class it is."""
    found = [f"{name}:{line}" for name, path, tree in _parsed_modules()
             if not name.startswith("bai_lib.algorithms") for line in _class_tests(tree)]
    assert not found, found


def test_the_class_test_finder_finds_them():
    src = ("isinstance(s, Elimination)\nisinstance(s, (int, NoElim))\ntype(s) in (TTTS, EBTC)\n"
           "isinstance(s, GaussianPrior)\ntype(s) is int\n")
    assert list(_class_tests(ast.parse(src))) == [1, 2, 3]


#: The layers, bottom first: a module imports only from its own layer or those below it.
LAYERS = [
    ["_validate", "_version"],
    ["_rng", "_variates", "stats", "quadrature"],
    ["priors", "shape_prior", "beta_prior", "gamma_prior", "empirical_bayes", "robust"],  # math
    ["stopping", "confidence", "kl", "kl_poisson", "posterior"],
    ["bounds", "opt2", "optimal", "oracle", "oracle_bernoulli"],
    ["kernels"],                                  # compiled loops
    ["families", "families.*"],                   # reward families
    ["trace"],
    ["algorithms", "algorithms.*"],               # specifications -> bound kernels
    ["executor", "result", "plan", "_parquet", "runcache", "memo", "cost", "simulation",
     "online"],  # orchestration
    ["poe", "platforms"],
    ["published", "experiments", "tables", "_book"],  # the paper's runs, tables, chapters' own
    ["cell", "store", "sweep"],                   # scale
    ["claims", "formatting", "plotting"],         # presentation
    ["cli", "__main__"],                          # command line
    [""],                                         # the package's __init__
]


def _rank(module: str) -> int:
    short = module.removeprefix("bai_lib").removeprefix(".")
    for i, layer in enumerate(LAYERS):
        if short in layer or any(p.endswith(".*") and short.startswith(p[:-1]) for p in layer):
            return i
    raise AssertionError(f"module {module} is in no layer of LAYERS")


def test_no_import_runs_back_up_the_layers():
    graph = _import_graph()
    up = [f"{a} -> {b}" for a, targets in graph.items() for b in targets if _rank(b) > _rank(a)]
    assert not up, up


def test_an_upward_import_is_found():
    assert _rank("bai_lib.kernels") < _rank("bai_lib.algorithms.top_two") < _rank("bai_lib.simulation")
    assert _rank("bai_lib") == len(LAYERS) - 1


MAX_MODULE_LINES = 600


def test_no_module_is_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in PKG.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert not long, long

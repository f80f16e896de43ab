"""The public API: typed, documented, and in the book's reference part.

- Every public function and method of the public modules has a complete signature: an
  annotation on each parameter (``self``/``cls`` aside) and a return annotation. Public means a
  name in ``bai_lib.__all__``, ``bai_lib.algorithms.__all__`` or the ``__all__`` of a public
  module; a method is public when its name has no leading underscore, or it is ``__init__``,
  ``__new__`` or ``__call__``. Compiled (numba) functions are checked on their Python function.
- Every name in ``bai_lib.__all__`` and ``bai_lib.algorithms.__all__`` has a docstring (a
  ``#:`` comment or a string after the assignment for data, as autodoc reads them).
- The built book's reference pages carry an anchor for each of those names at its documented
  path (``id="bai_lib.simulate"``; ``id="module-bai_lib.bounds"`` for a module), and the general
  index links to each. A name is documented once: under ``bai_lib.algorithms`` for the algorithm
  names (also importable from ``bai_lib``), under ``bai_lib`` for the other top-level names.
"""

from __future__ import annotations

import argparse
import dataclasses
import html as html_lib
import importlib
import inspect
import re
import types
from pathlib import Path

import pytest

import bai_lib
import bai_lib.algorithms

ROOT = Path(__file__).resolve().parents[1]
PUBLIC_MODULES = [
    "stats", "quadrature", "priors", "shape_prior", "beta_prior", "gamma_prior", "empirical_bayes",
    "robust", "kl",
    "kl_poisson",
    "oracle_bernoulli",
    "bounds", "opt2", "optimal", "oracle", "stopping", "confidence",
    "executor", "result", "plan", "memo", "cost", "simulation",
    "experiments", "trace", "poe", "claims", "cell", "sweep", "store", "cli", "plotting", "formatting",
    "published", "tables",
    "algorithms", "algorithms.base", "algorithms.elimination", "algorithms.lucb",
    "algorithms.plugin", "algorithms.top_two", "algorithms.ttts", "algorithms.track_and_stop",
    "algorithms.glr", "algorithms.ttts_conjugate", "algorithms.ask_tell", "online", "families",
    "posterior", "algorithms.posterior_rules", "platforms",
    "algorithms.skip_ahead", "algorithms.ttts_blocks",
    "families.family", "families.gaussian",
    "families.bernoulli", "families.poisson", "families.expfam",
]
PUBLIC_METHOD_DUNDERS = {"__init__", "__new__", "__call__"}

# Where each name of the two top-level __all__ lists is documented in the book (its one canonical
# path): the algorithm names under bai_lib.algorithms, the other top-level names under bai_lib.
DOCUMENTED = {f"bai_lib.algorithms.{n}": getattr(bai_lib.algorithms, n)
              for n in bai_lib.algorithms.__all__} | {
    f"bai_lib.{n}": getattr(bai_lib, n) for n in bai_lib.__all__ if n not in bai_lib.algorithms.__all__}


def _python_function(obj):
    """The Python function behind ``obj`` (numba dispatchers keep it in ``py_func``), or None."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if inspect.isfunction(obj):
        return obj
    py_func = getattr(obj, "py_func", None)
    return py_func if inspect.isfunction(py_func) else None


def _missing_annotations(func, *, method: bool) -> list[str]:
    """What ``func`` leaves unannotated: its parameter names, and ``return``."""
    sig = inspect.signature(func, eval_str=False)
    params = list(sig.parameters.values())
    if method and params and params[0].name in ("self", "cls", "mcs"):
        params = params[1:]
    missing = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    if sig.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


def _class_callables(cls):
    """``(qualified name, function)`` of the public methods and properties bai_lib defines on
    ``cls`` and its bai_lib base classes."""
    for klass in cls.__mro__:
        if not klass.__module__.startswith("bai_lib"):
            continue
        for name, member in vars(klass).items():
            if name.startswith("_") and name not in PUBLIC_METHOD_DUNDERS:
                continue
            where = f"{klass.__module__}.{klass.__qualname__}.{name}"
            if isinstance(member, property):
                if member.fget is not None:
                    yield where, member.fget
                continue
            if isinstance(member, (types.FunctionType, staticmethod, classmethod)):
                func = _python_function(member)
                if func is not None and func.__module__.startswith("bai_lib"):
                    yield where, func


def _public_objects():
    """``(path, object)`` for every public name: both top-level ``__all__`` and each public
    module's ``__all__``."""
    seen = {}
    for path, obj in DOCUMENTED.items():
        seen.setdefault(id(obj), (path, obj))
    for name in PUBLIC_MODULES:
        module = importlib.import_module(f"bai_lib.{name}")
        for attr in module.__all__:
            obj = getattr(module, attr)
            seen.setdefault(id(obj), (f"{module.__name__}.{attr}", obj))
    return list(seen.values())


def unannotated() -> list[str]:
    problems: dict[str, str] = {}
    for path, obj in _public_objects():
        func = _python_function(obj)
        if func is not None:
            if func.__module__.startswith("bai_lib"):
                missing = _missing_annotations(func, method=False)
                if missing:
                    problems[f"{func.__module__}.{func.__qualname__}"] = ", ".join(missing)
        elif inspect.isclass(obj) and obj.__module__.startswith("bai_lib"):
            for where, method in _class_callables(obj):
                missing = _missing_annotations(method, method=True)
                if missing:
                    problems[where] = ", ".join(missing)
    return [f"{where}: {missing}" for where, missing in sorted(problems.items())]


def test_every_public_function_is_fully_annotated():
    problems = unannotated()
    assert not problems, (f"{len(problems)} public functions/methods lack annotations "
                          "(parameter names, or 'return'):\n" + "\n".join(problems))


def _generated_doc(obj) -> bool:
    """Dataclasses and named tuples invent a docstring (``Name(field, ...)``) when there is none."""
    doc = (obj.__doc__ or "").strip()
    return (inspect.isclass(obj) and "\n" not in doc and doc.startswith(f"{obj.__name__}(")
            and doc.endswith(")") and (dataclasses.is_dataclass(obj) or issubclass(obj, tuple)))


def _attribute_docs(module_name: str) -> dict[str, str]:
    """The ``#:`` comments and docstrings after module-level assignments, as autodoc reads them."""
    from sphinx.pycode import ModuleAnalyzer

    docs = ModuleAnalyzer.for_module(module_name).find_attr_docs()
    return {name: "".join(lines).strip() for (scope, name), lines in docs.items() if scope == ""}


def undocumented() -> list[str]:
    missing = []
    for path, obj in DOCUMENTED.items():
        module_name, _, name = path.rpartition(".")
        if isinstance(obj, types.ModuleType):
            has_doc = bool((obj.__doc__ or "").strip())
        elif inspect.isclass(obj) or _python_function(obj) is not None:
            own = obj if inspect.isclass(obj) else _python_function(obj)
            has_doc = bool((own.__doc__ or "").strip()) and not _generated_doc(obj)
        else:  # data: documented where it is assigned (here, or in a public module)
            homes = [module_name, *(f"bai_lib.{m}" for m in PUBLIC_MODULES)]
            has_doc = any(_attribute_docs(m).get(name) for m in homes)
        if not has_doc:
            missing.append(path)
    return missing


def test_every_exported_name_has_a_docstring():
    missing = undocumented()
    assert not missing, "exported names without a docstring: " + ", ".join(missing)


# --- the reference part of the built book -------------------------------------------------------

def _anchor(path: str) -> str:
    return f"module-{path}" if isinstance(DOCUMENTED[path], types.ModuleType) else path


def test_reference_pages_document_every_exported_name(built_book):
    html, _ = built_book
    pages = sorted((html / "book" / "reference").glob("*.html"))
    assert pages, f"no reference pages in {html / 'book' / 'reference'}"
    ids: dict[str, str] = {}
    for page in pages:
        for anchor in re.findall(r'\bid="([^"]+)"', page.read_text(errors="replace")):
            ids.setdefault(html_lib.unescape(anchor), page.name)
    missing = [f"{path} (id={_anchor(path)!r})" for path in DOCUMENTED if _anchor(path) not in ids]
    assert not missing, ("the reference pages have no entry for: " + ", ".join(missing)
                         + f"\n(pages: {', '.join(p.name for p in pages)})")

    index = (html / "genindex.html").read_text(errors="replace")
    targets = {html_lib.unescape(t) for t in re.findall(r'href="[^"#]*reference/[^"#]*#([^"]+)"', index)}
    not_indexed = [path for path in DOCUMENTED if _anchor(path) not in targets]
    assert not not_indexed, "genindex.html does not link to: " + ", ".join(not_indexed)


def test_documented_paths_cover_both_all_lists():
    """Each exported name is documented under a path that imports the same object."""
    for path, obj in DOCUMENTED.items():
        module_name, _, name = path.rpartition(".")
        assert getattr(importlib.import_module(module_name), name) is obj, path
    documented = {id(obj) for obj in DOCUMENTED.values()}
    for module in (bai_lib, bai_lib.algorithms):
        missing = [n for n in module.__all__ if id(getattr(module, n)) not in documented]
        assert not missing, f"{module.__name__}.__all__ names without a documented path: {missing}"


def test_cli_reference_describes_every_subcommand_and_option():
    """``book/reference/cli.md`` is written by hand: it must keep up with the parser."""
    from bai_lib import cli

    text = (ROOT / "book" / "reference" / "cli.md").read_text()
    parser = cli._parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, sub in subparsers.choices.items():
        if f"## `bai-lib {name}`" not in text:
            missing.append(f"the subcommand {name}")
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            words = action.option_strings or [action.metavar or action.dest]
            missing += [f"{name} {w}" for w in words if f"`{w}" not in text]
    assert not missing, "book/reference/cli.md does not describe: " + ", ".join(missing)


def test_cli_help_texts_print_as_written():
    """argparse formats ``help`` strings with ``%`` but prints descriptions as written: a doubled
    ``%%`` in a description reaches the reader."""
    from bai_lib import cli

    parser = cli._parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in {"bai-lib": parser, **subparsers.choices}.items():
        shown = sub.format_help()
        assert "%%" not in shown and "%(" not in shown, f"{name} --help shows a raw format: {shown}"

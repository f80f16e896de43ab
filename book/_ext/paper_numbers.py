"""Statement boxes carry the paper's numbers (a local Sphinx extension).

The paper numbers its definitions, its algorithms and its remarks each on their own, and its
lemmas, corollaries and theorems on one shared counter (Lemma 1, Theorem 2, Corollary 3,
Theorem 4, ...). A box of the book that restates a statement of the paper says which one with the
class ``paper-N``::

    :::{prf:theorem} Lower bound
    :label: thm-lower-bound
    :class: paper-4
    :::

and is then shown, and referred to by ``{prf:ref}`thm-lower-bound```, as "Theorem 4", the
number the paper gives it, instead of the book's own count. The book's own statements (no
counterpart in the paper) are ``:nonumber:``; a reference to one of them shows its title.

The build fails (a warning, and the book builds with ``-W``) when a numbered box has no
``paper-N`` class, when two boxes claim one number of one counter, or when a box that claims a
number is also ``:nonumber:``.
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

_PAPER_CLASS = re.compile(r"^paper-(\d+)$")


def _proof_boxes(doctree):
    for node in doctree.findall(nodes.Element):
        if "realtype" in node.attributes and "label" in node.attributes and "countertype" in node.attributes:
            yield node


def _title_of(node) -> str:
    """The box's own title (its directive argument), without the ``" (%t)"`` decoration."""
    text = str(node.get("title", "")).strip()
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def _collect(app, doctree):
    env = app.env
    numbers = env.__dict__.setdefault("paper_numbers", {})
    titles = env.__dict__.setdefault("paper_titles", {})
    for node in _proof_boxes(doctree):
        label = node["label"]
        titles[label] = (env.docname, _title_of(node))
        claimed = [int(m.group(1)) for c in node.get("classes", [])
                   if (m := _PAPER_CLASS.match(c))]
        numbered = node.__class__.__name__ != "unenumerable_node"
        if claimed and not numbered:
            logger.warning(f"statement box {label!r} claims the paper's number {claimed[0]} but is "
                           ":nonumber:", location=node)
        elif numbered and not claimed:
            logger.warning(f"statement box {label!r} is numbered but restates no statement of the "
                           "paper: add `:class: paper-N` (the paper's number) or `:nonumber:`",
                           location=node)
        elif claimed:
            numbers[label] = (env.docname, node["countertype"], claimed[0])


def _purge(app, env, docname):
    for store in ("paper_numbers", "paper_titles"):
        d = env.__dict__.get(store, {})
        for label in [k for k, v in d.items() if v[0] == docname]:
            del d[label]


def _merge(app, env, docnames, other):
    for store in ("paper_numbers", "paper_titles"):
        env.__dict__.setdefault(store, {}).update(
            {k: v for k, v in other.__dict__.get(store, {}).items() if v[0] in docnames})


def _renumber(app, env):
    """Replace the book's count by the paper's number, for captions and references alike."""
    seen: dict[tuple[str, int], str] = {}
    for label, (docname, counter, number) in sorted(env.__dict__.get("paper_numbers", {}).items()):
        # the paper's lemmas, corollaries and theorems share one counter
        key = ("theorem" if counter in ("theorem", "lemma", "corollary") else counter, number)
        if key in seen:
            logger.warning(f"statement boxes {seen[key]!r} and {label!r} both claim the paper's "
                           f"{counter} {number}")
        seen[key] = label
        env.toc_fignumbers.setdefault(docname, {}).setdefault(counter, {})[label] = (number,)
    return []


def _title_references(app, doctree, fromdocname):
    """A reference to an unnumbered box shows the box's title instead of a bare "Definition"."""
    titles = app.env.__dict__.get("paper_titles", {})
    numbers = app.env.__dict__.get("paper_numbers", {})
    for ref in doctree.findall(nodes.reference):
        target = ref.get("refid") or (ref.get("refuri", "").split("#")[-1] or None)
        if target in titles and target not in numbers:
            text = ref.astext().strip()
            if re.fullmatch(r"[A-Z][a-z]+", text):        # sphinx-proof's "Definition " + no number
                ref.children = [nodes.inline("", titles[target][1])]


def setup(app):
    app.connect("doctree-read", _collect)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("env-get-updated", _renumber, priority=900)
    app.connect("doctree-resolved", _title_references)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}

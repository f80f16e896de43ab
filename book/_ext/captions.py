"""Numbered, captioned figures and tables from notebook outputs (a local Sphinx extension).

A chapter captions a cell's output through the cell's metadata (myst-nb wraps the output in a
figure)::

    ```{code-cell} ipython3
    ---
    mystnb:
      figure:
        name: fig-frontier          # "fig-...": numbered as a figure
        caption: The (Opt2) frontier ...
    ---

With a name that starts with ``tab-`` the output (a results table) is numbered on the tables'
counter instead, with its caption above it, so the book has "Fig. 10.3" and "Table 10.3" as a
reader expects (numbered within each chapter, ``numbered: 1`` in ``_toc.yml``, so that they
cannot be mistaken for the paper's Tables 1–7), and ``{numref}`tab-...``` refers to it. Every image inside a captioned figure gets the caption as
its alternative text (myst-nb would otherwise leave the file name).
"""

from __future__ import annotations

import re

from docutils import nodes


class output_table(nodes.figure):
    """A captioned notebook output numbered as a table."""


def _visit(self, node):
    self.visit_figure(node)


def _depart(self, node):
    self.depart_figure(node)


_SYMBOLS = {
    "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈",
    "times": "×", "cdot": "·", "infty": "∞", "to": "→", "pm": "±", "sqrt": "√",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "Delta": "Δ", "varepsilon": "ε",
    "epsilon": "ε", "lambda": "λ", "mu": "μ", "nu": "ν", "pi": "π", "sigma": "σ", "tau": "τ",
    "xi": "ξ", "theta": "θ", "bmu": "μ", "bH": "H", "bnu": "ν", "sim": "∼", "in": "∈", "sum": "Σ",
    "prod": "Π", "int": "∫", "otimes": "⊗", "ldots": "…", "dots": "…", "cdots": "…",
    "log": "log ", "exp": "exp ", "min": "min ", "max": "max ",
}
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")


def _over(num: str, den: str) -> str:
    """``num/den``, each side in parentheses unless it is a single symbol or number."""
    def group(part: str) -> str:
        part = part.strip()
        return part if re.fullmatch(r"\\?[A-Za-z]+|[0-9.]+", part) else f"({part})"
    return f"{group(num)}/{group(den)}"


def _speakable(latex: str) -> str:
    """A formula as plain text for alternative text: ``\\mathbb{P}[g \\le \\Delta_0]`` → ``P[g ≤ Δ0]``,
    ``\\log\\frac{1}{2.4\\delta}`` → ``log 1/(2.4δ)``."""
    for _ in range(4):   # nested fractions, innermost first
        latex = _FRAC.sub(lambda m: _over(m.group(1), m.group(2)), latex)
    text = re.sub(r"\\([A-Za-z]+)", lambda m: _SYMBOLS.get(m.group(1), " " if m.group(1) in
                                                          ("quad", "qquad", "enspace") else ""),
                  latex)
    text = re.sub(r"\\[,;!: ]", " ", text)
    text = text.replace("{", "").replace("}", "").replace("_", "")
    return " ".join(text.split())


def _caption_text(figure) -> str:
    for child in figure.children:
        if isinstance(child, nodes.caption):
            parts = []
            for node in child.findall(nodes.Text):
                parent = node.parent
                parts.append(_speakable(node.astext()) if isinstance(parent, nodes.math)
                             else node.astext())
            return " ".join("".join(parts).split())
    return ""


def _tables_by_name(app, doctree):
    """Figures named ``tab-...`` become tables (before the numbers are assigned)."""
    for fig in list(doctree.findall(nodes.figure)):
        if type(fig) is nodes.figure and any(n.startswith("tab-") for n in fig["names"]):
            # a table's caption stands above it, a figure's below
            children = sorted(fig.children, key=lambda c: not isinstance(c, nodes.caption))
            table = output_table(fig.rawsource, *children, **fig.attributes)
            table["classes"].append("output-table")
            fig.replace_self(table)
            for node_id in table["ids"]:
                doctree.ids[node_id] = table      # targets resolve through the ids


def _alt_from_caption(app, doctree, docname):
    for fig in doctree.findall(nodes.figure):
        caption = _caption_text(fig)
        if not caption:
            continue
        for image in fig.findall(nodes.image):
            image["alt"] = caption


def setup(app):
    app.add_enumerable_node(output_table, "table", html=(_visit, _depart),
                            latex=(_visit, _depart), text=(_visit, _depart))
    app.connect("doctree-read", _tables_by_name)
    app.connect("doctree-resolved", _alt_from_caption)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""One shared figure style for every chapter (the *presentation layer*).

Call :func:`use_style` once per notebook; use :data:`COLORS` (or a specification's ``color``)
so an algorithm keeps its colour across chapters, and :func:`figure` for consistently sized
axes. Colours and labels come from the algorithm specifications (:mod:`bai_lib.algorithms`).
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .algorithms import ALGORITHMS

__all__ = ["COLORS", "ARM_COLORS", "SHADES", "LABELS", "use_style", "figure"]

#: Colour of each registered algorithm (its specification's ``color``, keyed by the names
#: accepted by :func:`bai_lib.simulate`) and of reference lines.
COLORS: dict[str, str] = {
    **{name: cls.color for name, cls in ALGORITHMS.items()},
    "reference": "#555555",
    "k2": "#1b6ca8",
    "k10": "#d1495b",
    "band": "#9ecae1",
}

#: Colours for individual arms of one instance (cycled when there are more arms).
ARM_COLORS: tuple[str, ...] = ("#1b6ca8", "#d1495b", "#edae49", "#66a182", "#7a5195", "#555555")

#: Light-to-dark sequence for a family of curves indexed by a parameter (e.g. budgets).
SHADES: tuple[str, ...] = ("#9ecae1", "#3182bd", "#08306b")

#: Display names used in legends and tables, each registered algorithm's ``short_label``.
LABELS: dict[str, str] = {name: cls.short_label for name, cls in ALGORITHMS.items()}

_RC = {
    "figure.figsize": (6.4, 3.8),
    "figure.dpi": 110,
    "savefig.dpi": 150,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "legend.fontsize": 9,
    "lines.linewidth": 1.6,
}


def use_style() -> None:
    """Apply the book's matplotlib style (idempotent)."""
    mpl.rcParams.update(_RC)


def figure(ncols: int = 1, nrows: int = 1, width: float | None = None,
           height: float | None = None) -> tuple[Figure, Axes | np.ndarray]:
    """Create a figure with the book's style and return ``(fig, axes)``.

    Parameters
    ----------
    ncols, nrows : int
        Grid of axes.
    width, height : float, optional
        Size in inches. The width defaults to 6.4 in and may not exceed 7 in, the book's column
        width (stack panels with ``nrows`` rather than squeezing them side by side); the height
        defaults to 3.8 in per row.
    """
    if ncols < 1 or nrows < 1:
        raise ValueError(f"ncols and nrows must be >= 1, got ncols={ncols}, nrows={nrows}")
    use_style()
    w = width if width is not None else 6.4
    if w > 7.0:
        raise ValueError(f"width must be at most 7 in (the book's column width), got {w!r}")
    h = height if height is not None else 3.8 * nrows
    fig, axes = plt.subplots(nrows, ncols, figsize=(w, h), constrained_layout=True, squeeze=True)
    return fig, axes

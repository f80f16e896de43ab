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
from matplotlib.text import Text

from .algorithms import ALGORITHMS

__all__ = ["COLORS", "ARM_COLORS", "SHADES", "LABELS", "PHONE_COLUMN_PX", "MIN_TEXT_PX",
           "use_style", "figure", "smallest_text_px"]

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

#: Width in CSS px of the book's content column on a 400 px wide phone screen, where a figure
#: is shrunk to fit: the width its text must stay legible at.
PHONE_COLUMN_PX: int = 353

#: Smallest legible text in a figure, in CSS px, when it is shown :data:`PHONE_COLUMN_PX` wide.
MIN_TEXT_PX: float = 8.0

#: Default figure width (inches) and resolution (dots per inch; stored at twice this in a notebook).
_WIDTH_IN = 6.0
_DPI = 110

# Every font size of the style is at least 10 pt: a 6 in figure shown 353 px wide draws a 10 pt
# text 353 / (6 * 72) * 10 = 8.2 px tall (see smallest_text_px and its test).
_RC = {
    "figure.figsize": (_WIDTH_IN, 3.8),
    "figure.dpi": _DPI,
    "savefig.dpi": 2 * _DPI,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.frameon": False,
    "legend.fontsize": 10,
    "legend.title_fontsize": 10,
    "lines.linewidth": 1.6,
}


def use_style() -> None:
    """Apply the book's matplotlib style (idempotent).

    In a Jupyter kernel it also stores figures as PNGs at twice their resolution (IPython's
    ``retina`` format: the image keeps its size and is sharp on high-density screens and when
    zoomed); elsewhere only matplotlib's settings change.
    """
    mpl.rcParams.update(_RC)
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # no IPython: a script or a test
        return
    if get_ipython() is not None:
        set_matplotlib_formats("retina")


def smallest_text_px(fig: Figure, column_px: float = PHONE_COLUMN_PX) -> float:
    """Height in CSS px of the smallest visible text of ``fig`` when it is shown ``column_px`` wide.

    A browser shrinks a figure to the content column; what it draws is the figure's tight bounding
    box (the inline backend crops to it), so a text of ``s`` points is
    ``s / 72 * column_px / width_in`` px tall, where ``width_in`` is the width of that box.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A figure with everything drawn on it (titles, labels, legends, annotations).
    column_px : float
        Width the figure is shown at, in CSS px; :data:`PHONE_COLUMN_PX` by default.

    Returns
    -------
    float
        The smallest text height in CSS px (font size, not cap height).
    """
    if not column_px > 0:
        raise ValueError(f"column_px must be positive, got {column_px!r}")
    renderer = fig.canvas.get_renderer()
    width_in = fig.get_tightbbox(renderer).width
    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and t.get_window_extent(renderer).width > 0]
    if not sizes:
        raise ValueError("the figure has no visible text")
    return min(sizes) / 72.0 * column_px / width_in


def figure(ncols: int = 1, nrows: int = 1, width: float | None = None,
           height: float | None = None) -> tuple[Figure, Axes | np.ndarray]:
    """Create a figure with the book's style and return ``(fig, axes)``.

    Parameters
    ----------
    ncols, nrows : int
        Grid of axes.
    width, height : float, optional
        Size in inches. The width defaults to 6 in and may not exceed 7 in, the book's column
        width (stack panels with ``nrows`` rather than squeezing them side by side); the height
        defaults to 3.8 in per row. At the default width every text of the style stays at least
        :data:`MIN_TEXT_PX` tall on a phone (:func:`smallest_text_px`).
    """
    if ncols < 1 or nrows < 1:
        raise ValueError(f"ncols and nrows must be >= 1, got ncols={ncols}, nrows={nrows}")
    use_style()
    w = width if width is not None else _WIDTH_IN
    if w > 7.0:
        raise ValueError(f"width must be at most 7 in (the book's column width), got {w!r}")
    h = height if height is not None else 3.8 * nrows
    fig, axes = plt.subplots(nrows, ncols, figsize=(w, h), constrained_layout=True, squeeze=True)
    return fig, axes

"""Numbers formatted for people, and result tables as pandas DataFrames (presentation layer).

The book's tables show counts with thousands separators or three significant digits (never
e-notation), rates in percent and intervals as ``[a, b]``. :func:`table` builds a
:class:`pandas.DataFrame` of such strings that myst-nb renders as an HTML table; pandas is
imported only when a table is built, so the core library does not depend on it.
:func:`summary_table` writes a result store's summary with the same formatters, for the
command line.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Sequence

from . import _validate as V
from .store import ResultStore

if TYPE_CHECKING:  # pandas is imported only when a table is built
    import pandas as pd

__all__ = ["count", "counted", "counted_of", "count_with", "rate", "interval", "in_range",
           "number", "table", "SUMMARY_COLUMNS", "summary_table"]

_SUFFIX = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"))


def _finite(x, name="value"):
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        raise ValueError(f"{name} must be finite, got {x!r}")
    return x


def count(x: float) -> str:
    """A count or a number of samples: ``12,352`` below one million, ``1.13 million`` above
    (up to ``trillion``; ``1,810 trillion`` beyond, and from ``10¹⁸`` on a power of ten,
    ``1.56 × 10¹⁹``; never e-notation).

    Non-integers below one million keep three significant digits (``1,235.6`` → ``1,236``);
    ``nan`` gives ``"–"``.
    """
    v = _finite(x)
    if v is None:
        return "–"
    a = abs(v)
    if a >= 1e18:
        exponent = int(math.floor(math.log10(a)))
        mantissa = round(v / 10.0**exponent, 2)
        if abs(mantissa) >= 10:  # rounding carried into the next power
            mantissa, exponent = mantissa / 10, exponent + 1
        return f"{mantissa:.2f} × 10{str(exponent).translate(_SUPERSCRIPT)}"
    for scale, word in _SUFFIX:
        if a >= scale:
            return f"{v / scale:.3g} {word}" if a < 1000 * scale else f"{v / scale:,.0f} {word}"
    if a >= 100 or v == int(v):
        return f"{v:,.0f}"
    return f"{v:.3g}"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` with its noun in the right number: ``"no run"``, ``"1 run"``, ``"3 runs"``,
    ``"12,352 runs"`` (:func:`count`; ``plural`` defaults to ``noun + "s"``)."""
    if isinstance(n, bool) or not float(n).is_integer() or n < 0:
        raise ValueError(f"n must be a non-negative whole number, got {n!r}")
    if not isinstance(noun, str) or not noun:
        raise ValueError(f"noun must be a non-empty string, got {noun!r}")
    n = int(n)
    word = noun if n == 1 else (noun + "s" if plural is None else plural)
    return f"no {noun}" if n == 0 else f"{count(n)} {word}"


def _whole(n, name: str) -> int:
    """``n`` as an ``int`` if it is a non-negative whole number (not a bool)."""
    try:
        whole = not isinstance(n, bool) and float(n).is_integer() and n >= 0
    except (TypeError, ValueError):
        whole = False
    if not whole:
        raise ValueError(f"{name} must be a non-negative whole number, got {n!r}")
    return int(n)


def _text(value, name: str, optional: bool = False) -> None:
    """Refuse a ``value`` that is not a non-empty string (``None`` too when ``optional``)."""
    if optional and value is None:
        return
    if not isinstance(value, str) or not value:
        raise ValueError(f"{name} must be a non-empty string{' or None' if optional else ''}, "
                         f"got {value!r}")


def counted_of(k: int, n: int, noun: str, plural: str | None = None) -> str:
    """``k`` of ``n`` things, in words that read as a finished phrase.

    ``"3 of the 33 grid points"``; ``"all 33 grid points"`` and ``"none of the 33 grid points"``
    at the ends; with two things ``"both sets"`` and ``"neither set"``; with one, ``"the one
    set"`` or ``"no set"``. Numbers are written by :func:`count`; ``plural`` defaults to
    ``noun + "s"``.
    """
    n = _whole(n, "n")
    k = _whole(k, "k")
    if k > n:
        raise ValueError(f"k must not exceed n, got k = {k!r} and n = {n!r}")
    _text(noun, "noun")
    _text(plural, "plural", optional=True)
    if n == 0:
        raise ValueError("n must be at least 1: there is nothing to count k out of")
    many = noun + "s" if plural is None else plural
    if n == 1:
        return f"the one {noun}" if k == 1 else f"no {noun}"
    if n == 2 and k != 1:
        return f"both {many}" if k == 2 else f"neither {noun}"
    if k == n:
        return f"all {count(n)} {many}"
    if k == 0:
        return f"none of the {count(n)} {many}"
    return f"{count(k)} of the {count(n)} {many}"


def count_with(n: int, part: int, label: str) -> str:
    """A count with a part of it in brackets: ``count_with(994, 4, "wrong")`` gives
    ``"994 (4 wrong)"``, both numbers written by :func:`count`."""
    n = _whole(n, "n")
    part = _whole(part, "part")
    if part > n:
        raise ValueError(f"part must not exceed n, got part = {part!r} and n = {n!r}")
    _text(label, "label")
    return f"{count(n)} ({count(part)} {label})"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def number(x: float, digits: int = 3) -> str:
    """A real number with ``digits`` significant digits and no e-notation.

    ``0.000123`` and ``3.14`` as decimals; below ``1e-4`` in magnitude, where a decimal would
    need a run of zeros to count, as a power of ten: ``2.55e-14`` → ``2.55 × 10⁻¹⁴``.
    """
    v = _finite(x)
    if v is None:
        return "–"
    if v == 0:
        return "0"
    if abs(v) >= 1e6:
        return count(v)
    exponent = int(math.floor(math.log10(abs(v))))
    if exponent < -4:
        mantissa = round(v / 10.0**exponent, digits - 1)
        if abs(mantissa) >= 10:          # rounding carried into the next power
            mantissa, exponent = mantissa / 10, exponent + 1
        text = f"{mantissa:.{digits - 1}f}"
        return f"{text} × 10{str(exponent).translate(_SUPERSCRIPT)}"
    decimals = max(digits - 1 - exponent, 0)
    return f"{v:,.{decimals}f}"


def rate(x: float, digits: int = 1) -> str:
    """A fraction as a percentage: ``0.016`` → ``1.6%``; ``nan`` gives ``"–"``."""
    v = _finite(x)
    if v is None:
        return "–"
    return f"{100 * v:.{digits}f}%"


def interval(lo: float, hi: float, fmt: Callable[[float], str] = number) -> str:
    """``[lo, hi]`` with both ends formatted by ``fmt`` (``"–"`` if either end is ``nan``)."""
    if _finite(lo) is None or _finite(hi) is None:
        return "–"
    return f"[{fmt(lo)}, {fmt(hi)}]"


def in_range(value: float, lo: float, hi: float, fmt: Callable[[float], str] = number) -> str:
    """A value and the range it is tested against, ``"235,633 in [141,754, 329,512]"``, all three
    numbers written by ``fmt`` (the range by :func:`interval`, so ``"–"`` if an end is ``nan``)."""
    if not callable(fmt):
        raise ValueError(f"fmt must be a function of one number, got {fmt!r}")
    return f"{fmt(value)} in {interval(lo, hi, fmt)}"


def table(rows: Sequence[Mapping], columns: Mapping[str, tuple],
          index: str | None = None) -> pd.DataFrame:
    """A DataFrame of formatted strings.

    Parameters
    ----------
    rows : sequence of mappings
        One mapping per table row.
    columns : mapping
        ``header -> (key, formatter)``; ``formatter(row[key])`` gives the cell. ``key`` may be a
        tuple of keys, then ``formatter(*values)`` (e.g. an interval).
    index : str, optional
        Header of the column to use as the row index (shown in bold by the HTML renderer).

    Returns
    -------
    pandas.DataFrame
        Whose HTML rendering shows every cell whole: pandas' ``display.max_colwidth`` (which
        cuts cells after 50 characters with "...") does not apply to it.
    """
    import pandas as pd

    data = {}
    for header, (key, fmt) in columns.items():
        keys = key if isinstance(key, tuple) else (key,)
        data[header] = [fmt(*(r[k] for k in keys)) for r in rows]
    df = pd.DataFrame(data)
    if index is not None:
        if index not in data:
            raise ValueError(f"index must be one of the headers, got {index!r}")
        df = df.set_index(index)
        df.index.name = None
    return _whole_cells_table()(df)


@functools.cache
def _whole_cells_table() -> type:
    """The DataFrame subclass :func:`table` returns (built on first use: pandas is optional)."""
    import pandas as pd

    class WholeCells(pd.DataFrame):
        @property
        def _constructor(self):
            return WholeCells

        def _repr_html_(self):
            with pd.option_context("display.max_colwidth", None):
                return super()._repr_html_()

    return WholeCells


#: Each column of :func:`summary_table` as ``header -> (column of the store's summary,
#: formatter)``.
SUMMARY_COLUMNS: dict[str, tuple] = {
    "config": ("config", str), "algorithm": ("algorithm", str), "k": ("k", count),
    "delta": ("delta", number), "prior": ("prior", str), "means": ("means", str),
    "noise": ("noise", str), "n_runs": ("n_runs", count), "avg": ("avg", count),
    "median": ("median", count), "q90": ("q90", count), "q99": ("q99", count),
    "max": ("max", count), "error": ("error", lambda e: rate(e, 2)),
    "error 95% CI": (("error_lo", "error_hi"), lambda lo, hi: interval(lo, hi,
                                                                      lambda e: rate(e, 2))),
    "n_censored": ("n_censored", count)}


def summary_table(store: ResultStore | str | Path, fmt: str = "text",
                  left_out: Optional[dict] = None) -> str:
    """The summary of a result store, one row per complete cell, as text, CSV, JSON or Markdown.

    Parameters
    ----------
    store : ResultStore or path
        The store (:class:`~bai_lib.store.ResultStore`, or its directory).
    fmt : {"text", "csv", "json", "markdown"}
        ``"csv"`` and ``"json"`` (a list of one object per row) give the numbers of
        :meth:`~bai_lib.store.ResultStore.summary` unformatted (the error interval as
        ``error_lo`` and ``error_hi``, a missing value as ``null``); ``"text"`` and ``"markdown"``
        format them for people, as the book's tables do (:data:`SUMMARY_COLUMNS`).
    left_out : dict, optional
        Filled with the cells left out, as by :meth:`~bai_lib.store.ResultStore.summary`.
    """
    V.choice(fmt, ("text", "csv", "json", "markdown"), "format")
    store = store if isinstance(store, ResultStore) else ResultStore(store)
    df = store.summary(left_out)
    raw = [key for key, _ in SUMMARY_COLUMNS.values()]
    raw = [k for key in raw for k in (key if isinstance(key, tuple) else (key,))]
    df = df.reindex(columns=raw) if df.empty else df[raw]
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        return df.to_json(orient="records", indent=1, double_precision=15) + "\n"
    text = table(df.to_dict("records"), SUMMARY_COLUMNS)
    if fmt == "text":
        return text.to_string(index=False) + "\n"
    header = "| " + " | ".join(text.columns) + " |"
    rule = "|" + "|".join("---" for _ in text.columns) + "|"
    body = ["| " + " | ".join(row) + " |" for row in text.itertuples(index=False)]
    return "\n".join([header, rule, *body]) + "\n"

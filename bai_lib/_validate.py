"""Argument checks shared by every public function: each raises a ``ValueError`` naming the parameter.

Booleans are never accepted as numbers, strings never as numbers (``delta='0.1'`` is refused
like ``seed='42'``), and nothing is clipped or guessed.
"""

from __future__ import annotations

import math
import operator

import numpy as np

__all__ = ["choice", "integer", "real", "positive", "open_unit", "flag"]


def _is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_))


def choice(value, options, name):
    """``value`` if it is one of the strings ``options``."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {sorted(options)}, got {value!r}")
    return value


def integer(value, name, minimum=None):
    """``value`` as a Python ``int`` (any integer type, no floats, no bools), ``>= minimum``."""
    bound = "" if minimum is None else f" >= {minimum}"
    if _is_bool(value):
        raise ValueError(f"{name} must be an integer{bound}, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer{bound}, got {value!r}") from None
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an integer{bound}, got {value!r}")
    return int(value)


def real(value, name):
    """``value`` as a finite ``float`` (a real number, not a string or a bool)."""
    if _is_bool(value) or isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite real number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return v


def positive(value, name):
    """``value`` as a finite ``float > 0``."""
    try:
        v = real(value, name)
    except ValueError:
        raise ValueError(f"{name} must be a finite positive number, got {value!r}") from None
    if not v > 0:
        raise ValueError(f"{name} must be a finite positive number, got {value!r}")
    return v


def open_unit(value, name):
    """``value`` as a ``float`` in the open interval ``(0, 1)``."""
    try:
        v = real(value, name)
    except ValueError:
        raise ValueError(f"{name} must lie in (0, 1), got {value!r}") from None
    if not 0.0 < v < 1.0:
        raise ValueError(f"{name} must lie in (0, 1), got {value!r}")
    return v


def flag(value, name):
    """``value`` as a ``bool`` (only ``True``/``False``)."""
    if not _is_bool(value):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)

"""Argument checks shared by every public function: each raises a ``ValueError`` naming the parameter.

Booleans are never accepted as numbers, strings never as numbers (``delta='0.1'`` is refused
like ``seed='42'``), and nothing is clipped or guessed.
"""

from __future__ import annotations

import math
import operator

import numpy as np

__all__ = ["choice", "integer", "real", "reals", "positive", "nonnegative", "open_unit", "flag",
           "noise_stds", "common_noise_std", "confidence_level", "like_input", "SCALE_RANGE",
           "DELTA_MIN", "MAX_EVALUATIONS", "MAX_BYTES", "budget"]

#: Supported magnitudes of noise standard deviations, prior scales and arm means: within this
#: range every square and product of two of them the simulators form is a normal double.
SCALE_RANGE = (1e-100, 1e100)
#: Smallest confidence level ``δ`` the simulators accept (``δ²`` and ``t/δ`` stay finite).
DELTA_MIN = 1e-100
#: Largest work one call may plan, in evaluations of the functions it integrates (``0.1`` to
#: ``1`` µs each: about a minute at the limit); :func:`budget` refuses more before it starts.
#: Raise it to allow more.
MAX_EVALUATIONS = 10**8
#: Largest memory in bytes one call may plan for its arrays (:func:`budget`).
MAX_BYTES = 2**31


def _is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_))


def mixed_sequence(value) -> bool:
    """Whether ``value`` is a (nested) list or tuple holding a bool, ``None`` or a string, which
    ``np.asarray`` would turn into numbers (``[0.0, True]`` becomes ``[0.0, 1.0]``)."""
    if not isinstance(value, (list, tuple)):
        return False
    return any(_is_bool(v) or v is None or isinstance(v, (str, bytes)) or mixed_sequence(v)
               for v in value)


def choice(value, options, name):
    """``value`` if it is one of the strings ``options``."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {sorted(options)}, got {value!r}")
    return value


def integer(value, name, minimum=None, maximum=None):
    """``value`` as a Python ``int`` (any integer type, no floats, no bools) in ``[minimum, maximum]``."""
    bound = "" if minimum is None else f" >= {minimum}"
    if maximum is not None:
        bound = f" in [{minimum}, {maximum:,}]"
    if _is_bool(value):
        raise ValueError(f"{name} must be an integer{bound}, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer{bound}, got {value!r}") from None
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        shown = f"{value:.3e}" if abs(value) > 10**18 else repr(value)  # not 300 digits
        raise ValueError(f"{name} must be an integer{bound}, got {shown}")
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


def reals(value, name, *, positive=False, max_ndim=1):
    """``value`` as a new float array of finite real numbers (``> 0`` with ``positive``) with at
    most ``max_ndim`` dimensions: a scalar, or a vector by default (``None``: any shape, for
    elementwise functions). No strings, bools, ``None`` or objects; the caller's array is never
    modified."""
    what = "finite positive" if positive else "finite real"
    shape = ("an array" if max_ndim is None else "a scalar" if max_ndim == 0
             else "a scalar or a vector" if max_ndim == 1
             else f"an array of at most {max_ndim} dimensions")
    bad = ValueError(f"{name} must be {what} numbers ({shape}), got {value!r}")
    if isinstance(value, (str, bytes)) or mixed_sequence(value):
        raise bad  # np.asarray would turn [0.0, True] into [0.0, 1.0]
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raise bad from None
    if raw.dtype.kind not in "iuf" or (max_ndim is not None and raw.ndim > max_ndim):
        raise bad
    out = np.array(raw, dtype=np.float64)
    if not np.all(np.isfinite(out)) or (positive and not np.all(out > 0)):
        raise bad
    return out


def positive(value, name):
    """``value`` as a finite ``float > 0``."""
    try:
        v = real(value, name)
    except ValueError:
        raise ValueError(f"{name} must be a finite positive number, got {value!r}") from None
    if not v > 0:
        raise ValueError(f"{name} must be a finite positive number, got {value!r}")
    return v


def nonnegative(value, name):
    """``value`` as a finite ``float >= 0``."""
    try:
        v = real(value, name)
    except ValueError:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}") from None
    if not v >= 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


def like_input(result, like):
    """``result`` as a Python ``float`` when the input ``like`` was a scalar, else the array."""
    return float(result) if np.ndim(like) == 0 else result


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


def noise_stds(value, k=None, name="noise_stds"):
    """``value`` as a new float array of finite positive noise standard deviations.

    A scalar is one common level; with ``k`` given the result has shape ``(k,)`` (a scalar is
    repeated, a sequence must have length ``k``). The caller's array is never modified.
    """
    bad = ValueError(f"{name} must be a positive number or a sequence of them, got {value!r}")
    if mixed_sequence(value):
        raise bad
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):
        raise bad from None
    if raw.dtype.kind not in "iuf" or raw.ndim > 1:  # no bools, strings, None or objects
        raise bad
    sig = np.array(raw, dtype=np.float64)  # a copy: the caller's array stays untouched
    if k is not None:
        if sig.ndim == 0:
            sig = np.full(k, float(sig))
        elif sig.shape != (k,):
            raise ValueError(f"{name} must be a scalar or have length k = {k}, got shape {sig.shape}")
    if not (np.all(np.isfinite(sig)) and np.all(sig > 0)):
        raise ValueError(f"{name} must be finite and positive, got {sig.tolist()}")
    lo, hi = SCALE_RANGE
    if np.any(sig < lo) or np.any(sig > hi):
        raise ValueError(f"{name} must lie in the supported range [{lo:g}, {hi:g}], "
                         f"got {sig.tolist()}")
    return sig


def common_noise_std(value, name="noise_stds"):
    """One common noise standard deviation: a positive scalar, or a sequence of equal entries."""
    sig = noise_stds(value, name=name)
    if sig.ndim == 1:
        if sig.size == 0 or np.any(sig != sig[0]):
            raise ValueError(f"{name} must be one common level here (a scalar or equal entries), "
                             f"got {sig.tolist()}")
        return float(sig[0])
    return float(sig)


def confidence_level(value, name="delta"):
    """``value`` as a confidence level ``δ`` in ``[DELTA_MIN, 1)``."""
    v = open_unit(value, name)
    if v < DELTA_MIN:
        raise ValueError(f"{name} must lie in the supported range [{DELTA_MIN:g}, 1), got {value!r}")
    return v


def allocation(value, k, best, name="weights"):
    """Sampling proportions ``w`` of ``k`` arms: non-negative, summing to 1 (to ``1e-9``), positive
    on arm ``best`` (else the characteristic time ``T(w, μ)`` is infinite)."""
    w = reals(value, name)
    if w.shape != (k,) or np.any(w < 0) or abs(w.sum() - 1) > 1e-9:
        raise ValueError(f"{name} must be {k} non-negative numbers summing to 1, got {value!r}")
    if w[best] == 0:
        raise ValueError(f"{name}: the best arm must get a positive weight (else T is infinite)")
    return w


def budget(name, what, evaluations=0, nbytes=0, about="about", hint=""):
    """A ``ValueError`` naming ``name``, with the estimate, if ``what`` plans more than
    :data:`MAX_EVALUATIONS` evaluations (``evaluations``) or :data:`MAX_BYTES` of memory
    (``nbytes``); ``about`` qualifies the estimate (``"at least"`` for a lower bound)."""
    if nbytes > MAX_BYTES:
        raise ValueError(f"{name}: {what} would hold {about} {nbytes / 2**30:.3g} GiB, more "
                         f"than MAX_BYTES = {MAX_BYTES / 2**30:g} GiB{hint}")
    if evaluations > MAX_EVALUATIONS:
        raise ValueError(f"{name}: {what} needs {about} {evaluations:.2g} evaluations (some "
                         f"{evaluations * 5e-7:.2g} s at 0.5 us each), more than "
                         f"MAX_EVALUATIONS = {MAX_EVALUATIONS:.2g} of bai_lib._validate{hint}")

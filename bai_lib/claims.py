"""Executable claims: the qualitative sentences of the book, checked where they are computed.

A glued number cannot go stale, but the words around it can: "below δ", "falls as δ
decreases", "inside the interval". Each such sentence of a chapter is guarded by a call of
:func:`claim` in a removed cell beside the computation, which quotes the sentence. When a change
makes it false, the cell raises :class:`ClaimError`, nbval reports the cell as failed, and the
message says which sentence of the chapter to rewrite.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ClaimError", "claim"]


class ClaimError(AssertionError):
    """A sentence of the book no longer holds for the numbers computed beside it."""


def claim(holds: Any, sentence: str, **values: Any) -> None:
    """Check that ``sentence`` is true: do nothing when ``holds`` is true, raise otherwise.

    Parameters
    ----------
    holds
        The computed truth of the sentence (a ``bool`` or a numpy boolean; anything else is
        refused, so that an array or a number is not mistaken for a verdict).
    sentence
        The sentence as the chapter states it (in words; numbers in it are glued).
    **values
        The numbers the verdict was computed from, quoted in the error message.

    Returns
    -------
    None
        Nothing, so that a cell ending with a claim shows no output when it is folded.

    Raises
    ------
    ClaimError
        When ``holds`` is false; the message quotes ``sentence`` and ``values``.
    ValueError
        When ``holds`` is not a boolean or ``sentence`` is empty.
    """
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError("sentence must be the non-empty text of the claim")
    if type(holds).__name__ not in ("bool", "bool_"):
        raise ValueError(f"holds must be a boolean verdict, got {type(holds).__name__}: {holds!r}")
    if not holds:
        shown = ", ".join(f"{k} = {v!r}" for k, v in values.items())
        raise ClaimError(f"the book says: «{sentence}», which no longer holds"
                         + (f" ({shown})" if shown else "")
                         + "; rewrite the sentence or find what changed the numbers")
    return None

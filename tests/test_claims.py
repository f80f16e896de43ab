"""The guard of the book's qualitative sentences (``bai_lib.claims``)."""

from __future__ import annotations

import numpy as np
import pytest

from bai_lib.claims import ClaimError, claim


def test_a_true_claim_passes_silently():
    # None: a folded cell that ends with a claim shows no output in the book
    assert claim(True, "the error stays below δ") is None
    assert claim(np.bool_(True), "numpy verdicts count") is None


def test_a_false_claim_quotes_the_sentence_and_the_numbers():
    with pytest.raises(ClaimError, match=r"«the ratio falls as δ decreases».*ratios = \[2.6, 2.9\]"):
        claim(bool(np.all(np.diff([2.6, 2.9]) < 0)), "the ratio falls as δ decreases", ratios=[2.6, 2.9])
    assert issubclass(ClaimError, AssertionError)


@pytest.mark.parametrize("holds", [1, 0.0, np.array([True]), None, "yes"])
def test_only_boolean_verdicts_are_accepted(holds):
    with pytest.raises(ValueError, match="holds must be a boolean"):
        claim(holds, "a sentence")


def test_the_sentence_is_required():
    with pytest.raises(ValueError, match="sentence"):
        claim(True, "  ")

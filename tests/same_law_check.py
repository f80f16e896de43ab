"""Helpers of the tests that compare runs by blocks with runs sample by sample: the p-values of
:func:`bai_lib.stats.same_law` on stopping times, stop reasons, recommendations and errors, and
whether the two error rates' Clopper–Pearson intervals overlap."""

from __future__ import annotations

from bai_lib.stats import clopper_pearson, same_law


def law_p_values(a, b) -> dict:
    """The p-values of the tests that the results ``a`` and ``b`` (independent runs) share
    one law."""
    return same_law(a.stopping_times, b.stopping_times, {
        "stop_reason": (a.stop_reasons, b.stop_reasons),
        "recommendation": (a.recommendations, b.recommendations),
        "error": (~a.correct, ~b.correct)})


def errors_overlap(a, b) -> bool:
    """Whether the 95% intervals of the error rates of ``a`` and ``b`` overlap."""
    ia = clopper_pearson(int((~a.correct).sum()), a.n_runs)
    ib = clopper_pearson(int((~b.correct).sum()), b.n_runs)
    return ia[0] <= ib[1] and ib[0] <= ia[1]

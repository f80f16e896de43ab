"""The machinery of the one GLR loop: compile-time dispatch on bundles and borrowed views.

Every GLR algorithm runs in :func:`bai_lib.algorithms.glr.glr_run`; the run-for-run reference
tests of each algorithm check its results. These tests check the two mechanisms the loop rests
on, on small compiled functions of their own.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest
from numba import njit

from bai_lib.algorithms import glr
from bai_lib.families import REWARD_MODELS, family
from bai_lib.kernels import borrowed, bundle_generic

Marker = namedtuple("Marker", ["scale"])
Other = namedtuple("Other", [])

bump = bundle_generic("bump", "bundle, a, i")


@njit
def _bump_marker(bundle, values, i):
    if values[i] >= 0.0:  # a branch: the write sits in a block of its own
        values[i] += bundle.scale
    else:
        values[i] -= bundle.scale


@njit
def _bump_other(bundle, values, i):
    values[i] = -1.0


bump.register(Marker, _bump_marker)
bump.register(Other, _bump_other)


@njit
def _loop(bundle, n):
    a = np.zeros(3)
    for t in range(n):
        bump(bundle, borrowed(a), t % 3)
    return a


def test_the_implementation_follows_the_bundle_and_its_writes_through_a_borrowed_view_stay():
    """The step is written out in the loop and receives a borrowed view: numba's dead-code pass
    must still see that the view is the array, or the writes vanish (they did, before the view
    was declared an alias)."""
    assert _loop(Marker(2.0), 7).tolist() == [6.0, 4.0, 4.0]
    assert _loop(Other(), 7).tolist() == [-1.0, -1.0, -1.0]


def test_a_bundle_without_an_implementation_is_a_typing_error():
    from numba.core.errors import TypingError
    Stray = namedtuple("Stray", [])
    with pytest.raises(TypingError, match="bump"):
        _loop(Stray(), 1)


def test_a_generic_called_from_python_says_where_it_runs():
    with pytest.raises(TypeError, match="bump runs inside compiled code only"):
        bump(Marker(1.0), np.zeros(1), 0)


def test_an_implementation_with_the_wrong_arguments_is_refused_by_name():
    @njit
    def two(bundle, a):
        return a

    with pytest.raises(ValueError, match=r"bump for Marker must take \(bundle, a, i\)"):
        bump.register(Marker, two)


def test_borrowed_refuses_what_is_not_an_array():
    from numba.core.errors import TypingError

    @njit
    def f(x):
        return borrowed(x)

    with pytest.raises(TypingError):
        f(1.0)


def test_every_family_and_every_rule_registers_every_step():
    for model in REWARD_MODELS.values():
        for generic in family.FUNCTIONS.values():
            assert model.bundle in generic.implementations, (model.name, generic)
        for group, has in ((family.KL_WIDTHS, model.has_kl_widths),
                           (family.CONJUGATE, model.has_conjugate)):
            assert [model.bundle in g.implementations for g in group.values()] == [has] * len(group)
    assert [m.name for m in REWARD_MODELS.values() if m.has_kl_widths] == ["bernoulli", "poisson"]
    assert [m.name for m in REWARD_MODELS.values() if m.has_conjugate] == ["bernoulli", "poisson"]
    from bai_lib.algorithms.plugin import PluginSteps
    from bai_lib.algorithms.top_two import TopTwoSteps
    from bai_lib.algorithms.track_and_stop import TrackingSteps
    from bai_lib.algorithms.ttts import TTTSSteps
    from bai_lib.algorithms.ttts_conjugate import TTTSConjugateSteps
    for rule in (TopTwoSteps, TTTSSteps, TTTSConjugateSteps, TrackingSteps, PluginSteps):
        for generic in (glr.start, glr.refresh, glr.choose, glr.update):
            assert rule in generic.implementations, (rule, generic)

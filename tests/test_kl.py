"""Bernoulli KL divergence and the KL confidence bounds (bai_lib.kl)."""

import math
import sys
from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import rel_entr
from scipy.stats import binomtest

from bai_lib.kl import kl_bernoulli, kl_inner, kl_interval, kl_lower, kl_upper
from time_bound import answered

GRID = [0.0, 1e-300, 1e-12, 1e-6, 0.01, 0.3, 0.5, 0.7, 0.99, 1 - 1e-6, 1 - 1e-12, 1.0]


def _scipy_kl(p, q):
    return float(rel_entr(p, q) + rel_entr(1 - p, 1 - q))


def _exact_kl(p, q):
    """kl of the two doubles in 60-digit decimal arithmetic (0 < p, q < 1)."""
    getcontext().prec = 60
    p, q = Decimal(p), Decimal(q)
    one = Decimal(1)
    return float(p * (p / q).ln() + (one - p) * ((one - p) / (one - q)).ln())


def _random_pairs(n, seed):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.0, 1.0, n)
    p[: n // 4] = 10.0 ** rng.uniform(-8, -1, n // 4)          # near 0
    p[n // 4: n // 2] = 1 - 10.0 ** rng.uniform(-8, -1, n // 4)  # near 1
    level = 10.0 ** rng.uniform(-6, 0.5, n)
    return p, level


def test_kl_matches_rel_entr_on_a_grid():
    for p in GRID:
        for q in GRID:
            ours, ref = kl_bernoulli(p, q), _scipy_kl(p, q)
            if math.isinf(ref):
                assert ours == math.inf, (p, q)
            else:
                # scipy forms 1 - p, which costs up to 1e-16 absolute
                assert ours == pytest.approx(ref, rel=1e-12, abs=1e-14), (p, q, ours, ref)


@pytest.mark.parametrize("p,q", [(1e-12, 2e-12), (2e-12, 1e-12), (0.2, 0.2 + 1e-9),
                                 (0.5, 0.5 - 1e-7),
                                 (1 - 1e-12, 1 - 2e-12), (1 - 3e-10, 1 - 1e-10), (1e-300, 1e-299),
                                 (0.3, 1e-200), (1 - 1e-9, 0.5), (1e-6, 1 - 1e-6)])
def test_kl_keeps_its_relative_accuracy_near_the_edges_and_for_close_arguments(p, q):
    assert kl_bernoulli(p, q) == pytest.approx(_exact_kl(p, q), rel=1e-13)


def test_kl_conventions():
    for p in GRID:
        assert kl_bernoulli(p, p) == 0.0
        if p > 0:
            assert kl_bernoulli(p, 0.0) == math.inf
        if p < 1:
            assert kl_bernoulli(p, 1.0) == math.inf
    for q in [1e-12, 0.25, 0.9, 1 - 1e-9]:
        assert kl_bernoulli(0.0, q) == pytest.approx(-math.log1p(-q), rel=1e-14)  # 0 log 0 = 0
        assert kl_bernoulli(1.0, q) == pytest.approx(-math.log(q), rel=1e-14)
    for p, q in [(-0.1, 0.5), (0.5, 1.1), (math.nan, 0.5)]:
        assert math.isnan(kl_bernoulli(p, q))


def test_bounds_solve_the_equation_to_the_last_ulp():
    p, level = _random_pairs(400, 1)
    for pi, li in zip(p, level):
        for bound, inward in ((kl_upper, 0.0), (kl_lower, 1.0)):
            q = bound(pi, li)
            assert kl_bernoulli(pi, q) <= li
            # the next double outward breaks the constraint: q is the extreme one
            outward = np.nextafter(q, 1.0 - inward)
            assert kl_bernoulli(pi, outward) > li, (bound.__name__, pi, li, q)
            if q in (np.nextafter(1.0, 0.0), 5e-324):
                continue  # the root lies beyond the last double before 1 (or after 0)
            # relative error in kl within 1e-9 plus what one ulp of q can move it
            slope = abs(q - pi) / (q * (1 - q))
            ulp = abs(np.nextafter(q, inward) - q)
            assert abs(kl_bernoulli(pi, q) - li) <= 1e-9 * li + 2 * slope * ulp


def test_the_newton_solver_alone_converges():
    """The final ulp search only polishes: the safeguarded Newton root is already within
    1e-12 of the bound (absolute) and 1e-13 relative of its distance to 0 or 1."""
    from bai_lib.kl import _solve

    p, level = _random_pairs(300, 4)
    for pi, li in zip(p, level):
        x = 0.5 * (pi + 1)  # a poor start: the bisection must do part of the work
        up, raw = kl_upper(pi, li), _solve(pi, li, x, True)
        assert abs(raw - up) <= min(1e-12, 1e-13 * (1 - up) + 1e-15), (pi, li, raw, up)
        x = 0.5 * pi
        lo, raw = kl_lower(pi, li), _solve(pi, li, x, False)
        assert abs(raw - lo) <= min(1e-12, 1e-13 * lo + 1e-300), (pi, li, raw, lo)


def test_the_newton_solver_needs_few_evaluations_from_the_inner_point():
    """From the inner point of kl_inner, Newton converges in at most 8 evaluations of kl (it
    used to wander for 25 to 46 when a step fell below rounding and the bracket was bisected)."""
    import bai_lib.kl as K

    calls = []
    original = K.kl_bernoulli

    def counting(p, q):
        calls.append(q)
        return original(p, q)

    solve = K._solve.py_func
    K.kl_bernoulli = counting
    try:
        worst = 0
        for p in np.linspace(0.01, 0.99, 97):
            for level in (1e-7, 1e-5, 1e-3, 0.1):
                lo, hi = kl_inner(p, level)
                for x, upper in ((hi, True), (lo, False)):
                    calls.clear()
                    solve(p, level, x, upper)
                    worst = max(worst, len(calls))
    finally:
        K.kl_bernoulli = original
    assert worst <= 8, worst


def test_inner_points_lie_inside_the_exact_interval():
    """kl_inner's points are between the exact ends and p, for means anywhere in [0, 1]
    (subnormal, 0, 1, next to 1) and levels from 1e-18 to 1e300."""
    rng = np.random.default_rng(21)
    special = [0.0, 1.0, 0.5, 5e-324, 1e-300, 1 - 2**-53, 0.02]
    for _ in range(40_000):
        p = float(rng.choice([rng.random(), rng.random() ** 8, 1 - rng.random() ** 8,
                              rng.choice(special)]))
        level = 10 ** rng.uniform(-18, 2) if rng.random() < 0.8 else 10 ** rng.uniform(2, 300)
        lo, hi = kl_inner(p, level)
        assert kl_lower(p, level) <= lo <= p <= hi <= kl_upper(p, level), (p, level, lo, hi)
    assert kl_inner(0.3, math.inf) == (0.3, 0.3)
    assert kl_inner(0.0, 0.1) == (0.0, 0.0) and kl_inner(1.0, 0.1) == (1.0, 1.0)


@pytest.mark.parametrize("p", [0.02, 0.3, 0.5, 0.9])
def test_inner_points_approach_the_exact_ends_as_the_level_falls(p):
    """Their distances to p, divided by the exact ones, tend to 1 (first order), the gap
    shrinking like sqrt(level)."""
    gaps = []
    for level in (1e-3, 1e-5, 1e-7):
        lo, hi = kl_inner(p, level)
        ratio_up = (hi - p) / (kl_upper(p, level) - p)
        ratio_lo = (p - lo) / (p - kl_lower(p, level))
        assert 0.0 < ratio_up <= 1.0 and 0.0 < ratio_lo <= 1.0
        gaps.append(1.0 - min(ratio_up, ratio_lo))
    assert gaps[0] < 0.2 and gaps[2] < 0.01
    assert gaps[1] < 0.2 * gaps[0] and gaps[2] < 0.2 * gaps[1]


def test_bounds_match_brentq():
    p, level = _random_pairs(200, 2)
    p = np.clip(p, 1e-6, 1 - 1e-6)  # keep both roots well inside (0, 1) for the reference
    level = np.minimum(level, 1.0)
    for pi, li in zip(p, level):
        f = lambda q: _scipy_kl(pi, q) - li  # noqa: E731
        a, b = 1e-300, 1 - 1e-15
        if f(b) > 0:
            up = brentq(f, pi, b, xtol=1e-15, rtol=1e-15, maxiter=500)
            assert abs(kl_upper(pi, li) - up) < 1e-10, (pi, li)
        else:  # the root lies above 1 - 1e-15
            assert b <= kl_upper(pi, li) < 1.0
        if f(a) > 0:
            lo = brentq(f, a, pi, xtol=1e-15, rtol=1e-15, maxiter=500)
            assert abs(kl_lower(pi, li) - lo) < 1e-10, (pi, li)
        else:  # the root lies below 1e-300
            assert 0 < kl_lower(pi, li) <= a


def test_bounds_are_monotone_in_the_level():
    levels = np.concatenate([[0.0], np.geomspace(1e-12, 50.0, 80), [math.inf]])
    for p in [0.0, 1e-9, 0.03, 0.5, 0.97, 1 - 1e-9, 1.0]:
        up = np.array([kl_upper(p, lv) for lv in levels])
        lo = np.array([kl_lower(p, lv) for lv in levels])
        assert up[0] == p and lo[0] == p  # level 0: the point itself
        assert np.all(np.diff(up) >= 0) and np.all(np.diff(lo) <= 0), p
        assert np.all(lo <= p) and np.all(up >= p)
        assert up[-1] == 1.0 and lo[-1] == 0.0  # infinite level: trivial


def test_edge_means():
    for lv in [1e-10, 0.1, 3.0, 800.0]:
        assert kl_upper(1.0, lv) == 1.0  # kl(1, 1) = 0: trivial, exactly 1.0
        assert kl_lower(0.0, lv) == 0.0  # kl(0, 0) = 0: trivial, exactly 0.0
        # kl(0, q) = -log(1 - q) and kl(1, q) = -log(q): closed forms
        assert kl_upper(0.0, lv) == pytest.approx(-math.expm1(-lv), rel=1e-15)
        assert kl_lower(1.0, lv) == pytest.approx(math.exp(-lv), rel=1e-15)
    # kl(p, 1) = inf for p < 1, so a large level does not make the upper bound trivial ...
    assert kl_upper(0.5, 10.0) < 1.0
    # ... until the root is within half an ulp of 1
    assert kl_upper(0.5, 40.0) == np.nextafter(1.0, 0.0)
    assert kl_lower(0.5, 40.0) == pytest.approx(0.25 * math.exp(-80.0) / 0.5 * 2, rel=1e-6)
    for p, lv in [(-0.1, 1.0), (1.5, 1.0), (0.5, -1e-3), (0.5, math.nan)]:
        assert math.isnan(kl_upper(p, lv)) and math.isnan(kl_lower(p, lv))


def test_kl_interval_lies_inside_pinskers():
    p, level = _random_pairs(500, 3)
    for pi, li in zip(p, level):
        half = math.sqrt(li / 2)
        assert pi - half - 1e-15 <= kl_lower(pi, li) and kl_upper(pi, li) <= pi + half + 1e-15


def test_kl_interval_is_the_vectorised_pair():
    means = np.array([[0.0, 0.1, 0.5], [0.97, 1.0, 0.3]])
    counts = np.array([1, 10, 1000])
    lo, up = kl_interval(means, counts, math.log(40))
    assert lo.shape == up.shape == (2, 3)
    for idx in np.ndindex(means.shape):
        lv = math.log(40) / counts[idx[1]]
        assert lo[idx] == kl_lower(means[idx], lv) and up[idx] == kl_upper(means[idx], lv)
    lo1, up1 = kl_interval(0.1, 10, 3.0)
    assert isinstance(lo1, float) and (lo1, up1) == (kl_lower(0.1, 0.3), kl_upper(0.1, 0.3))
    assert kl_interval([0.2], [5], 0.0) == (pytest.approx([0.2]), pytest.approx([0.2]))


@pytest.mark.parametrize("means,counts,log_level,name", [
    (1.2, 10, 1.0, "means"), (-0.1, 10, 1.0, "means"), ("0.5", 10, 1.0, "means"),
    (math.nan, 10, 1.0, "means"), ([0.5, True], 10, 1.0, "means"),
    (0.5, 0, 1.0, "counts"), (0.5, 2.5, 1.0, "counts"), (0.5, 10.0, 1.0, "counts"),
    (0.5, True, 1.0, "counts"), (0.5, [3, -1], 1.0, "counts"), (0.5, "10", 1.0, "counts"),
    (0.5, 10, -1.0, "log_level"), (0.5, 10, math.nan, "log_level"),
    (0.5, 10, math.inf, "log_level"),
    (0.5, 10, "1", "log_level"), ([0.1, 0.2], [1, 2, 3], 1.0, "broadcast"),
])
def test_kl_interval_rejects_bad_input(means, counts, log_level, name):
    with pytest.raises(ValueError, match=name):
        kl_interval(means, counts, log_level)


def test_kl_interval_covers_the_mean():
    """Mean 0.03, n = 500, L = log(2/0.05): the interval misses with probability <= 0.05."""
    mu, n, delta, reps = 0.03, 500, 0.05, 20_000
    rng = np.random.default_rng(20240607)
    means = rng.binomial(n, mu, size=reps) / n
    lo, up = kl_interval(means, n, math.log(2 / delta))
    misses = int(np.sum((mu < lo) | (mu > up)))
    assert binomtest(misses, reps).proportion_ci(confidence_level=0.999).high < delta, misses
    # and it is narrower than the sub-Gaussian interval (sigma = 1/2) with the same guarantee
    assert np.all(up - lo <= 2 * 0.5 * math.sqrt(2 * math.log(2 / delta) / n) + 1e-12)


# ------------------------------------------------------------------ huge finite levels
ONE_BELOW = 1.0 - 2.0 ** -53     # the largest double below 1
SMALLEST = 5e-324                # the smallest positive double
LIMIT = 30.0                     # seconds: each call answers in microseconds once compiled


_within = answered  # (value, seconds), failing the test after `seconds`


@pytest.fixture(scope="module")
def compiled():
    """Compile the kernels (and kl_interval's loop) before any call is timed."""
    kl_upper(0.5, 1.0), kl_lower(0.5, 1.0), kl_inner(0.5, 1.0)
    kl_interval(0.5, 1, 1.0)


@pytest.mark.parametrize("call, args, expected", [
    (kl_interval, (0.5, 1, 1e308), (SMALLEST, ONE_BELOW)),
    (kl_lower, (0.5, 9e307), SMALLEST),
    (kl_upper, (0.5, 9e307), ONE_BELOW),
    (kl_lower, (0.5, sys.float_info.max), SMALLEST),
    (kl_upper, (1e-300, sys.float_info.max), ONE_BELOW),
    (kl_inner, (0.5, 1e308), (0.5, 0.5)),
    (kl_interval, ([0.3, 1e-12, 1 - 1e-9], [1, 2, 3], 1.7e308),
     ([SMALLEST] * 3, [ONE_BELOW] * 3)),
], ids=["interval", "lower", "upper", "lower-max", "upper-max", "inner", "interval-array"])
def test_a_huge_finite_level_gives_the_extreme_doubles_at_once(compiled, call, args, expected):
    """kl(p, q) is infinite at q = 0 and 1 for 0 < p < 1, so no finite level makes the interval
    trivial: the ends are the extreme doubles with kl(p, q) <= level, in microseconds, also
    above about 9e307, where 2 level overflows."""
    got, seconds = _within(LIMIT, call, *args)
    if isinstance(expected, tuple) and isinstance(expected[0], list):
        assert np.array_equal(got[0], expected[0]) and np.array_equal(got[1], expected[1])
    else:
        assert got == expected
    assert seconds < 1.0, seconds


def test_every_mean_and_level_answers_promptly_and_exactly(compiled):
    """Means from 0 to 1 (subnormal, next to 1) and levels from the smallest double to the
    largest: each end of 0 < p < 1 is the extreme double with kl(p, q) <= level, and the 432
    calls take well under a millisecond each (subnormal arguments being the slowest)."""
    ps = [0.0, SMALLEST, 1e-310, 1e-300, 1e-20, 1e-8, 0.3, 0.5, 0.9, 1 - 1e-8, ONE_BELOW, 1.0]
    levels = [SMALLEST, 1e-310, 1e-300, 1e-20, 1e-5, 1.0, 36.0, 37.0, 38.0, 700.0, 745.0, 746.0,
              1e10, 1e300, 8.9e307, 9e307, 1e308, sys.float_info.max]

    def sweep():
        out = []
        for p in ps:
            for level in levels:
                out.append((p, level, kl_lower(p, level), kl_upper(p, level)))
        return out

    rows, seconds = _within(LIMIT, sweep)
    assert seconds < 2.0, seconds
    for p, level, lo, up in rows:
        assert 0.0 <= lo <= p <= up <= 1.0, (p, level, lo, up)
        if p in (0.0, 1.0):
            continue  # one end trivial, the other a closed form (next test)
        assert kl_bernoulli(p, lo) <= level and kl_bernoulli(p, up) <= level, (p, level, lo, up)
        if up < 1.0:
            assert kl_bernoulli(p, np.nextafter(up, 2.0)) > level, (p, level, up)
        if lo > 0.0:
            assert kl_bernoulli(p, np.nextafter(lo, -1.0)) > level, (p, level, lo)


def test_the_closed_forms_at_the_edge_means_stay_inside_the_interval():
    """kl(0, 1) = kl(1, 0) = inf: where 1 - e^-level rounds to 1 (level > 37.4) the upper end
    of p = 0 is the largest double below 1, not 1 (whose kl is infinite, above any finite
    level); where e^-level underflows (level > 745.1) the lower end of p = 1 is 5e-324, not 0.
    Elsewhere they are the closed forms."""
    for level in (37.5, 40.0, 800.0, 1e300, sys.float_info.max):
        assert kl_upper(0.0, level) == ONE_BELOW
        assert kl_bernoulli(0.0, kl_upper(0.0, level)) <= level
    for level in (745.2, 800.0, 1e300, sys.float_info.max):
        assert kl_lower(1.0, level) == SMALLEST
        assert kl_bernoulli(1.0, kl_lower(1.0, level)) <= level
    for level in np.geomspace(1e-300, 1e300, 601):
        if level < 37.0:
            assert kl_upper(0.0, level) == -math.expm1(-level)
        if level < 745.0:
            assert kl_lower(1.0, level) == math.exp(-level)
    assert kl_interval(0.0, 1, 800.0) == (0.0, ONE_BELOW)
    assert kl_interval(1.0, 1, 800.0) == (SMALLEST, 1.0)


def test_the_compiled_kernels_return_nan_where_the_checked_functions_raise():
    """kl_bernoulli, kl_upper and kl_lower are the simulators' compiled kernels: outside their
    domain they return nan (documented); the checked forms, bounds.bernoulli_kl and
    kl_interval, raise a ValueError naming the parameter."""
    from bai_lib.bounds import bernoulli_kl

    for p, q in [(math.nan, 0.5), (-0.1, 0.5), (0.5, 1.1), (math.inf, 0.5)]:
        assert math.isnan(kl_bernoulli(p, q))
        with pytest.raises(ValueError, match=r"\ba\b" if not 0 <= p <= 1 else r"\bb\b"):
            bernoulli_kl(p, q)
    for p, level in [(math.nan, 1.0), (1.5, 1.0), (0.5, -1.0), (0.5, math.nan)]:
        assert math.isnan(kl_upper(p, level)) and math.isnan(kl_lower(p, level))
        with pytest.raises(ValueError, match="means" if not 0 <= p <= 1 else "log_level"):
            kl_interval(p, 1, level)

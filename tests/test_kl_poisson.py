"""Poisson KL divergence, its confidence bounds and GLR statistic (bai_lib.kl_poisson).

The references are independent of the module: the divergence in 80-digit decimal arithmetic,
the bounds by scipy's ``brentq`` on that divergence written out directly, the GLR statistic by
maximising the Poisson likelihood of simulated samples numerically.
"""

import math
import sys
import time
from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy.optimize import brentq, minimize_scalar
from scipy.special import gammaln
from scipy.stats import binomtest, poisson

from bai_lib.kl_poisson import (_newton, kl_poisson, kl_poisson_glr, kl_poisson_inner,
                                kl_poisson_interval, kl_poisson_lower, kl_poisson_upper)
from time_bound import answered

EPS = np.finfo(float).eps
BIGGEST = sys.float_info.max
SMALLEST = 5e-324
GRID = [0.0, 5e-324, 1e-300, 1e-12, 0.01, 0.5, 1.0, 3.0, 47.5, 1e6, 1e12, 1e300]


def _exact_kl(p, q):
    """kl of the two doubles in 80-digit decimal arithmetic (q > 0)."""
    getcontext().prec = 80
    p, q = Decimal(p), Decimal(q)
    if p == 0:
        return float(q)
    return float(q - p + p * (p / q).ln())


def _direct_kl(p, q):
    """The textbook formula in floating point, for references away from p = q."""
    return q - p + (p * math.log(p / q) if p > 0 else 0.0)


def _random_pairs(n, seed):
    """Means from 1e-8 to 1e8 (log-uniform) and levels from 1e-6 relative to the mean to 1e4
    absolute."""
    rng = np.random.default_rng(seed)
    p = 10.0 ** rng.uniform(-8, 8, n)
    level = np.where(rng.random(n) < 0.5, p * 10.0 ** rng.uniform(-6, 1, n),
                     10.0 ** rng.uniform(-6, 4, n))
    return p, level


# ------------------------------------------------------------------ the divergence


def test_kl_matches_the_exact_value_on_a_grid():
    for p in GRID:
        for q in GRID:
            ours = kl_poisson(p, q)
            if q == 0.0:
                assert ours == (0.0 if p == 0.0 else math.inf), (p, q)
                continue
            ref = _exact_kl(p, q)
            if ref < 1e-290:   # the true value is subnormal or below: an absolute bound
                assert abs(ours - ref) <= 1e-300, (p, q, ours, ref)
            else:
                assert ours == pytest.approx(ref, rel=8e-15, abs=0), (p, q, ours, ref)


def test_kl_is_accurate_for_close_arguments():
    """|p - q| < q/10: the series, a few ulps however close p and q are (the textbook
    formula loses all its digits there)."""
    rng = np.random.default_rng(5)
    worst = 0.0
    for _ in range(4000):
        q = 10.0 ** rng.uniform(-200, 200)
        p = q * (1.0 + rng.uniform(-0.1, 0.1) * 10.0 ** rng.uniform(-15, 0))
        if p == q:
            continue
        ref = _exact_kl(p, q)
        if ref > 1e-290:
            worst = max(worst, abs(kl_poisson(p, q) / ref - 1.0))
    assert worst <= 1e-15, worst
    p, q = 3.0 + 4 * np.spacing(3.0), 3.0   # kl ~ (p - q)²/(2q): the textbook form fails
    assert kl_poisson(p, q) == pytest.approx(_exact_kl(p, q), rel=1e-15, abs=0)
    assert _direct_kl(p, q) != pytest.approx(_exact_kl(p, q), rel=1e-2, abs=0)


def test_kl_is_accurate_for_distant_arguments():
    """|p - q| >= q/10: up to about 30 ulps at the edge of the series, fewer beyond, for
    ratios p/q up to 1e290 either way."""
    rng = np.random.default_rng(6)
    worst = {"edge": 0.0, "far": 0.0}
    for _ in range(6000):
        q = float(10.0 ** rng.uniform(-150, 150))
        kind = ["edge", "far", "far"][rng.integers(3)]
        if kind == "edge":
            ratio = float(rng.choice([1.1 + 0.2 * rng.random(), 0.9 - 0.2 * rng.random()]))
        else:
            ratio = float(10.0 ** rng.uniform(-290, 290) if rng.random() < 0.5
                          else 10.0 ** rng.uniform(-8, 8))
        p = q * ratio
        if not (0.0 < p < BIGGEST and abs(p - q) >= 0.1 * q):
            continue
        ref = _exact_kl(p, q)
        if 1e-290 < ref < BIGGEST:
            worst[kind] = max(worst[kind], abs(kl_poisson(p, q) / ref - 1.0))
    assert worst["edge"] <= 40 * EPS and worst["far"] <= 25 * EPS, worst


def test_kl_conventions():
    for p in GRID:
        assert kl_poisson(p, p) == 0.0
        assert kl_poisson(p, math.inf) == math.inf
        if p > 0:
            assert kl_poisson(p, 0.0) == math.inf
    for q in [1e-300, 0.25, 7.0, 1e300]:
        assert kl_poisson(0.0, q) == q          # 0 log 0 = 0
    assert kl_poisson(1e300, 1e-10) == pytest.approx(_exact_kl(1e300, 1e-10), rel=1e-14)
    assert kl_poisson(1e-200, 1e200) == pytest.approx(_exact_kl(1e-200, 1e200), rel=1e-14)
    assert kl_poisson(1e308, 1e-308) == math.inf  # p log(p/q) overflows
    for p, q in [(-0.1, 0.5), (0.5, -1e-300), (math.nan, 0.5), (0.5, math.nan),
                 (math.inf, 0.5), (math.inf, math.inf), (-math.inf, 1.0)]:
        assert math.isnan(kl_poisson(p, q)), (p, q)


def test_kl_is_homogeneous_and_convex():
    """kl(c p, c q) = c kl(p, q) (exactly for c a power of 2), and kl(p, ·) decreases to the
    left of p and increases to its right."""
    rng = np.random.default_rng(8)
    for _ in range(500):
        p, q = 10.0 ** rng.uniform(-5, 5, 2)
        assert kl_poisson(8.0 * p, 8.0 * q) == 8.0 * kl_poisson(p, q)
        grid = p * np.exp(np.linspace(-3, 3, 61))
        values = np.array([kl_poisson(p, x) for x in grid])
        assert np.all(np.diff(values[:30]) < 0) and np.all(np.diff(values[30:]) > 0)


# ------------------------------------------------------------------ the confidence bounds


@pytest.mark.parametrize("seed", [1, 2])
def test_bounds_are_the_extreme_doubles(seed):
    """kl(p, bound) <= level and the next double outward breaks it, for means from 1e-8 to
    1e8 and levels from 1e-14 to 1e4."""
    p, level = _random_pairs(600, seed)
    for pi, li in zip(p, level):
        up, lo = kl_poisson_upper(pi, li), kl_poisson_lower(pi, li)
        assert 0.0 < lo <= pi <= up < math.inf, (pi, li, lo, up)
        assert kl_poisson(pi, up) <= li and kl_poisson(pi, np.nextafter(up, math.inf)) > li
        assert kl_poisson(pi, lo) <= li
        if lo > SMALLEST:
            assert kl_poisson(pi, np.nextafter(lo, 0.0)) > li, (pi, li, lo)


def test_bounds_match_brentq():
    p, level = _random_pairs(300, 3)
    for pi, li in zip(p, level):
        f = lambda q: _direct_kl(pi, q) - li  # noqa: E731
        # upper: kl(p, q) >= (q - p)²/(2q) brackets the root below p + 2 li + sqrt(2 p li) + 1
        hi = pi + 2 * li + math.sqrt(2 * pi * li) + 1.0
        up = brentq(f, pi, hi, xtol=1e-300, rtol=4 * EPS, maxiter=500)
        # the direct formula is rounded (to about eps (p + level)): so is its root, by that
        # over the slope |dkl/dq| = |q - p|/q
        slope = (up - pi) / up
        tol = 1e-13 * up + 8 * EPS * (pi + li) / slope
        assert abs(kl_poisson_upper(pi, li) - up) <= tol, (pi, li)
        if li < 30 * pi:   # beyond, the rounding of the direct formula exceeds kl(p, a) - level
            a = pi * math.exp(-li / pi - 1.0)
            lo = brentq(f, a, pi, xtol=1e-300, rtol=4 * EPS, maxiter=500)
            slope = (pi - lo) / lo
            tol = 1e-13 * lo + 8 * EPS * (pi + li) / slope
            assert abs(kl_poisson_lower(pi, li) - lo) <= tol, (pi, li)


def test_the_newton_iteration_alone_converges():
    """The final search only polishes: started on the far side of the root, Newton's iteration
    is already within a few ulps of the polished bound; below p, within a few times
    eps (1 + level/p), the rounding of kl(p, q) ~ p log(p/q) over its slope ~ p in log q."""
    p, level = _random_pairs(300, 4)
    for pi, li in zip(p, level):
        up = kl_poisson_upper(pi, li)
        start = pi + li + math.sqrt(li) * math.sqrt(li + 2 * pi)
        assert _newton(pi, li, start, True) == pytest.approx(up, rel=8 * EPS, abs=0)
        lo = kl_poisson_lower(pi, li)
        start = max(pi - math.sqrt(2 * li * pi), pi * math.exp(-li / pi - 1.0), SMALLEST)
        assert _newton(pi, li, start, False) == pytest.approx(
            lo, rel=8 * EPS * (1 + li / pi), abs=1e-300)


def test_the_newton_iteration_needs_few_evaluations(monkeypatch):
    """From the starting points of kl_poisson_upper and kl_poisson_lower, at most 8
    evaluations of kl for level/p from 1e-12 to 1e6 (run as Python, counting the calls)."""
    import bai_lib.kl_poisson as K

    evaluated = []
    monkeypatch.setattr(K, "kl_poisson", lambda p, q: evaluated.append(q) or kl_poisson(p, q))
    newton = K._newton.py_func
    worst = 0
    for p in np.geomspace(1e-6, 1e6, 25):
        for ratio in (1e-12, 1e-7, 1e-4, 1e-2, 0.3, 1.0, 10.0, 1e3, 1e6):
            li = ratio * p
            for start, upper in [(p + li + math.sqrt(li) * math.sqrt(li + 2 * p), True),
                                 (max(p - math.sqrt(2 * li * p), p * math.exp(-ratio - 1.0),
                                      SMALLEST), False)]:
                evaluated.clear()
                newton(p, li, start, upper)
                worst = max(worst, len(evaluated))
    assert 0 < worst <= 8, worst


def test_edge_means_and_levels():
    for level in [1e-10, 0.3, 7.0, 800.0, 1e300]:
        assert kl_poisson_upper(0.0, level) == level      # kl(0, q) = q: the closed form
        assert kl_poisson_lower(0.0, level) == 0.0        # kl(0, 0) = 0
    for p in [0.0, 1e-300, 0.5, 4.0, 1e300]:
        assert kl_poisson_upper(p, 0.0) == p and kl_poisson_lower(p, 0.0) == p
        assert kl_poisson_upper(p, math.inf) == math.inf
        assert kl_poisson_lower(p, math.inf) == 0.0
    # kl(p, 0) = inf: a finite level never makes the lower bound 0 ...
    assert kl_poisson_lower(1.0, 700.0) == pytest.approx(math.exp(-701.0), rel=1e-12, abs=0)
    # ... but its root underflows once kl(1, 5e-324) = 743.4 <= level
    assert kl_poisson_lower(1.0, 743.5) == SMALLEST
    assert kl_poisson(1.0, SMALLEST) == pytest.approx(743.44, abs=0.01)
    assert kl_poisson_lower(SMALLEST, 1.0) == SMALLEST   # no double between 0 and p
    # a tiny level leaves p itself when no double next to p is inside
    assert kl_poisson_upper(1.0, 1e-40) == 1.0 and kl_poisson_lower(1.0, 1e-40) == 1.0


def test_bounds_are_monotone_in_the_level():
    levels = np.concatenate([[0.0], np.geomspace(1e-12, 1e4, 90), [math.inf]])
    for p in [0.0, 1e-9, 0.03, 1.0, 250.0, 1e9]:
        up = np.array([kl_poisson_upper(p, lv) for lv in levels])
        lo = np.array([kl_poisson_lower(p, lv) for lv in levels])
        assert up[0] == p and lo[0] == p
        assert np.all(np.diff(up) > 0) and np.all(np.diff(lo) <= 0), p
        assert up[-1] == math.inf and lo[-1] == 0.0


def test_the_bounds_scale_with_the_mean():
    """kl(c p, c q) = c kl(p, q) (exactly, for c a power of 2, in floating point too): the
    bounds of (c p, c level) are c times those of (p, level), up to the width of the band of
    doubles below p where the rounding of kl(p, q) exceeds its change from one double to the
    next (about 1 + level/p ulps)."""
    p, level = _random_pairs(200, 9)
    for pi, li in zip(p, level):
        assert kl_poisson_upper(4.0 * pi, 4.0 * li) == 4.0 * kl_poisson_upper(pi, li)
        lo = kl_poisson_lower(pi, li)
        if lo > 1e-290:
            assert kl_poisson_lower(4.0 * pi, 4.0 * li) == pytest.approx(
                4.0 * lo, rel=8 * EPS * (1 + li / pi), abs=0)


def test_the_compiled_bounds_return_nan_on_bad_input():
    for p, level in [(math.nan, 1.0), (-1.0, 1.0), (math.inf, 1.0), (2.0, -1e-3),
                     (2.0, math.nan), (-0.0 - 1e-300, 1.0)]:
        assert math.isnan(kl_poisson_upper(p, level)), (p, level)
        assert math.isnan(kl_poisson_lower(p, level)), (p, level)


# ------------------------------------------------------------------ huge levels, promptly

LIMIT = 30.0   # seconds: each call answers in microseconds once compiled


@pytest.fixture(scope="module")
def compiled():
    """Compile the kernels (and the interval's loop) before any call is timed."""
    kl_poisson_upper(0.5, 1.0), kl_poisson_lower(0.5, 1.0), kl_poisson_inner(0.5, 1.0)
    kl_poisson_interval(0.5, 1, 1.0)


def _seconds_per_call(fn, *args, repeat=200):
    start = time.perf_counter()
    for _ in range(repeat):
        fn(*args)
    return (time.perf_counter() - start) / repeat


def test_a_level_of_1e308_answers_within_a_millisecond(compiled):
    """The upper end is about the level itself (kl(p, q) = q - p log q + O(p)), found at once."""
    for p in [5e-324, 1e-300, 0.5, 3.0, 1e6, 1e300]:
        up, _ = answered(LIMIT, kl_poisson_upper, p, 1e308)   # fails rather than hangs
        assert _seconds_per_call(kl_poisson_upper, p, 1e308) < 1e-3, p
        assert kl_poisson(p, up) <= 1e308 < kl_poisson(p, np.nextafter(up, math.inf)), p
        assert up == pytest.approx(1e308, rel=1e-12) if p < 1e300 else up > 1e308
        lo, _ = answered(LIMIT, kl_poisson_lower, p, 1e308)
        assert _seconds_per_call(kl_poisson_lower, p, 1e308) < 1e-3, p
        assert lo == (p if p == SMALLEST else SMALLEST), (p, lo)


def test_the_largest_levels_give_the_largest_double(compiled):
    """Once level >= kl(p, 1.8e308) the upper bound is the largest double (finite), whose
    kl(p, ·) is within the level, in microseconds."""
    for p in [0.0, 1e-300, 1.0, 1e10]:
        up, _ = answered(LIMIT, kl_poisson_upper, p, BIGGEST)
        assert up == BIGGEST and kl_poisson(p, up) <= BIGGEST, (p, up)
        assert _seconds_per_call(kl_poisson_upper, p, BIGGEST) < 1e-3, p
    # kl(1e307, 1.8e308) = 1.41e308: the largest double from there on, below it a finite root
    assert kl_poisson_upper(1e307, 1.5e308) == BIGGEST
    up = kl_poisson_upper(1e307, 1.3e308)
    assert up < BIGGEST and kl_poisson(1e307, np.nextafter(up, math.inf)) > 1.3e308


def test_every_mean_and_level_answers_promptly_and_exactly(compiled):
    """Means from the smallest double to 1e300, levels from the smallest double to the largest:
    each end is the extreme double with kl(p, q) <= level, the 240 calls well under a
    millisecond each."""
    ps = [SMALLEST, 1e-310, 1e-300, 1e-20, 1e-8, 0.3, 1.0, 40.0, 1e8, 1e20, 1e150, 1e300]
    levels = [SMALLEST, 1e-300, 1e-20, 1e-5, 1.0, 36.0, 745.0, 1e10, 1e150, 1e300]

    def sweep():
        return [(p, lv, kl_poisson_lower(p, lv), kl_poisson_upper(p, lv))
                for p in ps for lv in levels]

    rows, seconds = answered(LIMIT, sweep)
    assert seconds < 0.05, seconds
    for p, level, lo, up in rows:
        assert 0.0 < lo <= p <= up < math.inf, (p, level, lo, up)
        assert kl_poisson(p, lo) <= level and kl_poisson(p, up) <= level, (p, level, lo, up)
        assert kl_poisson(p, np.nextafter(up, math.inf)) > level, (p, level, up)
        if lo > SMALLEST:
            assert kl_poisson(p, np.nextafter(lo, 0.0)) > level, (p, level, lo)


# ------------------------------------------------------------------ inner points


def test_inner_points_lie_inside_the_exact_interval():
    rng = np.random.default_rng(21)
    special = [0.0, 5e-324, 1e-300, 0.5, 1.0, 1e6, 1e300]
    for _ in range(20_000):
        p = float(rng.choice([10.0 ** rng.uniform(-12, 12), rng.choice(special)]))
        level = 10 ** rng.uniform(-18, 3) if rng.random() < 0.8 else 10 ** rng.uniform(3, 300)
        lo, hi = kl_poisson_inner(p, level)
        assert kl_poisson_lower(p, level) <= lo <= p <= hi <= kl_poisson_upper(p, level), \
            (p, level, lo, hi)
    assert kl_poisson_inner(0.0, 2.5) == (0.0, 2.5)          # the exact upper end
    assert kl_poisson_inner(3.0, math.inf) == (3.0, 3.0)
    assert kl_poisson_inner(1.0, 2.0) == (1.0, pytest.approx(3.0, rel=1e-8))  # p + sqrt(2 p L)


@pytest.mark.parametrize("p", [0.02, 1.0, 30.0, 5e5])
def test_inner_points_approach_the_exact_ends_as_the_level_falls(p):
    gaps = []
    for level in (1e-3 * p, 1e-5 * p, 1e-7 * p):
        lo, hi = kl_poisson_inner(p, level)
        ratio_up = (hi - p) / (kl_poisson_upper(p, level) - p)
        ratio_lo = (p - lo) / (p - kl_poisson_lower(p, level))
        assert 0.0 < ratio_up <= 1.0 and 0.0 < ratio_lo <= 1.0
        gaps.append(1.0 - min(ratio_up, ratio_lo))
    assert gaps[0] < 0.1 and gaps[2] < 0.005
    assert gaps[1] < 0.2 * gaps[0] and gaps[2] < 0.2 * gaps[1]


# ------------------------------------------------------------------ the vectorised interval


def test_kl_poisson_interval_is_the_vectorised_pair():
    means = np.array([[0.0, 0.1, 2.5], [40.0, 1e-9, 3.0]])
    counts = np.array([1, 10, 1000])
    lo, up = kl_poisson_interval(means, counts, math.log(40))
    assert lo.shape == up.shape == (2, 3)
    for idx in np.ndindex(means.shape):
        lv = math.log(40) / counts[idx[1]]
        assert lo[idx] == kl_poisson_lower(means[idx], lv)
        assert up[idx] == kl_poisson_upper(means[idx], lv)
    lo1, up1 = kl_poisson_interval(2.0, 10, 3.0)
    assert isinstance(lo1, float) and isinstance(up1, float)
    assert (lo1, up1) == (kl_poisson_lower(2.0, 0.3), kl_poisson_upper(2.0, 0.3))
    lo, up = kl_poisson_interval([7.0], [5], 0.0)
    assert lo.tolist() == up.tolist() == [7.0]
    assert kl_poisson_interval(0.0, 4, 2.0) == (0.0, 0.5)    # kl(0, q) = q


@pytest.mark.parametrize("means,counts,log_level,name", [
    (-0.1, 10, 1.0, "means"), ("0.5", 10, 1.0, "means"), (math.nan, 10, 1.0, "means"),
    (math.inf, 10, 1.0, "means"), ([0.5, True], 10, 1.0, "means"),
    (0.5, 0, 1.0, "counts"), (0.5, 2.5, 1.0, "counts"), (0.5, 10.0, 1.0, "counts"),
    (0.5, True, 1.0, "counts"), (0.5, [3, -1], 1.0, "counts"), (0.5, "10", 1.0, "counts"),
    (0.5, 10, -1.0, "log_level"), (0.5, 10, math.nan, "log_level"),
    (0.5, 10, math.inf, "log_level"), (0.5, 10, "1", "log_level"),
    ([0.1, 0.2], [1, 2, 3], 1.0, "broadcast"),
])
def test_kl_poisson_interval_rejects_bad_input(means, counts, log_level, name):
    with pytest.raises(ValueError, match=name):
        kl_poisson_interval(means, counts, log_level)


def test_means_above_one_are_accepted_by_the_interval():
    lo, up = kl_poisson_interval([1.5, 1e6], 3, 2.0)
    assert np.all(lo < [1.5, 1e6]) and np.all(up > [1.5, 1e6])


@pytest.mark.parametrize("lam", [0.05, 0.7, 4.0])
def test_the_interval_covers_the_mean(lam):
    """δ = 0.1, n = 20, L = log(2/δ): over 20,000 simulated samples the interval misses λ with
    frequency at most δ (one-sided binomial test at level 0.001), each side at most δ/2."""
    delta, n, reps = 0.1, 20, 20_000
    rng = np.random.default_rng(20240611)
    means = rng.poisson(lam, size=(reps, n)).mean(axis=1)
    lo, up = kl_poisson_interval(means, n, math.log(2 / delta))
    for misses, bound in [(int(np.sum((lam < lo) | (lam > up))), delta),
                          (int(np.sum(lam < lo)), delta / 2), (int(np.sum(lam > up)), delta / 2)]:
        test = binomtest(misses, reps, bound, alternative="greater")
        assert test.pvalue > 1e-3, (lam, misses, bound)


@pytest.mark.parametrize("lam", [0.01, 0.3, 2.0, 25.0])
def test_the_exact_miss_probability_is_within_chernoffs_bound(lam):
    """The sum of n = 20 draws is Poisson(n λ): summing its probabilities over the sums whose
    interval misses λ gives the exact miss probability, below 2 e^{-L} = δ for each δ."""
    n = 20
    sums = np.arange(0, int(n * lam + 60 * math.sqrt(n * lam + 1)) + 60)
    pmf = poisson.pmf(sums, n * lam)
    for delta in (0.2, 0.05, 0.01):
        lo, up = kl_poisson_interval(sums / n, n, math.log(2 / delta))
        assert pmf[lam > up].sum() <= delta / 2 and pmf[lam < lo].sum() <= delta / 2, (lam, delta)


# ------------------------------------------------------------------ the GLR statistic


def _log_likelihood(x, lam):
    return float(np.sum(x * np.log(lam) - lam - gammaln(x + 1))) if lam > 0 else (
        0.0 if np.all(x == 0) else -math.inf)


def test_glr_is_the_log_likelihood_ratio():
    """Z = sup over all (λ_a, λ_b) of the log-likelihood minus its sup over λ_a <= λ_b (a common
    λ at the optimum), the latter maximised numerically on [mean_b, mean_a]."""
    rng = np.random.default_rng(31)
    for _ in range(60):
        lam_a, lam_b = 10.0 ** rng.uniform(-1, 1.5, 2)
        n_a, n_b = rng.integers(1, 60, 2)
        xa, xb = rng.poisson(lam_a, n_a), rng.poisson(lam_b, n_b)
        ma, mb = xa.mean(), xb.mean()
        z = kl_poisson_glr(ma, float(n_a), mb, float(n_b))
        if not ma > mb:
            assert z == 0.0
            continue

        def neg(lam):
            return -(_log_likelihood(xa, lam) + _log_likelihood(xb, lam))

        res = minimize_scalar(neg, bounds=(mb, ma), method="bounded",
                              options={"xatol": 1e-12 * ma})
        grid = np.linspace(mb, ma, 201)   # nothing on a grid does better than the optimum
        assert res.fun <= min(neg(g) for g in grid) + 1e-9
        free = _log_likelihood(xa, ma) + _log_likelihood(xb, mb)
        assert z == pytest.approx(free + res.fun, rel=1e-7, abs=1e-9), (ma, n_a, mb, n_b)


def test_glr_conventions():
    assert kl_poisson_glr(1.0, 5.0, 2.0, 5.0) == 0.0
    assert kl_poisson_glr(2.0, 5.0, 2.0, 5.0) == 0.0
    assert kl_poisson_glr(math.nan, 5.0, 2.0, 5.0) == 0.0
    # against mean 0: N_a kl(a, m) + N_b m with m = N_a a / (N_a + N_b)
    z = kl_poisson_glr(3.0, 4.0, 0.0, 2.0)
    m = 4 * 3.0 / 6
    assert z == pytest.approx(4 * (m - 3 + 3 * math.log(3 / m)) + 2 * m, rel=1e-14)
    # large counts: about (Δ²/2) / (σ²/N_a + σ²/N_b) with σ² = λ
    z = kl_poisson_glr(100.5, 1e6, 100.0, 1e6)
    assert z == pytest.approx(0.25 / (2 * (100.25 / 1e6 + 100.25 / 1e6)), rel=1e-4)

"""T*(λ) and w*(λ) of Poisson arms (bai_lib.oracle_bernoulli's Poisson functions).

The references are independent of the module: the divergence is written with scipy's
``rel_entr``, the two-arm answer comes from ``brentq``, the general one from SLSQP on the
epigraph form of ``sup_w min_j``, and the Gaussian limit from the Gaussian oracle.
"""

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy.optimize import brentq, minimize
from scipy.special import rel_entr

from bai_lib.kl_poisson import kl_poisson
from bai_lib.oracle import characteristic_time
from bai_lib.oracle_bernoulli import (bernoulli_characteristic_time, poisson_allocation_time,
                                      poisson_characteristic_time, solve_oracle_poisson)


def _kl(p, q):
    """q - p + p log(p/q), from scipy (rel_entr is p log(p/q), 0 at p = 0, inf at q = 0); its
    terms cancel to about (p - q)²/q, so that close means need :func:`_exact_kl`."""
    return float(rel_entr(p, q)) - p + q


def _exact_kl(p, q):
    """q - p + p log(p/q) in 60-digit decimal arithmetic (q > 0)."""
    getcontext().prec = 60
    p, q = Decimal(float(p)), Decimal(float(q))
    return float(q - p + (p * (p / q).ln() if p > 0 else 0))


def _per_arm(w, mu, kl=_kl):
    """``(b, [(j, kl(λ_b, m_j), kl(λ_j, m_j)) for j != b])``, m_j the w-weighted mean."""
    b = int(np.argmax(mu))
    rows = []
    for j in np.flatnonzero(np.arange(mu.size) != b):
        m = (w[b] * mu[b] + w[j] * mu[j]) / (w[b] + w[j])
        rows.append((j, kl(mu[b], m), kl(mu[j], m)))
    return b, rows


def _constraints(w, mu, kl=_kl):
    """w_b kl(λ_b, m_j) + w_j kl(λ_j, m_j) for j != best."""
    b, rows = _per_arm(w, mu, kl)
    return np.array([w[b] * kb + w[j] * kj for j, kb, kj in rows])


def _brute_force_time(mu, n_starts=6, seed=0):
    """T* as the least total weight sum_i w_i with every constraint >= 1: the constraints are
    homogeneous of degree 1 in w, so this is 1 / max over the simplex of their minimum. Solved
    by SLSQP (the gradient of constraint j is kl(λ_b, m_j) in w_b and kl(λ_j, m_j) in w_j),
    from several starts, on means scaled to a largest mean of 1 (T* scales like 1/mean)."""
    scale = float(np.max(mu))
    lam = np.asarray(mu) / scale
    k = lam.size
    rng = np.random.default_rng(seed)

    def gradient(w):
        b, rows = _per_arm(w, lam)
        out = np.zeros((len(rows), k))
        for row, (j, kb, kj) in enumerate(rows):
            out[row, b], out[row, j] = kb, kj
        return out

    totals = []
    starts = [np.ones(k)] + [rng.dirichlet(np.ones(k)) for _ in range(n_starts - 1)]
    for w0 in starts:
        w0 = 2.0 * w0 / _constraints(w0, lam).min()   # feasible: every constraint is 2
        res = minimize(np.sum, w0, jac=np.ones_like, method="SLSQP",
                       bounds=[(1e-12, None)] * k,
                       constraints=[{"type": "ineq", "jac": gradient,
                                     "fun": lambda w: _constraints(w, lam) - 1.0}],
                       options={"ftol": 1e-15, "maxiter": 2000})
        w = res.x * (1.0 / _constraints(res.x, lam).min())  # exactly feasible
        totals.append(w.sum())
    return min(totals) / scale


def _random_instance(seed):
    """k = 3..6 means, log-uniform over four decades at a scale from 1e-3 to 1e3; every third
    instance has zeros among the other arms, every fourth a best mean of exactly 1 (special
    for Bernoulli arms only); the best arm leads by at least 2% of its mean."""
    rng = np.random.default_rng(2000 + seed)
    k = 3 + seed % 4
    while True:
        mu = 10.0 ** rng.uniform(-2, 2, k) * 10.0 ** rng.uniform(-1, 1)
        if seed % 3 == 0:
            mu[rng.choice(k, size=(k + 1) // 3, replace=False)] = 0.0
        if seed % 4 == 0:
            mu = mu / mu.max()
        top = np.sort(mu)
        if top[-1] - top[-2] >= 0.02 * top[-1]:
            return mu


def _chernoff(a, c):
    """The m in (c, a) with kl(a, m) = kl(c, m), where the two constraints of T* meet (for
    c = 0 searched from 1e-12 a, where kl(a, m) is still above kl(0, m) = m)."""
    return brentq(lambda m: _exact_kl(a, m) - _exact_kl(c, m), c if c > 0 else 1e-12 * a, a,
                  xtol=1e-300, rtol=1e-15, maxiter=500)


PAIRS = [(2.0, 1.0), (1.0, 0.0), (5.0, 4.9), (1.0, 0.5), (30.0, 0.0), (1e-6, 5e-7),
         (1e6, 999_000.0), (0.2, 1e-9), (7.5, 3.0)]


@pytest.mark.parametrize("a, c", PAIRS)
def test_two_arms_is_the_common_value_at_the_chernoff_point(a, c):
    m = _chernoff(a, c)
    for mu, b in [(np.array([a, c]), 0), (np.array([c, a]), 1)]:
        T, w = poisson_characteristic_time(mu)
        assert 1 / T == pytest.approx(_exact_kl(a, m), rel=1e-10, abs=0)
        assert 1 / T == pytest.approx(_exact_kl(c, m), rel=1e-10, abs=0)
        # w_j / w_b = (λ_b - m)/(m - λ_j): m is the w-weighted mean of the two
        assert w[1 - b] / w[b] == pytest.approx((a - m) / (m - c), rel=1e-9)
        assert w.sum() == pytest.approx(1.0, abs=1e-15)


def test_two_arms_closed_form():
    """Against mean 0: kl(λ, m) = kl(0, m) = m gives m = λ/e, T* = e/λ and w_b = 1/e."""
    for lam in (1.0, 1e-5, 3.0, 1e5):
        T, w = poisson_characteristic_time([lam, 0.0])
        assert T == pytest.approx(math.e / lam, rel=1e-14)
        np.testing.assert_allclose(w, [1 / math.e, 1 - 1 / math.e], rtol=1e-14)


@pytest.mark.parametrize("seed", range(24))
def test_matches_a_brute_force_maximisation(seed):
    mu = _random_instance(seed)
    T, w = poisson_characteristic_time(mu)
    t_brute = _brute_force_time(mu)
    assert T <= t_brute * (1 + 1e-9)           # no allocation does better than w*
    assert T == pytest.approx(t_brute, rel=1e-9)
    # all k - 1 constraints are active at w*, and equal to 1/T*
    np.testing.assert_allclose(_constraints(w, mu) * T, 1.0, rtol=1e-9)
    assert w.sum() == pytest.approx(1.0, abs=1e-14) and np.all(w > 0)


def test_the_instances_cover_the_edges():
    instances = [_random_instance(s) for s in range(24)]
    assert sum(np.max(mu) == 1.0 for mu in instances) >= 6
    assert sum(np.any(mu == 0.0) for mu in instances) >= 8
    assert sum(np.max(mu) > 1.0 for mu in instances) >= 6
    assert {mu.size for mu in instances} == {3, 4, 5, 6}


def test_poisson_is_not_bernoulli():
    """The same means in [0, 1] give different answers for the two families: the Bernoulli
    variance m(1 - m) is below the Poisson one m, so Bernoulli arms are told apart sooner."""
    for mu in ([0.9, 0.5, 0.1], [1.0, 0.3], [0.5, 0.45, 0.0]):
        tp, wp = poisson_characteristic_time(mu)
        tb, wb = bernoulli_characteristic_time(mu)
        assert tp > tb * 1.05
        assert not np.allclose(wp, wb, rtol=1e-3)


def test_the_characteristic_time_is_homogeneous():
    """kl(c p, c q) = c kl(p, q): scaling the means by c divides T* by c, w* unchanged."""
    mu = np.array([3.0, 2.2, 0.7, 0.0, 2.9])
    T, w = poisson_characteristic_time(mu)
    for c in (1e-6, 1e-2, 7.0, 1e6):
        Tc, wc = poisson_characteristic_time(c * mu)
        assert Tc == pytest.approx(T / c, rel=1e-12)
        np.testing.assert_allclose(wc, w, rtol=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_allocation_time_is_minimal_at_w_star(seed):
    mu = _random_instance(seed)
    T, w = poisson_characteristic_time(mu)
    assert poisson_allocation_time(mu, w) == pytest.approx(T, rel=1e-10)
    rng = np.random.default_rng(seed)
    for _ in range(50):
        assert poisson_allocation_time(mu, rng.dirichlet(np.ones(mu.size))) > T
    for _ in range(20):  # also small perturbations of w*
        v = w * np.exp(1e-4 * rng.normal(size=mu.size))
        assert poisson_allocation_time(mu, v / v.sum()) > T * (1 + 1e-12)
    v = rng.dirichlet(np.ones(mu.size))   # and it is what its formula says
    assert poisson_allocation_time(mu, v) == pytest.approx(1 / _constraints(v, mu).min(),
                                                           rel=1e-12)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_gaussian_limit(k):
    """Means λ_i = 1e4 (1 - ε i) look like Gaussian arms of variances λ_i: T* and w* agree
    with the Gaussian ones to first order in ε (the variance function V(m) = m has slope 1:
    kl(λ_b, m) is about (λ_b - m)²/(2m), not (λ_b - m)²/(2 λ_b))."""
    diffs = []
    for eps in (1e-2, 1e-3, 1e-4):
        mu = 1e4 * (1 - eps * np.arange(k))
        T, w = poisson_characteristic_time(mu)
        T_g, w_g = characteristic_time(mu, noise_stds=np.sqrt(mu))
        assert abs(T / T_g - 1) < 0.5 * eps and np.max(np.abs(w - w_g)) < 0.5 * eps
        diffs.append(np.max(np.abs(w - w_g)))
    assert diffs[2] < diffs[1] / 5 < diffs[0] / 25


WARM = [np.array([7.0, 5.0, 4.5, 1.0]), np.array([1.0, 0.0, 0.3, 0.98, 0.0]),
        np.array([0.2, 0.01, 0.0, 0.15, 0.19, 0.05]), np.array([50.0, 40.0]),
        np.array([3e5, 2.9e5, 1e5, 2.99e5])]


@pytest.mark.parametrize("mu", WARM, ids=range(len(WARM)))
@pytest.mark.parametrize("factor", [1 + 1e-9, 0.99, 1.3, 1e-3, 1e-12, 30.0, 1e6])
def test_warm_start_gives_the_cold_result(mu, factor):
    """Within the accuracy of a solve: the last Halley step leaves the weights (and y) within
    about 1e-11 relative of the optimum, and T*, stationary there, within rounding."""
    b = int(np.argmax(mu))
    w_cold = np.empty(mu.size)
    T, y = solve_oracle_poisson(mu, b, w_cold, 0.0)
    w_warm = np.full(mu.size, np.nan)
    T2, y2 = solve_oracle_poisson(mu, b, w_warm, y * factor)
    assert T2 == pytest.approx(T, rel=1e-14)
    assert y2 == pytest.approx(y, rel=1e-10)
    np.testing.assert_allclose(w_warm, w_cold, rtol=1e-10)


def test_warm_start_from_the_previous_instance():
    """As in Track-and-Stop: the y of the instance before one more sample."""
    rng = np.random.default_rng(7)
    mu = np.array([6.2, 5.5, 3.0, 0.0, 5.8, 1.0])
    w = np.empty(mu.size)
    _, y = solve_oracle_poisson(mu, 0, w, 0.0)
    for _ in range(200):
        mu = np.maximum(mu + 0.02 * rng.normal(size=mu.size), 0.0)
        b = int(np.argmax(mu))
        T, y = solve_oracle_poisson(mu, b, w, y)
        T_cold, w_cold = poisson_characteristic_time(mu)
        assert T == pytest.approx(T_cold, rel=1e-12)
        np.testing.assert_allclose(w, w_cold, rtol=1e-10)


TINY = [[5.0, 5.0 - 1e-6, 3.0], [1.0, 1.0 - 1e-6, 0.0], [1e-6, 0.0], [1e6, 1e6 - 1e-3, 0.0],
        [0.9, 0.9 - 1e-6, 0.9 - 2e-6, 0.9 - 3e-6]]


@pytest.mark.parametrize("mu", TINY, ids=range(len(TINY)))
def test_tiny_gaps(mu):
    mu = np.array(mu)
    T, w = poisson_characteristic_time(mu)
    assert math.isfinite(T) and T > 1e5
    # the rounding of m to a double limits the precision to about eps λ_b / gap
    np.testing.assert_allclose(_constraints(w, mu, kl_poisson) * T, 1.0, rtol=1e-6)
    assert poisson_allocation_time(mu, w) == pytest.approx(T, rel=1e-6)


def test_tiny_gap_matches_the_local_gaussian_approximation():
    """For a gap Δ at λ the arms are Gaussian with σ² = λ: T* ≈ 8 λ/Δ²."""
    for lam in (0.5, 3.0, 40.0):
        T, w = poisson_characteristic_time([lam + 5e-7, lam - 5e-7])
        assert T == pytest.approx(8 * lam / 1e-12, rel=1e-5)
        np.testing.assert_allclose(w, 0.5, rtol=1e-5)


@pytest.mark.parametrize("edges", [False, True])
def test_a_thousand_arms(edges):
    rng = np.random.default_rng(3)
    mu = 10.0 ** rng.uniform(-2, 2, 1000)
    if edges:
        mu[:300] = 0.0
        mu[500] = 200.0
        mu[501] = 200.0 - 1e-4  # and a tiny gap
    T, w = poisson_characteristic_time(mu)
    assert math.isfinite(T) and T > 0
    assert w.sum() == pytest.approx(1.0, abs=1e-12) and np.all(w > 0)
    np.testing.assert_allclose(_constraints(w, mu, kl_poisson) * T, 1.0,
                               rtol=1e-7 if edges else 1e-9)
    if edges:   # arms with equal means get equal weights
        assert np.all(w[:300] == w[0])


def test_permuting_the_arms_permutes_the_allocation():
    mu = np.array([3.0, 0.0, 8.0, 5.5, 7.9, 0.0, 1e-3])
    order = np.random.default_rng(0).permutation(mu.size)
    (t0, w0), (t1, w1) = poisson_characteristic_time(mu), poisson_characteristic_time(mu[order])
    assert t1 == pytest.approx(t0, rel=1e-13)
    np.testing.assert_allclose(w1, w0[order], rtol=1e-12)


NOT_REAL = "means must be finite real numbers"
BAD_MEANS = {   # what is wrong: (means, the message expected)
    "negative": ([0.5, -0.1], r"means must be >= 0 \(Poisson arms\)"),
    "all negative": ([-2.0, -3.0], r"means must be >= 0"),
    "nan": ([0.5, float("nan")], NOT_REAL), "inf": ([0.5, float("inf")], NOT_REAL),
    "strings": (["0.5", "0.2"], NOT_REAL), "bools": ([True, False], NOT_REAL),
    "matrix": ([[0.5, 0.2], [0.1, 0.0]], NOT_REAL),
    "one arm": ([4.0], "means must be a finite vector of length >= 2"),
    "no arm": ([], "means"), "scalar": (4.0, "means must be a finite vector"),
    "tie at the top": ([6.0, 6.0, 0.1], "means: the best arm must be unique"),
    "all zero": ([0.0, 0.0], "means: the best arm must be unique"),
    "subnormal": ([1e-320, 0.0], "means: T\\* is out of floating-point range"),
}


@pytest.mark.parametrize("means, match", BAD_MEANS.values(), ids=BAD_MEANS.keys())
def test_bad_means(means, match):
    """A ValueError naming ``means``, from both checked functions."""
    with pytest.raises(ValueError, match=match):
        poisson_characteristic_time(means)
    uniform = np.full(max(np.size(means), 1), 1.0 / max(np.size(means), 1))
    with pytest.raises(ValueError, match=match):
        poisson_allocation_time(means, uniform)


def test_means_above_one_are_poisson_means():
    """What the Bernoulli functions refuse, the Poisson ones take."""
    with pytest.raises(ValueError, match=r"means must lie in \[0, 1\]"):
        bernoulli_characteristic_time([2.5, 1.0])
    T, w = poisson_characteristic_time([2.5, 1.0])
    assert math.isfinite(T) and w.shape == (2,)


@pytest.mark.parametrize("gap_ulps", [1, 8, 60])
def test_gaps_of_a_few_ulps_are_refused(gap_ulps):
    for lam in (0.3, 1.0, 1e-5, 1e6):
        mu = [lam, lam - gap_ulps * np.spacing(lam)]
        with pytest.raises(ValueError, match="means: the gap to the best arm.* under 64 ulps"):
            poisson_characteristic_time(mu)
        with pytest.raises(ValueError, match="means: the gap to the best arm"):
            poisson_allocation_time(mu, [0.5, 0.5])


@pytest.mark.parametrize("weights, match", [
    ([0.5, 0.5], "weights must be 3 non-negative numbers summing to 1"),
    ([0.5, 0.6, -0.1], "weights must be 3 non-negative numbers"),
    ([0.3, 0.3, 0.3], "summing to 1"),
    ([0.5, float("nan"), 0.5], "weights must be finite real numbers"),
    ([0.0, 0.5, 0.5], "weights: the best arm must get a positive weight"),
    ([0.5, 0.5, 0.0], "weights: every arm must get a positive weight"),
])
def test_bad_weights(weights, match):
    with pytest.raises(ValueError, match=match):
        poisson_allocation_time([9.0, 5.0, 1.0], weights)


def test_inputs_are_not_modified_and_results_are_plain():
    mu = np.array([4.0, 9.0, 0.0])
    copy = mu.copy()
    T, w = poisson_characteristic_time(mu)
    np.testing.assert_array_equal(mu, copy)
    assert type(T) is float and isinstance(w, np.ndarray) and w.shape == (3,)
    assert type(poisson_allocation_time(mu, w)) is float
    assert poisson_characteristic_time([1, 0])[0] == pytest.approx(math.e)  # integers accepted

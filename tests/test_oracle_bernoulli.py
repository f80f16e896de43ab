"""T*(μ) and w*(μ) of Bernoulli arms (bai_lib.oracle_bernoulli).

The references are independent of the module: the divergence is scipy's ``rel_entr``, the
two-arm answer comes from ``brentq`` and the general one from SLSQP on the epigraph form of
``sup_w min_j``.
"""

import math

import numpy as np
import pytest
from scipy.optimize import brentq, minimize
from scipy.special import rel_entr

from bai_lib.kl import kl_bernoulli
from bai_lib.oracle import characteristic_time
from bai_lib.oracle_bernoulli import (bernoulli_allocation_time, bernoulli_characteristic_time,
                                      solve_oracle_bernoulli)


def _kl(p, q):
    return float(rel_entr(p, q) + rel_entr(1 - p, 1 - q))


def _means_and_kls(w, mu, kl=_kl):
    """Per arm j != best: m_j and the two divergences kl(μ_b, m_j), kl(μ_j, m_j)."""
    b = int(np.argmax(mu))
    out = []
    for j in range(mu.size):
        if j != b:
            m = (w[b] * mu[b] + w[j] * mu[j]) / (w[b] + w[j])
            out.append((j, m, kl(mu[b], m), kl(mu[j], m)))
    return b, out


def _constraints(w, mu, kl=_kl):
    """w_b kl(μ_b, m_j) + w_j kl(μ_j, m_j) for j != best; scipy's kl by default. Near ties
    its two terms cancel (relative error eps/kl), so tiny gaps use the library's kl."""
    b, rows = _means_and_kls(w, mu, kl)
    return np.array([w[b] * ka + w[j] * kc for j, _, ka, kc in rows])


def _brute_force(mu, n_starts=6, seed=0):
    """max_w min_j constraint_j by SLSQP on (w, z): maximise z subject to constraint_j >= z.
    The gradient of constraint_j is kl(μ_b, m_j) in w_b and kl(μ_j, m_j) in w_j (envelope)."""
    k = mu.size
    rng = np.random.default_rng(seed)

    def cons(x):
        return _constraints(x[:k], mu) - x[k]

    def cons_jac(x):
        b, rows = _means_and_kls(x[:k], mu)
        jac = np.zeros((k - 1, k + 1))
        for i, (j, _, ka, kc) in enumerate(rows):
            jac[i, b], jac[i, j], jac[i, k] = ka, kc, -1.0
        return jac

    best = -np.inf
    for start in [np.full(k, 1 / k)] + [rng.dirichlet(np.ones(k)) for _ in range(n_starts - 1)]:
        x0 = np.append(start, 0.5 * _constraints(start, mu).min())
        res = minimize(lambda x: -x[k], x0, jac=lambda x: -np.eye(k + 1)[k], method="SLSQP",
                       bounds=[(1e-12, 1.0)] * k + [(0.0, None)],
                       constraints=[{"type": "eq", "fun": lambda x: x[:k].sum() - 1,
                                     "jac": lambda x: np.append(np.ones(k), 0.0)},
                                    {"type": "ineq", "fun": cons, "jac": cons_jac}],
                       options={"ftol": 1e-16, "maxiter": 1000})
        w = res.x[:k] / res.x[:k].sum()
        best = max(best, _constraints(w, mu).min())
    return best


def _random_instance(seed):
    """k = 3..6 means; every third instance has zeros among the other arms, every fourth a
    best arm at exactly 1, every fifth both; the best arm is ahead by at least 0.02."""
    rng = np.random.default_rng(1000 + seed)
    k = 3 + seed % 4
    while True:
        mu = rng.uniform(0, 1, k)
        if seed % 3 == 0 or seed % 5 == 0:
            mu[rng.choice(k, size=(k + 1) // 3, replace=False)] = 0.0
        if seed % 4 == 0 or seed % 5 == 0:
            mu[int(np.argmax(mu))] = 1.0
        top = np.sort(mu)
        if top[-1] - top[-2] >= 0.02:
            return mu


def _chernoff(a, c):
    """The m in (c, a) with kl(a, m) = kl(c, m) (where the two constraints of T* meet)."""
    return brentq(lambda m: _kl(a, m) - _kl(c, m), c, a, xtol=1e-300, rtol=1e-15, maxiter=500)


PAIRS = [(0.9, 0.1), (0.5, 0.4), (0.6, 0.59), (1.0, 0.0), (1.0, 0.3), (0.7, 0.0), (0.02, 0.01),
         (0.999, 0.998), (0.3, 1e-9), (1.0, 0.999), (1e-4, 0.0)]


@pytest.mark.parametrize("a, c", PAIRS)
def test_two_arms_is_the_common_value_at_the_chernoff_point(a, c):
    m = _chernoff(a, c)
    for mu, b in [(np.array([a, c]), 0), (np.array([c, a]), 1)]:
        T, w = bernoulli_characteristic_time(mu)
        assert 1 / T == pytest.approx(_kl(a, m), rel=1e-10)
        assert 1 / T == pytest.approx(_kl(c, m), rel=1e-10)
        # w_j / w_b = (μ_b - m)/(m - μ_j): m is the w-weighted mean of the two
        assert w[1 - b] / w[b] == pytest.approx((a - m) / (m - c), rel=1e-9)
        assert w.sum() == pytest.approx(1.0, abs=1e-15)


def test_two_arms_closed_forms():
    T, w = bernoulli_characteristic_time([1.0, 0.0])  # m* = 1/2: T* = 1/log 2
    assert T == pytest.approx(1 / math.log(2), rel=1e-14)
    np.testing.assert_allclose(w, [0.5, 0.5], rtol=1e-14)
    T, w = bernoulli_characteristic_time([0.8, 0.2])  # symmetric: m* = 1/2
    assert T == pytest.approx(1 / _kl(0.8, 0.5), rel=1e-13)
    np.testing.assert_allclose(w, [0.5, 0.5], rtol=1e-13)


@pytest.mark.parametrize("seed", range(36))
def test_matches_a_brute_force_maximisation(seed):
    mu = _random_instance(seed)
    T, w = bernoulli_characteristic_time(mu)
    val = _brute_force(mu)
    assert 1 / T >= val * (1 - 1e-9)           # nothing does better than w*
    assert 1 / T == pytest.approx(val, rel=1e-9)
    # all k - 1 constraints are active at w*, and equal to 1/T*
    np.testing.assert_allclose(_constraints(w, mu) * T, 1.0, rtol=1e-9)
    assert w.sum() == pytest.approx(1.0, abs=1e-14) and np.all(w > 0)


def test_the_instances_cover_the_edges():
    instances = [_random_instance(s) for s in range(36)]
    assert sum(np.max(mu) == 1.0 for mu in instances) >= 8
    assert sum(np.any(mu == 0.0) for mu in instances) >= 12
    assert {mu.size for mu in instances} == {3, 4, 5, 6}


@pytest.mark.parametrize("seed", range(6))
def test_allocation_time_is_minimal_at_w_star(seed):
    mu = _random_instance(seed)
    T, w = bernoulli_characteristic_time(mu)
    assert bernoulli_allocation_time(mu, w) == pytest.approx(T, rel=1e-10)
    rng = np.random.default_rng(seed)
    for _ in range(50):
        assert bernoulli_allocation_time(mu, rng.dirichlet(np.ones(mu.size))) > T
    for _ in range(20):  # also small perturbations of w*
        v = w * np.exp(1e-4 * rng.normal(size=mu.size))
        assert bernoulli_allocation_time(mu, v / v.sum()) > T * (1 + 1e-12)
    # and it is what its formula says
    v = rng.dirichlet(np.ones(mu.size))
    assert bernoulli_allocation_time(mu, v) == pytest.approx(1 / _constraints(v, mu).min(),
                                                             rel=1e-12)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_gaussian_limit(k):
    """Near 1/2 Bernoulli arms look like Gaussians with σ = 1/2; about 0.5 the divergences
    agree to third order, so the relative difference shrinks like ε²."""
    diffs = []
    for eps in (1e-2, 1e-3):
        mu = 0.5 - eps * np.arange(k)
        T, w = bernoulli_characteristic_time(mu)
        T_g, w_g = characteristic_time(mu, noise_stds=0.5)
        diffs.append(abs(T / T_g - 1))
        np.testing.assert_allclose(w, w_g, atol=10 * eps**2)
    assert diffs[1] < 1e-5
    assert diffs[1] < diffs[0] / 50


WARM = [np.array([0.7, 0.5, 0.45, 0.1]), np.array([1.0, 0.0, 0.3, 0.98, 0.0]),
        np.array([0.2, 0.01, 0.0, 0.15, 0.19, 0.05]), np.array([0.5, 0.4])]


@pytest.mark.parametrize("mu", WARM, ids=range(len(WARM)))
@pytest.mark.parametrize("factor", [1 + 1e-9, 0.99, 1.3, 1e-3, 1e-12, 30.0, 1e6])
def test_warm_start_gives_the_cold_result(mu, factor):
    b = int(np.argmax(mu))
    w_cold = np.empty(mu.size)
    T, y = solve_oracle_bernoulli(mu, b, w_cold, 0.0)
    w_warm = np.full(mu.size, np.nan)
    T2, y2 = solve_oracle_bernoulli(mu, b, w_warm, y * factor)
    assert T2 == pytest.approx(T, rel=1e-12)
    assert y2 == pytest.approx(y, rel=1e-12)
    np.testing.assert_allclose(w_warm, w_cold, rtol=1e-10)


def test_warm_start_from_the_previous_instance():
    """As in Track-and-Stop: the y of the instance before one more sample."""
    rng = np.random.default_rng(7)
    mu = np.array([0.62, 0.55, 0.3, 0.0, 0.58, 0.1])
    w = np.empty(mu.size)
    _, y = solve_oracle_bernoulli(mu, 0, w, 0.0)
    for _ in range(200):
        mu = np.clip(mu + 0.002 * rng.normal(size=mu.size), 0.0, 1.0)
        b = int(np.argmax(mu))
        T, y = solve_oracle_bernoulli(mu, b, w, y)
        T_cold, w_cold = bernoulli_characteristic_time(mu)
        assert T == pytest.approx(T_cold, rel=1e-12)
        np.testing.assert_allclose(w, w_cold, rtol=1e-10)


TINY = [[0.5, 0.5 - 1e-6, 0.3], [1.0, 1.0 - 1e-6, 0.0], [1e-6, 0.0], [0.3, 0.3 - 1e-6, 0.0],
        [0.9, 0.9 - 1e-6, 0.9 - 2e-6, 0.9 - 3e-6], [0.999999, 0.999998, 0.0, 0.5]]


@pytest.mark.parametrize("mu", TINY, ids=range(len(TINY)))
def test_tiny_gaps(mu):
    mu = np.array(mu)
    T, w = bernoulli_characteristic_time(mu)
    assert math.isfinite(T) and T > 1e5
    # the rounding of m to a double limits the precision to about eps / gap
    np.testing.assert_allclose(_constraints(w, mu, kl_bernoulli) * T, 1.0, rtol=1e-7)
    assert bernoulli_allocation_time(mu, w) == pytest.approx(T, rel=1e-7)


def test_tiny_gap_matches_the_local_gaussian_approximation():
    """For a gap Δ at p the arms are Gaussian with σ² = p(1-p): T* ≈ 8 p(1-p)/Δ²."""
    for p in (0.5, 0.1, 0.9):
        T, w = bernoulli_characteristic_time([p + 5e-7, p - 5e-7])
        assert T == pytest.approx(8 * p * (1 - p) / 1e-12, rel=1e-5)
        np.testing.assert_allclose(w, 0.5, rtol=1e-5)


@pytest.mark.parametrize("edges", [False, True])
def test_a_thousand_arms(edges):
    rng = np.random.default_rng(3)
    mu = rng.uniform(0, 1, 1000)
    if edges:
        mu[:300] = 0.0
        mu[500] = 1.0
        mu[501] = 1.0 - 1e-6  # and a tiny gap
    T, w = bernoulli_characteristic_time(mu)
    assert math.isfinite(T) and T > 0
    assert w.sum() == pytest.approx(1.0, abs=1e-12) and np.all(w > 0)
    np.testing.assert_allclose(_constraints(w, mu, kl_bernoulli) * T, 1.0,
                               rtol=1e-7 if edges else 1e-9)
    # arms with equal means get equal weights
    if edges:
        assert np.all(w[:300] == w[0])


def test_permuting_the_arms_permutes_the_allocation():
    mu = np.array([0.3, 0.0, 0.8, 0.55, 0.79, 0.0, 1e-3])
    T, w = bernoulli_characteristic_time(mu)
    perm = np.random.default_rng(0).permutation(mu.size)
    T_p, w_p = bernoulli_characteristic_time(mu[perm])
    assert T_p == pytest.approx(T, rel=1e-13)
    np.testing.assert_allclose(w_p, w[perm], rtol=1e-12)


@pytest.mark.parametrize("means, match", [
    ([0.5], "means must be a finite vector of length >= 2"),
    ([], "means"),
    (0.5, "means must be a finite vector"),
    ([[0.5, 0.2], [0.1, 0.0]], "means must be finite real numbers"),
    ([0.5, float("nan")], "means must be finite real numbers"),
    ([0.5, float("inf")], "means must be finite real numbers"),
    (["0.5", "0.2"], "means must be finite real numbers"),
    ([True, False], "means must be finite real numbers"),
    ([0.5, -0.1], r"means must lie in \[0, 1\]"),
    ([1.5, 0.2], r"means must lie in \[0, 1\]"),
    ([0.6, 0.6, 0.1], "means: the best arm must be unique"),
    ([1.0, 1.0], "means: the best arm must be unique"),
    ([1e-320, 0.0], "means: T\\* is out of floating-point range"),
])
def test_bad_means(means, match):
    with pytest.raises(ValueError, match=match):
        bernoulli_characteristic_time(means)
    k = max(np.size(means), 1)
    with pytest.raises(ValueError, match=match):
        bernoulli_allocation_time(means, np.full(k, 1 / k))


@pytest.mark.parametrize("gap_ulps", [1, 8, 60])
def test_gaps_of_a_few_ulps_are_refused(gap_ulps):
    """m cannot fall strictly between two adjacent doubles: with a one-ulp gap the rounded
    mixture would give half the true T* (8 p(1-p)/Δ²), so such gaps are refused."""
    for p in (0.3, 1.0, 1e-5):
        mu = [p, p - gap_ulps * np.spacing(p)]
        with pytest.raises(ValueError, match="means: the gap to the best arm.* under 64 ulps"):
            bernoulli_characteristic_time(mu)
        with pytest.raises(ValueError, match="means: the gap to the best arm"):
            bernoulli_allocation_time(mu, [0.5, 0.5])


def test_a_gap_of_a_hundred_ulps_is_accepted():
    p = 0.3
    delta = 100 * np.spacing(p)
    T, w = bernoulli_characteristic_time([p, p - delta])
    assert T == pytest.approx(8 * p * (1 - p) / delta**2, rel=0.05)


@pytest.mark.parametrize("weights, match", [
    ([0.5, 0.5], "weights must be 3 non-negative numbers summing to 1"),
    ([0.5, 0.6, -0.1], "weights must be 3 non-negative numbers"),
    ([0.3, 0.3, 0.3], "summing to 1"),
    ([0.5, float("nan"), 0.5], "weights must be finite real numbers"),
    ("abc", "weights must be finite real numbers"),
    ([0.0, 0.5, 0.5], "weights: the best arm must get a positive weight"),
    ([0.5, 0.5, 0.0], "weights: every arm must get a positive weight"),
])
def test_bad_weights(weights, match):
    with pytest.raises(ValueError, match=match):
        bernoulli_allocation_time([0.9, 0.5, 0.1], weights)


def test_inputs_are_not_modified_and_results_are_plain():
    mu = np.array([0.4, 0.9, 0.0])
    copy = mu.copy()
    T, w = bernoulli_characteristic_time(mu)
    np.testing.assert_array_equal(mu, copy)
    assert type(T) is float and isinstance(w, np.ndarray) and w.shape == (3,)
    assert type(bernoulli_allocation_time(mu, w)) is float
    # lists and integer means are accepted
    assert bernoulli_characteristic_time([1, 0])[0] == pytest.approx(1 / math.log(2))

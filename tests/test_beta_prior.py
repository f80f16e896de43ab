"""Tests of :mod:`bai_lib.beta_prior`: L(H) of Definition 2, the volume lemma and Δ0 for Beta
priors over Bernoulli arm means, against closed forms, independent quadratures, Monte Carlo
and the Gaussian approximation; and the checks of every input."""

from __future__ import annotations

import itertools
import math
import time
from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy import integrate
from scipy.special import betainc, betaln
from scipy.stats import beta as beta_dist

from bai_lib.beta_prior import PARAM_RANGE, BetaPrior, _betaln, _log_tail
from bai_lib.priors import GaussianPrior, delta0
from time_bound import answered

#: conversion-rate prior: a + b = 1000, means 2%, 2.5%, 3% (stds 0.0044 to 0.0054)
CONVERSION = ([20.0, 25.0, 30.0], [980.0, 975.0, 970.0])
#: uneven priors: a wide arm with a narrow one; U-shaped arms with singular densities at 0
#: and 1 (sum(a) = 1.5 and b_(1) + b_(2) = 1.3: integrands like x^-0.5 and (1-x)^-0.7)
UNEVEN = ([1.0, 300.0, 2.0], [1.0, 700.0, 5.0])
U_SHAPED = ([0.5, 0.4, 0.6], [0.5, 0.8, 3.0])
MIXED_5 = ([1.0, 300.0, 0.5, 20.0, 4.0], [1.0, 700.0, 0.7, 980.0, 4.0])
MIXED_10 = ([1.0, 300.0, 20.0, 25.0, 0.5, 3.0, 0.8, 60.0, 2.0, 9.0],
            [1.0, 700.0, 980.0, 975.0, 0.5, 9.0, 0.9, 140.0, 2.0, 1.0])
ALL_METHODS = ("auto", "pairwise", "single")


# ------------------------------------------------------------------ closed forms
@pytest.mark.parametrize("method", ALL_METHODS)
def test_two_uniform_arms(method):
    # L_12 = ∫_0^1 1 · 1 dx = 1, counted for both ordered pairs
    H = BetaPrior.uniform(2)
    assert H.L(method) == pytest.approx(2.0, rel=1e-13)
    assert np.allclose(H.L_matrix(), [[0.0, 1.0], [1.0, 0.0]], rtol=1e-13, atol=0)


@pytest.mark.parametrize("k", [3, 4, 6, 12])
def test_k_uniform_arms(k):
    # L = k(k-1) ∫_0^1 x^(k-2) dx = k; k = 12 goes through the single integral ("auto")
    H = BetaPrior.uniform(k)
    for method in ALL_METHODS:
        assert H.L(method) == pytest.approx(k, rel=1e-12)


@pytest.mark.parametrize("a", [[0.5, 0.7], [0.52, 0.5], [0.2, 0.3, 0.6], [0.3, 0.5, 2.0, 7.0],
                               [1.0, 40.0]])
def test_beta_a_1_arms(a):
    # Beta(a_s, 1): H_s = x^a_s, h_s = a_s x^(a_s - 1), so with A = sum(a)
    # L_ij = a_i a_j ∫_0^1 x^(A-2) dx = a_i a_j / (A - 1) and L = (A^2 - sum a_i^2) / (A - 1).
    # A = 1.2, 1.02 and 1.1: the integrand is singular like x^-0.8, x^-0.98 and x^-0.9 at 0
    # (without the substitution x = u^m / 2 the quadrature does not converge at 1.02).
    a = np.array(a)
    A = a.sum()
    H = BetaPrior(a, np.ones(a.size))
    expected = np.outer(a, a) / (A - 1.0)
    np.fill_diagonal(expected, 0.0)
    assert np.allclose(H.L_matrix(), expected, rtol=1e-12, atol=0)
    for method in ALL_METHODS:
        assert H.L(method) == pytest.approx((A * A - np.sum(a * a)) / (A - 1.0), rel=1e-12)


@pytest.mark.parametrize("b", [[0.75, 0.75], [0.55, 0.5], [0.75, 0.6, 2.5], [0.55, 0.5, 2.0],
                               [0.6, 1.5, 3.0, 0.9]])
def test_beta_1_b_arms(b):
    # Beta(1, b_s): with y = 1 - x, H_s = 1 - y^b_s and h_s = b_s y^(b_s - 1), so expanding
    # prod_{s != i,j} (1 - y^b_s) over the subsets S of the other arms,
    # L_ij = b_i b_j sum_S (-1)^|S| / (b_i + b_j - 1 + sum_S b_s).
    # b = (0.75, 0.75): L = 2 * 0.5625 / 0.5 = 2.25; b_i + b_j - 2 < 0: singular at x = 1
    # (like (1-x)^-0.95 for b = (0.55, 0.5)).
    b = np.array(b)
    k = b.size
    expected = np.zeros((k, k))
    for i, j in itertools.combinations(range(k), 2):
        others = [s for s in range(k) if s not in (i, j)]
        expected[i, j] = expected[j, i] = b[i] * b[j] * sum(
            (-1) ** len(S) / (b[i] + b[j] - 1.0 + sum(b[s] for s in S))
            for r in range(len(others) + 1) for S in itertools.combinations(others, r))
    H = BetaPrior(np.ones(k), b)
    assert np.allclose(H.L_matrix(), expected, rtol=1e-12, atol=0)
    for method in ALL_METHODS:
        assert H.L(method) == pytest.approx(expected.sum(), rel=1e-12)
    if k == 2:  # 2 b_1 b_2 / (b_1 + b_2 - 1)
        assert H.L() == pytest.approx(2 * b[0] * b[1] / (b[0] + b[1] - 1.0), rel=1e-12)


def test_wide_arm_with_narrow_arm():
    # Beta(1, 1) with any other arm: L = 2 ∫ 1 · h_2 dx = 2, however narrow arm 2 is; at
    # a + b = 1e7, scipy.special.betaln alone would be off by 3e-8
    for a, b in [(300.0, 700.0), (20.0, 980.0), (5e6, 5e6), (2e5, 9.8e6), (999.0, 1.0)]:
        H = BetaPrior([1.0, a], [1.0, b])
        assert H.L("pairwise") == pytest.approx(2.0, rel=1e-9), (a, b)
        assert H.L("single") == pytest.approx(2.0, rel=1e-9), (a, b)


@pytest.mark.parametrize("k", [2, 4])
def test_gap_probability_uniform_arms(k):
    # the k + 1 spacings of k uniform points are exchangeable: P[gap > Δ] = (1 - Δ)^k
    # (k = 2: P[gap <= Δ] = 2Δ - Δ²)
    H = BetaPrior.uniform(k)
    for d in [1e-4, 1e-3, 0.05, 0.3, 0.7, 0.99]:
        assert H.gap_probability(d) == pytest.approx(1.0 - (1.0 - d) ** k, rel=1e-10), d
    assert H.gap_probability(0.0) == 0.0
    assert H.gap_probability(1.0) == 1.0
    assert H.gap_probability(3) == 1.0


# ------------------------------------------------------------------ two methods, one quantity
@pytest.mark.parametrize("a,b", [CONVERSION, UNEVEN, U_SHAPED, MIXED_5, MIXED_10],
                         ids=["conversion", "uneven", "u-shaped", "mixed-5", "mixed-10"])
def test_pairwise_and_single_agree(a, b):
    H = BetaPrior(a, b)
    pairwise, single = H.L("pairwise"), H.L("single")
    assert abs(pairwise - single) <= 1e-10 * single
    assert H.L("auto") == pairwise  # k <= 10
    M = H.L_matrix()
    assert np.array_equal(M, M.T) and np.all(np.diag(M) == 0.0)
    assert np.all(M[~np.eye(H.k, dtype=bool)] > 0.0)


def test_auto_uses_the_single_integral_above_ten_arms():
    a, b = MIXED_10
    H = BetaPrior(a + [4.0], b + [4.0])
    assert H.L() == H.L("single")
    assert H.L("pairwise") == pytest.approx(H.L("single"), rel=1e-10)


# ------------------------------------------------------------------ independent checks
def _quad_L_ij(a, b, i, j):
    """Definition 2 with scipy.integrate.quad and scipy.stats.beta, breakpoints at quantiles."""
    k = len(a)

    def f(x):
        value = beta_dist.pdf(x, a[i], b[i]) * beta_dist.pdf(x, a[j], b[j])
        for s in range(k):
            if s not in (i, j):
                value *= beta_dist.cdf(x, a[s], b[s])
        return value

    pts = np.unique(np.concatenate([beta_dist.ppf([1e-12, 0.01, 0.5, 0.99, 1 - 1e-12], a[s], b[s])
                                    for s in range(k)]))
    value, _ = integrate.quad(f, 0.0, 1.0, points=pts, epsabs=0.0, epsrel=1e-12, limit=1000)
    return value


@pytest.mark.parametrize("a,b", [([2.0, 3.0, 4.0, 1.5], [3.0, 2.0, 4.0, 2.5]), CONVERSION, UNEVEN],
                         ids=["smooth", "conversion", "uneven"])
def test_L_matrix_against_direct_quadrature(a, b):
    M = BetaPrior(a, b).L_matrix()
    for i, j in itertools.combinations(range(len(a)), 2):
        assert M[i, j] == pytest.approx(_quad_L_ij(a, b, i, j), rel=1e-9), (i, j)


@pytest.mark.parametrize("a,b,deltas", [
    (CONVERSION[0], CONVERSION[1], [0.001, 0.004]),
    ([2.0, 30.0, 0.5], [5.0, 70.0, 0.5], [0.01, 0.05]),
    ([0.5, 0.5, 1.0], [0.5, 0.5, 1.0], [0.02, 0.2]),
], ids=["conversion", "mixed", "u-shaped"])
def test_gap_probability_against_monte_carlo(a, b, deltas):
    H = BetaPrior(a, b)
    n = 10**6
    top2 = np.sort(H.sample_means(20240611, n), axis=1)[:, -2:]
    gap = top2[:, 1] - top2[:, 0]
    for d in deltas:
        p = H.gap_probability(d)
        z = (np.mean(gap <= d) - p) / math.sqrt(p * (1.0 - p) / n)
        assert abs(z) < 4.5, (d, p, z)


def test_gap_probability_of_arms_piled_up_at_one():
    # b = 0.01 and 0.07: most draws lie within 1e-10 of 1, so 1 - μ ~ Beta(b, a) is drawn
    # instead of μ (no rounding of μ to 1.0); gaps of 1e-12 are common. L(H) is infinite here.
    a, b = np.array([3.6, 4.9, 4.1, 4.9]), np.array([1.35, 0.01, 0.8, 0.07])
    H = BetaPrior(a, b)
    n = 10**6
    y = np.sort(np.random.default_rng(3).beta(b, a, size=(n, 4)), axis=1)
    gap = y[:, 1] - y[:, 0]
    for d in [1e-12, 1e-9, 1e-3]:
        p = H.gap_probability(d)
        z = (np.mean(gap <= d) - p) / math.sqrt(p * (1.0 - p) / n)
        assert abs(z) < 4.5, (d, p, z)


@pytest.mark.parametrize("a,b,scale", [([2.0, 3.0, 4.0], [3.0, 2.0, 4.0], 1.0),
                                       (CONVERSION[0], CONVERSION[1], 0.005)],
                         ids=["smooth", "conversion"])
def test_volume_ratio_tends_to_L_linearly(a, b, scale):
    # Lemma 1: L(H, Δ) = L(H) + O(Δ) for smooth densities; scale ~ the prior stds
    H = BetaPrior(a, b)
    L = H.L()
    diffs = [abs(H.volume_ratio(scale * d) / L - 1.0) for d in (1e-2, 1e-3, 1e-4)]
    assert diffs[2] < 1e-3
    for big, small in zip(diffs, diffs[1:]):
        assert 7.0 < big / small < 14.0, diffs


def test_volume_ratio_of_u_shaped_prior_tends_to_L():
    # the densities are singular, so the convergence is slower than linear, but it converges
    H = BetaPrior(*U_SHAPED)
    diffs = [abs(H.volume_ratio(d) / H.L() - 1.0) for d in (1e-2, 1e-3, 1e-4, 1e-5)]
    assert all(x > y for x, y in zip(diffs, diffs[1:])) and diffs[-1] < 0.01, diffs


def _conversion(n: float) -> BetaPrior:
    """Means 2% + (0, 1, 2) x 0.005 sqrt(1000 / n) with a + b = n: the arms stay about one
    prior std apart as n grows (with fixed means they would separate, and L would come from
    the tails, where Beta and normal differ most)."""
    m = 0.02 + np.array([0.0, 0.005, 0.01]) * math.sqrt(1000.0 / n)
    return BetaPrior(m * n, (1.0 - m) * n)


def test_conversion_rate_prior_against_the_gaussian_approximation():
    H = BetaPrior(*CONVERSION)
    assert np.array_equal(_conversion(1000.0).a, H.a)
    L = H.L()
    assert 0.2 < L * float(np.mean(H.stds)) < 2.0 and L > 50  # of order 1 / std
    assert H.L("single") == pytest.approx(L, rel=1e-10)
    rel = []
    for n in (1e3, 1e4, 1e5):
        Hn = _conversion(n)
        rel.append(abs(Hn.L() / GaussianPrior(Hn.means, Hn.stds).L() - 1.0))
    assert rel[0] < 0.02
    assert rel[1] < rel[0] / 2 and rel[2] < rel[1] / 2, rel


# ------------------------------------------------------------------ internals
def test_log_cdf_continued_fraction_matches_betainc_in_the_far_tail():
    for a, b in [(20.0, 980.0), (300.0, 700.0), (1e4, 1e4), (1e6, 10.0), (0.5, 3.0)]:
        x = beta_dist.ppf(np.array([1e-30, 1e-100, 1e-200, 1e-280]), a, b)
        x = x[x > 0]
        ref = np.log(betainc(a, b, x))
        got = _log_tail(x, np.log(x), np.log1p(-x), np.full(x.size, a), np.full(x.size, b),
                        np.full(x.size, betaln(a, b)))
        assert np.allclose(got, ref, rtol=2e-11, atol=0), (a, b, got - ref)


def _exact_log_beta(a: int, b: int) -> float:
    """log B(a, b) = log((a-1)! / (b (b+1) ... (b+a-1))) for integers, in 50-digit decimals."""
    getcontext().prec = 50
    den = math.prod(range(b, b + a))
    return float(Decimal(math.factorial(a - 1)).ln() - Decimal(den).ln())


def test_log_beta_against_exact_values():
    # scipy.special.betaln is off by 1.5e-12 at (3, 1e4) and by 3e-8 at (5e6, 5e6)
    for a, b in [(1, 30), (5, 20), (20, 40), (25, 100), (100, 1000), (300, 700), (3, 10_000),
                 (2000, 98_000), (30, 20)]:
        exact = _exact_log_beta(a, b)
        got = float(_betaln(np.array([float(a)]), np.array([float(b)]))[0])
        assert abs(got - exact) <= 1e-15 * (1.0 + abs(exact)), (a, b, got - exact)


# ------------------------------------------------------------------ Δ0 and basics
def test_delta0():
    H = BetaPrior(*CONVERSION)
    assert delta0(H, 0.05) == pytest.approx(0.05 / (4.0 * H.L()), rel=1e-15)
    assert delta0(H, 0.05, factor=1) == pytest.approx(0.05 / H.L(), rel=1e-15)


def test_means_stds_and_read_only_copies():
    a, b = np.array([2.0, 3.0]), np.array([5.0, 1.0])
    H = BetaPrior(a, b)
    a[0] = 9.0
    assert H.a[0] == 2.0 and a.flags.writeable
    assert np.allclose(H.means, [2 / 7, 3 / 4], rtol=1e-15)
    assert np.allclose(H.stds, beta_dist.std([2.0, 3.0], [5.0, 1.0]), rtol=1e-14)
    for arr in (H.a, H.b, H.means, H.stds, H.L_matrix()):
        assert not arr.flags.writeable
        with pytest.raises(ValueError):
            arr[0] = 1.0
    assert H == BetaPrior([2, 3], [5, 1]) and hash(H) == hash(BetaPrior([2, 3], [5, 1]))
    assert H != BetaPrior([2, 3], [5, 2]) and H.k == 2
    assert repr(H) == "BetaPrior(a=[2.0, 3.0], b=[5.0, 1.0])"


def test_sample_means():
    H = BetaPrior(*CONVERSION)
    draws = H.sample_means(7, 200_000)
    assert draws.shape == (200_000, 3) and np.all((draws > 0) & (draws < 1))
    assert np.array_equal(draws, H.sample_means(7, 200_000))
    from bai_lib._variates import prior_beta_means
    assert np.array_equal(draws[:10], prior_beta_means(H.a, H.b, 7, 10))
    generator = H.sample_means(np.random.default_rng(7), 200_000)
    assert generator.shape == draws.shape and not np.array_equal(generator[:10], draws[:10])
    assert np.all(np.abs(generator.mean(axis=0) - H.means) < 5 * H.stds / math.sqrt(200_000))
    assert not np.array_equal(H.sample_means(8, 10), draws[:10])
    se = H.stds / math.sqrt(draws.shape[0])
    assert np.all(np.abs(draws.mean(axis=0) - H.means) < 5 * se)


def test_infinite_L_is_refused_but_the_gap_probability_is_finite():
    for a, b, name in [([0.3, 0.4], [2.0, 2.0], "a"), ([2.0, 2.0, 3.0], [0.5, 0.5, 4.0], "b")]:
        H = BetaPrior(a, b)
        for call in (H.L, H.L_matrix, lambda: H.L("single"), lambda: delta0(H, 0.1)):
            with pytest.raises(ValueError, match=rf"^{name}: L\(H\) is infinite"):
                call()
        assert 0.0 < H.gap_probability(0.01) < 1.0


def test_L_that_underflows_is_refused():
    with pytest.raises(ValueError, match=r"^a and b: L\(H\) = 0.0 underflows"):
        BetaPrior([20.0, 980.0], [980.0, 20.0]).L()


# ------------------------------------------------------------------ bad input
H0 = BetaPrior(*CONVERSION)
lo, hi = PARAM_RANGE
BAD = [
    (lambda: BetaPrior([0.0, 1.0], [1.0, 1.0]), "^a must"),
    (lambda: BetaPrior([1.0, 1.0], [-1.0, 1.0]), "^b must"),
    (lambda: BetaPrior([1.0, math.nan], [1.0, 1.0]), "^a must"),
    (lambda: BetaPrior([1.0, 1.0], [math.inf, 1.0]), "^b must"),
    (lambda: BetaPrior([1.0, True], [1.0, 1.0]), "^a must"),
    (lambda: BetaPrior(np.array([True, True]), [1.0, 1.0]), "^a must"),
    (lambda: BetaPrior([1.0, 1.0], ["1", "2"]), "^b must"),
    (lambda: BetaPrior("1.0", [1.0, 1.0]), "^a must"),
    (lambda: BetaPrior([1.0, 1.0], None), "^b must"),
    (lambda: BetaPrior([1.0, 2.0, 3.0], [1.0, 1.0]), "^a and b must have the same length"),
    (lambda: BetaPrior([1.0], [1.0]), r"^a and b: need k >= 2"),
    (lambda: BetaPrior(2.0, 3.0), "^a must be a one-dimensional"),
    (lambda: BetaPrior([[1.0, 2.0]], [[1.0, 2.0]]), "^a must"),
    (lambda: BetaPrior([lo / 2, 1.0], [1.0, 1.0]), "^a must lie in the supported range"),
    (lambda: BetaPrior([1.0, 1.0], [1.0, hi * 2]), "^b must lie in the supported range"),
    (lambda: BetaPrior.uniform(1), "^k must"),
    (lambda: BetaPrior.uniform(2.0), "^k must"),
    (lambda: BetaPrior.uniform(True), "^k must"),
    (lambda: H0.gap_probability(-0.1), "^delta must"),
    (lambda: H0.gap_probability(math.nan), "^delta must"),
    (lambda: H0.gap_probability("0.1"), "^delta must"),
    (lambda: H0.gap_probability(True), "^delta must"),
    (lambda: H0.volume_ratio(0.0), "^delta must"),
    (lambda: H0.volume_ratio(-1e-3), "^delta must"),
    (lambda: H0.volume_ratio(1e-320), "^delta = .* is too small"),
    (lambda: H0.L("exact"), "^method must be one of"),
    (lambda: H0.L(None), "^method must be one of"),
    (lambda: H0.sample_means(1, 0), "^size must"),
    (lambda: H0.sample_means(1, -5), "^size must"),
    (lambda: H0.sample_means(1, 2.5), "^size must"),
    (lambda: H0.sample_means(1, True), "^size must"),
    (lambda: H0.sample_means(-1, 10), "^rng_or_seed must"),
    (lambda: H0.sample_means(1.5, 10), "^rng_or_seed must"),
    (lambda: H0.sample_means(True, 10), "^rng_or_seed must"),
    (lambda: H0.sample_means("1", 10), "^rng_or_seed must"),
    (lambda: H0.sample_means(None, 10), "^rng_or_seed must"),
    (lambda: delta0(H0, 0.0), "^delta must"),
    (lambda: delta0(H0, 1.0), "^delta must"),
    (lambda: delta0(H0, math.nan), "^delta must"),
    (lambda: delta0(H0, 0.1, factor=0.0), "^factor must"),
    (lambda: delta0(H0, 0.1, factor=-4.0), "^factor must"),
    (lambda: delta0(H0, 0.1, factor=math.inf), "^factor must"),
    (lambda: delta0(H0, 1e-320), "^delta0 = delta / \\(factor"),
]


@pytest.mark.parametrize("call,match", BAD, ids=[m for _, m in BAD])
def test_bad_input_raises_value_error_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# ------------------------------------------------------------------ time bounds
LIMIT = 60.0  # seconds for a call that must be refused or answered at once (or quickly)


_within = answered  # (value, seconds), failing the test after `seconds`


# ------------------------------------------------------------------ cost guards
@pytest.mark.parametrize("make, call, match", [
    (lambda: BetaPrior.uniform(10**6), lambda H: H.L(),
     r"^k: L\(H\) .* 1,000,000 arms .*1\.4e\+09 evaluations"),
    (lambda: BetaPrior.uniform(10**6), lambda H: H.L("single"), r"^k: .*MAX_EVALUATIONS"),
    (lambda: BetaPrior.uniform(3000), lambda H: H.L("pairwise"), r"^method: .*3,000 arms .* GiB"),
    (lambda: BetaPrior.uniform(100_000), lambda H: H.L("pairwise"), r"^method: .* GiB"),
    (lambda: BetaPrior.uniform(3000), lambda H: H.L_matrix(), r"^k: L_matrix .* GiB"),
    (lambda: BetaPrior.uniform(10**6), lambda H: H.gap_probability(0.01), r"^k: gap_probability"),
    (lambda: BetaPrior.uniform(10**6), lambda H: H.volume_ratio(0.01), r"^k: gap_probability"),
    (lambda: BetaPrior(np.linspace(1.0, 300.0, 1000), np.linspace(700.0, 1.0, 1000)),
     lambda H: H.L(), r"^k: .*1,000 distinct \(a, b\)\) needs about 6\.2e\+08"),
], ids=["1e6-auto", "1e6-single", "3000-pairwise", "1e5-pairwise", "3000-L_matrix",
        "1e6-gap", "1e6-volume", "1000-distinct"])
def test_a_computation_too_large_is_refused_before_it_starts(make, call, match):
    """The work (quadrature nodes x arms) and, for the pairwise integrals, the memory (nodes x
    pairs) are estimated before any work and refused beyond MAX_EVALUATIONS / MAX_BYTES with
    the estimate: 10^6 arms would take many minutes, 3,000 pairwise arms about 93 GiB."""
    H = make()
    with pytest.raises(ValueError, match=match):
        _within(LIMIT, call, H)
    assert not H._cache.get("quantiles")  # refused before the first quantile was computed


def test_the_refusals_take_no_time():
    H = BetaPrior.uniform(10**6)
    start = time.perf_counter()
    for call in (H.L, H.L_matrix, lambda: H.L("pairwise"), lambda: H.gap_probability(0.1)):
        with pytest.raises(ValueError, match="^(k|method): "):
            _within(LIMIT, call)
    assert time.perf_counter() - start < 1.0


def test_the_estimate_counts_the_work_actually_done(monkeypatch):
    """The planned evaluations (48 nodes per panel, 16 + 13 u panels for u distinct arms) are
    those of the first pass of the quadrature; the adaptive halving adds little."""
    import bai_lib.beta_prior as B

    done = []
    original = B._log_cdf

    def counting(x, *args):
        done.append(x.size * args[3].size)  # points x arms
        return original(x, *args)

    monkeypatch.setattr(B, "_log_cdf", counting)
    for a, b in [MIXED_10, CONVERSION, ([2.478] * 40, [84.41] * 40)]:
        H = BetaPrior(a, b)
        distinct = len(set(zip(a, b)))
        planned = 48 * (16 + 13 * distinct) * H.k
        done.clear()
        H.L("single")
        assert planned <= sum(done) <= 1.25 * planned, (a, sum(done), planned)


def test_the_limits_can_be_raised(monkeypatch):
    import bai_lib._validate as V

    H = BetaPrior([2.0, 3.0, 4.0], [3.0, 2.0, 4.0])
    monkeypatch.setattr(V, "MAX_EVALUATIONS", 1000)
    with pytest.raises(ValueError, match="^k: .*MAX_EVALUATIONS = 1e\\+03"):
        H.L()
    monkeypatch.setattr(V, "MAX_EVALUATIONS", 10**8)
    assert H.L() > 0


@pytest.mark.parametrize("call, match", [
    (lambda: BetaPrior.uniform(10**12), "^k must be an integer in \\[2, 134,217,728\\]"),
    (lambda: BetaPrior.uniform(2**27 + 1), "^k must be an integer in"),
    (lambda: BetaPrior.uniform(2).sample_means(1, 10**12), "^size must be an integer in"),
    (lambda: BetaPrior.uniform(2).sample_means(np.random.default_rng(1), 10**12),
     "^size must be an integer in"),
], ids=["uniform-1e12", "uniform-2**27+1", "sample-seed", "sample-generator"])
def test_sizes_beyond_the_memory_limit_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        _within(LIMIT, call)


# ------------------------------------------------------------------ tiny gaps
@pytest.mark.parametrize("k", [2, 4])
def test_gap_probability_of_uniform_arms_down_to_the_smallest_normal_gap(k):
    """P[gap <= Δ] = 1 - (1 - Δ)^k exactly, to about 2e-13 relative for every Δ down to the
    smallest normal double, in milliseconds (no underflow to 0 at Δ = 1e-300, no quadrature
    lost in the rounding of H(x) - H(x - Δ) at Δ = 1e-10 to 1e-14)."""
    H = BetaPrior.uniform(k)
    deltas = [0.99, 0.3, 1e-3, 1e-6, 1e-8, 1e-10, 1e-12, 1e-14, 1e-16, 1e-20, 1e-100, 1e-300,
              2.3e-308]
    for d in deltas:
        exact = -math.expm1(k * math.log1p(-d))
        p, seconds = _within(LIMIT, H.gap_probability, d)
        assert p == pytest.approx(exact, rel=2e-13, abs=0), (d, p, exact)
        assert seconds < 10.0, (d, seconds)
    assert BetaPrior.uniform(2).gap_probability(1e-300) == pytest.approx(2e-300, rel=2e-13)


@pytest.mark.parametrize("a, b", [([2.0, 3.0, 4.0], [3.0, 2.0, 4.0]), CONVERSION, UNEVEN,
                                  U_SHAPED, ([1e7, 1e7], [1e7, 1e7]), MIXED_5],
                         ids=["smooth", "conversion", "uneven", "u-shaped", "1e7", "mixed-5"])
def test_volume_ratio_is_L_at_tiny_gaps(a, b):
    """L(H, Δ) = L(H) + O(Δ) (+ O(Δ^(A-1)) for U-shaped arms): at Δ <= 1e-100 the two agree to
    the documented accuracy, 2e-13 + 2e-16 max(a + b); at 1e-10 to 1e-14 within the linear
    term and that accuracy, answered in seconds."""
    H = BetaPrior(a, b)
    L = H.L()
    tol = 2e-13 + 2e-16 * float(np.max(H.a + H.b))
    for d in (1e-100, 1e-200, 1e-300):
        ratio, _ = _within(LIMIT, H.volume_ratio, d)
        assert ratio == pytest.approx(L, rel=tol, abs=0), (d, ratio / L - 1)
    if np.all(H.a >= 1.0) and np.all(H.b >= 1.0):  # bounded densities: the linear term
        slope = 1.0 / float(np.min(H.stds))
        for d in (1e-10, 1e-12, 1e-14):
            ratio, seconds = _within(LIMIT, H.volume_ratio, d)
            assert abs(ratio / L - 1.0) <= slope * d + tol, (d, ratio / L - 1)
            assert seconds < 10.0, (d, seconds)


def test_gaps_below_the_smallest_normal_double_or_underflowing_are_refused():
    H = BetaPrior.uniform(2)
    for d in (1e-320, 1e-310, 5e-324):
        with pytest.raises(ValueError, match=r"^delta = .* is too small"):
            H.gap_probability(d)
    far = BetaPrior([1.0, 1e7], [1e7, 1.0])  # means 1e-7 and 1 - 1e-7: the gap is about 1
    with pytest.raises(ValueError, match=r"^delta = 0\.1: P\[gap <= delta\] = 0 underflows"):
        far.gap_probability(0.1)


# ------------------------------------------------------------------ documented accuracy of L
def _log_gamma_exact(z):
    """log Γ(z) in 50-digit decimal arithmetic: the recurrence up to z >= 1000, then Stirling's
    series with ten Bernoulli terms (error below 1e-50 there)."""
    getcontext().prec = 50
    bern = [Decimal(1) / 6, Decimal(-1) / 30, Decimal(1) / 42, Decimal(-1) / 30,
            Decimal(5) / 66, Decimal(-691) / 2730, Decimal(7) / 6, Decimal(-3617) / 510,
            Decimal(43867) / 798, Decimal(-174611) / 330]
    z, shift = Decimal(z), Decimal(0)
    while z < 1000:
        shift += z.ln()
        z += 1
    pi = Decimal("3.14159265358979323846264338327950288419716939937510")
    s = (z - Decimal("0.5")) * z.ln() - z + (2 * pi).ln() / 2
    power = z
    for n, b in enumerate(bern, 1):
        s += b / (2 * n * (2 * n - 1) * power)
        power *= z * z
    return s - shift


def _two_iid_arms_L(a, b):
    """L of two iid Beta(a, b) arms: 2 ∫ h² = 2 B(2a - 1, 2b - 1) / B(a, b)² (a, b > 1/2),
    with log B in decimal arithmetic."""
    def log_beta(x, y):
        return _log_gamma_exact(x) + _log_gamma_exact(y) - _log_gamma_exact(Decimal(x) + Decimal(y))
    two = Decimal(2)
    return float(two * (log_beta(two * Decimal(a) - 1, two * Decimal(b) - 1)
                        - two * log_beta(a, b)).exp())


@pytest.mark.parametrize("a, b", [(0.6, 0.6), (1.0, 1.0), (2.478, 84.41), (0.6, 50.0),
                                  (10.0, 1e3), (1e3, 1e3), (1e4, 1e5), (1e5, 1e5), (3e6, 1e6),
                                  (1e6, 1e6), (1e7, 3e6), (1e7, 1e7), (1e7, 1.0), (50.0, 1e7)])
def test_two_iid_arms_meet_the_documented_accuracy(a, b):
    """Relative error within 1e-12 + 2e-16 (a + b) (the docstring of L) against the closed form
    in decimal arithmetic, for both methods. At a = b = 1e7 the error is 1.7e-9 (1e-9 is the
    floor of log densities of size 1e7 in double precision); a reference through
    scipy.special.betaln is itself off by 3.5e-7 there (next test)."""
    H = BetaPrior([a, a], [b, b])
    exact = _two_iid_arms_L(a, b)
    tol = 1e-12 + 2e-16 * (a + b)
    for method in ("pairwise", "single"):
        got = H.L(method)
        assert got == pytest.approx(exact, rel=tol, abs=0), (method, got / exact - 1)


def test_scipy_betaln_is_too_coarse_a_reference_at_large_parameters():
    """Why the decimal reference: the closed form through scipy.special.betaln is off by about
    3.5e-7 at a = b = 1e7, far beyond the accuracy of L (which meets the exact form)."""
    a = 1e7
    via_scipy = 2.0 * math.exp(betaln(2 * a - 1, 2 * a - 1) - 2.0 * betaln(a, a))
    exact = _two_iid_arms_L(a, a)
    assert abs(via_scipy / exact - 1.0) > 1e-7
    assert abs(BetaPrior([a, a], [a, a]).L() / exact - 1.0) < 5e-9

"""Tests of :mod:`bai_lib.gamma_prior`: L(H) of Definition 2 and the volume lemma for Gamma
priors over Poisson arm means, against closed forms, independent quadratures with
``scipy.stats.gamma`` and Monte Carlo; the seeded prior stream of
:func:`bai_lib._variates.prior_gamma_means`; and the checks of every input."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy import integrate, optimize, stats
from scipy.special import gammaln

from bai_lib import _rng, _variates
from bai_lib.gamma_prior import (PAIRWISE_MAX_K, PARAM_RANGE, RATE_RANGE, GammaPrior, _ell,
                                _log_cdf)
from time_bound import answered

ALL_METHODS = ("auto", "pairwise", "single")
#: priors of 2, 3 and 5 arms: smooth ones, one with a narrow arm, and shapes below 1 (the
#: integrands are singular like x^(sum(a) - 2) at 0: x^-0.6 for SMALL_3, x^0.5 for MIXED_5)
TWO = ([2.0, 3.0], [1.0, 0.5])
THREE = ([2.0, 3.0, 4.0], [1.0, 1.5, 2.0])
NARROW = ([50.0, 60.0, 40.0], [10.0, 11.0, 9.0])
SMALL_3 = ([0.5, 0.6, 0.3], [1.0, 2.0, 0.7])
MIXED_5 = ([0.4, 0.7, 1.5, 3.0, 0.9], [0.5, 1.0, 2.0, 1.2, 0.8])
PRIORS = [TWO, THREE, NARROW, SMALL_3, MIXED_5]
IDS = ["two", "three", "narrow", "small-shapes", "mixed-5"]


def _gamma(a, b):
    return stats.gamma(a, scale=1.0 / b)


def _pieces(a, b, extra=()):
    """Break points for scipy's quad: every arm's 1%, 50% and 99% quantiles."""
    pts = {float(_gamma(ai, bi).ppf(q)) for ai, bi in zip(a, b) for q in (0.01, 0.5, 0.99)}
    pts = sorted(pts | set(extra))
    return pts


def _quad(f, pts):
    """∫_0^∞ f by scipy's quad on [0, p_0], [p_0, p_-1] (break points between), [p_-1, ∞)."""
    opts = dict(epsabs=0.0, epsrel=1e-12, limit=1000)
    return (integrate.quad(f, 0.0, pts[0], **opts)[0]
            + integrate.quad(f, pts[0], pts[-1], points=pts[1:-1], **opts)[0]
            + integrate.quad(f, pts[-1], np.inf, **opts)[0])


def _quad_L_ij(a, b, i, j):
    """Definition 2 by scipy: ∫ h_i h_j Π_{s≠i,j} H_s with scipy.stats.gamma."""
    arms = [_gamma(ai, bi) for ai, bi in zip(a, b)]

    def f(x):
        v = arms[i].pdf(x) * arms[j].pdf(x)
        for s, arm in enumerate(arms):
            if s not in (i, j):
                v *= arm.cdf(x)
        return v

    return _quad(f, _pieces(a, b))


def _quad_gap(a, b, d):
    """P[gap <= Δ] = Σ_i ∫ h_i(x) [Π_{s≠i} H_s(x) - Π_{s≠i} H_s(x - Δ)] dx by scipy."""
    arms = [_gamma(ai, bi) for ai, bi in zip(a, b)]
    total = 0.0
    for i in range(len(a)):
        def f(x, i=i):
            others = [arm for s, arm in enumerate(arms) if s != i]
            return arms[i].pdf(x) * (np.prod([arm.cdf(x) for arm in others])
                                     - np.prod([arm.cdf(x - d) for arm in others]))
        total += _quad(f, _pieces(a, b, [d]))
    return total


def _two_arm_L(a1, a2, b1, b2):
    """Two arms: L = 2 ∫ h_1 h_2 = 2 b1^a1 b2^a2 Γ(A-1) / (Γ(a1) Γ(a2) (b1+b2)^(A-1))."""
    A = a1 + a2
    return 2.0 * math.exp(a1 * math.log(b1) + a2 * math.log(b2) + gammaln(A - 1.0)
                          - gammaln(a1) - gammaln(a2) - (A - 1.0) * math.log(b1 + b2))


def _ratio_half(a):
    """Γ(a + 1/2) / Γ(a): from log Γ up to a = 100, else its asymptotic series (error < 1e-16;
    log Γ differences of size a log a lose ~1e-13 at a = 1000)."""
    if a <= 100.0:
        return math.exp(gammaln(a + 0.5) - gammaln(a))
    x = 1.0 / a
    series = (1 - x / 8 + x**2 / 128 + 5 * x**3 / 1024 - 21 * x**4 / 32768
              - 399 * x**5 / 262144 + 869 * x**6 / 4194304)
    return math.sqrt(a) * series


# ------------------------------------------------------------------ closed forms
@pytest.mark.parametrize("a", [0.51, 0.6, 1.0, 2.5, 19.9, 20.0, 30.0, 1e3, 1e5, 1e7])
@pytest.mark.parametrize("method", ALL_METHODS)
def test_two_iid_arms(a, method):
    # L = 2 ∫ h^2 = 2 b Γ(2a-1) / (Γ(a)^2 2^(2a-1)) = 2 b Γ(a+1/2) / ((2a-1) Γ(a) √π)
    # (duplication formula), finite for a > 1/2
    b = 1.7
    exact = 2.0 * b * _ratio_half(a) / ((2.0 * a - 1.0) * math.sqrt(math.pi))
    if a <= 30:
        assert exact == pytest.approx(
            2 * b * math.exp(gammaln(2 * a - 1) - 2 * gammaln(a) - (2 * a - 1) * math.log(2)),
            rel=1e-13)
    assert GammaPrior([a, a], [b, b]).L(method) == pytest.approx(exact, rel=1e-12 + 2e-16 * a)


@pytest.mark.parametrize("a1,a2,b1,b2", [(0.5, 0.501, 1.0, 1.0), (0.3, 0.9, 2.0, 0.5),
                                         (0.01, 1.2, 1.0, 1.0), (0.01, 0.995, 3.0, 0.2),
                                         (2.0, 3.0, 1.0, 0.5), (7.0, 0.02, 1e-3, 2e-3)])
def test_two_arms_closed_form(a1, a2, b1, b2):
    # sum(a) = 1.001: the integrand is like x^-0.999 at 0 (finite only through x = c u^m0)
    H = GammaPrior([a1, a2], [b1, b2])
    exact = _two_arm_L(a1, a2, b1, b2)
    for method in ALL_METHODS:
        assert H.L(method) == pytest.approx(exact, rel=1e-12), method


@pytest.mark.parametrize("k", [2, 3, 7, 12, 40])
def test_iid_exponential_arms(k):
    # the top two of k iid Exp(r) are an Exp(r) gap apart: L = r, P[gap <= Δ] = 1 - e^(-r Δ)
    r = 2.5
    H = GammaPrior.exponential(k, rate=r)
    assert np.array_equal(H.a, np.ones(k)) and np.array_equal(H.b, np.full(k, r))
    for method in ALL_METHODS:
        assert H.L(method) == pytest.approx(r, rel=1e-12), method
    for d in [2.3e-308, 1e-300, 1e-100, 1e-14, 1e-8, 1e-3, 0.1, 0.7, 3.0, 12.0]:
        exact = -math.expm1(-r * d)
        assert H.gap_probability(d) == pytest.approx(exact, rel=2e-13), d
        assert H.volume_ratio(d) == pytest.approx(exact / d, rel=2e-13), d


# ------------------------------------------------------------------ against scipy
@pytest.mark.parametrize("a,b", PRIORS, ids=IDS)
def test_L_matrix_and_L_against_direct_quadrature(a, b):
    H = GammaPrior(a, b)
    M = H.L_matrix()
    assert np.array_equal(M, M.T) and np.all(np.diag(M) == 0.0)
    direct = 0.0
    for i, j in itertools.combinations(range(len(a)), 2):
        ref = _quad_L_ij(a, b, i, j)
        assert M[i, j] == pytest.approx(ref, rel=1e-9), (i, j)
        direct += 2.0 * ref
    for method in ALL_METHODS:
        assert H.L(method) == pytest.approx(direct, rel=1e-9), method


@pytest.mark.parametrize("a,b", PRIORS + [([0.3, 0.3, 0.45], [1.0, 2.0, 3.0]),
                                          ([0.1] * 12, [1.0] * 12),
                                          (np.linspace(0.5, 30.0, 11), np.linspace(3.0, 0.2, 11))],
                         ids=IDS + ["sum-a-1.05", "12-tiny-shapes", "11-spread"])
def test_pairwise_and_single_agree(a, b):
    H = GammaPrior(a, b)
    assert H.L("single") == pytest.approx(H.L("pairwise"), rel=1e-12)
    assert H.L("pairwise") == pytest.approx(float(np.sum(H.L_matrix())), rel=1e-15)
    expected = "pairwise" if H.k <= PAIRWISE_MAX_K else "single"
    assert H.L() == H.L(expected)


@pytest.mark.parametrize("a,b", [THREE, SMALL_3, MIXED_5], ids=["three", "small-shapes",
                                                                  "mixed-5"])
@pytest.mark.parametrize("d", [0.05, 0.5, 2.0])
def test_gap_probability_against_direct_quadrature(a, b, d):
    assert GammaPrior(a, b).gap_probability(d) == pytest.approx(_quad_gap(a, b, d), rel=1e-9)


@pytest.mark.parametrize("a,b,deltas", [(THREE[0], THREE[1], [0.05, 0.5]),
                                        (NARROW[0], NARROW[1], [0.02, 0.2]),
                                        (SMALL_3[0], SMALL_3[1], [0.01, 0.3])],
                         ids=["three", "narrow", "small-shapes"])
def test_gap_probability_against_monte_carlo(a, b, deltas):
    H = GammaPrior(a, b)
    n = 400_000
    top2 = np.sort(H.sample_means(20240611, n), axis=1)[:, -2:]
    gap = top2[:, 1] - top2[:, 0]
    for d in deltas:
        p = H.gap_probability(d)
        z = (np.mean(gap <= d) - p) / math.sqrt(p * (1.0 - p) / n)
        assert abs(z) < 4.5, (d, p, z)


@pytest.mark.parametrize("a,b", [THREE, NARROW, MIXED_5, ([1e5, 1e5, 1e5], [1.0, 1.001, 0.999])],
                         ids=["three", "narrow", "mixed-5", "large-shapes"])
def test_volume_ratio_tends_to_L(a, b):
    H = GammaPrior(a, b)
    L = H.L()
    # smooth densities (every a_s >= 1 or sum(a) large): L(H, Δ) - L(H) = O(Δ)
    errors = [abs(H.volume_ratio(d * float(np.min(H.stds))) / L - 1.0)
              for d in (1e-2, 1e-3, 1e-4)]
    assert errors[0] > errors[1] > errors[2]
    for d in (1e-12, 1e-100, 1e-300):
        assert H.volume_ratio(d) == pytest.approx(L, rel=2e-12), d


def test_volume_ratio_of_small_shapes_tends_to_L():
    # sum(a) = 1.4: P[gap <= Δ] = L Δ (1 + O(Δ^0.4)), a slow approach, exact at tiny Δ
    H = GammaPrior(*SMALL_3)
    L = H.L()
    err = [abs(H.volume_ratio(d) / L - 1.0) for d in (1e-3, 1e-6, 1e-9)]
    assert err[0] > err[1] > err[2] > 0.0
    assert H.volume_ratio(1e-300) == pytest.approx(L, rel=1e-12)


def test_gap_probability_large_gaps_and_zero():
    H = GammaPrior(*THREE)
    values = [H.gap_probability(d) for d in (0.0, 0.1, 1.0, 5.0, 20.0, 1e6, 1e300)]
    assert values[0] == 0.0 and all(0.0 < v <= 1.0 for v in values[1:])
    assert values == sorted(values) and values[-1] == 1.0
    assert 1.0 - values[3] == pytest.approx(1.0 - _quad_gap(*THREE, 5.0), rel=1e-6)


# ------------------------------------------------------------------ the far lower tail
def _log_P_decimal(a: float, z: float) -> float:
    """log P(a, z) in 50 digits: a log z - z - log Γ(a+1) + log Σ z^n / ((a+1)...(a+n)),
    log Γ by Stirling's series with seven terms (a >= 20: error below 1e-25)."""
    getcontext().prec = 50
    a_, z_ = Decimal(a), Decimal(z)
    pi = Decimal("3.14159265358979323846264338327950288419716939937510")
    lgam = (a_ - Decimal("0.5")) * a_.ln() - a_ + (2 * pi).ln() / 2
    for n, c in enumerate([Decimal(1) / 12, -Decimal(1) / 360, Decimal(1) / 1260,
                           -Decimal(1) / 1680, Decimal(1) / 1188, -Decimal(691) / 360360,
                           Decimal(1) / 156]):
        lgam += c / a_ ** (2 * n + 1)
    term = total = Decimal(1)
    n = 1
    while term >= total * Decimal("1e-40"):
        term = term * z_ / (a_ + n)
        total += term
        n += 1
    return float(a_ * z_.ln() - z_ - lgam - a_.ln() + total.ln())


@pytest.mark.parametrize("a", [50.0, 1e3, 1e5, 1e6, 1e7])
def test_log_cdf_in_the_lower_tail(a):
    """log H against 50-digit arithmetic: below H = 1e-250 (the series; down to H ~ 1e-608,
    where H itself underflows) and, for a >= 1e5, from 3 to 30 standard deviations below the
    mean, where scipy's gammainc loses up to 2% at a = 1e7 (the integral over y)."""
    def approx(z, target):  # log P(a, z) - target, to about 1e-3 for these z
        return a * math.log(z) - z - gammaln(a + 1.0) - math.log1p(-z / (a + 1.0)) - target

    targets = [-460.0, -580.0, -690.0, -800.0, -1400.0]  # H from 1e-200 to 1e-608
    z = [optimize.brentq(approx, 1e-300, a, args=(t,), xtol=1e-300, rtol=1e-15)
         for t in targets]
    if a >= 1e5:
        z += [a - w * math.sqrt(a) for w in (3.0, 4.0, 6.0, 10.0, 20.0, 30.0)]
    z = np.array(z)
    ref = np.array([_log_P_decimal(a, float(zi)) for zi in z])
    assert np.allclose(ref[:5], targets, atol=0.1)
    aa, zz = np.array([a]), z[:, None]
    got = _log_cdf(zz, np.log(zz), _ell(zz, np.log(zz), aa), aa)[:, 0]
    assert np.all(np.abs(got - ref) <= 1e-12 + 1e-15 * np.abs(ref)), got - ref


# ------------------------------------------------------------------ scale invariance
@pytest.mark.parametrize("c", [1e-90, 1e-3, 7.5, 1e4, 1e90])
@pytest.mark.parametrize("a,b", [THREE, SMALL_3, MIXED_5], ids=["three", "small-shapes",
                                                                  "mixed-5"])
def test_rates_times_c_multiply_L_by_c(a, b, c):
    # λ -> λ / c multiplies every density by c, so L(H) (a density at gap 0) by c and
    # P[gap <= Δ] is unchanged with Δ / c
    H, Hc = GammaPrior(a, b), GammaPrior(a, np.asarray(b) * c)
    for method in ALL_METHODS:
        assert Hc.L(method) == pytest.approx(c * H.L(method), rel=1e-12), method
    assert Hc.L_matrix() == pytest.approx(c * H.L_matrix(), rel=1e-12)
    assert Hc.gap_probability(0.3 / c) == pytest.approx(H.gap_probability(0.3), rel=1e-12)
    assert np.allclose(Hc.means, H.means / c, rtol=1e-15)


# ------------------------------------------------------------------ infinite and underflowing L
@pytest.mark.parametrize("a", [[0.5, 0.5], [0.3, 0.4], [0.2, 0.3, 0.5], [0.01] * 50])
def test_infinite_L_is_refused_but_the_gap_probability_is_finite(a):
    # near 0 the integrand of every L_ij behaves like x^(sum(a) - 2): infinite if sum(a) <= 1
    H = GammaPrior(a, [1.0] * len(a))
    for call in (H.L, H.L_matrix, lambda: H.L("single"), lambda: H.L("pairwise")):
        with pytest.raises(ValueError, match=r"^a: L\(H\) is infinite .* sum\(a\) = "):
            call()
    assert 0.0 < H.gap_probability(0.01) < 1.0


def test_L_just_above_the_limit_is_finite():
    for s in (1.01, 1.001):
        H = GammaPrior([s / 2, s / 2], [1.0, 1.0])
        assert H.L() == pytest.approx(_two_arm_L(s / 2, s / 2, 1.0, 1.0), rel=1e-12)


def test_L_that_underflows_is_refused():
    # means 1e7 and 2e7, stds ~3e3 and ~6e3: the top two practically never meet
    for method in ALL_METHODS:
        with pytest.raises(ValueError, match=r"^a and b: L\(H\) = 0\.0 is not a normal"):
            GammaPrior([1e7, 1e7], [1.0, 0.5]).L(method)


# ------------------------------------------------------------------ sampling
def test_sample_means_from_the_prior_stream():
    H = GammaPrior(*MIXED_5)
    draws = H.sample_means(7, 1000)
    assert draws.shape == (1000, 5) and np.all(draws > 0)
    assert np.array_equal(draws, H.sample_means(7, 1000))
    assert not np.array_equal(H.sample_means(8, 10), draws[:10])
    assert np.array_equal(draws, _variates.prior_gamma_means(H.a, H.b, 7, 1000))
    # row r is run r's prior stream: gamma_variate(st, a_i) / b_i, arms in order
    for r in (0, 1, 999):
        st = _rng.seed_state(7, r, _rng.STREAM_PRIOR)
        row = [_variates.gamma_variate(st, ai) / bi for ai, bi in zip(H.a, H.b)]
        assert np.array_equal(draws[r], row), r


def test_prior_gamma_means_shards_concatenate():
    a, b = [0.3, 2.0, 40.0], [1.0, 0.5, 8.0]
    n = 70_000  # more runs than one block of generator states (65,536)
    whole = _variates.prior_gamma_means(a, b, 11, n)
    for m in (1, 1000, 65_536, 69_999):
        parts = [_variates.prior_gamma_means(a, b, 11, m),
                 _variates.prior_gamma_means(a, b, 11, n - m, first_run=m)]
        assert np.array_equal(whole, np.vstack(parts)), m
    assert _variates.prior_gamma_means(a, b, 11, 0).shape == (0, 3)
    tail = _variates.prior_gamma_means(a, b, 11, 5, first_run=_rng.RUN_MAX - 4)
    assert tail.shape == (5, 3) and np.all(tail >= 0)


@pytest.mark.parametrize("a,b", [(0.05, 3.0), (0.5, 1.0), (1.0, 0.2), (3.5, 2.0), (200.0, 0.7)])
def test_sample_means_marginals(a, b):
    H = GammaPrior([a, 2.0], [b, 1.0])
    draws = H.sample_means(1234, 20_000)
    for col, (ai, bi) in enumerate([(a, b), (2.0, 1.0)]):
        p = stats.kstest(draws[:, col], _gamma(ai, bi).cdf).pvalue
        assert p > 1e-3, (ai, bi, col, p)
    generator = H.sample_means(np.random.default_rng(99), 20_000)
    assert stats.kstest(generator[:, 0], _gamma(a, b).cdf).pvalue > 1e-3
    assert np.array_equal(generator, H.sample_means(np.random.default_rng(99), 20_000))


def test_means_stds_and_read_only_copies():
    a, b = np.array([2.0, 3.0]), np.array([5.0, 0.5])
    H = GammaPrior(a, b)
    a[0], b[0] = 9.0, 9.0
    assert H.a[0] == 2.0 and H.b[0] == 5.0 and a.flags.writeable
    assert np.allclose(H.means, _gamma(H.a, H.b).mean(), rtol=1e-15)
    assert np.allclose(H.stds, _gamma(H.a, H.b).std(), rtol=1e-14)
    assert np.array_equal(H.means, [0.4, 6.0])
    for arr in (H.a, H.b, H.means, H.stds, H.L_matrix()):
        assert not arr.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 1.0
    assert H == GammaPrior([2, 3], [5, 0.5]) and hash(H) == hash(GammaPrior([2, 3], [5, 0.5]))
    assert H != GammaPrior([2, 3], [5, 1]) and H.k == 2
    assert repr(H) == "GammaPrior(a=[2.0, 3.0], b=[5.0, 0.5])"
    assert eval(repr(H), {"GammaPrior": GammaPrior}) == H
    assert H.__eq__(object()) is NotImplemented


# ------------------------------------------------------------------ bad input
H0 = GammaPrior(*THREE)
lo, hi = PARAM_RANGE
rlo, rhi = RATE_RANGE
BAD = [
    (lambda: GammaPrior([0.0, 1.0], [1.0, 1.0]), "^a must"),
    (lambda: GammaPrior([1.0, -2.0], [1.0, 1.0]), "^a must"),
    (lambda: GammaPrior([1.0, 1.0], [-1.0, 1.0]), "^b must"),
    (lambda: GammaPrior([1.0, 1.0], [0.0, 1.0]), "^b must"),
    (lambda: GammaPrior([1.0, math.nan], [1.0, 1.0]), "^a must"),
    (lambda: GammaPrior([1.0, 1.0], [math.inf, 1.0]), "^b must"),
    (lambda: GammaPrior([1.0, True], [1.0, 1.0]), "^a must"),
    (lambda: GammaPrior([1.0, None], [1.0, 1.0]), "^a must"),
    (lambda: GammaPrior([1.0, 1.0], ["1", "2"]), "^b must"),
    (lambda: GammaPrior("1.0", [1.0, 1.0]), "^a must"),
    (lambda: GammaPrior([1.0, 1.0], None), "^b must"),
    (lambda: GammaPrior([1.0, 2.0, 3.0], [1.0, 1.0]), "^a and b must have the same length"),
    (lambda: GammaPrior([1.0], [1.0]), r"^a and b: need k >= 2"),
    (lambda: GammaPrior(2.0, 3.0), "^a must be a one-dimensional"),
    (lambda: GammaPrior([[1.0, 2.0]], [[1.0, 2.0]]), "^a must"),
    (lambda: GammaPrior([lo / 2, 1.0], [1.0, 1.0]), "^a must lie in the supported range"),
    (lambda: GammaPrior([1.0, hi * 2], [1.0, 1.0]), "^a must lie in the supported range"),
    (lambda: GammaPrior([1.0, 1.0], [1.0, rhi * 2]), "^b must lie in the supported range"),
    (lambda: GammaPrior([1.0, 1.0], [rlo / 2, 1.0]), "^b must lie in the supported range"),
    (lambda: GammaPrior.exponential(1), "^k must"),
    (lambda: GammaPrior.exponential(2.0), "^k must"),
    (lambda: GammaPrior.exponential(10**12), "^k must"),
    (lambda: GammaPrior.exponential(3, rate=0.0), "^rate must"),
    (lambda: GammaPrior.exponential(3, rate="1"), "^rate must"),
    (lambda: GammaPrior.exponential(3, rate=rhi * 10), "^rate must lie in the supported range"),
    (lambda: H0.gap_probability(-0.1), "^delta must"),
    (lambda: H0.gap_probability(math.nan), "^delta must"),
    (lambda: H0.gap_probability(math.inf), "^delta must"),
    (lambda: H0.gap_probability("0.1"), "^delta must"),
    (lambda: H0.gap_probability(True), "^delta must"),
    (lambda: H0.gap_probability(1e-320), "^delta = .* is too small"),
    (lambda: H0.volume_ratio(0.0), "^delta must"),
    (lambda: H0.volume_ratio(-1e-3), "^delta must"),
    (lambda: H0.volume_ratio(1e-320), "^delta = .* is too small"),
    (lambda: H0.L("exact"), "^method must be one of"),
    (lambda: H0.L(None), "^method must be one of"),
    (lambda: H0.sample_means(1, 0), "^size must"),
    (lambda: H0.sample_means(1, 2.5), "^size must"),
    (lambda: H0.sample_means(1, True), "^size must"),
    (lambda: H0.sample_means(1, 10**12), "^size must be an integer in"),
    (lambda: H0.sample_means(np.random.default_rng(1), 10**12), "^size must be an integer in"),
    (lambda: H0.sample_means(-1, 10), "^rng_or_seed must"),
    (lambda: H0.sample_means(1.5, 10), "^rng_or_seed must"),
    (lambda: H0.sample_means("1", 10), "^rng_or_seed must"),
    (lambda: H0.sample_means(None, 10), "^rng_or_seed must"),
    (lambda: _variates.prior_gamma_means([], [], 1, 3), "^a must"),
    (lambda: _variates.prior_gamma_means([1.0, 0.0], [1.0, 1.0], 1, 3), "^a must"),
    (lambda: _variates.prior_gamma_means([1.0, 1.0], [1.0, -1.0], 1, 3), "^b must"),
    (lambda: _variates.prior_gamma_means([1.0, 1.0], [1.0], 1, 3), "^a and b must have"),
    (lambda: _variates.prior_gamma_means([1.0], [1.0], 1, -1), "^n_runs must"),
    (lambda: _variates.prior_gamma_means([1.0], [1.0], 1, 3, first_run=-1), "^first_run must"),
    (lambda: _variates.prior_gamma_means([1.0], [1.0], 1, 3, first_run=_rng.RUN_MAX),
     r"^first_run \+ n_runs - 1 must"),
    (lambda: _variates.prior_gamma_means([1.0], [1.0], -1, 3), "^seed must"),
]


@pytest.mark.parametrize("call,match", BAD, ids=[f"{i}:{m}" for i, (_, m) in enumerate(BAD)])
def test_bad_input_raises_value_error_naming_the_parameter(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("make, call, match", [
    (lambda: GammaPrior([2.0] * 10**6, [1.0] * 10**6), lambda H: H.L(),
     r"^k: L\(H\) .* 1,000,000 arms .*MAX_EVALUATIONS"),
    (lambda: GammaPrior([2.0] * 500, [1.0] * 500), lambda H: H.L("pairwise"),
     r"^method: .*500 arms .* GiB"),
    (lambda: GammaPrior([2.0] * 500, [1.0] * 500), lambda H: H.L_matrix(), r"^k: L_matrix .* GiB"),
    (lambda: GammaPrior([2.0] * 10**6, [1.0] * 10**6), lambda H: H.gap_probability(0.1),
     r"^k: gap_probability"),
    (lambda: GammaPrior(np.linspace(1.0, 300.0, 1000), np.linspace(7.0, 1.0, 1000)),
     lambda H: H.L(), r"^k: .*1,000 distinct \(a, b\)\) needs about 6\.2e\+08"),
], ids=["1e6-auto", "500-pairwise", "500-L_matrix", "1e6-gap", "1000-distinct"])
def test_a_computation_too_large_is_refused_before_it_starts(make, call, match):
    H = make()
    with pytest.raises(ValueError, match=match):
        answered(60.0, call, H)
    assert "quantiles" not in H._cache  # refused before the first quantile was computed


def test_many_iid_arms_by_the_single_integral():
    # 2,000 iid Gamma(2, 1) arms: k(k-1) ∫ h^2 H^(k-2) against scipy's quad
    k, arm = 2000, _gamma(2.0, 1.0)
    value, _ = answered(60.0, GammaPrior([2.0] * k, [1.0] * k).L)
    pts = [float(arm.ppf(q)) for q in (1e-6, 0.5, 1.0 - 1e-12)]

    def f(x):
        return arm.pdf(x) ** 2 * arm.cdf(x) ** (k - 2)

    assert value == pytest.approx(k * (k - 1) * _quad(f, pts), rel=1e-9)

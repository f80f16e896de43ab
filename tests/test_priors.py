"""Tests of the math layer: L(H), the volume lemma, Δ0 and input validation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from bai_lib import GaussianPrior, delta0
from bai_lib.priors import volume_ratio_mc


@pytest.mark.parametrize("m,xi", [((0.0, 0.0), (1.0, 1.0)), ((0.3, -1.2), (0.7, 2.0)), ((5.0, 0.0), (1.0, 0.5))])
def test_L_two_arms_matches_closed_form(m, xi):
    H = GaussianPrior(m, xi)
    d = m[0] - m[1]
    s = math.hypot(*xi)
    expected = 2 * norm.pdf(d / s) / s
    assert H.L() == pytest.approx(expected, rel=1e-9)
    assert H.L_matrix()[0, 1] == pytest.approx(expected / 2, rel=1e-9)


def test_L_standard_two_arms_is_one_over_sqrt_pi():
    assert GaussianPrior.standard(2).L() == pytest.approx(1 / math.sqrt(math.pi), rel=1e-12)


def test_L_matrix_symmetric_zero_diagonal():
    H = GaussianPrior([0.0, 0.5, 1.0, -0.2], [1.0, 0.5, 2.0, 1.5])
    M = H.L_matrix()
    assert np.allclose(M, M.T)
    assert np.all(np.diag(M) == 0)
    assert np.all(M[~np.eye(4, dtype=bool)] > 0)


def test_L_ij_heterogeneous_against_monte_carlo():
    """L_ij = density at 0 of the gap between i and j, restricted to {i,j top two}.

    Monte Carlo: P(i, j are the top two and |mu_i - mu_j| <= eps) / (2 eps) -> L_ij.
    """
    H = GaussianPrior([0.0, 0.5, 1.0], [1.0, 0.5, 2.0])
    rng = np.random.default_rng(7)
    n, eps = 4_000_000, 0.02
    mus = H.sample_means(rng, n)
    order = np.argsort(mus, axis=1)
    top, second = order[:, -1], order[:, -2]
    gap = mus[np.arange(n), top] - mus[np.arange(n), second]
    M = H.L_matrix()
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        pair = ((top == i) & (second == j)) | ((top == j) & (second == i))
        hits = np.count_nonzero(pair & (gap <= eps))
        est = hits / n / eps  # P(pair, gap <= eps) ~ (L_ij + L_ji) eps = 2 L_ij eps
        se = math.sqrt(hits) / n / eps
        assert abs(est - 2 * M[i, j]) < 4 * se + 0.02 * 2 * M[i, j], (i, j, est, 2 * M[i, j])


def test_gap_probability_exact_k2_and_general_formula_agree():
    # the k = 2 closed form and the general one-dimensional integral must agree
    H = GaussianPrior([0.3, -0.4], [1.0, 0.6])
    for d in [1e-4, 1e-2, 0.5, 3.0]:
        closed = H.gap_probability(d)
        k = 2
        m, s = H.means, H.stds
        from scipy.integrate import quad
        general = sum(
            quad(lambda x, i=i: norm.pdf(x, m[i], s[i]) * (norm.cdf(x, m[1 - i], s[1 - i]) - norm.cdf(x - d, m[1 - i], s[1 - i])),
                 -30, 30, epsabs=0, epsrel=1e-11, limit=400)[0]
            for i in range(k)
        )
        assert closed == pytest.approx(general, rel=1e-7)


def test_gap_probability_against_monte_carlo_k10():
    H = GaussianPrior.standard(10)
    rng = np.random.default_rng(3)
    n = 1_000_000
    mus = np.sort(H.sample_means(rng, n), axis=1)
    gap = mus[:, -1] - mus[:, -2]
    for d in [0.05, 0.3]:
        p_hat = np.mean(gap <= d)
        se = math.sqrt(p_hat * (1 - p_hat) / n)
        assert abs(H.gap_probability(d) - p_hat) < 4.5 * se


@pytest.mark.parametrize("k", [2, 3, 10])
def test_volume_lemma_limit(k):
    H = GaussianPrior.standard(k)
    L = H.L()
    ratios = [H.volume_ratio(d) for d in (1e-2, 1e-3, 1e-4, 1e-5)]
    errs = [abs(r / L - 1) for r in ratios]
    assert errs[-1] < 1e-4
    assert all(e2 <= e1 + 1e-12 for e1, e2 in zip(errs, errs[1:])), errs


def test_volume_lemma_band_below_threshold():
    H = GaussianPrior([0.0, 0.5, 1.0], [1.0, 0.5, 2.0])
    thr = H.volume_lemma_threshold()
    for d in np.geomspace(thr / 1000, thr * 0.99, 12):
        assert 0.5 * H.L() < H.volume_ratio(d) < 2 * H.L()


def test_volume_ratio_mc_band_covers_exact():
    H = GaussianPrior.standard(4)
    deltas = np.array([0.5, 0.1, 0.02])
    est, lo, hi = volume_ratio_mc(H, deltas, 400_000, np.random.default_rng(11), z=3.5)
    exact = np.array([H.volume_ratio(d) for d in deltas])
    assert np.all((lo <= exact) & (exact <= hi))
    assert np.all(lo <= est) and np.all(est <= hi)


def test_delta0_conventions():
    H = GaussianPrior.standard(2)
    assert delta0(H, 0.1) == pytest.approx(0.1 / (4 / math.sqrt(math.pi)))
    assert delta0(H, 0.1, factor=1.0) == pytest.approx(4 * delta0(H, 0.1))
    # the purpose of Delta0: prior mass of indifference instances at most delta/2
    for k, delta in [(2, 0.1), (10, 0.01), (5, 0.05)]:
        Hk = GaussianPrior.standard(k)
        assert Hk.gap_probability(delta0(Hk, delta)) <= delta / 2


def test_sample_means_generator_shape_and_moments():
    H = GaussianPrior([1.0, -2.0, 0.0], [0.5, 2.0, 1.0])
    mus = H.sample_means(np.random.default_rng(0), 200_000)
    assert mus.shape == (200_000, 3)
    assert np.allclose(mus.mean(axis=0), H.means, atol=0.02)
    assert np.allclose(mus.std(axis=0), H.stds, rtol=0.01)


def test_prior_is_immutable():
    H = GaussianPrior.standard(3)
    with pytest.raises(Exception):
        H.means[0] = 1.0
    with pytest.raises(Exception):
        H.means = np.ones(3)


@pytest.mark.parametrize(
    "means,stds,match",
    [
        ([0.0], [1.0], "k >= 2"),
        ([0.0, 1.0], [1.0], "same length"),
        ([0.0, np.nan], [1.0, 1.0], "means"),
        ([0.0, 1.0], [1.0, 0.0], "stds"),
        ([0.0, 1.0], [1.0, -1.0], "stds"),
        ([0.0, 1.0], [1.0, np.inf], "stds"),
        ([[0.0, 1.0]], [[1.0, 1.0]], "means"),
    ],
)
def test_prior_validation(means, stds, match):
    with pytest.raises(ValueError, match=match):
        GaussianPrior(means, stds)


def test_other_validation():
    H = GaussianPrior.standard(2)
    for bad in (0.0, 1.0, -0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="delta"):
            delta0(H, bad)
    with pytest.raises(ValueError, match="factor"):
        delta0(H, 0.1, factor=0)
    with pytest.raises(ValueError, match="prior"):
        delta0("H", 0.1)
    with pytest.raises(ValueError, match="delta"):
        H.volume_ratio(0.0)
    with pytest.raises(ValueError, match="delta"):
        H.gap_probability(-1.0)
    for size in (0, True, np.True_, 2.5, "3", 10**15):  # a bool is no size; nor is a huge one
        with pytest.raises(ValueError, match="^size must be an integer"):
            H.sample_means(np.random.default_rng(0), size)
        with pytest.raises(ValueError, match="^size must be an integer"):
            H.sample_means(1, size)
    with pytest.raises(ValueError, match="rng_or_seed"):
        H.sample_means(-3, 10)
    with pytest.raises(ValueError, match="k must"):
        GaussianPrior.standard(1)


def test_L_released_is_the_unnormalised_integral():
    from scipy import integrate
    from scipy.stats import norm

    from bai_lib.priors import L_released

    m, xi = np.array([0.1, -0.4, 0.7]), np.array([0.6, 1.4, 0.9])
    H = GaussianPrior(m, xi)
    direct = 0.0
    for i in range(3):
        for j in range(3):
            if i != j:
                s = [x for x in range(3) if x not in (i, j)][0]
                f = lambda x: (norm.pdf((x - m[i]) / xi[i]) * norm.pdf((x - m[j]) / xi[j])
                               * norm.cdf((x - m[s]) / xi[s]))
                direct += integrate.quad(f, -np.inf, np.inf, epsabs=0, epsrel=1e-12)[0]
    assert L_released(H) == pytest.approx(direct, rel=1e-8)
    assert L_released(H) != pytest.approx(H.L(), rel=0.05)
    assert L_released(GaussianPrior.standard(4)) == pytest.approx(GaussianPrior.standard(4).L())


def test_L_released_reproduces_the_released_experiment3_delta0():
    from bai_lib import published
    from bai_lib.priors import L_released

    e = published.EXPERIMENT3
    H = GaussianPrior(e["prior_means"], e["prior_stds"])
    # the notebook's parameters are printed to 8 digits
    assert e["delta"] / (4 * L_released(H)) == pytest.approx(e["released_delta0"], rel=1e-6)
    assert delta0(H, e["delta"]) != pytest.approx(e["released_delta0"], rel=0.05)


# --------------------------------------------------------------------------------------
# L(H) as a single integral, the scale normalisation, and input handling
# --------------------------------------------------------------------------------------


def _book_priors():
    """The priors whose L(H) the book prints or uses (Experiments 1-3 and the redraws)."""
    from bai_lib import published
    from bai_lib._book import heterogeneous_setting
    from bai_lib.experiments import DEFAULT_SEED

    e = published.EXPERIMENT3
    priors = [GaussianPrior.standard(k) for k in (2, 3, 4, 5, 10)]
    priors.append(GaussianPrior([0.0, 0.5, 1.0], [1.0, 0.5, 2.0]))
    priors.append(GaussianPrior(e["prior_means"], e["prior_stds"]))
    priors += [heterogeneous_setting(DEFAULT_SEED + d)[0] for d in range(10)]
    return priors


@pytest.mark.parametrize("k", range(2, 9))
def test_L_single_integral_matches_pairwise_sum_heterogeneous(k):
    from bai_lib.priors import L_released

    rng = np.random.default_rng(100 + k)
    for _ in range(4):
        H = GaussianPrior(rng.normal(0.0, 1.5, k), rng.uniform(0.2, 2.5, k))
        pairwise = float(np.sum(H.L_matrix()))
        assert H.L(method="single") == pytest.approx(pairwise, rel=1e-9)
        assert H.L(method="pairwise") == pairwise
        released = float(np.sum(H.L_matrix() * np.outer(H.stds, H.stds)))
        assert L_released(H, method="single") == pytest.approx(released, rel=1e-9)


def _iid_standard_reference(k):
    """k (k-1) ∫ φ(x)² Φ(x)^(k-2) dx, the L(H) of k iid N(0, 1) arms, by scipy quad."""
    from scipy import integrate

    def f(x):
        return norm.pdf(x) ** 2 * norm.cdf(x) ** (k - 2)

    mode = math.sqrt(2 * math.log(k))
    value, _ = integrate.quad(f, -10.0, 12.0, points=[0.0, mode - 1, mode, mode + 1],
                              epsabs=0.0, epsrel=1e-12, limit=500)
    return k * (k - 1) * value


@pytest.mark.parametrize("k", [100, 1000, 10_000])
def test_L_iid_standard_matches_one_dimensional_formula(k):
    H = GaussianPrior.standard(k)
    assert H.L() == pytest.approx(_iid_standard_reference(k), rel=1e-9)  # default method


def test_L_iid_reference_agrees_with_pairwise_for_small_k():
    # the independent reference itself, checked where the pairwise sum is cheap
    for k in (3, 6):
        assert _iid_standard_reference(k) == pytest.approx(GaussianPrior.standard(k).L(), rel=1e-9)


def test_L_invariant_under_permutation_of_arms():
    from bai_lib.priors import L_released

    rng = np.random.default_rng(21)
    for k, method in [(6, "pairwise"), (6, "single"), (200, "auto")]:
        m, s = rng.normal(0, 1, k), rng.uniform(0.5, 1.5, k)
        H = GaussianPrior(m, s)
        for _ in range(3):
            p = rng.permutation(k)
            Hp = GaussianPrior(m[p], s[p])
            assert Hp.L(method=method) == pytest.approx(H.L(method=method), rel=1e-12)
            assert L_released(Hp, method=method) == pytest.approx(L_released(H, method=method),
                                                                  rel=1e-12)


def test_L_book_priors_unchanged_and_both_methods_agree():
    # "auto" keeps the pairwise sum (bit for bit) where the book uses it; the single integral
    # agrees with it to well below 1e-13
    for H in _book_priors():
        pairwise = float(np.sum(H.L_matrix()))
        assert H.L() == pairwise
        assert H.L(method="single") == pytest.approx(pairwise, rel=1e-13, abs=0)


def test_L_auto_uses_single_integral_for_an_arm_much_narrower_than_another():
    # closed form for two arms; the pairwise quadratures are off by ~3e-3 here
    m, xi = [0.0, 3.0], [1.0, 1e-3]
    H = GaussianPrior(m, xi)
    s = math.hypot(*xi)
    expected = 2 * norm.pdf(3.0 / s) / s
    assert H.L() == pytest.approx(expected, rel=1e-12)
    assert H.L(method="single") == pytest.approx(expected, rel=1e-12)


def test_L_single_integral_with_narrow_and_distant_arms():
    # arms narrower than the others, and arms far below the top (which the single integral
    # leaves out), against the pairwise sum at moderate ratios (where it is accurate)
    H = GaussianPrior([0.0, 0.5, 1.0, 0.7, 0.72, -30.0, -60.0, -90.0],
                      [1.0, 0.1, 1.0, 0.08, 0.1, 1.0, 1.0, 0.5])
    assert H.L(method="single") == pytest.approx(float(np.sum(H.L_matrix())), rel=1e-10)


def test_L_single_integral_against_independent_quadrature_for_very_narrow_arms():
    # stds down to 1e-6 next to stds of 1, where the pairwise quadratures of L_matrix miss
    # the narrow arms' tails; reference: each ordered pair integrated by scipy quad with
    # breakpoints every standard deviation of every arm
    from scipy import integrate

    def reference(m, s):
        m, s = np.asarray(m), np.asarray(s)
        k = m.size
        pts = np.unique(np.concatenate([m + s * t for t in range(-8, 9)]))
        lo, hi = float(np.min(m - 40 * s)), float(np.max(m + 40 * s))
        total = 0.0
        for i in range(k):
            for j in range(k):
                if i != j:
                    o = [t for t in range(k) if t not in (i, j)]

                    def f(x, i=i, j=j, o=o):
                        return (norm.pdf(x, m[i], s[i]) * norm.pdf(x, m[j], s[j])
                                * np.prod(norm.cdf(x, m[o], s[o])))

                    total += integrate.quad(f, lo, hi, points=pts[(pts > lo) & (pts < hi)],
                                            epsabs=0.0, epsrel=1e-12, limit=2000)[0]
        return total

    for m, s in [([0.0, 0.0, 0.5], [1.0, 1.0, 1e-4]), ([0.0, -10.0, 0.5], [1.0, 1.0, 1e-4]),
                 ([0.0, 0.3, 0.5, 2.0], [1.0, 1e-5, 1e-4, 0.5]),
                 ([0.0, -30.0, 0.5], [1.0, 1.0, 1e-6])]:
        assert GaussianPrior(m, s).L() == pytest.approx(reference(m, s), rel=1e-10)


@pytest.mark.parametrize("xi,rel", [(1e-2, 1e-12), (1e-4, 1e-12), (1e-6, 1e-9)])
def test_L_narrow_arm_next_to_a_wide_one_matches_closed_form(xi, rel):
    # a third arm 20 or 38 standard deviations below does not matter (H = 1, h ~ 0 there),
    # so L = 2 * N(x0; 0, 1 + xi^2) density; the accuracy is limited by rounding x near x0 to
    # doubles, about 1e-16 x0 / xi. (At -38 the integrand away from the narrow arm is
    # ~e^-720 times its peak there.)
    for x0 in (0.5, 2.0):
        v = 1.0 + xi * xi
        expected = 2 * math.exp(-0.5 * x0 * x0 / v) / math.sqrt(2 * math.pi * v)
        for low in (-20.0, -38.0):
            assert GaussianPrior([0.0, low, x0], [1.0, 1.0, xi]).L() == pytest.approx(
                expected, rel=rel)


def test_L_representable_although_the_normalised_integral_underflows():
    # two arms 60 standard deviations apart with std 2^-1000: at unit scale L is
    # exp(-900)/sqrt(pi), below the double range, but L(H) = 2^1000 times that is not
    c = 2.0 ** -1000
    expected = math.exp(-900 + 1000 * math.log(2)) / math.sqrt(math.pi)
    for means, stds in [([0.0, 60 * c], [c, c]), ([0.0, 60 * c, -300 * c], [c, c, c])]:
        H = GaussianPrior(means, stds)
        assert H.L() == pytest.approx(expected, rel=1e-12)
        assert delta0(H, 0.1) == pytest.approx(0.1 / (4 * expected), rel=1e-12)
    with pytest.raises(ValueError, match="underflows"):
        GaussianPrior([0.0, 60.0], [1.0, 1.0]).L()


def test_L_of_an_isolated_best_arm_underflows_quickly():
    # the best arm more than 80 standard deviations above the rest: the integrand is searched
    # between them (a search over the whole support took minutes)
    import time

    for H in (GaussianPrior([0.0, 100.0], [1.0, 1.0]),
              GaussianPrior(np.arange(20) * 100.0, np.ones(20))):
        start = time.perf_counter()
        with pytest.raises(ValueError, match="underflows"):
            H.L(method="single")
        assert time.perf_counter() - start < 20.0


def test_L_single_integral_reports_non_convergence(monkeypatch):
    import bai_lib.quadrature as quadrature

    # one Gauss-Legendre panel and no adaptive halving cannot reach the tolerance
    monkeypatch.setattr(quadrature, "_N_PANELS", 1)
    monkeypatch.setattr(quadrature, "_MAX_ROUNDS", 0)
    with pytest.raises(RuntimeError, match="did not converge"):
        GaussianPrior.standard(1000).L()
    monkeypatch.setattr(quadrature, "_MAX_ROUNDS", 60)  # halving recovers the value
    assert GaussianPrior.standard(1000).L() == pytest.approx(_iid_standard_reference(1000),
                                                             rel=1e-9)


def test_L_method_is_validated():
    H = GaussianPrior.standard(3)
    for bad in ("fast", None, 1):
        with pytest.raises(ValueError, match="method"):
            H.L(method=bad)


@pytest.mark.parametrize("e", [-900, -40, -1, 1, 7, 900])
def test_scaling_by_a_power_of_two_is_exact(e):
    from bai_lib.priors import L_released

    c = math.ldexp(1.0, e)
    for H in (GaussianPrior([0.0, 0.5, 1.0], [1.0, 0.5, 2.0]), _book_priors()[6],
              GaussianPrior(np.linspace(-1, 1, 12), np.linspace(0.5, 1.5, 12))):
        Hc = GaussianPrior(H.means * c, H.stds * c)
        assert Hc.L() == H.L() / c
        assert L_released(Hc) == L_released(H) * c
        assert delta0(Hc, 0.05) == delta0(H, 0.05) * c
        assert Hc.gap_probability(0.3 * c) == H.gap_probability(0.3)
        assert Hc.volume_lemma_threshold() == H.volume_lemma_threshold()
        if H.k <= 10:
            assert np.array_equal(Hc.L_matrix(), H.L_matrix() / c)


@pytest.mark.parametrize("scale", [1e-306, 1e-300, 1e-150, 3.7e-9, 1e150, 1e300, 1e307])
def test_L_and_delta0_at_extreme_scales(scale):
    # two iid N(0, scale^2) arms: L = 1 / (sqrt(pi) scale); shifted means do not matter
    for loc in (0.0, 5.0 * scale, 1e3 * scale if scale < 1e300 else -scale):
        H = GaussianPrior([loc, loc], [scale, scale])
        L = 1 / (math.sqrt(math.pi) * scale)
        assert H.L() == pytest.approx(L, rel=1e-12)
        assert H.L(method="single") == pytest.approx(L, rel=1e-12)
        assert delta0(H, 0.1) == pytest.approx(0.1 / (4 * L), rel=1e-12)
        assert H.gap_probability(0.1 * scale) == pytest.approx(
            2 * norm.cdf(0.1 / math.sqrt(2)) - 1, rel=1e-9)
    Hk = GaussianPrior(np.zeros(50), np.full(50, scale))
    assert Hk.L() == pytest.approx(_iid_standard_reference(50) / scale, rel=1e-9)
    # the general (k > 2) gap probability: its quadrature runs on the rescaled prior
    H3 = GaussianPrior([0.0, 0.0, 0.0], [scale] * 3)
    expected = GaussianPrior.standard(3).gap_probability(0.1)
    assert H3.gap_probability(0.1 * scale) == pytest.approx(expected, rel=1e-12)
    assert H3.volume_ratio(0.1 * scale) * scale == pytest.approx(expected / 0.1, rel=1e-12)


def test_means_far_from_the_origin():
    # a common location is removed before integrating: L depends on the differences only
    # (the offsets are multiples of 1/8, so loc + m stays exact up to 1e15)
    H0 = GaussianPrior([0.0, 1.0, 0.25], [1.0, 0.7, 1.2])
    for loc in (1e6, -3e9, 1e15):
        H = GaussianPrior(np.asarray(H0.means) + loc, H0.stds)
        assert H.L() == pytest.approx(H0.L(), rel=1e-9)
        assert H.L(method="single") == pytest.approx(H0.L(), rel=1e-9)


def test_unrepresentable_results_raise_value_error():
    from bai_lib.priors import L_released

    cases = [
        (GaussianPrior([0.0, 0.0], [5e-324, 5e-324]), "overflows"),  # L = 1/(sqrt(pi) 5e-324)
        (GaussianPrior([0.0, 0.0], [1.7e308, 1.7e308]), "underflows"),  # L ~ 3e-309
        (GaussianPrior([0.0, 100.0], [1.0, 1.0]), "underflows"),  # L ~ exp(-2500)
        (GaussianPrior(np.arange(20) * 100.0, np.ones(20)), "underflows"),
    ]
    for H, what in cases:
        for method in ("auto", "pairwise", "single"):
            with pytest.raises(ValueError, match=f"stds.*{what}"):
                H.L(method=method)
        with pytest.raises(ValueError, match=what):  # not a ZeroDivisionError, not 0 or inf
            delta0(H, 0.1)
    with pytest.raises(ValueError, match="underflows"):
        L_released(GaussianPrior([0.0, 0.0], [5e-324, 5e-324]))
    with pytest.raises(ValueError, match="overflows"):
        GaussianPrior([0.0, 0.0], [5e-324, 5e-324]).L_matrix()
    # delta0 itself out of range although L(H) is fine
    with pytest.raises(ValueError, match="delta0.*factor"):
        delta0(GaussianPrior([0.0, 0.0], [1e300, 1e300]), 0.1, factor=1e-10)
    with pytest.raises(ValueError, match="delta0.*factor"):
        delta0(GaussianPrior([0.0, 0.0], [1e-300, 1e-300]), 0.1, factor=1e10)
    with pytest.raises(ValueError, match="delta"):  # P[gap <= delta] underflows
        GaussianPrior.standard(3).volume_ratio(1e-320)
    with pytest.raises(ValueError, match="stds"):  # no common scale for both stds
        GaussianPrior([0.0, 0.0], [1e300, 1e-300]).L()


def test_constructor_copies_the_callers_arrays():
    m, s = np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.5, 2.0])
    H = GaussianPrior(m, s)
    assert m.flags.writeable and s.flags.writeable
    m[0], s[0] = 9.0, 9.0  # the caller may keep using its arrays
    assert H.means[0] == 0.0 and H.stds[0] == 1.0
    assert not H.means.flags.writeable and not H.stds.flags.writeable
    m32 = np.array([0.0, 1.0], dtype=np.float32)
    GaussianPrior(m32, [1.0, 1.0])
    assert m32.flags.writeable


@pytest.mark.parametrize(
    "bad",
    [["a", "b"], ["0.5", "1"], "01", [True, False], [0.0, True], None, [[0.0, 1.0]],
     [[0.0], [1.0, 2.0]], [0j, 1j], np.array([0.0, 1.0], dtype=object), [0.0, None],
     np.array([True, False]), 0.5, [0.0, "1"]],
)
def test_prior_refuses_non_numbers_by_name(bad):
    with pytest.raises(ValueError, match="^means"):
        GaussianPrior(bad, [1.0, 1.0])
    with pytest.raises(ValueError, match="^stds"):
        GaussianPrior([0.0, 1.0], bad)


def test_prior_size_and_finiteness_messages():
    with pytest.raises(ValueError, match="k >= 2"):
        GaussianPrior([0.0], [1.0])
    with pytest.raises(ValueError, match="k >= 2"):
        GaussianPrior([], [])
    with pytest.raises(ValueError, match="^means must be finite"):
        GaussianPrior([0.0, np.inf], [1.0, 1.0])
    with pytest.raises(ValueError, match="^stds must be finite"):
        GaussianPrior([0.0, 1.0], [np.nan, 1.0])
    with pytest.raises(ValueError, match="^stds must be finite"):  # beyond float64
        GaussianPrior([0.0, 1.0], np.array([1, np.longdouble("1e4000")], dtype=np.longdouble))
    for bad in (2.5, "3", True, None):
        with pytest.raises(ValueError, match="^k must"):
            GaussianPrior.standard(bad)
    assert GaussianPrior.standard(np.int64(3)).k == 3


def test_scalar_arguments_refuse_strings_and_bools():
    H = GaussianPrior.standard(2)
    for bad in ("0.1", True, None):
        with pytest.raises(ValueError, match="delta"):
            delta0(H, bad)
        with pytest.raises(ValueError, match="delta"):
            H.gap_probability(bad)
        with pytest.raises(ValueError, match="delta"):
            H.volume_ratio(bad)
    with pytest.raises(ValueError, match="factor"):
        delta0(H, 0.1, factor="4")


def test_iid_L_matches_the_gaussian_prior_and_closed_forms():
    from scipy import stats

    from bai_lib.quadrature import iid_L

    for k in (2, 3, 5, 10):
        assert iid_L(stats.norm(), k) == pytest.approx(GaussianPrior.standard(k).L(), rel=1e-8)
    assert iid_L(stats.norm(scale=3.0), 4) == pytest.approx(GaussianPrior.standard(4).L() / 3,
                                                            rel=1e-8)
    assert iid_L(stats.cauchy(), 2) == pytest.approx(1 / np.pi, rel=1e-9)
    # uniform on [0, 1]: k(k-1) * int_0^1 x^(k-2) dx = k
    assert iid_L(stats.uniform(), 5) == pytest.approx(5.0, rel=1e-9)
    with pytest.raises(ValueError, match="k"):
        iid_L(stats.norm(), 1)
    with pytest.raises(ValueError, match="dist"):
        iid_L(lambda x: x, 2)

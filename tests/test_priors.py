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
    with pytest.raises(ValueError, match="size"):
        H.sample_means(np.random.default_rng(0), 0)
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

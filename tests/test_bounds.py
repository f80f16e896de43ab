"""Tests for bai_lib.bounds (Corollary 3, Theorems 4 and 6, the relaxed problem (Opt2))."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from bai_lib import bounds as B
from bai_lib import opt2
from bai_lib.priors import GaussianPrior


def closed_form_L(prior: GaussianPrior) -> float:
    """L(H) = 2 φ(d/s)/s for two arms (independent of priors.L)."""
    d = prior.means[0] - prior.means[1]
    s = math.hypot(*prior.stds)
    return 2.0 * norm.pdf(d / s) / s


STANDARD = GaussianPrior([0.0, 0.0], [1.0, 1.0])
SKEWED = GaussianPrior([1.0, -0.5], [0.3, 0.8])


def gap_quad(f, prior, extra_points=()):
    """Integrate f(g) h_g(g) over the prior gap distribution by direct quadrature."""
    loc, sc = B.gap_distribution(prior)
    lo, hi = loc - 40 * sc, loc + 40 * sc
    pts = sorted({p for p in (0.0, loc, loc - 3 * sc, loc + 3 * sc, *extra_points) if lo < p < hi})
    val, _ = integrate.quad(
        lambda g: f(g) * norm.pdf(g, loc, sc), lo, hi, points=pts, epsabs=0, epsrel=1e-12, limit=1000
    )
    return val


# ------------------------------------------------------------------ bernoulli_kl
def test_bernoulli_kl_known_values():
    assert B.bernoulli_kl(0.5, 0.25) == pytest.approx(0.5 * math.log(4.0 / 3.0), rel=1e-14)
    assert B.bernoulli_kl(0.3, 0.3) == 0.0
    assert B.bernoulli_kl(0.0, 0.4) == pytest.approx(-math.log(0.6), rel=1e-14)
    assert B.bernoulli_kl(1.0, 0.4) == pytest.approx(-math.log(0.4), rel=1e-14)
    assert B.bernoulli_kl(0.0, 0.0) == 0.0
    assert B.bernoulli_kl(0.2, 0.0) == math.inf
    assert B.bernoulli_kl(0.2, 1.0) == math.inf
    d = 0.05
    assert B.bernoulli_kl(d, 1 - d) == pytest.approx((1 - 2 * d) * math.log((1 - d) / d), rel=1e-13)
    assert isinstance(B.bernoulli_kl(0.1, 0.2), float)


def test_bernoulli_kl_vectorised_and_symmetric():
    a = np.linspace(0.01, 0.99, 7)
    b = np.linspace(0.02, 0.97, 7)[:, None]
    out = B.bernoulli_kl(a, b)
    assert out.shape == (7, 7)
    assert np.all(out >= 0)
    np.testing.assert_allclose(out, B.bernoulli_kl(1 - a, 1 - b), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.diag(B.bernoulli_kl(a, a[:, None])), 0.0, atol=1e-15)


def test_kaufmann_inequality_on_grid():
    deltas = np.concatenate([np.logspace(-12, -1, 200), np.linspace(0.1, 0.999, 200)])
    kl = B.bernoulli_kl(deltas, 1 - deltas)
    assert np.all(kl >= np.log(1.0 / (2.4 * deltas)))
    # and the inequality is not trivially loose: the ratio tends to 1 as δ → 0
    small = deltas[deltas < 1e-10]
    assert np.all(kl[: small.size] / np.log(1 / (2.4 * small)) < 1.1)


# ----------------------------------------------------------- frequentist bound
def test_frequentist_bound_values_and_gap_scaling():
    delta = 0.01
    gaps = np.array([0.01, 0.1, 1.0, 3.0])
    kl = B.frequentist_lower_bound(gaps, delta)
    np.testing.assert_allclose(kl, B.bernoulli_kl(delta, 1 - delta) / gaps**2, rtol=1e-14)
    np.testing.assert_allclose(kl * gaps**2, kl[0] * gaps[0] ** 2, rtol=1e-14)
    lg = B.frequentist_lower_bound(gaps, delta, form="log")
    np.testing.assert_allclose(lg, math.log(1 / (2.4 * delta)) / gaps**2, rtol=1e-14)
    assert np.all(kl >= lg)
    assert isinstance(B.frequentist_lower_bound(0.5, delta), float)


def test_frequentist_bound_sigma_and_constant():
    base = B.frequentist_lower_bound(0.3, 0.05)
    assert B.frequentist_lower_bound(0.3, 0.05, noise_stds=2.0) == pytest.approx(4 * base, rel=1e-14)
    # scale invariance: noise σ and gap Δ is noise 1 and gap Δ/σ
    assert B.frequentist_lower_bound(0.6, 0.05, noise_stds=2.0) == pytest.approx(
        B.frequentist_lower_bound(0.3, 0.05, noise_stds=1.0), rel=1e-14
    )
    assert B.frequentist_lower_bound(0.3, 0.05, constant=8.0) == pytest.approx(8 * base, rel=1e-14)


def test_frequentist_bound_vacuous_for_large_delta():
    assert B.frequentist_lower_bound(0.2, 0.5) == 0.0
    assert B.frequentist_lower_bound(0.2, 0.7) == 0.0
    assert B.frequentist_lower_bound(0.2, 0.45, form="log") == 0.0  # log(1/(2.4δ)) < 0
    assert B.frequentist_lower_bound(0.2, 0.45) > 0.0


# ------------------------------------------------------- truncated Bayes bound
@pytest.mark.parametrize("prior", [STANDARD, SKEWED])
@pytest.mark.parametrize("form", ["kl", "log"])
def test_truncated_bound_diverges_like_inverse_cutoff(prior, form):
    delta, sigma = 0.01, 0.7
    numer = B.bernoulli_kl(delta, 1 - delta) if form == "kl" else math.log(1 / (2.4 * delta))
    # ε·bound(ε) → 2 h_g(0) σ² numer = L(H) σ² numer
    limit = closed_form_L(prior) * sigma**2 * numer
    for cutoff in (1e-3, 1e-4, 1e-5):
        val = B.truncated_bayes_lower_bound(prior, delta, cutoff, sigma, form=form)
        assert cutoff * val == pytest.approx(limit, rel=0.02)
    # the remainder is O(1): ε·bound(ε) - limit shrinks linearly with ε
    r3 = abs(1e-3 * B.truncated_bayes_lower_bound(prior, delta, 1e-3, sigma, form=form) - limit)
    r5 = abs(1e-5 * B.truncated_bayes_lower_bound(prior, delta, 1e-5, sigma, form=form) - limit)
    assert r5 < r3 / 50


def test_truncated_bound_matches_direct_quadrature():
    delta, sigma = 0.02, 1.3
    for prior in (STANDARD, SKEWED):
        for cutoff in (0.05, 0.4, 2.0):
            loc, sc = B.gap_distribution(prior)
            f = lambda g: norm.pdf(g, loc, sc) / g**2  # noqa: E731
            direct = (
                integrate.quad(f, cutoff, np.inf, epsabs=0, epsrel=1e-12)[0]
                + integrate.quad(f, -np.inf, -cutoff, epsabs=0, epsrel=1e-12)[0]
            )
            expected = sigma**2 * B.bernoulli_kl(delta, 1 - delta) * direct
            got = B.truncated_bayes_lower_bound(prior, delta, cutoff, sigma)
            assert got == pytest.approx(expected, rel=1e-8)


def test_truncated_bound_decreasing_in_cutoff():
    cutoffs = np.logspace(-4, 1, 12)
    vals = [B.truncated_bayes_lower_bound(SKEWED, 0.05, c) for c in cutoffs]
    assert np.all(np.diff(vals) < 0)


# ------------------------------------------------------------------ Theorem 4
def test_N_V_standard_prior():
    delta = 0.01
    L = 1 / math.sqrt(math.pi)  # L(H) for two standard normal arms
    expected = L**2 * math.log(2) / (16 * math.e**4 * delta)
    assert B.N_V(STANDARD, delta) == pytest.approx(expected, rel=1e-9)
    assert B.N_V(STANDARD, delta, 1.0, convention="variance") == pytest.approx(expected, rel=1e-9)


def test_N_V_noise_conventions():
    delta = 0.003
    base = B.N_V(SKEWED, delta)
    # σ_min := min σ_i² = 4; printed form squares it again
    assert B.N_V(SKEWED, delta, [2.0, 3.0]) == pytest.approx(16 * base, rel=1e-12)
    assert B.N_V(SKEWED, delta, [3.0, 2.0], convention="variance") == pytest.approx(4 * base, rel=1e-12)
    assert B.N_V(SKEWED, delta / 2) == pytest.approx(2 * base, rel=1e-12)


def test_d0_threshold_is_the_edge_of_the_condition():
    for prior in (STANDARD, SKEWED, GaussianPrior([0, 1, 2], [2.0, 0.5, 1.0])):
        d0 = B.d0_threshold(prior)
        xi = prior.stds

        def holds(D):
            return all(
                D**2 / xi[i] > 2 * math.exp(-1 / (8 * D * xi[i] ** 2)) + 2 * math.exp(-1 / (8 * D * xi[j] ** 2))
                for i in range(prior.k)
                for j in range(prior.k)
                if i != j
            )

        assert 0 < d0 < 1
        assert all(holds(D) for D in d0 * np.logspace(-6, -1e-3, 40))
        assert not holds(d0 * 1.001)
    # small prior stds: the condition holds on all of (0, 1)
    assert B.d0_threshold(GaussianPrior([0, 0], [0.1, 0.1])) == 1.0


def test_d0_printed_formula_is_negative():
    assert B.d0_printed(STANDARD) == pytest.approx(-0.032275048, rel=1e-6)
    assert B.d0_printed(GaussianPrior([0, 0], [0.1, 0.1])) == 1.0


def test_delta_L_standard_prior():
    L = 1 / math.sqrt(math.pi)
    d0 = B.d0_threshold(STANDARD)
    # D1 = (1/2 + 1/2)^-2 = 1 (means equal → first term infinite); mean term infinite
    expected = L / (32 * math.e**4) * min(d0, 1.0, L / (4 * 1 * 2))
    assert B.delta_L(STANDARD) == pytest.approx(expected, rel=1e-9)
    assert B.d1_threshold(STANDARD, 1.0) == 1.0


def test_delta_L_readings_differ():
    prior = GaussianPrior([0.5, -0.5], [1.0, 1.0])
    assert B.d1_threshold(prior, 1.0) == pytest.approx(1.0)
    assert B.d1_threshold(prior, 0.1) == pytest.approx(1e-4)  # (50 + 50)^-2
    assert B.delta_L(prior, 0.1, ratio_lemma_stds="noise") < B.delta_L(prior)
    with pytest.raises(ValueError, match="noise_stds"):
        B.delta_L(prior, ratio_lemma_stds="noise")


# ------------------------------------------------------------------ Theorem 6
def test_upper_bound_leading_term_formula():
    L = 1 / math.sqrt(math.pi)
    delta = 0.01
    C = 320 * (math.pi**2 / 3 + 1)
    assert B.UPPER_BOUND_C == pytest.approx(C)
    assert B.upper_bound_leading_term(STANDARD, delta) == pytest.approx(C * L**2 / delta * math.log(L / delta), rel=1e-9)
    assert B.upper_bound_leading_term(STANDARD, delta, [1.0, 3.0]) == pytest.approx(
        9 * B.upper_bound_leading_term(STANDARD, delta), rel=1e-12
    )


def test_upper_bound_condition():
    L = 1 / math.sqrt(math.pi)
    thr = 4 * L * min(L / 2, (L / 2) ** 2)  # L_12 = L/2, ξ = 1
    assert B.upper_bound_delta_threshold(STANDARD) == pytest.approx(thr, rel=1e-9)
    assert B.upper_bound_condition(STANDARD, 0.99 * thr)
    assert not B.upper_bound_condition(STANDARD, 1.01 * thr)


# ------------------------------------------------------------------ (Opt2)
def test_allocation_indifference_zone():
    lam, sigma = 0.02, 1.5
    g0 = math.sqrt(2 * sigma**2 * lam)
    inside = np.linspace(-g0, g0, 101)
    outside = np.concatenate([np.linspace(-10, -g0 * 1.0001, 50), np.linspace(g0 * 1.0001, 10, 50)])
    assert np.all(opt2.allocation(inside, lam, sigma) == 0.0)
    assert np.all(opt2.allocation(outside, lam, sigma) > 0.0)
    # maximum 1/(eλ) at a = eλ
    g_star = math.sqrt(2 * sigma**2 * math.e * lam)
    assert opt2.allocation(g_star, lam, sigma) == pytest.approx(1 / (math.e * lam), rel=1e-12)
    assert np.all(opt2.allocation(outside, lam, sigma) <= 1 / (math.e * lam) * (1 + 1e-12))
    # pointwise stationarity: a e^{-a n} = λ where n > 0
    a = outside**2 / (2 * sigma**2)
    np.testing.assert_allclose(a * np.exp(-a * opt2.allocation(outside, lam, sigma)), lam, rtol=1e-10)


@pytest.mark.parametrize("prior,sigma", [(STANDARD, 1.0), (SKEWED, 0.5)])
def test_solution_budget_binds(prior, sigma):
    for budget in (0.05, 1.0, 20.0, 300.0):
        sol = opt2.solve(prior, budget, sigma)
        g0 = sol.indifference_gap
        assert g0 == pytest.approx(math.sqrt(2 * sigma**2 * sol.lam), rel=1e-12)
        used = gap_quad(lambda g: opt2.allocation(g, sol.lam, sigma), prior, (-g0, g0))
        assert used == pytest.approx(budget, rel=1e-6)
        value = gap_quad(
            lambda g: math.exp(-(g**2) / (2 * sigma**2) * opt2.allocation(g, sol.lam, sigma)),
            prior,
            (-g0, g0),
        )
        assert sol.min_expected_poe == pytest.approx(value, rel=1e-6)
        loc, sc = B.gap_distribution(prior)
        assert sol.indifference_mass == pytest.approx(norm.cdf(g0, loc, sc) - norm.cdf(-g0, loc, sc))


@pytest.mark.parametrize("prior,sigma", [(STANDARD, 1.0), (SKEWED, 0.5)])
def test_opt2_beats_uniform_allocation(prior, sigma):
    for budget in (0.1, 1.0, 10.0, 100.0, 1e4):
        v = opt2.solve(prior, budget, sigma).min_expected_poe
        u = opt2.uniform_allocation_poe(prior, budget, sigma)
        assert v < u * (1 - 1e-3)


def test_uniform_allocation_closed_form():
    for prior, sigma in ((STANDARD, 1.0), (SKEWED, 0.5)):
        for budget in (0.0, 0.3, 7.0):
            direct = gap_quad(lambda g: math.exp(-budget * g**2 / (2 * sigma**2)), prior)
            assert opt2.uniform_allocation_poe(prior, budget, sigma) == pytest.approx(direct, rel=1e-9)


def test_frontier_decreasing():
    budgets = np.logspace(-2, 5, 15)
    fr = opt2.frontier(SKEWED, budgets, 0.8)
    assert isinstance(fr, opt2.Frontier)
    b, v, lam = fr
    np.testing.assert_array_equal(b, budgets)
    assert v.shape == lam.shape == budgets.shape
    assert np.all(np.diff(v) < 0)
    assert np.all(np.diff(lam) < 0)
    assert np.all((v > 0) & (v < 1))


def test_kkt_perturbing_lambda():
    for prior, sigma in ((STANDARD, 1.0), (SKEWED, 0.5)):
        for budget in (0.5, 5.0, 50.0):
            sol = opt2.solve(prior, budget, sigma)
            for factor in (0.9, 0.999, 1.001, 1.1):
                used, poe = opt2.budget_and_poe(prior, sol.lam * factor, sigma)
                if factor < 1:
                    assert used > budget  # infeasible
                else:
                    assert used < budget
                    assert poe > sol.min_expected_poe


def test_opt2_beats_other_feasible_allocations():
    prior, sigma, budget = SKEWED, 0.5, 5.0
    sol = opt2.solve(prior, budget, sigma)
    g0 = sol.indifference_gap
    loc, sc = B.gap_distribution(prior)

    def objective(n):
        return gap_quad(lambda g: math.exp(-(g**2) / (2 * sigma**2) * n(g)), prior, (-g0, g0))

    # perturbations of n* rescaled to the same budget
    for eps, freq in ((0.2, 1.0), (-0.3, 3.0), (0.5, 0.5)):
        raw = lambda g: sol.allocation(g) * (1 + eps * math.cos(freq * g))  # noqa: E731
        scale = budget / gap_quad(raw, prior, (-g0, g0))
        assert objective(lambda g: scale * raw(g)) > sol.min_expected_poe
    # the indicator allocations of the (Opt3) argument, for several thresholds
    for t in (0.0, 0.5 * g0, g0, 2 * g0):
        mass = 1 - (norm.cdf(t, loc, sc) - norm.cdf(-t, loc, sc))
        n_t = lambda g: budget / mass * (abs(g) > t)  # noqa: E731
        assert objective(n_t) > sol.min_expected_poe


def test_monte_carlo_check_of_one_dimensional_reduction():
    prior, sigma, budget = SKEWED, 0.5, 3.0
    sol = opt2.solve(prior, budget, sigma)
    mu = prior.sample_means(np.random.default_rng(12345), 400_000)
    gaps = mu[:, 0] - mu[:, 1]
    n = sol.allocation(gaps)
    poe = np.exp(-(gaps**2) / (2 * sigma**2) * n)
    se = poe.std(ddof=1) / math.sqrt(poe.size)
    assert abs(poe.mean() - sol.min_expected_poe) < 4 * se
    se_n = n.std(ddof=1) / math.sqrt(n.size)
    assert abs(n.mean() - budget) < 4 * se_n


def test_large_budget_asymptote():
    for prior, sigma in ((STANDARD, 1.0), (SKEWED, 0.5)):
        L = closed_form_L(prior)
        for budget in (1e6, 1e8):
            v = opt2.solve(prior, budget, sigma).min_expected_poe
            assert v * budget / (8 * sigma**2 * L**2) == pytest.approx(1.0, rel=1e-3)
            assert opt2.large_budget_poe(prior, budget, sigma) == pytest.approx(v, rel=1e-3)


def test_poe_lower_bound_is_V_over_2_4():
    sol = opt2.solve(STANDARD, 10.0)
    assert opt2.poe_lower_bound(STANDARD, 10.0) == pytest.approx(sol.min_expected_poe / 2.4, rel=1e-12)
    assert sol.poe_lower_bound == pytest.approx(sol.min_expected_poe / 2.4, rel=1e-12)
    np.testing.assert_array_equal(sol.allocation([0.0, 1.0]), opt2.allocation([0.0, 1.0], sol.lam))
    with pytest.raises(dataclasses.FrozenInstanceError):
        sol.lam = 1.0  # type: ignore[misc]


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan"), "x"])
def test_delta_validation(bad):
    with pytest.raises(ValueError, match="delta"):
        B.frequentist_lower_bound(1.0, bad)
    with pytest.raises(ValueError, match="delta"):
        B.truncated_bayes_lower_bound(STANDARD, bad, 0.1)
    with pytest.raises(ValueError, match="delta"):
        B.N_V(STANDARD, bad)
    with pytest.raises(ValueError, match="delta"):
        B.upper_bound_leading_term(STANDARD, bad)
    with pytest.raises(ValueError, match="delta"):
        B.upper_bound_condition(STANDARD, bad)


def test_other_validation():
    with pytest.raises(ValueError, match="gap"):
        B.frequentist_lower_bound(0.0, 0.1)
    with pytest.raises(ValueError, match="gap"):
        B.frequentist_lower_bound([1.0, -1.0], 0.1)
    with pytest.raises(ValueError, match="gap"):
        B.frequentist_lower_bound(np.inf, 0.1)
    with pytest.raises(ValueError, match="gap"):
        opt2.allocation(np.nan, 0.1)
    with pytest.raises(ValueError, match="noise_stds"):
        B.frequentist_lower_bound(1.0, 0.1, noise_stds=0.0)
    with pytest.raises(ValueError, match="noise_stds"):
        opt2.solve(STANDARD, 1.0, noise_stds=-1.0)
    with pytest.raises(ValueError, match="form"):
        B.frequentist_lower_bound(1.0, 0.1, form="exact")
    with pytest.raises(ValueError, match="cutoff"):
        B.truncated_bayes_lower_bound(STANDARD, 0.1, 0.0)
    with pytest.raises(ValueError, match="prior"):
        B.truncated_bayes_lower_bound(GaussianPrior([0, 0, 0], [1, 1, 1]), 0.1, 0.1)
    with pytest.raises(ValueError, match="prior"):
        opt2.solve(GaussianPrior([0, 0, 0], [1, 1, 1]), 1.0)
    with pytest.raises(ValueError, match="prior"):
        B.N_V("not a prior", 0.1)
    with pytest.raises(ValueError, match="noise_stds"):
        B.N_V(STANDARD, 0.1, [1.0, 0.0])
    with pytest.raises(ValueError, match="noise_stds"):
        B.upper_bound_leading_term(STANDARD, 0.1, [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="convention"):
        B.N_V(STANDARD, 0.1, convention="other")
    with pytest.raises(ValueError, match="budget"):
        opt2.solve(STANDARD, 0.0)
    with pytest.raises(ValueError, match="budget"):
        opt2.solve(STANDARD, np.inf)
    with pytest.raises(ValueError, match="budget"):
        opt2.uniform_allocation_poe(STANDARD, -1.0)
    with pytest.raises(ValueError, match="budgets"):
        opt2.frontier(STANDARD, [1.0, -2.0])
    with pytest.raises(ValueError, match="lam"):
        opt2.allocation(1.0, 0.0)
    with pytest.raises(ValueError, match="a must"):
        B.bernoulli_kl(1.2, 0.5)
    with pytest.raises(ValueError, match="b must"):
        B.bernoulli_kl(0.2, -0.5)


def test_opt2_budget_for_poe_inverts_the_frontier():
    from bai_lib import GaussianPrior, bounds

    H = GaussianPrior.standard(2)
    for target in (0.5, 0.1, 1e-3):
        N = opt2.budget_for_poe(H, target)
        assert opt2.solve(H, N).min_expected_poe == pytest.approx(target, rel=1e-8)
        assert opt2.solve(H, 0.99 * N).min_expected_poe > target
    with pytest.raises(ValueError, match="target"):
        opt2.budget_for_poe(H, 1.0)


def test_one_bernoulli_divergence_checked_and_compiled():
    """``bounds.bernoulli_kl`` is the simulators' ``kl.kl_bernoulli`` behind the argument check:
    the same bits on valid input, a ``ValueError`` naming the argument where the kernel returns
    ``nan``."""
    from bai_lib.kl import kl_bernoulli
    a = np.array([0.0, 1e-12, 0.3, 0.5, 0.5 + 1e-9, 0.999, 1.0])
    out = B.bernoulli_kl(a[:, None], a[None, :])
    expected = np.array([[kl_bernoulli(x, y) for y in a] for x in a])
    assert np.array_equal(out, expected)
    assert math.isnan(kl_bernoulli(1.5, 0.5))
    with pytest.raises(ValueError, match="^a must lie in"):
        B.bernoulli_kl(1.5, 0.5)
    with pytest.raises(ValueError, match="^b must lie in"):
        B.bernoulli_kl(0.5, -0.1)

"""Empirical Bayes fits of a Beta prior to a history of campaigns (:mod:`bai_lib.empirical_bayes`),
against scipy's beta-binomial and the textbook moment estimator."""

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from bai_lib import BetaPrior
from bai_lib import empirical_bayes as eb
from bai_lib.empirical_bayes import BetaFit, fit_beta_prior


def history(rng, a, b, trials):
    """Successes of campaigns with the given trials and rates drawn from Beta(a, b)."""
    trials = np.asarray(trials)
    return rng.binomial(trials, rng.beta(a, b, trials.shape))


def loglik(a, b, x, n):
    return stats.betabinom.logpmf(x, n, a, b).sum()


def test_public_api():
    assert eb.__all__ == ["BetaFit", "fit_beta_prior", "synthetic_history"]


def test_ml_is_the_maximum():
    rng = np.random.default_rng(11)
    n = rng.integers(50, 500, size=200)
    x = history(rng, 2.0, 18.0, n)
    fit = fit_beta_prior(x, n)
    assert fit.method == "ml" and fit.n_campaigns == 200
    best = loglik(fit.a, fit.b, x, n)
    assert fit.loglik == pytest.approx(best, rel=1e-9)
    tol = 1e-12 * abs(best)
    u, v = rng.uniform(-0.05, 0.05, size=(2, 200))
    for ui, vi in zip(u, v):
        assert loglik(fit.a * math.exp(ui), fit.b * math.exp(vi), x, n) <= best + tol
    # stationary to the precision of central differences in (log a, log b): the total
    # gradient is below 5e-6 (2.5e-8 per campaign)
    h = 3e-5
    for da, db in ((h, 0.0), (0.0, h)):
        up = loglik(fit.a * math.exp(da), fit.b * math.exp(db), x, n)
        down = loglik(fit.a * math.exp(-da), fit.b * math.exp(-db), x, n)
        assert abs(up - down) / (2 * h) < 5e-6
    mom = fit_beta_prior(x, n, method="moments")
    assert (mom.a, mom.b) != (fit.a, fit.b)
    assert loglik(mom.a, mom.b, x, n) < best
    assert mom.loglik == pytest.approx(loglik(mom.a, mom.b, x, n), rel=1e-9)


def test_ml_consistent_and_no_less_precise_than_moments():
    rng = np.random.default_rng(1)
    h, m, a, b = 200, 300, 6.0, 294.0
    n = np.round(np.exp(rng.uniform(math.log(2000), math.log(20000), (h, m)))).astype(int)
    x = history(rng, a, b, n)
    ml = [fit_beta_prior(x[i], n[i]) for i in range(h)]
    mom = [fit_beta_prior(x[i], n[i], method="moments") for i in range(h)]
    mean = np.array([f.mean for f in ml])
    total_ml = np.array([f.a + f.b for f in ml])
    total_mom = np.array([f.a + f.b for f in mom])
    assert abs(np.median(mean) / 0.02 - 1) < 0.02
    assert abs(np.median(np.log(total_ml)) - math.log(300)) < 0.15
    assert 0.35 <= np.mean(mean < 0.02) <= 0.65

    def spread(v, lo, hi):
        return np.percentile(v, hi) - np.percentile(v, lo)

    assert spread(total_ml, 25, 75) <= 1.2 * spread(total_mom, 25, 75)
    assert spread(total_ml, 10, 90) <= 1.2 * spread(total_mom, 10, 90)


def test_moments_equal_trials_is_the_textbook_estimator():
    rng = np.random.default_rng(3)
    a, b, n = 4.0, 36.0, 1000
    trials = np.full(5000, n)
    x = history(rng, a, b, trials)
    fit = fit_beta_prior(x, trials, method="moments")
    assert fit.a == pytest.approx(a, rel=0.1) and fit.b == pytest.approx(b, rel=0.1)
    # match E[x] = n mu and Var[x] = n mu (1 - mu) (n + a + b) / (1 + a + b) to the sample
    # mean and the sample variance (ddof=1)
    mu = x.mean() / n
    r = x.var(ddof=1) / (n * mu * (1 - mu))
    total = (n - r) / (r - 1)
    assert fit.a == pytest.approx(mu * total, rel=1e-10)
    assert fit.b == pytest.approx((1 - mu) * total, rel=1e-10)


def test_moments_unequal_trials_recovers_the_truth():
    rng = np.random.default_rng(5)
    trials = rng.integers(200, 3000, size=5000)
    fit = fit_beta_prior(history(rng, 3.0, 27.0, trials), trials, method="moments")
    assert fit.a == pytest.approx(3.0, rel=0.1) and fit.b == pytest.approx(27.0, rel=0.1)


@pytest.mark.parametrize("method", ["ml", "moments"])
def test_no_over_dispersion(method):
    rng = np.random.default_rng(1)
    n = np.full(50, 500)
    x = rng.binomial(n, 0.1)
    mu = x.sum() / n.sum()
    assert x.var(ddof=1) < 500 * mu * (1 - mu)  # this seed: less spread than binomial
    with pytest.raises(ValueError, match="^successes: no over-dispersion"):
        fit_beta_prior(x, n, method=method)


def test_float_integers_accepted():
    x, n = [3, 10, 1, 7, 0, 12], [40, 50, 30, 45, 35, 40]
    ints = fit_beta_prior(x, n)
    floats = fit_beta_prior(np.array(x, float), tuple(float(v) for v in n))
    assert ints == floats


GOOD_X, GOOD_N = [3, 10, 1, 7], [40, 50, 30, 45]


FINITE, INTEGERS, LENGTH = "must be finite real numbers", "must hold non-negative integers", \
    "must be a one-dimensional sequence of at least 2"


@pytest.mark.parametrize("kwargs, name, rule", [
    ({"successes": [[3, 10], [1, 7]]}, "successes", LENGTH),
    ({"trials": [[40, 50], [30, 45]]}, "trials", LENGTH),
    ({"trials": 40}, "trials", LENGTH),
    ({"successes": [3], "trials": [40]}, "successes", LENGTH),
    ({"trials": [40, 50, 30]}, "trials", "must have the length of successes"),
    ({"successes": [3.5, 10, 1, 7]}, "successes", INTEGERS),
    ({"trials": [40, 50.5, 30, 45]}, "trials", INTEGERS),
    ({"successes": [3, -1, 1, 7]}, "successes", INTEGERS),
    ({"trials": [40, -50, 30, 45]}, "trials", INTEGERS),
    ({"trials": [40, 0, 30, 45]}, "trials", "must all be >= 1"),
    ({"successes": [3, 51, 1, 7]}, "successes", "must not exceed trials"),
    ({"successes": [3, np.nan, 1, 7]}, "successes", FINITE),
    ({"trials": [40, np.inf, 30, 45]}, "trials", FINITE),
    ({"successes": ["3", "10", "1", "7"]}, "successes", FINITE),
    ({"successes": [True, False, True, False]}, "successes", FINITE),
    ({"successes": None}, "successes", FINITE),
    ({"successes": [1, 0, 1, 0], "trials": [1, 1, 1, 1]}, "trials", "all campaigns have 1 trial"),
    ({"successes": [0, 0, 0, 0]}, "successes", "no successes at all, or only"),
    ({"successes": GOOD_N}, "successes", "no successes at all, or only"),
    ({"method": "mle"}, "method", "must be one of"),
    ({"method": None}, "method", "must be one of"),
])
@pytest.mark.parametrize("method", ["ml", "moments"])
def test_bad_input(kwargs, name, rule, method):
    args = {"successes": GOOD_X, "trials": GOOD_N, "method": method} | kwargs
    with pytest.raises(ValueError, match=f"^{name}:? {rule}"):
        fit_beta_prior(args.pop("successes"), args.pop("trials"), **args)


@pytest.mark.parametrize("method", ["ml", "moments"])
def test_all_or_nothing_campaigns(method):
    # each campaign all successes or none: the method of moments gives rho >= 1, the likelihood
    # is largest as a, b -> 0
    with pytest.raises(ValueError, match="^successes"):
        fit_beta_prior([0, 10, 0, 10], [10, 10, 10, 10], method=method)


def test_fit_properties_and_prior():
    rng = np.random.default_rng(7)
    n = rng.integers(100, 1000, size=100)
    fit = fit_beta_prior(history(rng, 5.0, 45.0, n), n)
    assert isinstance(fit, BetaFit)
    assert fit.mean == pytest.approx(stats.beta(fit.a, fit.b).mean(), rel=1e-12)
    assert fit.std == pytest.approx(stats.beta(fit.a, fit.b).std(), rel=1e-12)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fit.a = 1.0
    prior = fit.prior(3)
    assert isinstance(prior, BetaPrior)
    np.testing.assert_array_equal(prior.a, [fit.a] * 3)
    np.testing.assert_array_equal(prior.b, [fit.b] * 3)
    assert fit.prior(np.int64(2)).k == 2
    for k in (1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="^k must be an integer"):
            fit.prior(k)


def test_synthetic_history_draws_trials_rates_and_successes_in_order():
    from bai_lib.empirical_bayes import synthetic_history
    rng = np.random.default_rng(5)
    trials = np.round(np.exp(rng.uniform(np.log(200), np.log(9_000), 40))).astype(int)
    rates = rng.beta(2.0, 30.0, 40)
    expected = rng.binomial(trials, rates)
    x, n = synthetic_history(5, 40, 2.0, 30.0, (200, 9_000))
    np.testing.assert_array_equal(n, trials)
    np.testing.assert_array_equal(x, expected)
    assert np.all((200 <= n) & (n <= 9_000)) and np.all(x <= n)
    x, n = synthetic_history(1, 3_000, 3.0, 97.0)
    fit = fit_beta_prior(x, n)
    assert abs(fit.mean - 0.03) < 0.002 and 60 < fit.a + fit.b < 150


@pytest.mark.parametrize("kwargs, name", [
    ({"visitors": (0, 10)}, "visitors"), ({"visitors": (10, 5)}, "visitors"),
    ({"visitors": (1, 2, 3)}, "visitors"), ({"a": -1.0}, "a"), ({"n_campaigns": 0}, "n_campaigns"),
])
def test_synthetic_history_refuses_bad_input(kwargs, name):
    from bai_lib.empirical_bayes import synthetic_history
    with pytest.raises(ValueError, match=name):
        synthetic_history(1, **kwargs)

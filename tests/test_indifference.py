"""The indifference stop of Algorithm 1 added to the GLR top-two algorithms
(``TTUCB(indifference=True)``, ``EBTC(indifference=True)``): the stop against a plain reference on
fixed sample paths, its relation to the plain algorithm, and the Bayesian error."""

import functools
import math

import numpy as np
import pytest
from scipy import optimize, special, stats

from bai_lib import (EBTC, TTTS, TTUCB, BetaPrior, GaussianPrior, TrackAndStop, simulate,
                     simulate_deltas)
from bai_lib import _rng
from bai_lib.confidence import indifference_split
from bai_lib.stopping import PROVEN_GLR_THRESHOLDS, threshold
from bai_lib.stats import clopper_pearson
from test_bernoulli_glr import _coin, ref_z
from test_baselines import ref_tas
from test_conventions import ref_ttucb_released


def _states(seed, n):
    return [_rng.seed_state(seed, r, _rng.STREAM_ALGO) for r in range(n)]


def _indifference(sigma, delta, delta0):
    """The stop written from its definition: intervals m_j ± σ_j √(2 log(12 K n²/(δc²π²))/n)
    at δc = 3√δ/π², and max_{j≠b} UCB_j − LCB_b <= Δ0."""
    k = sigma.size
    dc = 3 * math.sqrt(delta) / math.pi**2

    @functools.cache
    def root(count):  # √(2 log(12 K n²/(δc²π²))/n) of a count n, computed once per n
        n = np.array([count], dtype=float)
        return float(np.sqrt(2 * np.log(12 * k * n**2 / (dc**2 * math.pi**2)) / n)[0])

    def stop(m, n, best):
        w = [sigma[j] * root(n[j]) for j in range(k)]
        ucb = max(m[j] + w[j] for j in range(k) if j != best)
        return ucb - (m[best] - w[best]) <= delta0

    return stop


@functools.cache
def _exact_cg(x):
    """C_G(x) of the paper's appendix, minimised here from its formula (not bai_lib's code)."""
    def f(lam):
        return (2 * lam - 2 * lam * math.log(4 * lam) + math.log(special.zeta(2 * lam))
                - 0.5 * math.log(1 - lam) + x) / lam
    grid = np.linspace(0.5, 1.0, 20001)[1:-1]
    j = int(np.argmin([f(g) for g in grid]))
    res = optimize.minimize_scalar(f, bounds=(grid[j - 1], grid[j + 1]), method="bounded",
                                   options={"xatol": 1e-12})
    return res.fun


def proven_beta(k, delta, rewards):
    """The proven GLR threshold β(t) at δ written from its statement: Kaufmann & Koolen's
    2 C_G(log((k-1)/δ)/2) + 4 log(4 + log(t/2)) for Gaussian arms; for Bernoulli arms the root
    of (1 + β) e^{-β} = 16 δ / ((k-1) t² (t+2)²)."""
    if rewards == "gaussian":
        two_cg = 2 * _exact_cg(0.5 * math.log((k - 1) / delta))
        return lambda t: two_cg + 4 * math.log(4 + math.log(t / 2))

    # a reference run asks for β(t) at every t, and runs share them: solve each root once
    @functools.lru_cache(maxsize=None, typed=True)
    def beta(t):
        rhs = math.log(16 * delta / ((k - 1) * t**2 * (t + 2) ** 2))
        return optimize.brentq(lambda b: math.log1p(b) - b - rhs, 1e-9, 1e4, xtol=1e-14)
    return beta


def test_the_split_spends_delta_as_documented():
    for delta in (0.3, 0.1, 1e-4):
        glr, conf = indifference_split(delta)
        assert glr == delta / 4
        assert math.pi**4 * conf**2 / 36 == pytest.approx(delta / 4, rel=1e-12)
    with pytest.raises(ValueError, match="delta"):
        indifference_split(1.5)


CASES = [  # means, noise, fixed Δ0, rewards
    ([0.0, 0.02], [1.0, 1.0], 0.1, "gaussian"),
    ([0.0, 1.0], [1.0, 2.0], 0.1, "gaussian"),
    ([0.3, 0.31, 0.0], [1.0, 0.5, 1.0], 0.2, "gaussian"),
    ([0.30, 0.31], [0.5, 0.5], 0.08, "bernoulli"),
]


@pytest.mark.parametrize("mu, sigma, d0, rewards", CASES,
                         ids=["near-tie", "separated", "k3", "bernoulli"])
def test_ttucb_with_the_stop_matches_a_plain_reference_run_for_run(mu, sigma, d0, rewards):
    mu, sigma = np.array(mu), np.array(sigma)
    delta, n = 0.1, 25
    bern = rewards == "bernoulli"
    res = simulate(TTUCB(indifference=True, delta0=d0), None, None if bern else sigma, delta, n,
                   6, means=mu, rewards=rewards)
    extra = {"reward": lambda a, z: _coin(mu, a, z), "glr": ref_z} if bern else {}
    stop = _indifference(sigma, delta, d0)
    beta = proven_beta(mu.size, delta / 4, rewards)
    expect = [ref_ttucb_released(st, mu, sigma, delta / 4, True, extra_stop=stop, beta=beta,
                                 **extra)
              for st in _states(6, n)]
    got = list(zip(res.stopping_times.tolist(), res.recommendations.tolist()))
    assert got == expect
    reasons = set(res.stop_reasons)
    assert reasons <= {"glr", "indifference"}
    if mu.size == 2 and abs(mu[1] - mu[0]) < 0.05:
        assert "indifference" in reasons  # the stop is exercised


@pytest.mark.parametrize("tracking", ["D", "C"])
def test_track_and_stop_with_the_stop_matches_a_plain_reference(tracking):
    """Against the plain Track-and-Stop reference with the stop written from its definition, on
    a near-tie where the runs stop by indifference. The reference computes the means and
    widths in another order, so a run whose stop falls on the boundary of the test can end one
    step apart, and a tracking tie decided by rounding makes the trajectories part: most runs
    agree exactly, and the stopping times have the same law."""
    mu, sigma = np.array([0.0, 0.02, -0.3]), np.ones(3)
    delta, d0, n = 0.1, 0.45, 30
    res = simulate(TrackAndStop(tracking=tracking, update="every", indifference=True, delta0=d0),
                   None, sigma, delta, n, 12, means=mu)
    stop = _indifference(sigma, delta, d0)
    beta = proven_beta(3, delta / 4, "gaussian")
    ref = np.array([ref_tas(st, mu, sigma, delta / 4, tracking, 10**7, extra_stop=stop,
                            beta=beta)
                    for st in _states(12, n)])
    exact = (res.stopping_times == ref[:, 0]) & (res.recommendations == ref[:, 1])
    assert exact.mean() >= 0.5, exact.mean()
    assert stats.ks_2samp(res.stopping_times, ref[:, 0]).pvalue > 0.05
    assert (res.stop_reasons == "indifference").all()


# Each specification with the stop, and the plain one whose GLR test is its GLR share: the
# proven threshold ("kk2021" for Gaussian arms: TTUCB's c(t, δ) with the exact C_G, multiplier 2
# and log(t/2)), or with indifference_glr="own" the specification's own threshold.
SHARES = {
    "ttucb": (TTUCB(indifference=True, delta0=0.05), TTUCB(cg="exact", log_term="printed")),
    "ebtc": (EBTC(indifference=True, delta0=0.05), EBTC(cg="exact")),
    "tas": (TrackAndStop(indifference=True, delta0=0.05), TrackAndStop(threshold="kk2021")),
    "ttts": (TTTS(indifference=True, delta0=0.05), TTTS(threshold="kk2021")),
    "ttucb-own": (TTUCB(indifference=True, delta0=0.05, indifference_glr="own"), TTUCB()),
}


@pytest.mark.filterwarnings("ignore::bai_lib.CensoringWarning")
@pytest.mark.parametrize("name", list(SHARES))
def test_the_stop_only_shortens_the_plain_run_at_a_quarter_of_delta(name):
    """The sampling rule does not see the stop: a run stopped by its GLR test is the plain run at
    δ/4 under the GLR share's threshold, and a run stopped by indifference stops no later."""
    spec, plain_spec = SHARES[name]
    H = GaussianPrior.standard(3)
    plain = simulate(plain_spec, H, 1.0, 0.1 / 4, 300, 8, max_samples=10**7)
    iz = simulate(spec, H, 1.0, 0.1, 300, 8, max_samples=10**7)
    glr = iz.stop_reasons == "glr"
    assert glr.any() and (~glr).any()
    assert np.array_equal(iz.stopping_times[glr], plain.stopping_times[glr])
    assert np.array_equal(iz.recommendations[glr], plain.recommendations[glr])
    assert np.all(iz.stopping_times[~glr] <= plain.stopping_times[~glr])


@pytest.mark.parametrize("name", list(SHARES))
def test_threshold_is_the_one_the_kernel_uses(name):
    """threshold(spec, t, δ) of a specification with the stop is the GLR share's: twice the
    proven β at δ/4 written from its statement (or the own threshold at δ/4), for both reward
    models; the plain specification above has the same at δ/4."""
    spec, plain_spec = SHARES[name]
    t = np.array([3.0, 50.0, 1e4, 1e9])
    for k in (2, 5):
        got = threshold(spec, t, 0.1, k)
        np.testing.assert_array_equal(got, threshold(plain_spec, t, 0.1 / 4, k))
        if name != "ttucb-own":
            want = [2 * proven_beta(k, 0.1 / 4, "gaussian")(x) for x in t]
            np.testing.assert_allclose(got, want, rtol=1e-9)
            bern = threshold(spec, t, 0.1, k, rewards="bernoulli")
            np.testing.assert_allclose(bern, [2 * proven_beta(k, 0.1 / 4, "bernoulli")(x)
                                              for x in t], rtol=1e-9)
    # the own threshold at δ/4 is below the proven one at δ itself (C_G ≈ x + log x)
    own = threshold(SHARES["ttucb-own"][0], 1e4, 0.1)
    assert own < threshold(TTUCB(indifference=True), 1e4, 0.4)
    with pytest.raises(ValueError, match="rewards"):
        threshold(spec, 10.0, 0.1, rewards="poisson")


def test_the_proven_bernoulli_threshold_covers_the_error_of_every_count_pair():
    """The union bound of the proven Bernoulli threshold ("union") summed numerically: over count pairs
    with n + n' <= t the per-pair Gamma(2, 1) tails at β(t) add up to at most δ/(k-1)."""
    delta, k = 0.05, 3
    beta = proven_beta(k, delta, "bernoulli")
    total = 0.0
    for n in range(1, 400):
        for m in range(1, 400):
            b = beta(n + m)  # the smallest t at which this pair can occur
            total += (1 + b) * math.exp(-b)
    assert total <= delta / (k - 1)
    union = PROVEN_GLR_THRESHOLDS["bernoulli"]
    np.testing.assert_allclose(threshold(union, [10.0, 1e5], delta, k) / 2,
                               [beta(10.0), beta(1e5)], rtol=1e-9)
    assert np.all(np.diff(threshold(union, np.geomspace(2, 1e12, 50), delta, k)) > 0)


@pytest.mark.parametrize("spec", [TTUCB(indifference=True), TrackAndStop(indifference=True),
                                  TTTS(indifference=True)], ids=["ttucb", "tas", "ttts"])
def test_every_level_of_simulate_deltas_is_a_run_at_that_level_alone(spec):
    """With the indifference stop the forced pulls start at a time set by the level
    (``forcing_start``), so each level runs on its own trajectory: ``one_trajectory`` is false
    with the option and true without it, and each level's records are those of a separate run."""
    assert not spec.one_trajectory and type(spec)().one_trajectory
    H = GaussianPrior.standard(3)
    deltas = [0.3, 0.1, 0.01]
    many = simulate_deltas(spec, H, 1.0, deltas, 200, 9)
    for d in deltas:
        one = simulate(spec, H, 1.0, d, 200, 9)
        assert np.array_equal(many[d].stopping_times, one.stopping_times)
        assert np.array_equal(many[d].recommendations, one.recommendations)
        assert np.array_equal(many[d].stop_reasons, one.stop_reasons)
        assert many[d].delta0 == one.delta0 == spec.resolve_delta0(H, d)


@pytest.mark.filterwarnings("ignore::bai_lib.CensoringWarning")
@pytest.mark.parametrize("spec", [TTUCB(indifference=True), EBTC(indifference=True),
                                  TrackAndStop(indifference=True), TTTS(indifference=True)],
                         ids=["ttucb", "ebtc", "tas", "ttts"])
def test_bayesian_error_below_delta_and_no_heavy_tail(spec):
    """Under the prior of Table 1, δ = 0.1: the 99.9% Clopper-Pearson upper end of the error is
    below δ, no run reaches 10^8 samples, and the longest of 3,000 runs is a small fraction of
    the plain algorithm's (whose runs are censored at 10^7, which its tail reaches)."""
    H = GaussianPrior.standard(2)
    n = 3000
    iz = simulate(spec, H, 1.0, 0.1, n, 10, max_samples=10**8)
    plain = simulate(type(spec)(), H, 1.0, 0.1, n, 10, max_samples=10**7)
    errors = int(np.count_nonzero(~iz.correct))
    assert clopper_pearson(errors, n, 0.999)[1] < 0.1, errors
    assert not iz.censored.any()
    assert iz.stopping_times.max() < plain.stopping_times.max() / 10
    assert (iz.stop_reasons == "indifference").sum() > 20


@pytest.mark.parametrize("spec", [TTUCB(indifference=True), TrackAndStop(indifference=True),
                                  TTTS(indifference=True, beta=0.4)], ids=["ttucb", "tas", "ttts"])
def test_bernoulli_arms_under_a_beta_prior(spec):
    # 200 runs (first 200 of seed 11): 16-19 stop by indifference, 0 errors. The Clopper-Pearson
    # bound is exact at any n (it passes with probability <= 0.0005 if the error is >= 0.1); at
    # n = 200 it stays below 0.1 up to 6 errors (0 errors: 0.037), while the error rate seen
    # over 500 runs is <= 1/500, i.e. 0.4 errors expected here. (A zone too wide, TTUCB with
    # Δ0 = 0.4: 13 errors in 200 runs, bound 0.14, fails; 30 in 500 gave 0.103.)
    n = 200
    res = simulate(spec, BetaPrior([2.0, 2.0], [8.0, 8.0]), None, 0.1, n, 11)
    assert (res.stop_reasons == "indifference").any()
    assert clopper_pearson(int(np.count_nonzero(~res.correct)), n, 0.999)[1] < 0.1


def test_options_are_checked_and_the_prior_is_needed_only_for_delta0():
    with pytest.raises(ValueError, match="delta0 and delta0_factor set the indifference stop"):
        TTUCB(delta0=0.1)
    with pytest.raises(ValueError, match="either delta0 or delta0_factor"):
        EBTC(indifference=True, delta0=0.1, delta0_factor=2.0)
    with pytest.raises(ValueError, match="delta0"):
        TTUCB(indifference=True, delta0=-1.0)
    with pytest.raises(ValueError, match="indifference"):
        TTUCB(indifference="yes")
    with pytest.raises(ValueError, match="uses the prior"):
        simulate(TTUCB(indifference=True), None, 1.0, 0.1, 5, 1, means=[0.0, 1.0])
    res = simulate(TTUCB(indifference=True, delta0=0.5), None, 1.0, 0.1, 5, 1, means=[0.0, 1.0])
    assert res.delta0 == 0.5
    assert TTUCB(indifference=True).label == "TTUCB (indifference=True)"
    assert TTUCB(indifference=True).with_delta0_factor(1.0).delta0_factor == 1.0
    assert TTUCB().with_delta0_factor(1.0) == TTUCB()


TIED = {"gaussian": (GaussianPrior.standard(3), 1.0, [1.0, 1.0, 0.0]),
        "bernoulli": (BetaPrior.uniform(3), 0.5, [0.5, 0.5, 0.2])}
FORCED = {"ttucb": TTUCB(indifference=True, delta0=0.3),
          "ebtc": EBTC(indifference=True, delta0=0.3),
          "tas": TrackAndStop(indifference=True, delta0=0.3),
          "ttts": TTTS(indifference=True, delta0=0.3, challenger="resample")}


@pytest.mark.parametrize("rewards", list(TIED))
@pytest.mark.parametrize("name", list(FORCED))
def test_every_run_on_tied_means_stops_by_the_stated_bound(name, rewards):
    """Two arms tied at the top: the GLR test never passes, and EB-TC, which has no exploration,
    used to starve the third arm so that its interval never shrank and every run went to the cap
    (TTTS too, on some runs). The kernels force the least-sampled arm from ``t = 2k n0`` on, so
    every run stops by indifference within ``stopping_time_bound`` = ``(3k - 1) n0`` samples, for
    every algorithm with the option and both reward models; the cap is ten times the bound."""
    prior, sigma, mu = TIED[rewards]
    spec = FORCED[name]
    bound = spec.stopping_time_bound(prior, sigma, 0.1)
    res = simulate(spec, prior, sigma, 0.1, 60, 5, means=mu, max_samples=10 * bound,
                   rewards=rewards)
    assert not res.censored.any()
    assert np.all(res.stop_reasons == "indifference")
    assert res.stopping_times.max() <= bound

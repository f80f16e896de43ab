"""Importance-sampled probability of error (bai_lib.poe) and the two-arm walk of Algorithm 1."""

import functools
import math

import numpy as np
import pytest
from scipy.stats import ks_2samp

from bai_lib import CensoringWarning, Elimination, GaussianPrior, NoElim, TTUCB, simulate
from bai_lib._rng import fill_normal, seed_state, uniform
from bai_lib.algorithms.elimination import (TwoArmElimination, elimination_run,
                                           two_arm_elimination_run)
from bai_lib.confidence import conf_factor, conf_log_const, indifference_round
from bai_lib.kernels import NORMAL_BUFFER, STOP_INDIFFERENCE, STOP_SINGLE_ARM, cancel_flag
from bai_lib.families import Gaussian
from bai_lib.poe import NearTieProposal, PoEEstimate, importance_poe, plain_poe
from bai_lib.priors import delta0

UNEVEN = GaussianPrior(means=[0.0, 0.3, -0.2], stds=[1.0, 0.5, 2.0])


def _z(values, target):
    return (values.mean() - target) / (values.std(ddof=1) / math.sqrt(values.size))


# ------------------------------------------------------------------ the proposal's weights
@pytest.mark.parametrize("prior", [GaussianPrior.standard(2), UNEVEN, GaussianPrior.standard(6)])
def test_weights_are_the_exact_likelihood_ratio(prior):
    """E_q[w] = 1 and E_q[w 1{gap <= t}] = P_H(gap <= t) for thresholds inside and outside."""
    q = NearTieProposal(prior, half_width=0.05)
    means, w = q.sample(3, 400_000)
    assert abs(_z(w, 1.0)) < 4.5
    top = np.sort(means, axis=1)
    gap = top[:, -1] - top[:, -2]
    for t in (0.01, 0.05, 0.3):
        assert abs(_z(w * (gap <= t), prior.gap_probability(t))) < 4.5
    # every draw of the near-tie component is a near tie of the top two arms
    assert np.mean(gap <= 0.05) > 1 - q.defensive - 0.005


def test_weights_are_bounded_and_recomputable():
    q = NearTieProposal(UNEVEN, half_width=0.1, defensive=0.1)
    means, w = q.sample(1, 5000)
    assert np.all(w > 0) and w.max() <= 1 / 0.1 + 1e-12
    assert np.array_equal(q.weights(means), w)
    m2, w2 = q.sample(1, 5000)
    assert np.array_equal(m2, means) and np.array_equal(w2, w)
    assert not np.array_equal(q.sample(2, 5000)[0], means)


# ------------------------------------------------------------------ the two-arm walk
def _reference_walk(state, gap, sigma, delta, d0):
    """Pure-Python difference walk, exact check every round, on the kernel's random numbers."""
    log_const = 24.0 / (delta * delta * math.pi * math.pi)
    n_star = indifference_round(delta, d0, 2, sigma)
    buf = np.empty(NORMAL_BUFFER)
    D, n = 0.0, 0
    while True:
        fill_normal(state, buf)
        for z in buf:
            D += gap + math.sqrt(2.0) * sigma * z
            n += 1
            outcome = _difference_rule(state, D, n, sigma, log_const, n_star)
            if outcome is not None:
                return outcome


def _difference_rule(state, D, n, sigma, log_const, n_star):
    """Algorithm 1's decision after round ``n`` on two arms from ``D = S_1 - S_2`` alone:
    ``(tau, recommendation, stop code)``, or ``None`` to go on."""
    bound = n * 2.0 * sigma * conf_factor(float(n), log_const)
    if D >= bound:
        return 2 * n, 0, STOP_SINGLE_ARM
    if -D >= bound:
        return 2 * n, 1, STOP_SINGLE_ARM
    if n >= n_star:
        return 2 * n, min(int(uniform(state) * 2.0), 1), STOP_INDIFFERENCE
    return None


@pytest.mark.parametrize("gap_factor", [0.0, 0.7, 1.0, 1.3, 4.0])
def test_two_arm_walk_matches_reference_run_by_run(gap_factor):
    delta, sigma = 0.2, 0.7
    d0 = delta0(GaussianPrior.standard(2), delta) * sigma
    mu = np.array([0.1 + gap_factor * d0, 0.1])
    for run in range(40):
        a, b = seed_state(11, run, 1), seed_state(11, run, 1)
        tau, rec, cens, code = two_arm_elimination_run(a, mu, sigma, conf_log_const(delta, 2), d0, 10**12,
                                                       cancel_flag(None))
        assert not cens
        assert (tau, rec, code) == _reference_walk(b, mu[0] - mu[1], sigma, delta, d0)


def _difference_rule_on_kernel_rewards(state, mu, sigma, delta, d0):
    """Algorithm 1 on two arms decided by the difference of the sums alone, fed the rewards
    :func:`elimination_run` draws (two normals per round from a buffer of NORMAL_BUFFER)."""
    log_const = 24.0 / (delta * delta * math.pi * math.pi)
    n_star = indifference_round(delta, d0, 2, sigma)
    buf = np.empty(NORMAL_BUFFER)
    mu0, mu1 = float(mu[0]), float(mu[1])
    pos, S0, S1, n = buf.size, 0.0, 0.0, 0
    while True:
        if pos + 2 > buf.size:
            fill_normal(state, buf)
            z = buf.tolist()  # plain floats: the same doubles, faster arithmetic
            pos = 0
        S0 += mu0 + sigma * z[pos]
        S1 += mu1 + sigma * z[pos + 1]
        pos += 2
        n += 1
        outcome = _difference_rule(state, S0 - S1, n, sigma, log_const, n_star)
        if outcome is not None:
            return outcome


@pytest.mark.parametrize("gap_factor", [0.0, 0.8, 1.0, 1.2, 3.0])
def test_general_kernel_decides_by_the_difference_of_the_sums(gap_factor):
    """Run by run, elimination_run on two arms makes the decisions of the difference rule
    the two-arm walk simulates."""
    delta, sigma = 0.2, 1.3
    d0 = delta0(GaussianPrior.standard(2), delta) * sigma
    mu = np.array([-0.4, -0.4 - gap_factor * d0])
    sig = np.full(2, sigma)
    for run in range(40):
        a, b = seed_state(12, run, 1), seed_state(12, run, 1)
        tau, rec, _, code = elimination_run(a, mu, sig, conf_log_const(delta, 2), d0, 10**12, False, False, False,
                                            Gaussian(), False, cancel_flag(None))
        assert (tau, rec, code) == _difference_rule_on_kernel_rewards(b, mu, sigma, delta, d0)


def test_both_kernels_censor_alike():
    prior, delta, cap = GaussianPrior.standard(2), 0.001, 1001
    for spec in (Elimination(), TwoArmElimination()):
        with pytest.warns(CensoringWarning):
            res = simulate(spec, prior, 1.0, delta, 20, 3, means=[0.0, 0.0], max_samples=cap,
                           progress=False)
        assert np.all(res.censored) and np.all(res.stopping_times == cap - 1)
        assert np.all(res.stop_reasons == "censored")


# at gap 0.5 Δ0 all but one of the 4,000 runs stop at 2 n*: the exact KS p-value gives way to the
# asymptotic one (p = 1 either way), with a RuntimeWarning
@pytest.mark.filterwarnings("ignore:ks_2samp. Exact calculation unsuccessful:RuntimeWarning")
@pytest.mark.parametrize("gap_factor", [0.5, 1.0, 1.15, 3.0])
def test_two_arm_walk_has_the_distribution_of_algorithm_1(gap_factor):
    # δ = 0.2 rather than 0.1: Δ0 = delta0(prior, δ) doubles, so n* falls from 117,515 to
    # 24,798 rounds (runs ~4.7 times shorter), while the gaps, set in units of Δ0, keep their
    # regimes: indifference stops in ~100%, 45%, 5% and 0% of the runs at both levels. The
    # 2,000 runs a side, hence the power of the KS and proportion tests, are unchanged.
    prior, delta = GaussianPrior.standard(2), 0.2
    d0 = delta0(prior, delta)
    mu = np.array([gap_factor * d0, 0.0])
    general = simulate(Elimination(), prior, 1.0, delta, 2000, 5, means=mu, progress=False)
    walk = simulate(TwoArmElimination(), prior, 1.0, delta, 2000, 6, means=mu, progress=False)
    assert ks_2samp(general.stopping_times, walk.stopping_times).pvalue > 1e-3
    for field, value in (("stop_reasons", "indifference"), ("correct", True)):
        p1 = np.mean(getattr(general, field) == value)
        p2 = np.mean(getattr(walk, field) == value)
        pooled = (p1 + p2) / 2
        se = math.sqrt(max(pooled * (1 - pooled), 1e-12) * 2 / 2000)
        assert abs(p1 - p2) < 4.5 * se + 1e-9


def test_two_arm_walk_stops_at_the_indifference_round_on_a_tie():
    prior, delta = GaussianPrior.standard(2), 0.05
    d0 = delta0(prior, delta)
    res = simulate(TwoArmElimination(), prior, 1.0, delta, 200, 2, means=[0.0, 0.0],
                   progress=False)
    n_star = indifference_round(delta, d0, 2)
    ind = res.stop_reasons == "indifference"
    assert ind.mean() > 0.95
    assert np.all(res.stopping_times[ind] == 2 * n_star)
    assert np.all(res.stopping_times <= 2 * n_star)


def test_two_arm_walk_refuses_what_it_cannot_run():
    with pytest.raises(ValueError, match="recommend"):
        TwoArmElimination(recommend="empirical_best")
    with pytest.raises(ValueError, match="spec"):
        TwoArmElimination.of(NoElim())
    with pytest.raises(ValueError, match="noise_stds"):
        simulate(TwoArmElimination(), GaussianPrior.standard(2), [1.0, 2.0], 0.1, 2, 0)
    with pytest.raises(ValueError, match="noise_stds"):
        simulate(TwoArmElimination(), GaussianPrior.standard(3), 1.0, 0.1, 2, 0)


# ------------------------------------------------------------------ the estimators
def test_importance_estimate_is_unbiased_on_a_known_answer():
    """One round, then the empirical best: PoE = arctan(σ)/π for two standard Gaussian arms."""
    sigma, n = 0.01, 20_000
    spec = Elimination(delta0=10.0, recommend="empirical_best")
    truth = math.atan(sigma) / math.pi
    prior = GaussianPrior.standard(2)
    est = importance_poe(spec, prior, sigma, 0.1, n, 4, half_width=0.1, progress=False)
    assert est.samples == 2 * n
    assert abs(est.estimate - truth) < 4.5 * est.std_error
    # and it needs far fewer runs than plain Monte Carlo for the same precision
    assert est.std_error < 0.25 * math.sqrt(truth * (1 - truth) / n)


def test_importance_and_plain_agree_on_three_arms():
    spec = Elimination(delta0=10.0, recommend="empirical_best")
    imp = importance_poe(spec, UNEVEN, 0.05, 0.1, 40_000, 8, half_width=0.3, progress=False)
    plain = plain_poe(spec, UNEVEN, 0.05, 0.1, 200_000, 9, progress=False)
    assert plain.estimate > 0.005
    assert abs(imp.estimate - plain.estimate) < 4.5 * math.hypot(imp.std_error, plain.std_error)


def test_interval_coverage_of_the_importance_estimate():
    """Over 200 seeds the 95% interval covers the known PoE about 95% of the time."""
    sigma = 0.02
    spec = Elimination(delta0=10.0, recommend="empirical_best")
    truth = math.atan(sigma) / math.pi
    prior = GaussianPrior.standard(2)
    hits = 0
    for seed in range(200):
        lo, hi = importance_poe(spec, prior, sigma, 0.1, 400, seed, half_width=0.15,
                                progress=False).ci
        hits += lo <= truth <= hi
    assert 0.89 <= hits / 200 <= 0.99


@functools.cache
def _algorithm_1_importance_estimate():
    """Importance-sampled PoE of Algorithm 1 on two standard Gaussian arms at δ = 0.2, 3,000
    runs: compared with plain Monte Carlo, then the reference of the near-tie coverage test."""
    return importance_poe(Elimination(), GaussianPrior.standard(2), 1.0, 0.2, 3000, 21,
                          progress=False)


def test_algorithm_1_with_the_coin_averaged_agrees_with_plain_monte_carlo():
    """The 1/2 at an indifference stop (and the two-arm walk) against plain error counts."""
    prior, delta = GaussianPrior.standard(2), 0.2
    imp = _algorithm_1_importance_estimate()
    plain = plain_poe(Elimination(), prior, 1.0, delta, 60_000, 22, progress=False)
    assert plain.estimate > 0.01
    assert abs(imp.estimate - plain.estimate) < 4.5 * math.hypot(imp.std_error, plain.std_error)
    # the coin it averages out: errors at indifference stops are fair coin flips
    means = NearTieProposal(prior, 0.5 * delta0(prior, delta)).sample(23, 4000)[0]
    res = simulate(Elimination(), prior, 1.0, delta, 4000, 24, means=means, progress=False)
    coin = res.stop_reasons == "indifference"
    assert coin.sum() > 3000
    wrong = np.mean(~res.correct[coin])
    assert abs(wrong - 0.5) < 4.5 * math.sqrt(0.25 / coin.sum())


def test_interval_coverage_in_the_near_tie_regime():
    """32-run intervals for Algorithm 1, as in the book, cover a 3,000-run reference (the
    estimate checked against plain Monte Carlo above)."""
    prior, delta = GaussianPrior.standard(2), 0.2
    # the reference's standard error (2.2e-4) is a tenth of a 32-run interval's (~2.1e-3): its
    # offset from the true PoE moves the coverage by ~0.1 point (second order), against a
    # tolerance of 0.88-0.99 on 200 intervals (binomial sd ~1.5 points)
    ref = _algorithm_1_importance_estimate()
    hits = 0
    for seed in range(200):
        lo, hi = importance_poe(Elimination(), prior, 1.0, delta, 32, seed, progress=False).ci
        hits += lo <= ref.estimate <= hi
    assert 0.88 <= hits / 200 <= 0.99


def test_plain_estimate_is_the_error_rate_with_its_clopper_pearson_interval():
    from scipy.stats import beta

    prior = GaussianPrior.standard(2)
    est = plain_poe(Elimination(), prior, 1.0, 0.3, 2000, 5, progress=False)
    res = simulate(Elimination(), prior, 1.0, 0.3, 2000, 5, progress=False)
    n_err = int(np.count_nonzero(~res.correct))
    assert est.estimate == n_err / 2000 and est.samples == int(res.stopping_times.sum())
    assert math.isclose(est.ci[0], beta.ppf(0.025, n_err, 2000 - n_err + 1))
    assert math.isclose(est.ci[1], beta.ppf(0.975, n_err + 1, 2000 - n_err))


def test_unequal_noise_falls_back_to_the_general_kernel():
    prior = GaussianPrior.standard(2)
    auto = importance_poe(Elimination(), prior, [1.0, 2.0], 0.3, 40, 6, progress=False)
    general = importance_poe(Elimination(), prior, [1.0, 2.0], 0.3, 40, 6, engine="general",
                             progress=False)
    assert auto == general and np.array_equal(auto.errors, general.errors)


def test_two_arm_engine_agrees_with_the_general_kernel():
    prior, delta = GaussianPrior.standard(2), 0.1
    a = importance_poe(Elimination(), prior, 1.0, delta, 600, 1, engine="general",
                       progress=False)
    b = importance_poe(Elimination(), prior, 1.0, delta, 600, 2, engine="two_arm",
                       progress=False)
    assert abs(a.estimate - b.estimate) < 4.5 * math.hypot(a.std_error, b.std_error)
    assert a.relative_half_width < 0.2 and b.relative_half_width < 0.2
    # the two-arm walk halves the draws per round, but each run still counts both arms' rewards
    assert 0.7 < a.samples / b.samples < 1.4


def test_importance_estimate_is_reproducible_whatever_the_threads():
    prior = GaussianPrior.standard(2)
    one = importance_poe(Elimination(), prior, 1.0, 0.2, 50, 3, n_threads=1, progress=False)
    two = importance_poe(Elimination(), prior, 1.0, 0.2, 50, 3, n_threads=2, progress=False)
    assert one == two
    assert np.array_equal(one.errors, two.errors) and np.array_equal(one.means, two.means)
    assert math.isclose(one.estimate, float(np.mean(one.weights * one.errors)))


def test_certified_and_refuted():
    none = np.zeros(0)
    est = PoEEstimate(0.001, 0.0001, (0.0008, 0.0012), 0.95, 0.01, 10, 100, "importance",
                      none, none, none)
    assert est.certified and not est.refuted
    assert math.isclose(est.relative_half_width, 0.2)
    above = PoEEstimate(0.02, 0.001, (0.018, 0.022), 0.95, 0.01, 10, 100, "importance",
                        none, none, none)
    assert above.refuted and not above.certified


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("kwargs, name", [
    ({"half_width": 0.0}, "half_width"),
    ({"half_width": -1.0}, "half_width"),
    ({"defensive": 0.0}, "defensive"),
    ({"defensive": 1.0}, "defensive"),
    ({"level": 1.5}, "level"),
    ({"engine": "fast"}, "engine"),
    ({"n_runs": 1}, "n_runs"),
])
def test_importance_poe_names_the_bad_parameter(kwargs, name):
    args = dict(half_width=0.1, n_runs=10)
    args.update(kwargs)
    n_runs = args.pop("n_runs")
    with pytest.raises(ValueError, match=name):
        importance_poe(Elimination(), GaussianPrior.standard(2), 1.0, 0.1, n_runs, 0,
                       progress=False, **args)


def test_importance_poe_refuses_unusable_setups():
    prior3 = GaussianPrior.standard(3)
    with pytest.raises(ValueError, match="two_arm"):
        importance_poe(Elimination(), prior3, 1.0, 0.1, 10, 0, engine="two_arm")
    with pytest.raises(ValueError, match="two_arm"):
        importance_poe(NoElim(), GaussianPrior.standard(2), 1.0, 0.1, 10, 0, engine="two_arm")
    with pytest.raises(ValueError, match="half_width"):
        importance_poe(TTUCB(), prior3, 1.0, 0.1, 10, 0)
    with pytest.raises(ValueError, match="prior"):
        importance_poe(Elimination(), None, 1.0, 0.1, 10, 0)
    with pytest.warns(CensoringWarning), pytest.raises(ValueError, match="max_samples"):
        importance_poe(TTUCB(), prior3, 1.0, 0.01, 10, 0, half_width=0.01, max_samples=10,
                       progress=False)
    with pytest.raises(ValueError, match="means"):
        NearTieProposal(prior3, 0.1).weights(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="prior"):
        NearTieProposal("standard", 0.1)

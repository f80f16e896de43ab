"""The A/B platforms' posterior summaries (bai_lib.posterior) and their stopping rules as a
specification (PosteriorRule): checked against scipy, adaptive quadrature, a closed form and
Monte Carlo, and the engine's decisions against the summaries."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, special, stats

import bai_lib as B
from bai_lib import posterior as P
from bai_lib.algorithms import PosteriorRule
from bai_lib.online import Experiment

SHAPES = [([1, 1, 1], [1, 1, 1]), ([31, 22, 45], [70, 79, 56]),
          ([3010, 2950, 3100], [7000, 7060, 6910]), ([2, 5], [3, 4]), ([0.5, 1], [0.5, 2]),
          ([40, 41, 3, 39], [60, 59, 20, 61])]


def test_beta_cdf_matches_scipy():
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(3000):
        a, b = np.exp(rng.uniform(np.log(0.3), np.log(3e5), 2))
        x = stats.beta.ppf(rng.uniform(1e-6, 1 - 1e-6), a, b)
        worst = max(worst, abs(P.beta_cdf(x, a, b) - special.betainc(a, b, x)))
    assert worst < 1e-9


@pytest.mark.parametrize("a, b", SHAPES)
def test_probability_best_against_adaptive_quadrature(a, b):
    a_, b_ = np.array(a, float), np.array(b, float)
    got = P.probability_best(a, b)
    for i in range(a_.size):
        def f(x, i=i):
            others = [special.betainc(a_[j], b_[j], x) for j in range(a_.size) if j != i]
            return stats.beta.pdf(x, a_[i], b_[i]) * np.prod(others)
        ref = integrate.quad(f, 0, 1, limit=500, epsabs=1e-13, points=list(a_ / (a_ + b_)))[0]
        assert got[i] == pytest.approx(ref, abs=1e-6)
    assert got.sum() == pytest.approx(1.0, abs=1e-6)


def _miller(aa, ba, ab, bb):
    """P(θ_B > θ_A) for Beta posteriors with a whole α_B (Evan Miller's closed form)."""
    lb = special.betaln
    return sum(math.exp(lb(aa + i, ba + bb) - math.log(bb + i) - lb(1 + i, bb) - lb(aa, ba))
               for i in range(int(ab)))


@pytest.mark.parametrize("counts", [(3, 7, 5, 5), (31, 70, 45, 56), (120, 880, 131, 869)])
def test_two_arms_against_the_closed_form(counts):
    aa, ba, ab, bb = counts
    assert P.probability_best([aa, ab], [ba, bb])[1] == pytest.approx(_miller(aa, ba, ab, bb),
                                                                      abs=1e-9)


@pytest.mark.parametrize("a, b", SHAPES)
def test_expected_loss_and_value_remaining_against_monte_carlo(a, b):
    rng = np.random.default_rng(1)
    a_, b_ = np.array(a, float), np.array(b, float)
    draws = rng.beta(a_, b_, size=(400_000, a_.size))
    loss = draws.max(1)[:, None] - draws
    got = P.expected_loss(a, b)
    se = loss.std(0) / math.sqrt(draws.shape[0])
    assert np.all(np.abs(got - loss.mean(0)) < 5 * se + 1e-12)
    lead = int(np.argmax(P.probability_best(a, b)))
    hit = (draws.max(1) - draws[:, lead]) / draws[:, lead] <= 0.01
    p = P.value_remaining_probability(a, b, 0.01)
    assert abs(p - hit.mean()) < 5 * math.sqrt(p * (1 - p) / hit.size) + 1e-9


def test_summaries_refuse_bad_shapes():
    with pytest.raises(ValueError, match="a"):
        P.probability_best([1, -1], [1, 1])
    with pytest.raises(ValueError, match="at least two arms"):
        P.expected_loss([1], [1])
    with pytest.raises(ValueError, match="c"):
        P.value_remaining_probability([1, 1], [1, 1], 0.0)


# -- the specification ------------------------------------------------------------------------

PRIOR = B.BetaPrior([1, 1, 1], [1, 1, 1])
RULES = [PosteriorRule(), PosteriorRule(stop="expected_loss"),
         PosteriorRule(stop="value_remaining"),
         PosteriorRule(allocation="top_two", floor=0.02), PosteriorRule(allocation="uniform")]


def _summary_passes(spec, a, b, delta):
    if spec.stop == "probability_best":
        pb = P.probability_best(a, b)
        return pb.max() >= 1 - delta, int(np.argmax(pb))
    if spec.stop == "expected_loss":
        loss = P.expected_loss(a, b)
        lead = int(np.argmax(np.asarray(a) / (np.asarray(a) + np.asarray(b))))
        return loss[lead] <= delta, lead
    lead = int(np.argmax(P.probability_best(a, b)))
    return P.value_remaining_probability(a, b, spec.value) >= 1 - delta, lead


@pytest.mark.parametrize("spec", RULES, ids=lambda s: s.label)
def test_the_engine_stops_where_the_summary_crosses(spec):
    """At the stop the rule's summary, recomputed from the counts with bai_lib.posterior,
    crosses its threshold and names the recommended arm; at every earlier look it did not."""
    delta = 0.01 if spec.stop == "expected_loss" else 0.05
    h = 40
    for run in range(4):
        e = Experiment(spec, PRIOR, delta, seed=5, run=run, max_samples=20_000)
        s = e.simulate([0.30, 0.25, 0.22], look_every=h)
        assert s.stopped
        if s.reason == "censored":
            continue
        assert s.reason == "posterior" and s.samples % h == 0
        a, b = 1 + s.sums, 1 + s.counts - s.sums
        passes, lead = _summary_passes(spec, a, b, delta)
        assert passes and lead == s.recommendation
        log = e.to_dict()["log"]
        arms, xs = np.array(log["arms"]), np.array(log["rewards"])
        for t in range(h, s.samples, h * 7):  # a sample of the earlier looks
            n = np.bincount(arms[:t], minlength=3)
            succ = np.bincount(arms[:t], weights=xs[:t], minlength=3)
            assert not _summary_passes(spec, 1 + succ, 1 + n - succ, delta)[0]


def test_thompson_plans_follow_the_probability_of_being_best():
    """A plan draws from the current posterior without updating it, so Thompson sampling's
    shares are the posterior probabilities of being best (chi-square, 6,000 draws)."""
    e = Experiment(PosteriorRule(), PRIOR, 0.05)
    e.record_counts([60, 60, 60], [21, 15, 24])
    plan = e.next_arms(6000)
    expected = P.probability_best(1 + np.array([21, 15, 24]), 1 + np.array([39, 45, 36]))
    observed = np.bincount(plan, minlength=3)
    assert stats.chisquare(observed, expected * plan.size).pvalue > 1e-3


def test_the_floor_gives_every_arm_its_share():
    e = Experiment(PosteriorRule(floor=0.1), PRIOR, 0.05)
    e.record_counts([300, 300, 300], [100, 90, 75])  # arm 2 is rarely best (not stopped)
    share = np.bincount(e.next_arms(6000), minlength=3) / 6000
    assert share[2] > 0.1 - 4 * math.sqrt(0.1 * 0.9 / 6000)


def test_runs_are_those_of_simulate_and_independent_of_threads():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", B.CensoringWarning)
        a = B.simulate(PosteriorRule(), PRIOR, None, 0.05, 24, 9, look_every=50, n_threads=1,
                       progress=False, max_samples=20_000)
        b = B.simulate(PosteriorRule(), PRIOR, None, 0.05, 24, 9, look_every=50, n_threads=2,
                       chunk_size=5, progress=False, max_samples=20_000)
    assert np.array_equal(a.stopping_times, b.stopping_times)
    for r in range(24):
        e = Experiment(PosteriorRule(), PRIOR, 0.05, seed=9, run=r, max_samples=20_000)
        s = e.simulate(a.means[r], look_every=50)
        assert (s.samples, s.recommendation) == (a.stopping_times[r], a.recommendations[r])
    assert a.summary()["stop_reasons"]["posterior"] > 0


@pytest.mark.parametrize("kwargs, message", [
    (dict(stop="bayes_factor"), "stop"), (dict(allocation="greedy"), "allocation"),
    (dict(floor=1.5), "floor"), (dict(floor=-0.1), "floor"), (dict(beta=1.0), "beta"),
    (dict(value=0.0), "value")])
def test_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PosteriorRule(**kwargs)


def test_floor_above_one_over_k_and_value_remaining_on_gaussian_arms_are_refused():
    with pytest.raises(ValueError, match=r"floor must lie in \[0, 1/k\] = \[0, 0.333333\]"):
        B.simulate(PosteriorRule(floor=0.4), PRIOR, None, 0.05, 2, 1, progress=False)
    with pytest.raises(ValueError, match="stop: 'value_remaining'"):
        B.simulate(PosteriorRule(stop="value_remaining"), B.GaussianPrior.standard(3), 1.0,
                   0.05, 2, 1, progress=False)


@pytest.mark.parametrize("stop, bound", [("probability_best", "stopping on the rule with a worse"),
                                         ("expected_loss", "expected regret"),
                                         ("value_remaining", "relative regret above 0.01")])
def test_the_rule_states_its_guarantee_and_its_condition(stop, bound):
    text = Experiment(PosteriorRule(stop=stop), PRIOR, 0.05).guarantee
    assert text.startswith("Bayesian, if the prior is the law of the arm means")
    assert bound in text and "δ = 0.05" in text
    assert "maximum duration has no guarantee" in text


def test_peeking_at_identical_arms_declares_a_winner_far_more_often_than_five_percent():
    """The frequentist question at an exact tie (two identical arms at 10%, Beta(1, 1) priors,
    an even split, a look every 100 observations, stop when P(best) >= 95%, at most 2,000
    observations): a winner is declared in far more than 5% of the runs (the 95%
    Clopper-Pearson interval lies above 30%), though every declared winner is as good as the
    other arm, so the Bayesian error is zero."""
    from bai_lib.stats import clopper_pearson

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", B.CensoringWarning)  # the runs that declare nothing
        res = B.simulate(PosteriorRule(allocation="uniform"), B.BetaPrior.uniform(2), None,
                         0.05, 400, 7, means=[0.1, 0.1], look_every=100, max_samples=2_000,
                         progress=False)
    declared = int(np.count_nonzero(res.stop_reasons == "posterior"))
    assert clopper_pearson(declared, 400)[0] > 0.3
    assert res.error_rate == 0.0


@pytest.mark.parametrize("means, stds", [([0.1, 0.3, -0.2], [0.2, 0.5, 0.05]),
                                         ([0.0, 0.0], [1.0, 1.0]),
                                         ([5.0, 4.9, 4.95, 4.0], [0.01, 0.2, 0.05, 1.0])])
def test_normal_summaries_against_quadrature_and_closed_forms(means, stds):
    from scipy import integrate, stats

    from bai_lib.posterior import normal_expected_loss, normal_probability_best

    m, s = np.array(means), np.array(stds)
    p = normal_probability_best(m, s)

    def integrand(x, i):
        others = [stats.norm.cdf(x, m[j], s[j]) for j in range(m.size) if j != i]
        return stats.norm.pdf(x, m[i], s[i]) * np.prod(others)

    for i in range(m.size):
        ref = integrate.quad(integrand, m[i] - 12 * s[i], m[i] + 12 * s[i], args=(i,),
                             points=list(m[(m > m[i] - 12 * s[i]) & (m < m[i] + 12 * s[i])]),
                             limit=500, epsabs=1e-13)[0]
        assert p[i] == pytest.approx(ref, abs=1e-9)
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    # E[max] against quadrature of its CDF
    lo, hi = (m - 12 * s).min(), (m + 12 * s).max()
    cdf_max = lambda x: np.prod([stats.norm.cdf(x, m[j], s[j]) for j in range(m.size)])
    e_max = lo + integrate.quad(lambda x: 1 - cdf_max(x), lo, hi, points=list(m), limit=500,
                                epsabs=1e-13)[0]
    np.testing.assert_allclose(normal_expected_loss(m, s), e_max - m, atol=1e-9)


def test_normal_summaries_two_arm_closed_form_and_point_masses():
    from scipy import stats

    from bai_lib.posterior import normal_expected_loss, normal_probability_best

    m, s = np.array([0.3, 0.1]), np.array([0.2, 0.15])
    theta = np.hypot(*s)
    d = (m[0] - m[1]) / theta
    assert normal_probability_best(m, s)[0] == pytest.approx(stats.norm.cdf(d), abs=1e-12)
    e_max = m[0] * stats.norm.cdf(d) + m[1] * stats.norm.cdf(-d) + theta * stats.norm.pdf(d)
    np.testing.assert_allclose(normal_expected_loss(m, s), e_max - m, atol=1e-12)
    # posteriors narrower than the rounding of their means: point masses
    for sd in (1e-17, 1e-100):
        np.testing.assert_allclose(normal_probability_best([0.5, 0.2, 0.1], [sd] * 3),
                                   [1, 0, 0], atol=1e-12)
        np.testing.assert_allclose(normal_expected_loss([0.5, 0.2, 0.1], [sd] * 3),
                                   [0, 0.3, 0.4], atol=1e-12)
        np.testing.assert_allclose(normal_probability_best([0.5, 0.5], [sd, 1.0]), [0.5, 0.5],
                                   atol=1e-9)
    with pytest.raises(ValueError, match="stds"):
        normal_probability_best([0.0, 1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="means"):
        normal_expected_loss([0.0], [1.0])


def test_a_gaussian_rule_updates_the_conjugate_normal_posterior():
    """The normal update is the conjugate one, and at the maximum duration the engine
    recommends the leader of the closed-form posterior of the rewards it drew."""
    from bai_lib.algorithms.posterior_rules import posterior_update

    A, Bv = np.array([0.0, 1.0]), np.array([4.0, 0.25])
    posterior_update(True, A, Bv, 0, 2.0, 1.0)
    precision = 1 / 4.0 + 1 / 1.0
    assert A[0] == pytest.approx((0.0 / 4.0 + 2.0 / 1.0) / precision)
    assert Bv[0] == pytest.approx(1 / precision)
    assert (A[1], Bv[1]) == (1.0, 0.25)
    prior = B.GaussianPrior([0.0, 0.2, -0.1], [1.0, 0.5, 2.0])
    for seed in range(5):
        e = Experiment(PosteriorRule(), prior, 1e-9, noise_stds=[1.0, 2.0, 0.5], seed=seed,
                       max_samples=60)
        st = e.simulate([0.1, 0.0, -0.1])
        assert st.reason == "censored" and st.samples == 60
        precision = 1 / prior.stds**2 + st.counts / np.array([1.0, 2.0, 0.5])**2
        post = (prior.means / prior.stds**2 + st.sums / np.array([1.0, 2.0, 0.5])**2) / precision
        assert st.recommendation == int(np.argmax(post))

"""Bernoulli arms: Algorithm 1 and NoElim on Bernoulli rewards, under a BetaPrior or on fixed means."""

import dataclasses
import functools
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri, rel_entr

from bai_lib import BetaPrior, Elimination, NoElim, GaussianPrior, simulate, delta0
from bai_lib import _rng
from bai_lib.stats import clopper_pearson

from bai_lib.algorithms.elimination import TwoArmElimination, elimination_run
from bai_lib.confidence import conf_log_const
from bai_lib.families import Bernoulli
from bai_lib.kernels import STOP_INDIFFERENCE, STOP_SINGLE_ARM, cancel_flag
from test_conventions import ref_elimination


@functools.cache
def _kl_interval(mean, n, k, delta):
    """{q : n kl(mean, q) <= log(6n²/((δ²/(2K))π²))}, solved by brentq. A pure function of its
    arguments, memoised: the runs of NoElim and NoElim with the empirical-best recommendation
    follow the same path (and Algorithm 1 shares it up to its first elimination), so their
    references ask for the same intervals."""
    level = math.log(6 * n**2 / ((delta**2 / (2 * k)) * math.pi**2)) / n

    def f(q):
        return rel_entr(mean, q) + rel_entr(1 - mean, 1 - q) - level

    lo = 0.0 if mean == 0 else brentq(f, 1e-300, mean, xtol=1e-300, rtol=8.9e-16)
    hi = 1.0 if mean == 1 else brentq(f, mean, 1 - 1e-16, xtol=1e-300, rtol=8.9e-16)
    return lo, hi


@pytest.fixture(scope="module", autouse=True)
def _forget_kl_intervals():
    """The memo of the KL intervals (~50 MB) lives as long as this module's tests."""
    yield
    _kl_interval.cache_clear()


def ref_bernoulli_elimination(state, mu, sigma, delta, d0, pull_all, recommend, kl=False):
    """Algorithm 1 / NoElim in plain Python on Bernoulli arms: a pull of arm i gives 1 when the
    standard normal it consumes has Φ(z) < μ_i (probability μ_i), else 0. With ``kl``, the
    intervals are {q : n kl(mean, q) <= log(6n²/((δ²/(2K))π²))}, solved by brentq."""
    k = mu.size

    def kl_interval(i, mean, n):
        return _kl_interval(float(mean), int(n), k, float(delta))

    return ref_elimination(state, mu, sigma, delta, d0, pull_all, recommend,
                           reward=lambda i, z: 1.0 if ndtr(z) < mu[i] else 0.0,
                           interval=kl_interval if kl else None)


@pytest.mark.parametrize("spec", [Elimination(delta0=0.05), NoElim(delta0=0.05),
                                  NoElim(delta0=0.05, recommend="empirical_best")],
                         ids=["alg1", "noelim", "noelim-best"])
def test_the_kernel_matches_a_plain_reference_run_for_run(spec):
    mu = np.array([0.55, 0.5, 0.3, 0.52])
    sigma = np.full(4, 0.5)
    delta = 0.1
    res = simulate(spec, None, None, delta, 12, 7, means=mu, rewards="bernoulli")
    assert res.rewards == "bernoulli" and res.noise_stds.tolist() == [0.5] * 4
    for r in range(12):
        ref = ref_bernoulli_elimination(_rng.seed_state(7, r, _rng.STREAM_ALGO), mu, sigma, delta,
                                        0.05, spec._pull_all, spec.recommend)
        assert (int(res.stopping_times[r]), int(res.recommendations[r])) == ref, r


@pytest.mark.parametrize("spec", [Elimination(widths="kl"), NoElim(widths="kl"),
                                  NoElim(widths="kl", recommend="empirical_best")],
                         ids=["alg1", "noelim", "noelim-best"])
@pytest.mark.parametrize("mu", [[0.55, 0.5, 0.3, 0.52], [0.06, 0.02, 0.05]], ids=["mid", "low"])
def test_kl_widths_match_a_plain_reference_run_for_run(spec, mu):
    mu = np.array(mu)
    delta = 0.1
    # the reference solves its intervals slowly near 1/2: fewer runs, and a wider Δ0 there
    n_runs, d0 = (3, 0.1) if mu[0] > 0.5 else (5, 0.05)
    spec = dataclasses.replace(spec, delta0=d0)
    res = simulate(spec, None, None, delta, n_runs, 8, means=mu, rewards="bernoulli")
    for r in range(n_runs):
        ref = ref_bernoulli_elimination(_rng.seed_state(8, r, _rng.STREAM_ALGO), mu,
                                        np.full(mu.size, 0.5), delta, d0, spec._pull_all,
                                        spec.recommend, kl=True)
        assert (int(res.stopping_times[r]), int(res.recommendations[r])) == ref, r


@pytest.mark.parametrize("pull_all", [False, True], ids=["alg1", "noelim"])
def test_kl_block_check_makes_the_decisions_of_the_round_by_round_check(pull_all):
    """The kernel's first test at the inner points of kl_inner skips only rounds in which the
    exact KL ends decide nothing: run for run the same result as evaluating every round."""
    # 10 runs (30 before) of 160,000 to 400,000 samples, the round-by-round check costing
    # ~0.14 CPU-s a run: each run passes through some 2,000 windows of W = √n/4 rounds, and
    # the runs make both stops (single arm, after eliminating the two others, and indifference)
    mu = ndtri(np.array([0.06, 0.03, 0.05]))
    sig = np.full(3, 0.5)
    lc = conf_log_const(0.1, 3)
    taus, codes = [], set()
    for r in range(10):
        st = _rng.seed_state(4, r, _rng.STREAM_ALGO)
        args = (mu, sig, lc, 0.01, 10**9, pull_all, False)
        fast = elimination_run(st.copy(), *args, False, Bernoulli(), True, cancel_flag(None))
        slow = elimination_run(st.copy(), *args, True, Bernoulli(), True, cancel_flag(None))
        assert fast == slow, r
        taus.append(fast[0])
        codes.add(fast[3])
    assert min(taus) > 5_000  # long runs: many blocks and eliminations
    assert codes == {STOP_SINGLE_ARM, STOP_INDIFFERENCE}, codes


def test_kl_widths_keep_the_bayesian_guarantee():
    """PoE <= δ under a Beta prior with KL widths: the upper end of the 99.9% Clopper-Pearson
    interval of the error rate over 1,000 runs is below δ, and no run passes the cap k n*."""
    # a PoE of δ or more passes with probability < 0.05% whatever the number of runs; here it
    # is ~1.2% (12 errors in these 1,000 runs: upper end 0.028), and 17 runs still stop within
    # 10% of the cap (3 within 1%)
    delta = 0.1
    H = BetaPrior([2.0, 3.0], [2.0, 4.0])
    spec = Elimination(widths="kl")
    res = simulate(spec, H, None, delta, 1000, 31)
    errors = int(np.count_nonzero(~res.correct))
    assert clopper_pearson(errors, res.n_runs, 0.999)[1] < delta, errors
    assert res.stopping_times.max() <= spec.max_stopping_time(H, np.full(2, 0.5), delta)
    assert not np.any(res.censored)


def test_kl_widths_stop_sooner_at_low_rates():
    """At rates near 3% (a Beta(3, 97)² prior) KL widths stop sooner than σ = 1/2 widths in
    every one of 60 paired runs, with a median stopping time below a quarter of theirs."""
    H = BetaPrior([3.0, 3.0], [97.0, 97.0])
    kl = simulate(Elimination(widths="kl", delta0=0.008), H, None, 0.1, 60, 32)
    sub = simulate(Elimination(delta0=0.008), H, None, 0.1, 60, 32)
    assert np.array_equal(kl.means, sub.means)
    assert np.all(kl.stopping_times < sub.stopping_times)
    assert np.median(kl.stopping_times) < 0.25 * np.median(sub.stopping_times)


def test_kl_widths_label_and_two_arm_walk():
    spec = Elimination(widths="kl")
    assert spec.label == "Alg. 1 (elimination) (widths=kl)"
    assert spec.two_arm_walk() is None and not spec.can_trace()
    assert Elimination().two_arm_walk() is not None


def test_a_beta_prior_draws_the_means_of_its_sample_means():
    H = BetaPrior([2.0, 3.0, 1.5], [5.0, 4.0, 2.5])
    res = simulate("elimination", H, None, 0.2, 50, 11)
    assert np.array_equal(res.means, H.sample_means(11, 50))
    assert res.delta0 == delta0(H, 0.2)
    assert np.all((res.means > 0) & (res.means < 1))


def test_algorithm_1_keeps_its_bayesian_guarantee_on_bernoulli_arms():
    """PoE <= δ under a Beta prior: the upper end of the 99.9% Clopper-Pearson interval of the
    error rate over 2,000 runs is below δ (σ = 1/2 makes the widths valid for any mean)."""
    # a PoE of δ or more passes with probability < 0.05% whatever the number of runs; here it
    # is ~1% (18 errors in these 2,000 runs: upper end 0.018)
    delta = 0.1
    H = BetaPrior([2.0, 2.0], [2.0, 2.0])
    res = simulate("elimination", H, None, delta, 2000, 2024)
    errors = int(np.count_nonzero(~res.correct))
    lo, hi = clopper_pearson(errors, res.n_runs, 0.999)
    assert hi < delta, (errors, lo, hi)
    assert not np.any(res.censored)


def test_bernoulli_runs_do_not_depend_on_threads_or_shards():
    H = BetaPrior([1.0, 1.0, 2.0], [1.0, 2.0, 1.0])
    one = simulate("noelim", H, None, 0.2, 40, 5, n_threads=1)
    two = simulate("noelim", H, None, 0.2, 40, 5, n_threads=2, chunk_size=3)
    parts = [simulate("noelim", H, None, 0.2, n, 5, first_run=f) for f, n in ((0, 15), (15, 25))]
    for other in (two,):
        assert np.array_equal(one.stopping_times, other.stopping_times)
        assert np.array_equal(one.recommendations, other.recommendations)
    assert np.array_equal(one.stopping_times,
                          np.concatenate([p.stopping_times for p in parts]))


def test_means_at_zero_and_one_give_constant_rewards():
    """A mean of 1 always pays 1 and a mean of 0 never pays: the arms separate as fast as the
    widths allow, and the run recommends the arm of mean 1."""
    res = simulate(Elimination(delta0=1e-3), None, None, 0.1, 20, 3, means=[1.0, 0.0],
                   rewards="bernoulli")
    assert np.all(res.recommendations == 0) and np.all(res.stop_reasons == "single_arm")
    assert len(set(res.stopping_times.tolist())) == 1


def test_replay_reproduces_a_bernoulli_run_and_trace_is_refused():
    res = simulate("elimination", BetaPrior([2.0, 2.0], [3.0, 3.0]), None, 0.1, 5, 9)
    for r in range(5):
        assert res.replay(r)["tau"] == res.stopping_times[r]
    with pytest.raises(ValueError, match=r"trace\(\) replays Gaussian runs"):
        res.trace(0)


BAD = [
    (lambda: simulate(TwoArmElimination(), BetaPrior([1, 1], [1, 1]), None, 0.1, 5, 1),
     r"rewards='bernoulli': .* simulates gaussian rewards only; Bernoulli\(μ_i\) arms run with ebtc, "
     r"elimination, lucb, noelim, posterior, tas, ttts, ttucb$"),
    (lambda: simulate("elimination", BetaPrior([1, 1], [1, 1]), 0.5, 0.1, 5, 1,
                      rewards="gaussian"), r"rewards='gaussian' with a BetaPrior"),
    (lambda: simulate("elimination", GaussianPrior.standard(2), 0.5, 0.1, 5, 1,
                      rewards="bernoulli"), r"prior must be a BetaPrior or None"),
    (lambda: simulate(Elimination(delta0=0.1), None, None, 0.1, 5, 1, means=[1.5, 0.2],
                      rewards="bernoulli"), r"means must lie in \[0, 1\]"),
    (lambda: simulate(Elimination(delta0=0.1), None, None, 0.1, 5, 1, means=[0.5, -0.1],
                      rewards="bernoulli"), r"means must lie in \[0, 1\]"),
    (lambda: simulate("elimination", None, None, 0.1, 5, 1, means=[0.5, 0.2],
                      rewards="bernoulli"), r"uses the prior; give a BetaPrior"),
    (lambda: simulate("elimination", BetaPrior([1, 1], [1, 1]), None, 0.1, 5, 1,
                      rewards="binomial"), r"^rewards must be one of"),
    (lambda: Elimination().bind(BetaPrior([1, 1], [1, 1]), np.full(2, 0.5), [0.1], 100,
                                rewards="binomial"), r"^rewards must be one of"),
    (lambda: Elimination(widths="bernstein"), r"^widths must be one of"),
    (lambda: simulate(Elimination(widths="kl"), GaussianPrior.standard(2), 1.0, 0.1, 5, 1),
     r"widths='kl' is for the families with KL intervals"),
    (lambda: TwoArmElimination(widths="kl"), r"widths must be 'subgaussian' for the two-arm"),
]


@pytest.mark.parametrize("call, match", BAD, ids=range(len(BAD)))
def test_bad_bernoulli_input_is_refused_by_name(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_the_kl_window_test_only_skips_rounds_that_decide_nothing():
    """Whenever the window test says rounds n .. n + W are quiet, no reachable state of those
    rounds (each arm's sum at either extreme, all successes or none since round n) eliminates
    an arm or stops by indifference with the exact KL ends. Half the states are placed next to
    an elimination (arm 1's UCB within 3 W/n of arm 0's LCB), at n up to 10^7, where the shift
    the window allows exceeds the gap between the inner points and the exact ends."""
    from itertools import product

    from bai_lib.algorithms.elimination import _kl_window, _kl_window_quiet
    from bai_lib.confidence import conf_level
    from bai_lib.kl import kl_lower, kl_upper

    rng = np.random.default_rng(17)
    quiet = 0
    for trial in range(600):
        k = 2 + trial % 2
        n = int(10 ** rng.uniform(2, 7))
        lc = conf_log_const(0.1, k)
        S = rng.binomial(n, rng.uniform(0.01, 0.3, k)).astype(float)
        if trial % 4 < 2:  # next to an elimination: the largest S_1 with UCB_1 <= LCB_0 + gap
            level = conf_level(float(n), lc)
            target = kl_lower(S[0] / n, level) + rng.uniform(0, 3) * _kl_window(n) / n
            lo, hi = -1, int(S[0])
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if kl_upper(mid / n, level) <= target else (lo, mid)
            if lo < 0:
                continue
            S[1] = lo
        act = np.arange(k)
        d0 = float(rng.uniform(0.0005, 0.01))
        if not _kl_window_quiet(Bernoulli(), S, act, k, n, lc, d0, np.zeros(k)):
            continue
        quiet += 1
        w = _kl_window(n)
        for m in sorted({n + (w * q) // 8 for q in range(9)}):
            level = conf_level(float(m), lc)
            for ups in product((0, m - n), repeat=k):
                means = (S + np.array(ups)) / m
                lcb = [kl_lower(x, level) for x in means]
                ucb = [kl_upper(x, level) for x in means]
                assert min(ucb) > max(lcb), (n, m, S, ups)
                assert max(ucb) - max(lcb) > d0, (n, m, S, ups)
    assert quiet > 60, quiet

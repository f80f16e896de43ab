"""Tests of the compiled single-run simulators in :mod:`bai_lib.kernels`."""

import math

import numpy as np
import pytest
from scipy import stats

from bai_lib import _rng
from bai_lib import kernels as K
from bai_lib.algorithms import elimination as E
from bai_lib.algorithms import TTTS, TTUCB
from bai_lib.priors import GaussianPrior
from bai_lib.families import Gaussian
from bai_lib.confidence import conf_factor, conf_log_const

NO = np.zeros(1, dtype=np.uint8)  # the cancellation flag, never raised


def conf_width(n, k, delta, sigma=1.0):
    """Conf(i, t) of Section 5 written directly from the paper's formula."""
    return math.sqrt(2 * sigma**2 * math.log(6 * n**2 / ((delta**2 / (2 * k)) * math.pi**2)) / n)


def first_indifference_round(k, delta, delta0):
    n = 1
    while 2 * conf_width(n, k, delta) > delta0:
        n += 1
    return n


def run_many(kernel, n_runs, seed, *args):
    out = np.empty((n_runs, 4), dtype=np.int64)
    for r in range(n_runs):
        out[r] = kernel(_rng.seed_state(seed, r, 1), *args)
    return out


# ---------------------------------------------------------------------------
# Algorithm 1 on equal means: deterministic indifference time
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 3])
def test_elimination_equal_means_stops_at_first_indifference_round(k):
    delta, delta0, n_runs = 0.1, 0.25, 400
    n_star = first_indifference_round(k, delta, delta0)
    mu = np.zeros(k)
    sigma = np.ones(k)
    out = run_many(E.elimination_run, n_runs, 11 + k, mu, sigma, conf_log_const(delta, k), delta0,
                   10**9, False, False, False, Gaussian(), False, NO)
    tau, rec, cens, reason = out.T
    assert not cens.any()
    normal = (reason == K.STOP_INDIFFERENCE) & (tau == k * n_star)
    # Every other outcome needs an elimination among equal arms, which
    # requires a confidence interval to fail: probability <= delta**2.
    n_other = int(np.count_nonzero(~normal))
    assert n_other <= stats.binom.ppf(0.999, n_runs, delta**2)
    # Indifference recommendations are uniform over the arms.
    counts = np.bincount(rec[normal], minlength=k)
    assert stats.chisquare(counts).pvalue > 1e-3
    # No run can stop later than the indifference round.
    assert tau.max() <= k * n_star


def test_noelim_equal_means_pulls_all_arms():
    k, delta, delta0 = 4, 0.1, 0.3
    n_star = first_indifference_round(k, delta, delta0)
    out = run_many(E.elimination_run, 100, 5, np.zeros(k), np.ones(k), conf_log_const(delta, k),
                   delta0, 10**9, True, False, False, Gaussian(), False, NO)
    tau, rec, cens, reason = out.T
    assert np.all(tau % k == 0)
    # NoElim samples every arm until the indifference round, eliminations or not.
    assert np.all(tau[reason == K.STOP_INDIFFERENCE] == k * n_star)


def test_elimination_block_check_matches_exact_every_round():
    rng = np.random.default_rng(3)
    for r in range(600):
        k = int(rng.integers(2, 6))
        mu = rng.normal(size=k) * rng.choice([0.01, 0.1, 1.0])
        sigma = rng.uniform(0.5, 2.0, size=k) if r % 2 else np.ones(k)
        delta = float(rng.choice([0.05, 0.3, 0.9]))
        delta0 = float(rng.choice([0.05, 0.2, 0.6]))
        pull_all = r % 3 == 0
        st = _rng.seed_state(8, r, 1)
        lc = conf_log_const(delta, k)
        fast = E.elimination_run(st.copy(), mu, sigma, lc, delta0, 10**8, pull_all, False, False, Gaussian(), False, NO)
        ref = E.elimination_run(st.copy(), mu, sigma, lc, delta0, 10**8, pull_all, False, True, Gaussian(), False, NO)
        assert fast == ref


def test_conf_factor_matches_paper_formula():
    for k, delta in [(2, 0.1), (10, 0.01), (3, 0.9)]:
        log_const = 12.0 * k / (delta**2 * math.pi**2)
        for n in [1, 2, 7, 1000, 123456]:
            assert conf_factor(float(n), log_const) == pytest.approx(
                conf_width(n, k, delta), rel=1e-12
            )
        # decreasing from n = 2 on (used by the block check)
        c = [conf_factor(float(n), log_const) for n in range(2, 2000)]
        assert np.all(np.diff(c) < 0)


# ---------------------------------------------------------------------------
# Huge gaps
# ---------------------------------------------------------------------------


def _all_kernels(mu, sigma, delta, max_samples=10**6):
    k = mu.size
    lc = conf_log_const(delta, k)
    ttts_bound = TTTS().bind(GaussianPrior(np.zeros(k), np.ones(k)), sigma, [delta], max_samples)
    ttucb_bound = TTUCB().bind(None, sigma, [delta], max_samples)
    return {
        "elimination": lambda st: E.elimination_run(st, mu, sigma, lc, 0.1, max_samples,
                                                    False, False, False, Gaussian(), False, NO),
        "noelim": lambda st: E.elimination_run(st, mu, sigma, lc, 0.1, max_samples,
                                               True, False, False, Gaussian(), False, NO),
        "ttts": lambda st: ttts_bound.run_one(st, mu),
        "ttucb": lambda st: ttucb_bound.run_one(st, mu),
    }


@pytest.mark.parametrize("mu", [[0.0, 10.0], [10.0, -5.0, 0.0], [3.0, -7.0, -9.0, 13.0]])
def test_huge_gap_always_correct_and_fast(mu):
    mu = np.array(mu)
    sigma = np.ones(mu.size)
    best = int(np.argmax(mu))
    for name, run in _all_kernels(mu, sigma, 0.1).items():
        for r in range(200):
            tau, rec, cens, reason = run(_rng.seed_state(21, r, 1))
            assert rec == best, name
            assert not cens
            assert tau <= 20 * mu.size, (name, tau)
            assert reason != K.STOP_CENSORED


# ---------------------------------------------------------------------------
# Censoring and termination
# ---------------------------------------------------------------------------


def test_censoring_in_every_kernel():
    mu = np.array([0.0, 0.001, -0.002])
    sigma = np.ones(3)
    for max_samples in (3, 4, 50, 1001):
        for name, run in _all_kernels(mu, sigma, 0.01, max_samples=max_samples).items():
            tau, rec, cens, reason = run(_rng.seed_state(1, 0, 1))
            assert cens and reason == K.STOP_CENSORED, name
            assert tau <= max_samples
            assert max_samples - tau < 3  # stopped at the last affordable step
            assert 0 <= rec < 3


def test_ttts_many_arms_terminates_when_leader_is_certain():
    # Tiny delta: the leader's posterior probability is ~1 long before the
    # GLR test stops, so the challenger fallback is exercised.
    mu = np.array([0.0, 1.0, 2.0, -1.0])
    spec = TTTS().bind(GaussianPrior(np.zeros(4), np.ones(4)), np.ones(4), [1e-12], 20000)
    for r in range(5):
        tau, rec, cens, reason = spec.run_one(_rng.seed_state(2, r, 1), mu)
        assert reason in (K.STOP_GLR, K.STOP_CENSORED)
        assert tau <= 20000


def test_stop_reasons_are_consistent():
    mu = np.array([0.0, 0.3, 0.1])
    sigma = np.ones(3)
    for name, run in _all_kernels(mu, sigma, 0.1).items():
        for r in range(30):
            tau, rec, cens, reason = run(_rng.seed_state(4, r, 1))
            if name in ("elimination", "noelim"):
                assert reason in (K.STOP_SINGLE_ARM, K.STOP_INDIFFERENCE)
            else:
                assert reason == K.STOP_GLR
            assert not cens


# Cross-checks of every kernel against plain implementations of its rule are in
# tests/test_conventions.py (run for run on the same random stream where the rule is
# deterministic, in distribution for TTTS).

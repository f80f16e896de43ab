"""Tests of the compiled single-run simulators in :mod:`bai_lib.kernels`."""

import math

import numpy as np
import pytest
from scipy import stats

from bai_lib import _rng
from bai_lib import kernels as K


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
    out = run_many(K.elimination_run, n_runs, 11 + k, mu, sigma, delta, delta0, 10**9, False, False,
                   False)
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
    out = run_many(K.elimination_run, 100, 5, np.zeros(k), np.ones(k), delta, delta0, 10**9,
                   True, False, False)
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
        fast = K.elimination_run(st.copy(), mu, sigma, delta, delta0, 10**8, pull_all, False, False)
        ref = K.elimination_run(st.copy(), mu, sigma, delta, delta0, 10**8, pull_all, False, True)
        assert fast == ref


def test_conf_factor_matches_paper_formula():
    for k, delta in [(2, 0.1), (10, 0.01), (3, 0.9)]:
        log_const = 12.0 * k / (delta**2 * math.pi**2)
        for n in [1, 2, 7, 1000, 123456]:
            assert K.conf_factor(float(n), log_const) == pytest.approx(
                conf_width(n, k, delta), rel=1e-12
            )
        # decreasing from n = 2 on (used by the block check)
        c = [K.conf_factor(float(n), log_const) for n in range(2, 2000)]
        assert np.all(np.diff(c) < 0)


# ---------------------------------------------------------------------------
# Huge gaps
# ---------------------------------------------------------------------------


def _all_kernels(mu, sigma, delta, max_samples=10**6):
    k = mu.size
    two_cg = 2 * (0.5 * math.log((k - 1) / delta) + math.log(0.5 * math.log((k - 1) / delta)))
    return {
        "elimination": lambda st: K.elimination_run(st, mu, sigma, delta, 0.1, max_samples,
                                                    False, False, False),
        "noelim": lambda st: K.elimination_run(st, mu, sigma, delta, 0.1, max_samples,
                                               True, False, False),
        "ttts": lambda st: K.ttts_run(st, mu, sigma, np.zeros(k), np.ones(k), delta,
                                      max_samples, False),
        "ttucb": lambda st: K.ttucb_run(st, mu, sigma, sigma**2, two_cg, 2.0, 1.0, 4.0, 1.0, 0.5,
                                        True, max_samples),
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
    sigma = np.ones(4)
    for r in range(5):
        tau, rec, cens, reason = K.ttts_run(_rng.seed_state(2, r, 1), mu, sigma, np.zeros(4),
                                            np.ones(4), 1e-12, 20000, False)
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


# ---------------------------------------------------------------------------
# Cross-check against straightforward numpy implementations
# ---------------------------------------------------------------------------


def ref_elimination(rng, mu, sigma, delta, delta0, pull_all=False):
    k = mu.size
    active = list(range(k))
    sums = np.zeros(k)
    n = 0
    t = 0
    while True:
        pulled = range(k) if pull_all else active
        for i in pulled:
            sums[i] += rng.normal(mu[i], sigma[i])
        t += len(pulled)
        n += 1
        mean = sums / n
        conf = conf_width(n, k, delta) * sigma
        ucb, lcb = mean + conf, mean - conf
        max_lcb = max(lcb[i] for i in active)
        active = [i for i in active if ucb[i] > max_lcb]
        if len(active) == 1:
            return t, active[0]
        if max(ucb[i] for i in active) - max_lcb <= delta0:
            return t, active[rng.integers(len(active))]


def ref_ttts(rng, mu, sigma, m, xi, delta):
    k = mu.size
    n = np.ones(k)
    sums = rng.normal(mu, sigma)
    t = k
    while True:
        mh = sums / n
        best = int(np.argmax(mh))
        var = sigma**2 / n
        z = [(mh[best] - mh[b]) ** 2 / (2 * (var[best] + var[b])) for b in range(k) if b != best]
        if min(z) >= math.log(t / delta):
            return t, best
        prec = 1 / xi**2 + n / sigma**2
        pmean = (m / xi**2 + sums / sigma**2) / prec
        psd = 1 / np.sqrt(prec)
        # Leader and challenger drawn explicitly (for k = 2 the kernel
        # samples a uniform arm instead, equal in law).
        leader = int(np.argmax(rng.normal(pmean, psd)))
        arm = leader
        if rng.random() >= 0.5:
            if k == 2:
                arm = 1 - leader
            else:
                draws = np.argmax(rng.normal(pmean, psd, size=(K.TTTS_MAX_RESAMPLE, k)), axis=1)
                other = draws[draws != leader]
                if other.size:
                    arm = int(other[0])
                else:
                    score = [np.inf if j == leader else
                             (pmean[leader] - pmean[j]) / math.hypot(psd[leader], psd[j])
                             for j in range(k)]
                    arm = int(np.argmin(score))
        sums[arm] += rng.normal(mu[arm], sigma[arm])
        n[arm] += 1
        t += 1


def ref_ttucb(rng, mu, sigma, delta, cg_value):
    k = mu.size
    n = np.ones(k)
    sums = rng.normal(mu, sigma)
    lead_count = np.zeros(k)
    lead_pulls = np.zeros((k, k))
    t = k
    while True:
        mh = sums / n
        var = sigma**2 / n
        best = int(np.argmax(mh))
        c = 2 * cg_value + 4 * math.log(4 + math.log(t / 2))
        stat = min((mh[best] - mh[i]) / math.sqrt(var[best] + var[i])
                   for i in range(k) if i != best)
        if stat >= math.sqrt(max(c, 0.0)):
            return t, best
        ucb = mh + np.sqrt(K.TTUCB_UCB_COEF * math.log(t) * var)
        lead = int(np.argmax(ucb))
        cost = [np.inf if j == lead else max(mh[lead] - mh[j], 0) / math.sqrt(var[lead] + var[j])
                for j in range(k)]
        chal = int(np.argmin(cost))
        lead_count[lead] += 1
        arm = lead if lead_pulls[lead, lead] <= 0.5 * lead_count[lead] else chal
        lead_pulls[lead, arm] += 1
        sums[arm] += rng.normal(mu[arm], sigma[arm])
        n[arm] += 1
        t += 1


def _compare_means(a, b, z=4.5):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
    assert abs(a.mean() - b.mean()) <= z * se, (a.mean(), b.mean(), se)


def test_elimination_matches_reference_in_distribution():
    mu = np.array([0.0, 1.0, 1.6])
    sigma = np.array([1.0, 1.5, 1.0])
    delta, delta0, n_runs = 0.1, 0.6, 300
    out = run_many(K.elimination_run, n_runs, 31, mu, sigma, delta, delta0, 10**9, False, False,
                   False)
    rng = np.random.default_rng(31)
    ref = [ref_elimination(rng, mu, sigma, delta, delta0) for _ in range(n_runs)]
    _compare_means(out[:, 0], [r[0] for r in ref])
    _compare_means(out[:, 1] == 2, [r[1] == 2 for r in ref])


def test_noelim_matches_reference_in_distribution():
    mu = np.array([0.0, 0.8, 1.4])
    sigma = np.ones(3)
    delta, delta0, n_runs = 0.1, 0.6, 300
    out = run_many(K.elimination_run, n_runs, 32, mu, sigma, delta, delta0, 10**9, True, False,
                   False)
    rng = np.random.default_rng(32)
    ref = [ref_elimination(rng, mu, sigma, delta, delta0, pull_all=True) for _ in range(n_runs)]
    _compare_means(out[:, 0], [r[0] for r in ref])


@pytest.mark.parametrize("mu", [[0.0, 0.6], [0.0, 0.7, 1.3]])
def test_ttts_matches_reference_in_distribution(mu):
    mu = np.array(mu)
    k = mu.size
    sigma = np.ones(k)
    m, xi = np.zeros(k), np.ones(k)
    delta, n_runs = 0.1, 300
    out = run_many(K.ttts_run, n_runs, 41, mu, sigma, m, xi, delta, 10**9, False)
    rng = np.random.default_rng(41)
    ref = [ref_ttts(rng, mu, sigma, m, xi, delta) for _ in range(n_runs)]
    _compare_means(out[:, 0], [r[0] for r in ref])
    _compare_means(out[:, 1] == k - 1, [r[1] == k - 1 for r in ref])


@pytest.mark.parametrize("mu", [[0.0, 0.6], [0.0, 0.7, 1.3]])
def test_ttucb_matches_reference_in_distribution(mu):
    mu = np.array(mu)
    k = mu.size
    sigma = np.ones(k)
    delta, n_runs = 0.1, 300
    x = 0.5 * math.log((k - 1) / delta)
    cg_value = x + math.log(x)
    out = run_many(K.ttucb_run, n_runs, 51, mu, sigma, sigma**2, 2 * cg_value, 1.0, 0.0,
                   K.TTUCB_UCB_COEF, 0.0, 0.5, False, 10**9)
    rng = np.random.default_rng(51)
    ref = [ref_ttucb(rng, mu, sigma, delta, cg_value) for _ in range(n_runs)]
    _compare_means(out[:, 0], [r[0] for r in ref])

"""The baselines beyond the paper (Track-and-Stop, LUCB, EB-TC, TTTS with any β), against plain
numpy implementations on fixed instances.

Each reference is written from the published rule in plain Python and draws its randomness from
the same generator stream as the compiled kernel, so LUCB, EB-TC and TTTS must agree run for
run. Track-and-Stop's reference computes ``w*(μ̂)`` with its own solver (scipy's ``brentq`` on
the optimality condition), which can differ from the kernel's in the last digits and so flip a
near-tie of the tracking rule; it is compared in distribution (KS test on ``τ``, exact test on
the error counts) and must agree on most runs.
"""

import math

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import brentq

from bai_lib import EBTC, LUCB, TTTS, GaussianPrior, TrackAndStop, characteristic_time, simulate
from bai_lib import _rng
from bai_lib.stopping import ttucb_two_cg
from test_conventions import Stream, argmax, argmin


def ref_weights(mh, var):
    """w*(μ̂) for Gaussian arms with variances ``var``, from the optimality condition solved by
    brentq (sequences of floats in, a list out)."""
    k = len(mh)
    b = argmax(mh)
    if sum(x == mh[b] for x in mh) > 1:
        return [1.0 / k] * k
    others = [j for j in range(k) if j != b]

    def sq(x):  # x * x, as numpy squares an array (a float's ** 2 calls pow)
        return x * x

    a = [0.5 * sq(mh[b] - mh[j]) for j in range(k)]

    def h(u):
        return sum(var[j] * sq(u / (a[j] - u)) for j in others) / var[b] - 1.0

    u = brentq(h, 0.0, min(a[j] for j in others) * (1 - 1e-15), xtol=1e-300, rtol=1e-15,
               maxiter=500)
    x = [1.0] * k
    for j in others:
        x[j] = var[j] / var[b] * u / (a[j] - u)
    total = sum(x)
    return [xj / total for xj in x]


def glr_stop(mh, v, beta):
    b = argmax(mh)
    ok = all((mh[b] - mh[j]) ** 2 >= 2 * beta * (v[b] + v[j]) for j in range(len(mh)) if j != b)
    return ok, b


def ref_tas(state, mu, sigma, delta, tracking, max_samples, extra_stop=None, beta=None):
    """Track-and-Stop, its weights re-solved every step; ``extra_stop(mh, N, best)``, if given,
    is a second stopping rule checked with the GLR test (``mh``, ``N`` lists of means and
    counts); ``beta(t)``, if given, replaces the threshold ``log(t/δ)``. The state is kept in
    lists of floats (numpy's per-call overhead would dominate on k <= 4 arms)."""
    k = mu.size
    mean, sd, var = mu.tolist(), sigma.tolist(), (sigma**2).tolist()
    stream = Stream(state, k)
    S = (mu + sigma * stream.take(k)).tolist()
    N = [1.0] * k
    cum = [1.0] * k
    t = k
    while True:
        mh = [S[i] * (1.0 / N[i]) for i in range(k)]
        v = [var[i] * (1.0 / N[i]) for i in range(k)]
        stop, b = glr_stop(mh, v, math.log(t / delta) if beta is None else beta(t))
        if stop or (extra_stop is not None and extra_stop(mh, N, b)):
            return t, b
        if t + 1 > max_samples:
            return t, b
        w = ref_weights(mh, var)
        if tracking == "C":
            eps = 0.5 / math.sqrt(k * k + t)
            cum = [cum[i] + ((1 - k * eps) * w[i] + eps) for i in range(k)]
            arm = argmax([cum[i] - N[i] for i in range(k)])
        else:
            arm = argmin(N)
            if N[arm] >= math.sqrt(t) - k / 2:
                arm = argmax([t * w[i] - N[i] for i in range(k)])
        S[arm] += mean[arm] + sd[arm] * stream.next()
        N[arm] += 1
        t += 1


def ref_lucb(state, mu, sigma, delta, max_samples, reward=None, interval=None):
    """LUCB1; ``reward(a, z)`` the reward of a pull (default Gaussian), ``interval(mean, n,
    log_term)`` an arm's ``(LCB, UCB)`` with ``log_term = log(k₁ k n⁴/δ)`` (default
    ``mean ± σ sqrt(2 log_term / N)``). Means and counts are kept in lists of floats."""
    k = mu.size
    mus, sds = mu.tolist(), sigma.tolist()
    if reward is None:
        def reward(a, z):
            return mus[a] + sds[a] * z
    if interval is None:
        def interval(a, mean, count, log_term):
            w = sds[a] * math.sqrt(2 * log_term / count)
            return mean - w, mean + w
    stream = Stream(state, k)
    S = [reward(a, z) for a, z in enumerate(stream.take(k).tolist())]
    N = [1.0] * k
    t, n = k, 1
    while True:
        n += 1
        log_term = math.log(1.25 * k * n**4 / delta)
        mh = [S[i] / N[i] for i in range(k)]
        h = argmax(mh)
        ucb = [-math.inf if j == h else interval(j, mh[j], N[j], log_term)[1] for j in range(k)]
        low = argmax(ucb)
        if interval(h, mh[h], N[h], log_term)[0] > ucb[low]:
            return t, h
        if t + 2 > max_samples:
            return t, h
        z = stream.take(2).tolist()
        for arm, zi in zip((h, low), z):
            S[arm] += reward(arm, zi)
            N[arm] += 1
        t += 2


def ref_ebtc(state, mu, sigma, delta, beta, max_samples):
    k = mu.size
    mean, sd, var = mu.tolist(), sigma.tolist(), (sigma**2).tolist()
    two_cg = ttucb_two_cg(k, delta)
    stream = Stream(state, k)
    S = (mu + sigma * stream.take(k)).tolist()
    N = [1.0] * k
    lead_count = [0.0] * k
    lead_pulls = [[0.0] * k for _ in range(k)]
    t = k
    while True:
        mh = [S[i] * (1.0 / N[i]) for i in range(k)]
        v = [var[i] * (1.0 / N[i]) for i in range(k)]
        c = max(2.0 * (two_cg + 4 * math.log(4 + math.log(t / 2))), 0.0)
        stop, b = glr_stop(mh, v, c / 2)
        if stop or t + 1 > max_samples:
            return t, b
        lead = b
        cost = [np.inf if j == lead else max(mh[lead] - mh[j], 0.0) ** 2 / (v[lead] + v[j])
                for j in range(k)]
        chal = argmin(cost)
        lead_count[lead] += 1
        arm = lead if lead_pulls[lead][lead] <= beta * lead_count[lead] else chal
        lead_pulls[lead][arm] += 1
        S[arm] += mean[arm] + sd[arm] * stream.next()
        N[arm] += 1
        t += 1


def ref_ttts(state, mu, sigma, pm, ps, delta, beta, max_samples):
    """Russo's TTTS with leader probability beta (beta != 1/2: the coin is uniform < beta), its
    challenger by re-drawing the posterior (the "resample" rule)."""
    k = mu.size
    mean, sd, sig2 = mu.tolist(), sigma.tolist(), (sigma**2).tolist()
    prior_prec, prior_lin = (1 / ps**2).tolist(), (pm / ps**2).tolist()
    stream = Stream(state, k)
    S = (mu + sigma * stream.take(k)).tolist()
    N = [1.0] * k
    t = k

    def posterior():
        prec = [prior_prec[i] + N[i] / sig2[i] for i in range(k)]
        return ([(prior_lin[i] + S[i] / sig2[i]) / prec[i] for i in range(k)],
                [1 / math.sqrt(p) for p in prec])

    def draw_argmax(m, s):
        vals = [m[i] + s[i] * _rng.std_normal(state) for i in range(k)]
        return argmax(vals)

    while True:
        mh = [S[i] * (1.0 / N[i]) for i in range(k)]
        v = [sig2[i] * (1.0 / N[i]) for i in range(k)]
        stop, b = glr_stop(mh, v, math.log(t / delta))
        if stop or t + 1 > max_samples:
            return t, b
        coin = _rng.uniform(state) < beta
        m, s = posterior()
        leader = draw_argmax(m, s)
        if k == 2:
            arm = leader if coin else 1 - leader
        elif coin:
            arm = leader
        else:
            arm = leader
            for _ in range(100):
                c = draw_argmax(m, s)
                if c != leader:
                    arm = c
                    break
            if arm == leader:
                score = [np.inf if j == leader else (m[leader] - m[j]) / math.sqrt(s[leader] ** 2 + s[j] ** 2)
                         for j in range(k)]
                arm = argmin(score)
        S[arm] += mean[arm] + sd[arm] * stream.next()
        N[arm] += 1
        t += 1


INSTANCES = [np.array([1.0, 0.4]), np.array([0.5, 0.2, 0.0, -0.3])]
# Unequal noise; sqrt(2) keeps the two-arm optimal weight w* = 1/(1 + sqrt 2) irrational, so that
# t w* - N is never an exact tie that two solvers could break differently.
SIGMAS = [np.array([1.0, math.sqrt(2.0)]), np.array([1.0, 0.5, 1.5, 1.0])]


def _states(seed, n):
    return [_rng.seed_state(seed, r, _rng.STREAM_ALGO) for r in range(n)]


@pytest.mark.parametrize("case", range(2))
@pytest.mark.parametrize("tracking", ["D", "C"])
def test_track_and_stop_against_reference(case, tracking):
    mu, sigma = INSTANCES[case], SIGMAS[case]
    n, delta = (150 if mu.size == 2 else 75), 0.05
    res = simulate(TrackAndStop(tracking=tracking, update="every"), None, sigma, delta, n, 11,
                   means=mu, progress=False)
    ref = np.array([ref_tas(st, mu, sigma, delta, tracking, 10**6) for st in _states(11, n)])
    same = np.mean((ref[:, 0] == res.stopping_times) & (ref[:, 1] == res.recommendations))
    assert same >= 0.9
    assert stats.ks_2samp(ref[:, 0], res.stopping_times).pvalue > 0.01
    err_ref = int(np.sum(ref[:, 1] != np.argmax(mu)))
    err = int(np.sum(~res.correct))
    assert stats.fisher_exact([[err, n - err], [err_ref, n - err_ref]])[1] > 0.01


@pytest.mark.parametrize("tracking", ["D", "C"])
def test_geometric_weight_updates_give_the_same_stopping_time_distribution(tracking):
    """Re-solving w* once every t/256 samples (the default) against every sample."""
    mu, sigma = INSTANCES[1], SIGMAS[1]
    runs = {u: simulate(TrackAndStop(tracking=tracking, update=u), None, sigma, 0.01, 3000, 17,
                        means=mu, progress=False) for u in ("every", "geometric")}
    a, b = (runs[u].stopping_times for u in ("every", "geometric"))
    assert stats.ks_2samp(a, b).pvalue > 0.01
    np.testing.assert_allclose(np.quantile(a, [0.1, 0.5, 0.9]), np.quantile(b, [0.1, 0.5, 0.9]),
                               rtol=0.05)
    errs = [int(np.sum(~runs[u].correct)) for u in ("every", "geometric")]
    assert stats.fisher_exact([[errs[0], 3000 - errs[0]], [errs[1], 3000 - errs[1]]])[1] > 0.01


@pytest.mark.parametrize("case", range(2))
def test_lucb_matches_reference_run_for_run(case):
    mu, sigma = INSTANCES[case], SIGMAS[case]
    res = simulate(LUCB(), None, sigma, 0.05, 100, 12, means=mu, progress=False)
    ref = np.array([ref_lucb(st, mu, sigma, 0.05, 10**6) for st in _states(12, 100)])
    np.testing.assert_array_equal(res.stopping_times, ref[:, 0])
    np.testing.assert_array_equal(res.recommendations, ref[:, 1])
    assert set(res.stop_reasons) == {"separation"}


@pytest.mark.parametrize("case", range(2))
@pytest.mark.parametrize("beta", [0.5, 0.3])
def test_ebtc_matches_reference_run_for_run(case, beta):
    mu, sigma = INSTANCES[case], SIGMAS[case]
    res = simulate(EBTC(beta=beta), None, sigma, 0.05, 100, 13, means=mu, progress=False)
    ref = np.array([ref_ebtc(st, mu, sigma, 0.05, beta, 10**6) for st in _states(13, 100)])
    np.testing.assert_array_equal(res.stopping_times, ref[:, 0])
    np.testing.assert_array_equal(res.recommendations, ref[:, 1])


@pytest.mark.parametrize("case", range(2))
@pytest.mark.parametrize("beta", [0.3, 0.75])
def test_ttts_any_beta_matches_reference_run_for_run(case, beta):
    mu, sigma = INSTANCES[case], SIGMAS[case]
    k = mu.size
    H = GaussianPrior(np.zeros(k), np.ones(k))
    n = 100 if k == 2 else 20
    res = simulate(TTTS(beta=beta, challenger="resample"), H, sigma, 0.05, n, 14, means=mu,
                   progress=False)
    ref = np.array([ref_ttts(st, mu, sigma, np.zeros(k), np.ones(k), 0.05, beta, 10**6)
                    for st in _states(14, n)])
    np.testing.assert_array_equal(res.stopping_times, ref[:, 0])
    np.testing.assert_array_equal(res.recommendations, ref[:, 1])


def test_beta_shifts_the_sampling_proportion_of_top_two_algorithms():
    """With a larger β the leader (the best arm) gets more samples, so τ's law changes."""
    mu = np.array([1.0, 0.0])
    runs = {b: simulate(EBTC(beta=b), None, 1.0, 0.01, 400, 15, means=mu, progress=False)
            for b in (0.2, 0.5, 0.8)}
    T_star, _ = characteristic_time(mu)
    # beta = 1/2 is optimal for two equal-variance arms; both extremes are slower.
    med = {b: np.median(r.stopping_times) for b, r in runs.items()}
    assert med[0.5] < med[0.2] and med[0.5] < med[0.8]
    assert stats.ks_2samp(runs[0.5].stopping_times, runs[0.8].stopping_times).pvalue < 1e-3


def test_track_and_stop_is_delta_correct_and_near_optimal_on_two_arms():
    mu, sigma = np.array([0.5, 0.0]), np.array([1.0, 1.0])
    T_star, _ = characteristic_time(mu, sigma)
    ratios = []
    for delta in (0.1, 0.01, 0.001):
        res = simulate("tas", None, sigma, delta, 2000, 16, means=mu, progress=False)
        n_err = int(np.sum(~res.correct))
        # P(error) <= delta: the exact binomial test does not reject it at level 1%.
        assert stats.binomtest(n_err, res.n_runs, delta, alternative="greater").pvalue > 0.01
        ratios.append(res.stopping_times.mean() / (T_star * math.log(1 / delta)))
    # The lower bound T* log(1/(2.4 δ)) holds, and the ratio to T* log(1/δ) falls towards 1.
    assert all(r > 1.0 for r in ratios)
    assert ratios[0] > ratios[1] > ratios[2]


def test_new_specs_refuse_bad_options_with_the_option_named():
    with pytest.raises(ValueError, match="beta"):
        TTTS(beta=1.0)
    with pytest.raises(ValueError, match="beta"):
        EBTC(beta=0)
    with pytest.raises(ValueError, match="beta"):
        EBTC(beta="0.5")
    with pytest.raises(ValueError, match="tracking"):
        TrackAndStop(tracking="E")
    with pytest.raises(ValueError, match="threshold"):
        TrackAndStop(threshold="log")
    with pytest.raises(ValueError, match="update"):
        TrackAndStop(update="lazy")
    with pytest.raises(ValueError, match="threshold"):
        TTTS(threshold="released")

"""Bernoulli arms in the GLR top-two algorithms (TTUCB, EB-TC): the Bernoulli GLR statistic, its
cheap first test, and the kernels against plain references on fixed sample paths."""

import functools
import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy.special import ndtr, rel_entr

from scipy.optimize import brentq

from bai_lib import EBTC, LUCB, TTUCB, BetaPrior, TrackAndStop, simulate, simulate_deltas
from bai_lib.oracle import characteristic_time, glr_time
from bai_lib.oracle_bernoulli import bernoulli_characteristic_time
from bai_lib import _rng
from bai_lib.families import bernoulli
from bai_lib.kl import kl_glr
from bai_lib.stats import clopper_pearson
from bai_lib.stopping import ttucb_two_cg
from test_baselines import ref_lucb
from test_conventions import Stream, ref_ttucb_released


def _exact_kl(p, q):
    """kl of two doubles in 60-digit decimal arithmetic, with 0 log 0 = 0."""
    getcontext().prec = 60
    p, q, one = Decimal(p), Decimal(q), Decimal(1)
    out = Decimal(0)
    if p > 0:
        out += p * (p / q).ln()
    if p < 1:
        out += (one - p) * ((one - p) / (one - q)).ln()
    return out


def ref_z(ma, na, mb, nb, kl=None):
    """The GLR statistic from its definition, by default with scipy's relative entropy."""
    if ma <= mb:
        return 0.0
    m = (na * ma + nb * mb) / (na + nb)
    if kl is None:
        def kl(p, q):
            return rel_entr(p, q) + rel_entr(1 - p, 1 - q)

    return na * kl(ma, m) + nb * kl(mb, m)


def _coin(mu, a, z):
    return 1.0 if ndtr(z) < mu[a] else 0.0


def _memo_glr(kl=None):
    """``ref_z`` (with the divergence ``kl``, Bernoulli by default) remembering its last few
    values: a step changes one arm's statistics, so the statistics of the other pairs are asked
    for again at the next step, and the stopping test and the challenger ask for the same ones
    within a step."""
    return functools.lru_cache(maxsize=16)(functools.partial(ref_z, kl=kl))


def ref_ttucb_bernoulli(state, mu, delta):
    """TTUCB with the released conventions on Bernoulli arms: the plain reference of the
    Gaussian code with a Bernoulli reward (1 when Φ(z) < μ), the Bernoulli GLR statistic and
    the sub-Gaussian bonus of rewards in [0, 1] (σ = 1/2)."""
    return ref_ttucb_released(state, mu, np.full(mu.size, 0.5), delta, True,
                              reward=lambda a, z: _coin(mu, a, z), glr=_memo_glr())


def ref_ebtc_bernoulli(state, mu, delta, beta=0.5, reward=_coin, kl=None):
    """EB-TC on Bernoulli arms in plain Python (the structure of ``ref_ebtc``); another family
    with ``reward(mu, a, z)``, the reward of a pull of arm ``a`` from the standard normal ``z``,
    and its divergence ``kl`` in the GLR statistic."""
    k = mu.size
    glr = _memo_glr(kl)
    two_cg = ttucb_two_cg(k, delta)
    stream = Stream(state, k)
    S = np.array([reward(mu, a, z) for a, z in enumerate(stream.take(k))])
    N = np.ones(k)
    lead_count = np.zeros(k)
    lead_pulls = np.zeros((k, k))
    t = k
    while True:
        mh = S / N
        best = int(np.argmax(mh))
        c = max(two_cg + 4 * math.log(4 + math.log(t / 2)), 0.0)
        if min(glr(mh[best], N[best], mh[j], N[j]) for j in range(k) if j != best) >= c:
            return t, best
        lead = best
        cost = [np.inf if j == lead else glr(mh[lead], N[lead], mh[j], N[j]) for j in range(k)]
        chal = cost.index(min(cost))  # the first smallest, as np.argmin
        lead_count[lead] += 1
        arm = lead if lead_pulls[lead, lead] <= beta * lead_count[lead] else chal
        lead_pulls[lead, arm] += 1
        S[arm] += reward(mu, arm, stream.take(1)[0])
        N[arm] += 1
        t += 1


def test_kl_glr_is_the_likelihood_ratio_and_zero_below():
    rng = np.random.default_rng(3)
    for _ in range(2000):
        ma, mb = np.sort(rng.choice([rng.random(), 0.0, 1.0, rng.random() ** 6], 2))[::-1]
        na, nb = rng.integers(1, 10**6, 2)
        z = kl_glr(ma, float(na), mb, float(nb))
        exact = ref_z(ma, na, mb, nb, kl=lambda p, q: float(_exact_kl(p, q)))
        assert z == pytest.approx(exact, rel=1e-12, abs=1e-300), (ma, mb, na, nb)
        assert kl_glr(mb, float(nb), ma, float(na)) == 0.0
    # the Gaussian limit: close means near 1/2 give gap² / (2 v (1/N_a + 1/N_b)), v = 1/4
    z = kl_glr(0.501, 1000.0, 0.499, 3000.0)
    assert z == pytest.approx(0.002**2 / (2 * 0.25 * (1 / 1000 + 1 / 3000)), rel=1e-4)


def test_glr_passes_bernoulli_is_the_exact_test():
    """The first test on the bound d² / (2 V (1/N_a + 1/N_b)) never changes the decision: the
    result equals min_j Z(best, j) >= c / 2 computed from the definition, also at means 0 and 1,
    ties and thresholds right at the statistic."""
    rng = np.random.default_rng(8)
    decided = {True: 0, False: 0}
    for trial in range(4000):
        k = int(rng.integers(2, 6))
        N = rng.integers(1, 5000, k).astype(np.int64)
        S = np.array([rng.binomial(n, p) for n, p in zip(N, rng.random(k))], dtype=float)
        mh = S / N
        best = int(np.argmax(mh))
        zmin = min(ref_z(mh[best], N[best], mh[j], N[j]) for j in range(k) if j != best)
        c = 2 * zmin * rng.choice([0.5, 1 - 1e-9, 1 + 1e-9, 2.0]) if trial % 5 else 2 * zmin
        expected = zmin >= c / 2 if trial % 5 else None
        got = bernoulli.glr_passes(bernoulli.Bernoulli(), mh, np.zeros(k), N, best, c)
        if expected is not None and abs(zmin - c / 2) > 1e-9 * zmin:
            assert got == expected, (mh, N, c, zmin)
            decided[got] += 1
    assert min(decided.values()) > 500


@pytest.mark.parametrize("mu", [[0.5, 0.4], [0.12, 0.05, 0.1, 0.08]], ids=["k2", "k4"])
@pytest.mark.parametrize("spec, ref", [(TTUCB(), ref_ttucb_bernoulli),
                                       (EBTC(), ref_ebtc_bernoulli)], ids=["ttucb", "ebtc"])
def test_kernels_match_plain_references_run_for_run(spec, ref, mu):
    mu = np.array(mu)
    delta = 0.05
    n = 12 if mu.size == 2 else 6  # the plain references are slow on four arms
    res = simulate(spec, None, None, delta, n, 5, means=mu, rewards="bernoulli")
    assert res.rewards == "bernoulli"
    for r in range(n):
        expect = ref(_rng.seed_state(5, r, _rng.STREAM_ALGO), mu, delta)
        assert (int(res.stopping_times[r]), int(res.recommendations[r])) == expect, r


@pytest.mark.parametrize("spec", [TTUCB(), EBTC()], ids=["ttucb", "ebtc"])
def test_one_trajectory_scores_every_level(spec):
    H = BetaPrior([4.0, 3.0, 2.0], [6.0, 7.0, 8.0])
    deltas = [0.2, 0.05, 0.01]
    many = simulate_deltas(spec, H, None, deltas, 30, 9)
    for d in deltas:
        one = simulate(spec, H, None, d, 30, 9)
        assert np.array_equal(many[d].stopping_times, one.stopping_times)
        assert np.array_equal(many[d].recommendations, one.recommendations)


@pytest.mark.parametrize("spec", [TTUCB(), EBTC()], ids=["ttucb", "ebtc"])
def test_error_rate_on_a_fixed_instance_is_below_delta(spec):
    """δ-correct on a fixed Bernoulli instance (frequentist): the upper end of the 99.9%
    Clopper-Pearson interval of the error rate over 500 runs is below δ = 0.1."""
    # an error rate of δ or more passes with probability < 0.05% whatever the number of runs;
    # both algorithms err in none of 1,000 runs here, and 0 errors in 500 give an upper end of
    # 0.015 (10 errors would still give 0.050)
    res = simulate(spec, None, None, 0.1, 500, 12, means=[0.3, 0.25, 0.2], rewards="bernoulli")
    errors = int(np.count_nonzero(res.recommendations != 0))
    assert clopper_pearson(errors, 500, 0.999)[1] < 0.1, errors
    assert not np.any(res.censored)


def _kl(p, q):
    return float(rel_entr(p, q) + rel_entr(1 - p, 1 - q))


def ref_bernoulli_weights(mh, kl=_kl):
    """w*(μ̂) of two Bernoulli arms (of another one-parameter exponential family with its
    divergence ``kl``): the point m between the means with kl(μ_b, m) = kl(μ_o, m) (brentq)
    gives w_o / w_b = (μ_b − m) / (m − μ_o). Uniform weights on a tie."""
    b = int(np.argmax(mh))
    o = 1 - b
    if mh[b] == mh[o]:
        return np.full(2, 0.5)
    m = brentq(lambda q: kl(mh[b], q) - kl(mh[o], q), mh[o], mh[b], xtol=1e-300, rtol=1e-15)
    w = np.empty(2)
    w[b], w[o] = 1.0, (mh[b] - m) / (m - mh[o])
    return w / w.sum()


def _bernoulli_tie(mh, gaps, t):
    """Whether the tracking step's argmax of ``gaps`` (t w − N) is decided by rounding: for
    mirror-symmetric empirical means, such as 2/3 and 1/3, w* = (1/2, 1/2) exactly, and the
    argmax is then decided by the last bits of w; or two gaps closer than 1e-9 t."""
    mirror = mh[0] != mh[1] and mh[0] + mh[1] == 1.0
    near = 0.0 < np.sort(gaps)[-1] - np.sort(gaps)[-2] < 1e-9 * t
    return bool(mirror or near)


def ref_tas_bernoulli(state, mu, delta, reward=_coin, kl=None, tie=_bernoulli_tie):
    """Track-and-Stop (D-tracking, weights re-solved every step, threshold log(t/δ)) on
    Bernoulli arms in plain Python (the structure of the Gaussian ``ref_tas``); another family
    with ``reward(mu, a, z)`` and its divergence ``kl`` (in the GLR statistic and the weights).
    Returns ``(tau, recommendation, ambiguous)``: ``ambiguous`` when some tracking step was a tie
    up to rounding, ``tie(mh, gaps, t)``."""
    k = mu.size
    stream = Stream(state, k)
    S = np.array([reward(mu, a, z) for a, z in enumerate(stream.take(k))])
    N = np.ones(k)
    t = k
    ambiguous = False
    while True:
        mh = S / N
        best = int(np.argmax(mh))
        z = min(ref_z(mh[best], N[best], mh[j], N[j], kl) for j in range(k) if j != best)
        if z >= math.log(t / delta):
            return t, best, ambiguous
        w = ref_bernoulli_weights(mh, kl or _kl)
        arm = int(np.argmin(N))
        if N[arm] >= math.sqrt(t) - k / 2:
            gaps = t * w - N
            arm = int(np.argmax(gaps))
            ambiguous |= tie(mh, gaps, t)
        S[arm] += reward(mu, arm, stream.take(1)[0])
        N[arm] += 1
        t += 1


@pytest.mark.parametrize("mu", [[0.35, 0.2], [0.2, 0.05]], ids=["mid", "low"])
def test_track_and_stop_matches_a_plain_reference_run_for_run(mu):
    """Run for run, except runs in which the reference met a tracking tie up to rounding (at
    least 8 of 32 runs are compared)."""
    mu = np.array(mu)
    res = simulate(TrackAndStop(update="every"), None, None, 0.1, 32, 6, means=mu,
                   rewards="bernoulli")
    compared = 0
    for r in range(32):
        tau, rec, ambiguous = ref_tas_bernoulli(_rng.seed_state(6, r, _rng.STREAM_ALGO), mu, 0.1)
        if not ambiguous:
            assert (int(res.stopping_times[r]), int(res.recommendations[r])) == (tau, rec), r
            compared += 1
    assert compared >= 8, compared


def test_track_and_stop_reaches_the_bernoulli_characteristic_time():
    """At δ = 1e-10 the mean stopping time is close to the fixed point of t = T* log(t/δ) for
    the Bernoulli T*(μ) (within [0.8, 1.25], 40 runs), and far below the one for the Gaussian
    T*(μ) with σ = 1/2: the oracle weights are those of the Bernoulli divergence."""
    mu = np.array([0.06, 0.03, 0.01])
    t_bern = glr_time(bernoulli_characteristic_time(mu)[0], 1e-10)
    t_gauss = glr_time(characteristic_time(mu, 0.5)[0], 1e-10)
    res = simulate(TrackAndStop(), None, None, 1e-10, 40, 2, means=mu, rewards="bernoulli")
    ratio = res.stopping_times.mean() / t_bern
    assert 0.8 < ratio < 1.25, ratio
    assert res.stopping_times.mean() < 0.3 * t_gauss
    assert np.all(res.recommendations == 0)


class _KLEnds:
    """The ends ``[0]`` (lower) and ``[1]`` (upper) of {q : kl(mean, q) <= level}, by brentq on
    scipy's relative entropy. Each end is solved when it is read: LUCB reads one end per arm
    (the lower one of the empirical best, the upper one of the others).

    ``kl`` is the divergence (Bernoulli by default) and ``top`` the largest mean (1; ``inf`` for
    Poisson arms, whose upper end is bracketed by twice the point where ``(q − p)² / (2q)``, a
    lower bound of the Poisson divergence, reaches the level)."""

    def __init__(self, mean, level, kl=_kl, top=1.0):
        self.mean, self.level, self.kl, self.top = mean, level, kl, top

    def f(self, q):
        return self.kl(self.mean, q) - self.level

    def __getitem__(self, end):
        if end == 0:
            return 0.0 if self.mean == 0 else brentq(self.f, 1e-300, self.mean, xtol=1e-300,
                                                     rtol=8.9e-16)
        if end == 1:
            p, level = self.mean, self.level
            if p == self.top:
                return self.top
            hi = (1 - 1e-16 if self.top == 1.0
                  else 2 * (p + level + math.sqrt(level * (level + 2 * p))))
            return brentq(self.f, p, hi, xtol=1e-300, rtol=8.9e-16)
        raise IndexError(end)


@pytest.mark.parametrize("widths", ["subgaussian", "kl"])
@pytest.mark.parametrize("mu", [[0.5, 0.3], [0.45, 0.1, 0.25]], ids=["k2", "k3"])
def test_lucb_matches_a_plain_reference_run_for_run(widths, mu):
    """LUCB1 on Bernoulli arms with σ = 1/2, and KL-LUCB, against the plain LUCB reference with
    a Bernoulli reward (and KL intervals at level log(k₁ k n⁴/δ)/N)."""
    mu = np.array(mu)
    res = simulate(LUCB(widths=widths), None, None, 0.05, 8, 4, means=mu, rewards="bernoulli")
    interval = None
    if widths == "kl":
        def interval(a, mean, count, log_term):
            return _KLEnds(mean, log_term / count)
    for r in range(8):
        expect = ref_lucb(_rng.seed_state(4, r, _rng.STREAM_ALGO), mu, np.full(mu.size, 0.5),
                          0.05, 10**9, reward=lambda a, z: _coin(mu, a, z), interval=interval)
        assert (int(res.stopping_times[r]), int(res.recommendations[r])) == expect, r


def test_kl_lucb_needs_fewer_samples_at_low_rates_and_is_refused_on_gaussian_arms():
    mu = [0.04, 0.02]
    kl = simulate(LUCB(widths="kl"), None, None, 0.05, 40, 3, means=mu, rewards="bernoulli")
    sub = simulate(LUCB(), None, None, 0.05, 40, 3, means=mu, rewards="bernoulli")
    assert np.median(kl.stopping_times) < 0.5 * np.median(sub.stopping_times)
    with pytest.raises(ValueError, match=r"widths='kl' is for the families with KL intervals"):
        simulate(LUCB(widths="kl"), None, 1.0, 0.05, 4, 3, means=mu)
    with pytest.raises(ValueError, match=r"^widths must be one of"):
        LUCB(widths="bernstein")

"""Poisson arms (``rewards="poisson"``) in every algorithm, against plain references run for run.

A Poisson pull consumes the run's next standard normal ``z`` as a Gaussian pull does and pays
the least ``n`` with ``F_λ(n) >= Φ(z)``, so each kernel can be replayed in plain Python from the
same generator stream. The references are those of the Bernoulli and Gaussian tests
(``ref_ttucb_released``, ``ref_ebtc_bernoulli``, ``ref_tas_bernoulli``, ``RefTTTS``,
``ref_elimination``, ``ref_lucb``), given a Poisson reward, the Poisson divergence
``kl(p, q) = q − p + p log(p/q)`` (from scipy's relative entropy) in their GLR statistics, weights
and KL intervals (solved by brentq), and for TTTS the conjugate ``Gamma(a + S, b + N)``
posterior. The reference's counts come from scipy's Poisson distribution function, not from the
kernel's inversion. Most algorithms meet an arm of mean 0, where ``kl(p, 0) = inf``.
"""

import bisect
import functools
import math

import numpy as np
import pytest
from scipy.special import ndtr, rel_entr
from scipy.stats import poisson

from bai_lib import EBTC, LUCB, TTTS, TTUCB, Elimination, NoElim, TrackAndStop, simulate
from bai_lib import _rng, _variates
from bai_lib.families.poisson import poisson_inverse
from bai_lib.gamma_prior import GammaPrior
from test_baselines import ref_lucb
from test_bernoulli_glr import _KLEnds, _memo_glr, ref_ebtc_bernoulli, ref_tas_bernoulli
from test_bernoulli_ttts import Conjugate, RefTTTS
from test_conventions import ref_elimination, ref_ttucb_released


@functools.cache
def _cdf(lam):
    """``[F_λ(0), F_λ(1), ...]`` by scipy, up to a value that rounds to 1."""
    table = poisson.cdf(np.arange(int(lam + 40 * math.sqrt(lam) + 60)), lam)
    assert table[-1] == 1.0, lam
    return table.tolist()


def poisson_reward(mu, a, z):
    """The count of a pull of arm ``a`` (mean ``mu[a]``) from the standard normal ``z``: the
    least ``n`` with ``F(n) >= Φ(z)``."""
    return float(bisect.bisect_left(_cdf(float(mu[a])), ndtr(z)))


def kl_poisson_ref(p, q):
    """``q − p + p log(p/q)``, with ``0 log 0 = 0`` and ``kl(p, 0) = inf`` for ``p > 0``."""
    return float(rel_entr(p, q)) + q - p


GAMMA = Conjugate(reward=poisson_reward, shapes=lambda a, b, S, N: (a + S, b + N),
                  draw=lambda state, A, B: _variates.gamma_variate(state, A) / B,
                  moments=lambda A, B: (A / B, A / B / B), kl=kl_poisson_ref)


def _states(seed, n):
    return [_rng.seed_state(seed, r, _rng.STREAM_ALGO) for r in range(n)]


def _outcomes(res, r):
    return int(res.stopping_times[r]), int(res.recommendations[r])


def test_the_reference_counts_are_the_kernel_counts():
    """The reference's counts (scipy's distribution function, ``ndtr``) equal the kernel's
    inversion on 20,000 normals, the tails included, also at mean 0 (always 0)."""
    z = np.concatenate([np.random.default_rng(2).standard_normal(20000), [-7.5, 5.0, 7.5]])
    u = 0.5 * np.array([math.erfc(-x / math.sqrt(2.0)) for x in z])
    for lam in (0.0, 0.6, 0.9, 2.0, 37.5):
        ref = [poisson_reward([lam], 0, x) for x in z]
        assert [float(poisson_inverse(v, lam)) for v in u] == ref, lam
        if lam == 0.0:
            assert set(ref) == {0.0}
        else:
            assert abs(np.mean(ref) - lam) < 5 * math.sqrt(lam / z.size)


@pytest.mark.parametrize("mu, stds", [([2.0, 1.5], None), ([0.9, 0.6, 0.5], None),
                                      ([0.9, 0.6, 0.0], [1.5, 0.7, 1.0])],
                         ids=["k2", "k3", "k3-zero-stds"])
def test_ttucb_matches_the_released_reference_run_for_run(mu, stds):
    """TTUCB with the released conventions: the Poisson GLR statistic in the test and the
    signed challenger cost, the bonus ``sqrt(4 log(t + 1) σ_i² / N_i)`` with ``noise_stds``
    (1 unless given)."""
    mu, n, delta = np.array(mu), 8, 0.05
    sigma = np.ones(mu.size) if stds is None else np.array(stds)
    res = simulate(TTUCB(), None, stds, delta, n, 5, means=mu, rewards="poisson")
    assert res.rewards == "poisson" and res.noise_stds.tolist() == sigma.tolist()
    for r, state in enumerate(_states(5, n)):
        expect = ref_ttucb_released(state, mu, sigma, delta, True,
                                    reward=lambda a, z: poisson_reward(mu, a, z),
                                    glr=_memo_glr(kl_poisson_ref))
        assert _outcomes(res, r) == expect, r
    assert set(res.stop_reasons) == {"glr"}


@pytest.mark.parametrize("mu, beta", [([2.0, 1.5], 0.5), ([0.9, 0.6, 0.0], 0.5),
                                      ([0.9, 0.6, 0.0], 0.3)], ids=["k2", "k3", "k3-beta0.3"])
def test_ebtc_matches_the_reference_run_for_run(mu, beta):
    mu, n, delta = np.array(mu), 8, 0.05
    res = simulate(EBTC(beta=beta), None, None, delta, n, 6, means=mu, rewards="poisson")
    for r, state in enumerate(_states(6, n)):
        expect = ref_ebtc_bernoulli(state, mu, delta, beta, reward=poisson_reward,
                                    kl=kl_poisson_ref)
        assert _outcomes(res, r) == expect, r
    assert set(res.stop_reasons) == {"glr"}


def _poisson_tie(mh, gaps, t):
    """Whether the two gaps ``t w − N`` of a tracking step are equal up to rounding (1e-9 t),
    exactly equal included, for untied means (tied means get w = (1/2, 1/2) exactly)."""
    return bool(mh[0] != mh[1] and abs(gaps[0] - gaps[1]) < 1e-9 * t)


@pytest.mark.parametrize("mu", [[2.0, 1.5], [0.6, 0.0]], ids=["k2", "zero"])
def test_track_and_stop_matches_the_reference_run_for_run(mu):
    """D-tracking of the Poisson weights ``w*(μ̂)`` (brentq on the Poisson divergence), run for
    run except runs in which the reference met a tracking tie up to rounding (at least 12 of
    16 runs are compared)."""
    mu, n, delta = np.array(mu), 16, 0.1
    res = simulate(TrackAndStop(update="every"), None, None, delta, n, 7, means=mu,
                   rewards="poisson")
    compared = 0
    for r, state in enumerate(_states(7, n)):
        tau, rec, ambiguous = ref_tas_bernoulli(state, mu, delta, reward=poisson_reward,
                                                kl=kl_poisson_ref, tie=_poisson_tie)
        if not ambiguous:
            assert _outcomes(res, r) == (tau, rec), r
            compared += 1
    assert compared >= 12, compared
    assert set(res.stop_reasons) == {"glr"}


TTTS_CASES = [  # means, prior shapes a, prior rates b, beta, challenger
    ([2.0, 1.5], [2.0, 1.0], [1.0, 1.0], 0.5, "exact"),
    ([0.6, 0.0], [1.5, 0.5], [1.0, 2.0], 0.3, "exact"),  # shape 0.5 < 1 for ever at mean 0
    # a prior mean of 4 for the arm of mean 0, which the posterior otherwise starves
    ([0.9, 0.6, 0.0], [2.0, 1.0, 4.0], [1.0, 2.0, 1.0], 0.5, "resample"),
    ([0.9, 0.6, 0.5], [1.0, 1.5, 2.0], [1.0, 1.0, 2.0], 0.5, "released"),
]


@pytest.mark.parametrize("mu, a, b, beta, challenger", TTTS_CASES,
                         ids=["k2-fair", "k2-zero-beta0.3", "k3-resample", "k3-released"])
def test_ttts_matches_the_gamma_posterior_reference_run_for_run(mu, a, b, beta, challenger):
    """TTTS with a GammaPrior: posterior draws ``gamma_variate(A_i) / B_i`` in arm order from
    the run's generator, the Poisson GLR stop at log(t/δ). The priors' shapes and rates are
    dyadic, so that ``a + S`` and ``b + N`` are exact however the kernel sums them."""
    mu, a, b = np.array(mu), np.array(a), np.array(b)
    n, delta = 8, 0.05
    res = simulate(TTTS(beta=beta, challenger=challenger), GammaPrior(a, b), None, delta, n, 8,
                   means=mu)
    assert res.rewards == "poisson"
    ref = RefTTTS(GAMMA)
    for r, state in enumerate(_states(8, n)):
        expect = ref.run(state, mu, a, b, delta, beta, challenger)
        assert _outcomes(res, r) == expect, r
    assert set(res.stop_reasons) == {"glr"}
    if challenger == "resample":
        assert ref.fallbacks > 0  # the likeliest rival of the Gamma posteriors is exercised


@functools.cache
def _poisson_kl_interval(mean, n, k, delta):
    """The KL interval {q >= 0 : n kl(mean, q) <= log(6n²/((δ²/(2K))π²))}, by brentq
    (memoised: NoElim and its empirical-best variant follow the same paths)."""
    level = math.log(6 * n**2 / ((delta**2 / (2 * k)) * math.pi**2)) / n
    ends = _KLEnds(mean, level, kl=kl_poisson_ref, top=math.inf)
    return ends[0], ends[1]


@pytest.fixture(scope="module", autouse=True)
def _forget_kl_intervals():
    yield
    _poisson_kl_interval.cache_clear()


def _check_elimination(spec, res, delta, d0, n):
    k = res.means.shape[1]
    for r, state in enumerate(_states(res.seed, n)):
        mu = res.means[r]
        expect = ref_elimination(
            state, mu, np.ones(k), delta, d0, spec._pull_all, spec.recommend,
            reward=lambda i, z: poisson_reward(mu, i, z),
            interval=lambda i, mean, rounds: _poisson_kl_interval(float(mean), rounds, k, delta),
            with_reason=True)
        assert (*_outcomes(res, r), str(res.stop_reasons[r])) == expect, r


ELIMINATION_SPECS = [Elimination(widths="kl", delta0=0.3), NoElim(widths="kl", delta0=0.3),
                     NoElim(widths="kl", delta0=0.3, recommend="empirical_best")]
ELIMINATION_IDS = ["alg1", "noelim", "noelim-best"]


@pytest.mark.parametrize("spec", ELIMINATION_SPECS, ids=ELIMINATION_IDS)
def test_elimination_with_kl_widths_matches_the_reference_run_for_run(spec):
    """Fixed means: the arm of mean 0 is eliminated early (``kl(p, 0) = inf``), then runs end
    by elimination or by indifference (both happen in these 8 runs)."""
    delta, n = 0.1, 8
    res = simulate(spec, None, None, delta, n, 5, means=[0.9, 0.65, 0.0], rewards="poisson")
    _check_elimination(spec, res, delta, 0.3, n)
    assert set(res.stop_reasons) == {"single_arm", "indifference"}


@pytest.mark.parametrize("spec", [Elimination(widths="kl"), NoElim(widths="kl")],
                         ids=ELIMINATION_IDS[:2])
def test_elimination_under_a_gamma_prior_matches_the_reference_run_for_run(spec):
    """Δ0 = δ / (4 L(H)) of a GammaPrior, the means of each run drawn from it."""
    H = GammaPrior([1.5, 3.0, 2.0], [0.5, 0.5, 0.5])
    delta, n = 0.1, 8
    res = simulate(spec, H, None, delta, n, 6)
    assert res.rewards == "poisson" and res.delta0 == spec.resolve_delta0(H, delta)
    assert np.array_equal(res.means, H.sample_means(6, n))
    _check_elimination(spec, res, delta, res.delta0, n)


@pytest.mark.parametrize("mu", [[2.0, 1.5], [0.9, 0.6, 0.0]], ids=["k2", "k3"])
def test_kl_lucb_matches_the_reference_run_for_run(mu):
    """KL-LUCB: the ends of {q : N_i kl(μ̂_i, q) <= log(k₁ k n⁴/δ)} of the Poisson divergence."""
    mu, n, delta = np.array(mu), 6, 0.05
    res = simulate(LUCB(widths="kl"), None, None, delta, n, 4, means=mu, rewards="poisson")

    def interval(a, mean, count, log_term):
        return _KLEnds(mean, log_term / count, kl=kl_poisson_ref, top=math.inf)

    for r, state in enumerate(_states(4, n)):
        expect = ref_lucb(state, mu, np.ones(mu.size), delta, 10**9,
                          reward=lambda a, z: poisson_reward(mu, a, z), interval=interval)
        assert _outcomes(res, r) == expect, r
    assert set(res.stop_reasons) == {"separation"}

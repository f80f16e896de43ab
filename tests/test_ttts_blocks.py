"""Two-arm TTTS with β = 1/2 simulated in law by blocks (bai_lib.algorithms.ttts_blocks): the
random-access coins, the band bound, the options, reproducibility, and the law of the runs
against the per-sample kernel."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bai_lib as B
from bai_lib import _rng
from bai_lib.algorithms.glr import GLRThreshold
from bai_lib.algorithms.ttts_blocks import band_exit_bound, ttts_blocks_run
from bai_lib.kernels import STOP_INTERRUPTED, cancel_flag
from bai_lib.stats import same_law
from same_law_check import errors_overlap, law_p_values
from bai_lib.stopping import GLR_THRESHOLDS

H2 = B.GaussianPrior.standard(2)
BLOCKS = B.TTTS(method="blocks")
CHERNOFF = GLRThreshold(GLR_THRESHOLDS["chernoff"], 1.0, 0.0)


# ------------------------------------------------------------------------------ the coins


def test_coin_counts_are_the_bits_of_the_words():
    key = np.uint64(0x1234_5678_9ABC_DEF0)
    words = [int(_rng.coin_word(key, w)) for w in range(12)]
    bits = np.array([(words[j // 64] >> (j % 64)) & 1 for j in range(12 * 64)])
    rng = np.random.default_rng(0)
    for _ in range(3000):
        a = int(rng.integers(0, bits.size))
        b = int(rng.integers(a, bits.size + 1))
        assert _rng.coin_ones(key, a, b) == bits[a:b].sum(), (a, b)
    assert _rng.coin_ones(key, 5, 5) == 0 and _rng.coin_ones(key, 9, 3) == 0


def test_coins_are_fair_and_independent():
    """10⁷ coins: the share of heads, and of equal neighbours, within 4 standard errors of 1/2;
    the counts of 64-coin words against Binomial(64, 1/2) (χ², pooled tails)."""
    from scipy import stats

    key = _rng.next_u64(_rng.seed_state(3, 0, _rng.STREAM_ALGO))
    n = 10**7
    heads = _rng.coin_ones(key, 0, n)
    assert abs(heads - n / 2) < 4 * math.sqrt(n / 4)
    words = np.array([_rng.coin_word(key, w) for w in range(20_000)], dtype=np.uint64)
    bits = ((words[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)).ravel()
    same = np.count_nonzero(bits[1:] == bits[:-1])
    assert abs(same - (bits.size - 1) / 2) < 4 * math.sqrt(bits.size / 4)
    counts = np.array([bin(int(w)).count("1") for w in words])
    edges = np.arange(22, 43)  # 22 and below, 23 … 41, 42 and above
    observed = np.array([np.count_nonzero(counts <= 22)]
                        + [np.count_nonzero(counts == c) for c in edges[1:-1]]
                        + [np.count_nonzero(counts >= 42)])
    p = stats.binom(64, 0.5)
    probs = np.array([p.cdf(22)] + [p.pmf(c) for c in edges[1:-1]] + [p.sf(41)])
    assert stats.chisquare(observed, probs / probs.sum() * words.size).pvalue > 1e-3


# --------------------------------------------------------------------------- the band bound


def test_band_bound_edges():
    assert band_exit_bound(0.0, 1.0) == 1.0
    assert band_exit_bound(1.0, 0.0) == 0.0
    assert band_exit_bound(2.0, 4.0) == pytest.approx(2 * math.exp(-2.0), rel=1e-15)
    assert band_exit_bound(0.1, 4.0) == 1.0  # capped


@pytest.mark.parametrize("eps, var", [(1.0, 1.0), (1.5, 2.0)])
def test_band_bound_bounds_simulated_bridges(eps, var):
    """Discrete Gaussian bridges leave the band ±ε less often than the bound says, and not much
    less: the bound is two one-sided crossings of a continuous bridge."""
    rng = np.random.default_rng(11)
    m, n_paths = 1000, 40_000
    out = 0
    for _ in range(n_paths // 4000):
        walk = np.cumsum(rng.standard_normal((4000, m)) * math.sqrt(var / m), axis=1)
        s = np.arange(1, m + 1) / m
        bridge = walk - s * walk[:, -1:]
        out += int(np.count_nonzero((np.abs(bridge) >= eps).any(axis=1)))
    freq = out / n_paths
    se = math.sqrt(freq * (1 - freq) / n_paths)
    assert freq <= band_exit_bound(eps, var) + 3 * se
    assert freq > 0.75 * band_exit_bound(eps, var)


# ------------------------------------------------------------------------------ options


def test_bad_options_name_the_parameter():
    with pytest.raises(ValueError, match="method"):
        B.TTTS(method="jumps")
    with pytest.raises(ValueError, match="tolerance"):
        B.TTTS(method="blocks", tolerance=0.0)
    with pytest.raises(ValueError, match="tolerance applies to method='blocks'"):
        B.TTTS(tolerance=1e-6)
    with pytest.raises(ValueError, match="beta"):
        B.TTTS(method="blocks", beta=0.4)
    with pytest.raises(ValueError, match="indifference"):
        B.TTTS(method="blocks", indifference=True)


def test_blocks_refuse_what_they_cannot_simulate():
    with pytest.raises(ValueError, match="noise_stds: method='blocks' simulates two arms"):
        B.simulate(BLOCKS, B.GaussianPrior.standard(3), 1.0, 0.1, 2, 0)
    with pytest.raises(ValueError, match="rewards='bernoulli'"):
        B.simulate(BLOCKS, B.BetaPrior.uniform(2), None, 0.1, 2, 0)
    with pytest.raises(ValueError, match="look_every"):
        B.simulate(BLOCKS, H2, 1.0, 0.1, 2, 0, look_every=10)


def test_a_result_says_it_was_simulated_by_blocks():
    r = B.simulate(BLOCKS, H2, 1.0, 0.1, 5, 0, progress=False)
    assert r.algorithm.method == "blocks" and "method=blocks" in r.algorithm.label
    assert BLOCKS.simulates_in_law() and not B.TTTS().simulates_in_law()
    assert B.TTTS().one_trajectory and not BLOCKS.one_trajectory


def test_several_levels_are_each_a_run_at_that_level():
    many = B.simulate_deltas(BLOCKS, H2, 1.0, [0.1, 0.01], 300, 4, progress=False)
    for delta, res in many.items():
        alone = B.simulate(BLOCKS, H2, 1.0, delta, 300, 4, progress=False)
        np.testing.assert_array_equal(res.stopping_times, alone.stopping_times)


# ------------------------------------------------------------------------ reproducibility


def test_same_seed_same_runs_whatever_threads_chunks_and_shards():
    one = B.simulate(BLOCKS, H2, 1.0, 0.05, 400, 3, n_threads=1, progress=False)
    two = B.simulate(BLOCKS, H2, 1.0, 0.05, 400, 3, n_threads=2, chunk_size=7, progress=False)
    a = B.simulate(BLOCKS, H2, 1.0, 0.05, 150, 3, progress=False)
    b = B.simulate(BLOCKS, H2, 1.0, 0.05, 250, 3, first_run=150, progress=False)
    np.testing.assert_array_equal(one.stopping_times, two.stopping_times)
    np.testing.assert_array_equal(one.recommendations, two.recommendations)
    np.testing.assert_array_equal(one.stopping_times,
                                  np.concatenate([a.stopping_times, b.stopping_times]))


def test_a_raised_flag_interrupts_a_run():
    cancel = cancel_flag()
    cancel[0] = 1
    ones = np.ones(2)
    out = ttts_blocks_run(_rng.seed_state(0, 0, 1), np.array([0.0, 0.0]), ones, ones, CHERNOFF,
                          0.1, 10**9, 1e-12, cancel)
    assert out[3] == STOP_INTERRUPTED and out[1] == -1


def test_a_tie_runs_to_censoring_at_a_billion_samples_in_milliseconds():
    r = B.simulate(BLOCKS, H2, 1.0, 0.1, 20, 0, means=[0.0, 0.0], progress=False)
    censored = r.stop_reasons == "censored"
    assert censored.sum() >= 15 and (r.stopping_times[censored] == 10**9).all()


# ------------------------------------------------------------------------------ the law


def _compare(spec, prior, noise, delta, n_runs, means=None, max_samples=None):
    blocks = B.TTTS(threshold=spec.threshold, method="blocks")
    kw = dict(means=means, max_samples=max_samples, progress=False)
    a = B.simulate(spec, prior, noise, delta, n_runs, 1, **kw)
    b = B.simulate(blocks, prior, noise, delta, n_runs, 2, **kw)
    return a, b, law_p_values(a, b)



@pytest.mark.parametrize("spec, noise, delta, n_runs, means, max_samples", [
    (B.TTTS(), 1.0, 0.1, 20_000, None, 10**5),                  # Table 1's prior, censored
    (B.TTTS(), [1.0, 2.0], 0.05, 10_000, None, 10**5),           # unequal noise
    (B.TTTS(threshold="kk2021"), 1.0, 0.01, 10_000, None, 10**5),  # the proven threshold
    (B.TTTS(), 1.0, 0.1, 3_000, [0.0, 0.04], 2 * 10**5),         # a near tie
], ids=["table1", "unequal-noise", "kk2021", "near-tie"])
def test_blocks_have_the_per_sample_law(spec, noise, delta, n_runs, means, max_samples):
    a, b, p = _compare(spec, H2, noise, delta, n_runs, means, max_samples)
    assert min(p.values()) > 0.01, p
    assert errors_overlap(a, b)
    assert np.mean(a.stop_reasons == "censored") < 0.5


def test_ignoring_the_band_changes_the_law():
    """With the bound ignored (tolerance = inf) every block is skipped whole, stops due inside
    it are missed, and the tests reject the law."""
    n = 10_000
    means = H2.sample_means(2, n)
    states = _rng.seed_states(2, range(n), _rng.STREAM_ALGO)
    ones, cancel = np.ones(2), cancel_flag()
    broken = np.array([ttts_blocks_run(states[r], means[r], ones, ones, CHERNOFF, 0.1, 10**5,
                                       np.inf, cancel)[0] for r in range(n)])
    a = B.simulate(B.TTTS(), H2, 1.0, 0.1, n, 1, max_samples=10**5, progress=False)
    assert same_law(a.stopping_times, broken)["stopping_time"] < 1e-6

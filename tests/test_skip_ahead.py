"""Simulation in law by blocks (bai_lib.algorithms.skip_ahead): the bridge bound, the checks of
the options, reproducibility, and the law of the runs against the per-sample kernel."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bai_lib as B
from bai_lib import _rng
from bai_lib.algorithms.elimination import TwoArmElimination
from bai_lib.algorithms.skip_ahead import bridge_crossing_bound, elimination_blocks_run
from bai_lib.confidence import conf_log_const, indifference_round
from bai_lib.families import family_bundle
from bai_lib.kernels import STOP_INTERRUPTED, cancel_flag
from bai_lib.stats import same_law
from same_law_check import errors_overlap, law_p_values

H2 = B.GaussianPrior.standard(2)
H4 = B.GaussianPrior.standard(4)
BLOCKS = B.Elimination(method="blocks")


# --------------------------------------------------------------------- the bridge's bound


def test_bridge_bound_is_one_when_an_end_is_on_or_above_the_line():
    assert bridge_crossing_bound(0.0, 1.0, 1.0) == 1.0
    assert bridge_crossing_bound(1.0, -0.5, 1.0) == 1.0
    assert bridge_crossing_bound(2.0, 3.0, 1.0) == pytest.approx(math.exp(-12.0), rel=1e-15)


@pytest.mark.parametrize("a0, a1, var", [(1.0, 0.5, 1.0), (0.3, 1.2, 2.0), (2.0, 2.0, 9.0)])
def test_bridge_bound_is_the_crossing_probability_of_simulated_bridges(a0, a1, var):
    """Bridges on a grid of m steps cross a line less often than continuous ones, by the
    overshoot of discrete monitoring: the line shifted by 0.5826 σ √(dt) (Broadie, Glasserman and
    Kou, 1997) predicts the simulated frequency, and the closed form bounds it."""
    rng = np.random.default_rng(7)
    m, n_paths = 1000, 40_000
    hits = 0
    for _ in range(n_paths // 4000):
        steps = rng.standard_normal((4000, m)) * math.sqrt(var / m)
        walk = np.cumsum(steps, axis=1)
        s = np.arange(1, m + 1) / m
        bridge = walk - s * walk[:, -1:]  # pinned at 0 at both ends
        line = a0 + (a1 - a0) * s  # the line, with the bridge's ends at 0
        hits += int(np.count_nonzero((bridge >= line).any(axis=1)))
    freq = hits / n_paths
    se = math.sqrt(freq * (1 - freq) / n_paths)
    shift = 0.5826 * math.sqrt(var / m)
    assert abs(freq - math.exp(-2 * (a0 + shift) * (a1 + shift) / var)) < 4 * se
    assert freq <= bridge_crossing_bound(a0, a1, var) + 3 * se
    assert freq > bridge_crossing_bound(a0, a1, var) * 0.8  # the bound is close, not loose


# ------------------------------------------------------------------------------ options


def test_bad_options_name_the_parameter():
    with pytest.raises(ValueError, match="method"):
        B.Elimination(method="jumps")
    with pytest.raises(ValueError, match="tolerance"):
        B.Elimination(method="blocks", tolerance=0.0)
    with pytest.raises(ValueError, match="tolerance"):
        B.Elimination(method="blocks", tolerance=1.0)
    with pytest.raises(ValueError, match="tolerance applies to method='blocks'"):
        B.Elimination(tolerance=1e-6)
    with pytest.raises(ValueError, match="widths"):
        B.Elimination(method="blocks", widths="kl")
    with pytest.raises(ValueError, match="method"):
        TwoArmElimination(method="blocks")


def test_blocks_refuse_what_they_cannot_simulate():
    with pytest.raises(ValueError, match="rewards='bernoulli'"):
        B.simulate(BLOCKS, B.BetaPrior.uniform(2), None, 0.1, 2, 0)
    with pytest.raises(ValueError, match="noise_stds"):
        B.simulate(BLOCKS, H2, [1.0, 2.0], 0.1, 2, 0)
    with pytest.raises(ValueError, match="look_every"):
        B.simulate(BLOCKS, H2, 1.0, 0.1, 2, 0, look_every=10)
    with pytest.raises(ValueError, match="look_every/look_at"):
        B.simulate(B.NoElim(method="blocks"), H2, 1.0, 0.1, 2, 0, look_at=[10, 20])


def test_a_result_says_it_was_simulated_by_blocks():
    r = B.simulate(BLOCKS, H2, 1.0, 0.1, 5, 0, progress=False)
    assert r.algorithm.method == "blocks" and "method=blocks" in r.algorithm.label
    assert BLOCKS.simulates_in_law() and not B.Elimination().simulates_in_law()
    assert BLOCKS.two_arm_walk() is None and not BLOCKS.can_trace()


# ------------------------------------------------------------------------ reproducibility


def test_same_seed_same_runs_whatever_threads_chunks_and_shards():
    spec = B.NoElim(method="blocks", recommend="empirical_best")
    one = B.simulate(spec, H4, 1.0, 0.05, 400, 3, n_threads=1, progress=False)
    two = B.simulate(spec, H4, 1.0, 0.05, 400, 3, n_threads=2, chunk_size=7, progress=False)
    a = B.simulate(spec, H4, 1.0, 0.05, 150, 3, progress=False)
    b = B.simulate(spec, H4, 1.0, 0.05, 250, 3, first_run=150, progress=False)
    for r in (two,):
        np.testing.assert_array_equal(one.stopping_times, r.stopping_times)
        np.testing.assert_array_equal(one.recommendations, r.recommendations)
    np.testing.assert_array_equal(one.stopping_times,
                                  np.concatenate([a.stopping_times, b.stopping_times]))
    np.testing.assert_array_equal(one.stop_reasons, np.concatenate([a.stop_reasons,
                                                                    b.stop_reasons]))


def test_a_raised_flag_interrupts_a_run():
    cancel = cancel_flag()
    cancel[0] = 1
    out = elimination_blocks_run(_rng.seed_state(0, 0, 1), np.array([0.0, 0.1]), 1.0,
                                 conf_log_const(0.1, 2), 0.01, 10**9, False, False, 1e-12,
                                 family_bundle("gaussian"), cancel)
    assert out[3] == STOP_INTERRUPTED and out[1] == -1


def test_a_near_tie_at_a_millionth_runs_to_the_indifference_round():
    """A near tie at δ = 10⁻⁶ runs to the indifference round, 2n* ≈ 8×10¹⁵ samples, exactly:
    the stop's test is the rounded 2σ c(n) <= Δ0 that defines n*, whatever the means."""
    d0 = B.delta0(H2, 1e-6)
    n_star = indifference_round(1e-6, d0, 2)
    for means in ([0.0, d0 / 2], [0.7614593, 0.761459]):
        r = B.simulate(BLOCKS, H2, 1.0, 1e-6, 20, 0, means=means, max_samples=2 * n_star,
                       progress=False)
        assert (r.stop_reasons == "indifference").all()
        assert (r.stopping_times == 2 * n_star).all()


# ------------------------------------------------------------------------------ the law


def _compare(spec, prior, delta, n_runs, means=None, max_samples=None):
    blocks = type(spec)(**{f: getattr(spec, f) for f in ("delta0_factor", "recommend")},
                        method="blocks")
    a = B.simulate(spec, prior, 1.0, delta, n_runs, 1, means=means, max_samples=max_samples,
                   progress=False)
    b = B.simulate(blocks, prior, 1.0, delta, n_runs, 2, means=means, max_samples=max_samples,
                   progress=False)
    return a, b, law_p_values(a, b)



@pytest.mark.parametrize("spec, prior, delta, n_runs, means, max_samples", [
    (B.Elimination(), H2, 0.1, 20_000, None, None),                      # Table 1
    (B.Elimination(), H2, 0.1, 20_000, None, 5_000),                     # censoring
    (B.Elimination(), H2, 0.1, 3_000, [0.0, B.delta0(H2, 0.1)], None),   # a near tie
    (B.Elimination(delta0_factor=1), H4, 0.1, 10_000, None, None),
    (B.Elimination(recommend="empirical_best"), H4, 0.1, 10_000, None, None),
    (B.NoElim(delta0_factor=1, recommend="empirical_best"), H4, 0.1, 4_000, None, None),
    (B.NoElim(), H4, 0.1, 4_000, None, None),
], ids=["table1", "censored", "near-tie", "k4-factor1", "k4-best", "noelim-released",
        "noelim-printed"])
def test_blocks_have_the_per_sample_law(spec, prior, delta, n_runs, means, max_samples):
    a, b, p = _compare(spec, prior, delta, n_runs, means, max_samples)
    assert min(p.values()) > 0.01, p
    assert errors_overlap(a, b)
    if max_samples is not None:
        assert 0.02 < np.mean(a.stop_reasons == "censored") < 0.5  # the case is exercised


def test_ignoring_the_crossing_bound_changes_the_law():
    """With the bound ignored (tolerance = inf) every block is skipped whole, eliminations due
    inside it are missed, and the tests reject the law."""
    n = 20_000
    means = H2.sample_means(2, n)
    states = _rng.seed_states(2, range(n), _rng.STREAM_ALGO)
    fam, cancel = family_bundle("gaussian"), cancel_flag()
    lc, d0 = conf_log_const(0.1, 2), B.delta0(H2, 0.1)
    broken = np.array([elimination_blocks_run(states[r], means[r], 1.0, lc, d0, 10**9, False,
                                              False, np.inf, fam, cancel)[0] for r in range(n)])
    a = B.simulate(B.Elimination(), H2, 1.0, 0.1, n, 1, progress=False)
    assert same_law(a.stopping_times, broken)["stopping_time"] < 1e-6

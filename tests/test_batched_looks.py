"""simulate(..., look_every=h): the stop checked only at batch ends, for every algorithm."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import bai_lib as B
from bai_lib import _rng
from bai_lib.algorithms import (EBTC, LUCB, TTTS, TTUCB, Elimination, NoElim, PosteriorRule,
                                TrackAndStop)
from bai_lib.plan import RunPlan
from bai_lib.runcache import plan_key

GAUSS = B.GaussianPrior.standard(3)
BETA = B.BetaPrior([1, 2, 2], [1, 2, 3])
GLR = [TTTS(), TTUCB(), EBTC(), TrackAndStop()]


def _sim(spec, prior=GAUSS, n=60, h=1, seed=3, **kw):
    noise = 1.0 if isinstance(prior, B.GaussianPrior) else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", B.CensoringWarning)
        return B.simulate(spec, prior, noise, 0.1, n, seed, progress=False, look_every=h, **kw)


@pytest.mark.parametrize("spec", GLR, ids=lambda s: s.label)
@pytest.mark.parametrize("prior", [GAUSS, BETA], ids=["gaussian", "bernoulli"])
def test_glr_runs_stop_at_looks_on_the_same_trajectory(spec, prior):
    """The looks do not change a GLR algorithm's sampling, so each run stops at a multiple of
    h, no earlier than the run that looks at every sample."""
    every, batched = _sim(spec, prior), _sim(spec, prior, h=64)
    assert np.array_equal(every.means, batched.means)
    stopped = ~batched.censored
    assert np.all(batched.stopping_times[stopped] % 64 == 0)
    assert np.all(batched.stopping_times >= every.stopping_times)
    assert np.all(batched.stopping_times - every.stopping_times < 64 * 64)  # not runaway
    assert batched.look_every == 64 and every.look_every == 1


@pytest.mark.parametrize("spec", [Elimination(), NoElim()], ids=lambda s: s.label)
def test_algorithm_1_stops_at_the_end_of_a_round(spec):
    res = _sim(spec, h=50, n=100)
    for r in range(res.n_runs):
        got = res.replay(r)
        assert got["tau"] == res.stopping_times[r]
    # NoElim's rounds take every arm: its stopping times are multiples of k
    if isinstance(spec, NoElim):
        assert np.all(res.stopping_times % 3 == 0)


def test_replay_of_looked_runs_and_trace_refused():
    res = _sim(TTTS(), h=100, n=20)
    for r in range(20):
        assert res.replay(r)["tau"] == res.stopping_times[r]
    a1 = _sim(Elimination(), h=100, n=5)
    with pytest.raises(ValueError, match="trace\\(\\) replays runs that look at every round"):
        a1.trace(0)


def test_looked_runs_do_not_depend_on_threads_or_chunks():
    a = _sim(EBTC(), n=40, h=32, n_threads=1)
    b = _sim(EBTC(), n=40, h=32, n_threads=2, chunk_size=7)
    assert np.array_equal(a.stopping_times, b.stopping_times)
    assert np.array_equal(a.recommendations, b.recommendations)


def test_algorithm_1_keeps_its_bayesian_guarantee_with_daily_looks():
    """Theorem 6's Conf bounds hold at every round at once, so checking at fewer rounds keeps
    PoE <= δ: the 99.9% Clopper-Pearson upper bound of the error over 4,000 runs with looks
    every 200 samples lies below δ = 0.1, and the looks cost samples (the mean rises)."""
    every, batched = _sim(Elimination(), n=4000, h=1), _sim(Elimination(), n=4000, h=200)
    errors = int(np.count_nonzero(~batched.correct))
    upper = stats.beta.ppf(1 - 0.0005, errors + 1, 4000 - errors)
    assert upper < 0.1
    assert batched.stopping_times.mean() > every.stopping_times.mean()


def test_the_cache_key_names_the_looks_only_when_set():
    plan = RunPlan.build("ttts", GAUSS, 1.0, [0.1], 10, 1)
    assert "look_every" not in plan_key(plan)
    looked = RunPlan.build("ttts", GAUSS, 1.0, [0.1], 10, 1, look_every=24)
    assert plan_key(looked)["look_every"] == 24


@pytest.mark.parametrize("value, message", [(0, "look_every"), (1.5, "look_every"),
                                            ("daily", "look_every")])
def test_bad_look_every(value, message):
    with pytest.raises(ValueError, match=message):
        _sim(TTTS(), n=2, h=value)


@pytest.mark.parametrize("prior", [GAUSS, BETA], ids=["gaussian", "bernoulli"])
def test_lucb_stops_before_the_round_after_a_look(prior):
    """LUCB's pairs do not depend on the looks, so each run follows the trajectory of the run
    that looks at every round and stops before the first round after a look: at a multiple of
    h or one sample past it (a round is two pulls)."""
    every, batched = _sim("lucb", prior, n=80), _sim("lucb", prior, n=80, h=40)
    stopped = ~batched.censored
    assert np.all(batched.stopping_times[stopped] % 40 <= 1)
    assert np.all(batched.stopping_times >= every.stopping_times)
    assert np.array_equal(batched.recommendations[stopped & (batched.stopping_times
                                                             < every.stopping_times + 2)],
                          every.recommendations[stopped & (batched.stopping_times
                                                           < every.stopping_times + 2)])


def test_simulate_deltas_runs_each_level_with_looks():
    curve = B.simulate_deltas("ttucb", GAUSS, 1.0, [0.1, 0.01], 30, 2, progress=False,
                              look_every=16)
    for delta, res in curve.items():
        alone = B.simulate("ttucb", GAUSS, 1.0, delta, 30, 2, progress=False, look_every=16)
        assert np.array_equal(res.stopping_times, alone.stopping_times)


@pytest.mark.parametrize("spec, prior, rewards", [
    (TTTS(), BETA, "bernoulli"), (LUCB(), GAUSS, "gaussian"), (LUCB(), BETA, "bernoulli"),
    (LUCB(widths="kl"), BETA, "bernoulli")], ids=["TTTS", "LUCB-gaussian", "LUCB-bernoulli",
                                                "KL-LUCB-bernoulli"])
def test_the_engine_at_every_sample_is_the_kernel(spec, prior, rewards):
    """with_looks(1) takes the ask/tell engine's steps; they are the kernel's run for run."""
    res = _sim(spec, prior, n=40)
    noise = np.full(3, 1.0 if rewards == "gaussian" else 0.5)
    bound = spec.bind(prior, noise, [0.1], 10**9, rewards).with_looks(1, 3)
    for r in range(40):
        state = _rng.seed_state(3, r, _rng.STREAM_ALGO)
        tau, rec, _, code = bound.run_one(state, res.means[r])
        assert (tau, rec) == (res.stopping_times[r], res.recommendations[r])


def test_sweeps_and_the_command_line_take_look_every():
    from bai_lib.cell import Cell, ConfigError
    from bai_lib.cli import _parser, _run_config
    from bai_lib.simulation import run_plan
    from bai_lib.sweep import parse_sweep

    base = {"seed": 1, "runs": 10, "grid": {"algorithm": ["ttts"], "arms": [3], "delta": [0.1]}}
    (plain,) = parse_sweep(base, "test").cells
    (looked,) = parse_sweep({**base, "look_every": 50}, "test").cells
    assert "look_every" not in plain.description()  # the ids of existing cells stay
    assert looked.description()["look_every"] == 50 and looked.id != plain.id
    assert Cell.from_description(looked.description()) == looked
    (res,) = run_plan(looked.plan(0, 10), progress=False)
    assert np.all(res.stopping_times[~res.censored] % 50 == 0)
    (lucb,) = parse_sweep({**base, "look_every": 10, "max_samples": 10**5,
                           "grid": {**base["grid"], "algorithm": ["lucb"]}}, "test").cells
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", B.CensoringWarning)
        (res,) = run_plan(lucb.plan(0, 10), progress=False)
    assert np.all(res.stopping_times[~res.censored] % 10 <= 1)
    with pytest.raises(ConfigError, match="look_every"):
        parse_sweep({**base, "look_every": 0}, "test")
    args = _parser().parse_args(["run", "--algorithm", "ttts", "--arms", "3", "--delta", "0.1",
                                 "--runs", "5", "--seed", "1", "--look-every", "24",
                                 "--out", "x"])
    assert _run_config(args)["look_every"] == 24


@pytest.mark.parametrize("spec, prior", [(TTTS(), GAUSS), (Elimination(), GAUSS), (LUCB(), GAUSS),
                                         (PosteriorRule(), BETA), (EBTC(), BETA)],
                         ids=["TTTS", "Alg1", "LUCB", "posterior", "EBTC-bernoulli"])
def test_looks_at_a_regular_list_of_counts_are_looks_every_h(spec, prior):
    """look_at = [h, 2h, ...] up to max_samples is look_every = h, run for run."""
    cap = 6_000
    every = _sim(spec, prior, n=30, h=40, max_samples=cap)
    listed = _sim(spec, prior, n=30, look_at=list(range(40, cap + 1, 40)), max_samples=cap)
    assert np.array_equal(every.stopping_times, listed.stopping_times)
    assert np.array_equal(every.recommendations, listed.recommendations)
    assert listed.look_at == tuple(range(40, cap + 1, 40)) and listed.look_every == 1


def test_looks_at_given_counts_stop_only_there():
    counts = [300, 1_000, 4_000]
    glr = _sim(TTTS(), n=80, look_at=counts, max_samples=20_000)
    stopped = ~glr.censored
    assert np.all(np.isin(glr.stopping_times[stopped], counts))
    assert np.all(glr.stopping_times[glr.censored] == 20_000)  # no look after the last count
    assert stopped.any() and glr.censored.any()
    a1 = _sim(Elimination(), n=40, look_at=counts, max_samples=10**7)
    done = a1.stopping_times[~a1.censored]
    # at the end of the round that completes a look: within k - 1 samples of it
    assert np.all([any(0 <= t - c < 3 for c in counts) for t in done])
    for r in range(5):
        assert glr.replay(r)["tau"] == glr.stopping_times[r]
    with pytest.raises(ValueError, match="after 3 given numbers of samples"):
        a1.trace(0)


@pytest.mark.parametrize("bad, message", [
    ([], "non-empty"), ([0, 10], "look_at"), ([10, 10], "strictly increasing"),
    ([50, 20], "strictly increasing"), ("100", "non-empty"), ([1.5], "look_at")])
def test_bad_look_at(bad, message):
    with pytest.raises(ValueError, match=message):
        _sim(TTTS(), n=2, look_at=bad)


def test_look_at_and_look_every_are_exclusive_and_keyed_only_when_set():
    with pytest.raises(ValueError, match="look_at: give either look_at or look_every"):
        _sim(TTTS(), n=2, h=10, look_at=[100])
    plain = RunPlan.build("ttts", GAUSS, 1.0, [0.1], 5, 1)
    listed = RunPlan.build("ttts", GAUSS, 1.0, [0.1], 5, 1, look_at=[10, 20])
    assert "look_at" not in plan_key(plain) and plan_key(listed)["look_at"] == [10, 20]
    assert listed.batched and not plain.batched

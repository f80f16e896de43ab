"""The traced Algorithm 1 reproduces the compiled kernel run for run."""

import numpy as np
import pytest

from bai_lib import _rng
from bai_lib.algorithms.elimination import elimination_run
from bai_lib.families import Gaussian
from bai_lib.confidence import conf_log_const
from bai_lib.kernels import STOP_REASON_NAMES
from bai_lib.trace import trace_elimination


@pytest.mark.parametrize("run", range(12))
def test_trace_matches_kernel(run):
    rng = np.random.default_rng(run)
    k = 2 + run % 3
    mu = rng.normal(size=k)
    sigma = np.ones(k) * (0.5 + run % 2)
    delta, delta0 = 0.1, 0.05
    state = _rng.seed_state(77, run, 1)
    tr = trace_elimination(mu, sigma, delta, delta0, state)
    tau, rec, censored, reason = elimination_run(state.copy(), mu, sigma, conf_log_const(delta, k), delta0,
                                                 np.int64(10**9), False, False, False, Gaussian(), False,
                                                 np.zeros(1, np.uint8))
    assert (tr.tau, tr.recommendation, tr.stop_reason) == (int(tau), int(rec), STOP_REASON_NAMES[reason])
    assert not censored
    # bookkeeping invariants of the trace
    assert tr.t[-1] == tr.tau
    assert np.all(np.diff(tr.active.sum(axis=1)) <= 0)
    assert np.all(tr.ucb[~np.isnan(tr.ucb)] > tr.lcb[~np.isnan(tr.lcb)])


def test_trace_refuses_long_runs_and_bad_input():
    with pytest.raises(ValueError, match="max_rounds"):
        trace_elimination([0.0, 0.0], 1.0, 0.1, 1e-6, _rng.seed_state(1, 0, 1), max_rounds=100)
    with pytest.raises(ValueError, match="delta0"):
        trace_elimination([0.0, 1.0], 1.0, 0.1, -1.0, _rng.seed_state(1, 0, 1))
    with pytest.raises(ValueError, match="delta"):
        trace_elimination([0.0, 1.0], 1.0, 1.5, 0.1, _rng.seed_state(1, 0, 1))


def test_result_trace_and_replay_reproduce_the_stored_runs():
    from bai_lib import GaussianPrior, simulate

    H = GaussianPrior.standard(4)
    sim = simulate("elimination", H, 1.0, 0.3, 30, 5, progress=False)
    for r in (0, 7, 29):
        tr = sim.trace(r)
        assert (tr.tau, tr.recommendation) == (sim.stopping_times[r], sim.recommendations[r])
        assert tr.stop_reason == sim.stop_reasons[r]
    for alg in ("noelim", "ttucb", "tas", "lucb"):
        res = simulate(alg, H, 1.0, 0.3, 10, 6, max_samples=10**5, progress=False)
        rep = res.replay(9)
        assert (rep["tau"], rep["recommendation"], rep["stop_reason"]) == (
            res.stopping_times[9], res.recommendations[9], res.stop_reasons[9])
        with pytest.raises(ValueError, match="trace"):
            res.trace(0)
    with pytest.raises(ValueError, match="run"):
        sim.replay(30)
    with pytest.raises(ValueError, match="run"):
        sim.trace(-1)

"""The cost estimate (bai_lib.cost): its predictions against measured runs, its budget warning,
its lower bound, its bad input, and the command line's --estimate and --budget."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import bai_lib
from bai_lib import cli
from bai_lib.algorithms import LUCB, Elimination
from bai_lib.confidence import conf_log_term
from bai_lib.cost import CostEstimate, CostWarning, estimate_cost

# (algorithm, prior, delta, runs, max_samples): a tight conversion prior (two variants at 6%
# and 5%, each Beta with a + b = 1000), a heavy-tailed GLR algorithm (TTUCB on a standard prior
# at delta = 0.01, where a few near ties run to the cap) and Algorithm 1 on Table 1's prior.
SETTINGS = {
    "tight conversion prior": ("ttucb", bai_lib.BetaPrior([60, 50], [940, 950]), 0.1, 40, 10**6),
    "heavy-tailed GLR": ("ttucb", bai_lib.GaussianPrior([0, 0, 0], [1, 1, 1]), 0.01, 400, 10**7),
    "Algorithm 1": ("elimination", bai_lib.GaussianPrior([0, 0, 0], [1, 1, 1]), 0.1, 1000, None),
}


@pytest.mark.parametrize("name", list(SETTINGS))
def test_the_prediction_is_within_a_factor_two_of_the_measured_mean(name):
    alg, prior, delta, runs, cap = SETTINGS[name]
    noise = None if isinstance(prior, bai_lib.BetaPrior) else 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bai_lib.CensoringWarning)
        est = estimate_cost(alg, prior, noise, delta, runs, 7, max_samples=cap,
                            pilot_seconds=0.5)
        res = bai_lib.simulate(alg, prior, noise, delta, runs, 7, max_samples=cap)
    measured = float(np.mean(res.stopping_times))
    assert 0.5 <= est.samples_per_run / measured <= 2.0, (name, est, measured)
    assert not est.lower_bound
    assert est.longest_run <= (cap or math.inf)
    assert 0 < est.pilot_runs <= bai_lib.cost.PILOT_RUNS
    assert est.seconds > 0 and est.samples_per_second > 0
    assert est.total_samples == pytest.approx(est.samples_per_run * runs)


def test_a_run_over_budget_warns_before_it_starts_and_one_within_does_not():
    prior = bai_lib.GaussianPrior([0, 0, 0], [1, 1, 1])
    with pytest.warns(CostWarning, match=r"over the budget of .* predicted|predicted .* over "
                      r"the budget"):
        bai_lib.simulate("elimination", prior, 1.0, 0.1, 200, 1, budget=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CostWarning)
        bai_lib.simulate("elimination", prior, 1.0, 0.1, 200, 1, budget=3600)
        bai_lib.simulate_deltas("ttucb", prior, 1.0, [0.1, 0.01], 50, 1, budget=3600)


def test_the_budget_does_not_change_the_runs():
    prior = bai_lib.GaussianPrior([0, 0], [1, 1])
    plain = bai_lib.simulate("ttucb", prior, 1.0, 0.1, 50, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CostWarning)
        budgeted = bai_lib.simulate("ttucb", prior, 1.0, 0.1, 50, 3, budget=1e-9)
    assert np.array_equal(plain.stopping_times, budgeted.stopping_times)
    assert np.array_equal(plain.recommendations, budgeted.recommendations)


def test_when_every_pilot_run_is_censored_the_estimate_is_a_lower_bound():
    # two arms 1e-4 apart: a run needs about 1e9 samples, far beyond a pilot run
    est = estimate_cost("ttucb", None, 1.0, 0.1, 10, 1, means=[0.0, 1e-4], pilot_seconds=0.2)
    assert est.lower_bound
    assert str(est).startswith("at least ")
    assert est.samples_per_run >= bai_lib.cost.FIRST_PILOT_SAMPLES_PER_ARM * 2


def test_the_sentence_names_runs_threads_and_the_pilot():
    est = estimate_cost("elimination", bai_lib.GaussianPrior([0, 0], [1, 1]), 1.0, 0.1, 1000, 1,
                        n_threads=2, pilot_seconds=0.2)
    text = str(est)
    assert text.startswith("about ") and "1,000 runs on 2 threads" in text and "pilot:" in text
    assert isinstance(est, CostEstimate) and est.n_threads == 2


@pytest.mark.parametrize("kwargs, name", [
    ({"pilot_seconds": 0}, "pilot_seconds"), ({"pilot_seconds": "1"}, "pilot_seconds"),
    ({"pilot_seconds": 7200}, "pilot_seconds"), ({"budget": -1.0}, "budget"),
    ({"budget": float("nan")}, "budget"), ({"n_threads": 0}, "n_threads"),
    ({"n_runs": 0}, "n_runs"), ({"delta": 1.5}, "delta"),
])
def test_bad_input_is_refused_by_name(kwargs, name):
    args = {"algorithm": "elimination", "prior": bai_lib.GaussianPrior([0, 0], [1, 1]),
            "noise_stds": 1.0, "delta": 0.1, "n_runs": 10, "seed": 1, **kwargs}
    with pytest.raises(ValueError, match=name):
        estimate_cost(**args)


def test_the_exploration_levels_are_the_widths_log_terms():
    t = np.array([10.0, 1e3, 1e6])
    assert np.allclose(Elimination().exploration_level(t, 0.1, 5), conf_log_term(t / 5, 0.1, 5))
    assert np.allclose(LUCB().exploration_level(t, 0.1, 5),
                       2 * np.log(1.25 * 5 * (t / 2) ** 4 / 0.1))
    glr = bai_lib.TTUCB().exploration_level(t, 0.1, 3)
    assert np.allclose(glr, bai_lib.TTUCB().stopping_threshold(t, 0.1, 3))
    assert np.all(np.diff(glr) > 0)


def test_the_command_line_estimates_without_running(tmp_path, capsys):
    store = tmp_path / "store"
    code = cli.main(["run", "--algorithm", "elimination", "--arms", "3", "--delta", "0.1",
                     "--runs", "100", "--seed", "1", "--estimate", "--out", str(store)])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("Alg. 1 (elimination): about ")
    assert "100 runs" in out and not store.exists()


def test_the_command_line_budget_warns_and_runs(tmp_path, capsys):
    store = tmp_path / "store"
    code = cli.main(["run", "--algorithm", "elimination", "--arms", "3", "--delta", "0.1",
                     "--runs", "50", "--seed", "1", "--budget", "1e-9", "--quiet",
                     "--out", str(store)])
    captured = capsys.readouterr()
    assert code == 0 and "bai-lib run: warning: Alg. 1 (elimination): predicted about" in \
        captured.err and "over the budget" in captured.err
    assert store.exists() and "Alg. 1" in captured.out


def test_the_command_line_needs_a_store_to_run(capsys):
    code = cli.main(["run", "--algorithm", "elimination", "--arms", "3", "--delta", "0.1",
                     "--runs", "10", "--seed", "1"])
    assert code == 2 and "--out: required" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["-1", "nan", "soon", "0"])
def test_the_command_line_refuses_a_bad_budget(value, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["run", "--algorithm", "elimination", "--arms", "3", "--delta", "0.1",
                  "--runs", "10", "--seed", "1", "--budget", value, "--out", "x"])
    assert stop.value.code == 2 and "--budget" in capsys.readouterr().err


def test_the_command_line_estimates_by_default_and_off_turns_it_off(tmp_path, monkeypatch):
    calls = []
    real = bai_lib.cost.estimate_plan_cost

    def spy(plan, **kw):
        calls.append(kw["budget"])
        return real(plan, **kw)

    monkeypatch.setattr(bai_lib.cost, "estimate_plan_cost", spy)
    base = ["run", "--algorithm", "elimination", "--arms", "2", "--delta", "0.1", "--runs", "5",
            "--seed", "1", "--quiet"]
    assert cli.main([*base, "--out", str(tmp_path / "a")]) == 0
    assert cli.main([*base, "--budget", "off", "--out", str(tmp_path / "b")]) == 0
    assert calls == [cli.DEFAULT_BUDGET]


RATES = bai_lib.BetaPrior([3, 4, 5], [7, 6, 5])


@pytest.mark.parametrize("alg", [
    bai_lib.TTTS(indifference=True, beta=0.3, challenger="resample"),
    bai_lib.TTTS(beta=0.01, challenger="resample"),
    LUCB(widths="kl"),
], ids=["ttts-indifference-resample", "ttts-beta-0.01-resample", "kl-lucb"])
def test_the_slow_bernoulli_settings_are_announced_before_they_run(alg):
    """400 runs of each took many minutes without a word; the estimate says so within its
    pilot, and a budget turns it into a warning before any run."""
    with pytest.warns(CostWarning, match=r"min for 400 runs|h for 400 runs"):
        est = estimate_cost(alg, RATES, None, 0.1, 400, 1, budget=60, pilot_seconds=0.3)
    assert est.seconds > 60 and est.pilot_seconds < 0.3 + 2 * bai_lib.cost.MAX_PILOT_RUN_SECONDS
    assert "e+" not in str(est)

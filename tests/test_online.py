"""The ask/tell experiments (bai_lib.online): the same runs as the simulators, batched looks,
per-arm counts, state files, and clear refusals."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

import bai_lib as B
from bai_lib.algorithms import (LUCB, TTTS, TTUCB, EBTC, Elimination, NoElim, PosteriorRule,
                                SamplingRule, TrackAndStop)
from bai_lib.online import SCHEMA, Experiment

GAUSS = B.GaussianPrior(np.zeros(3), np.ones(3))
BETA = B.BetaPrior([1, 2, 2], [1, 2, 3])
GAMMA = B.GammaPrior([2, 2, 2], [1, 1, 1])
MEANS = {"gaussian": [0.5, 0.3, 0.0], "bernoulli": [0.7, 0.5, 0.4], "poisson": [3.0, 2.0, 1.5]}
PRIORS = {"gaussian": GAUSS, "bernoulli": BETA, "poisson": GAMMA}
NOISE = {"gaussian": 1.0, "bernoulli": None, "poisson": None}

# every algorithm with an engine, on every reward model it simulates
CASES = [(Elimination(), "gaussian"), (NoElim(), "gaussian"), (TTTS(), "gaussian"),
         (TTUCB(), "gaussian"), (EBTC(), "gaussian"), (TrackAndStop(), "gaussian"),
         (TTTS(indifference=True), "gaussian"), (EBTC(indifference=True), "gaussian"),
         (NoElim(recommend="empirical_best"), "gaussian"),
         (Elimination(), "bernoulli"), (Elimination(widths="kl"), "bernoulli"),
         (NoElim(widths="kl"), "bernoulli"), (TTTS(), "bernoulli"), (TTUCB(), "bernoulli"),
         (EBTC(), "bernoulli"), (TrackAndStop(), "bernoulli"),
         (Elimination(widths="kl"), "poisson"), (TTTS(), "poisson"), (EBTC(), "poisson"),
         (TTUCB(), "poisson"), (TrackAndStop(), "poisson"),
         (PosteriorRule(), "bernoulli"), (PosteriorRule(stop="expected_loss"), "bernoulli"),
         (PosteriorRule(stop="value_remaining", allocation="top_two", floor=0.05),
          "bernoulli"), (PosteriorRule(), "gaussian"),
         (LUCB(), "gaussian"), (LUCB(), "bernoulli"), (LUCB(widths="kl"), "bernoulli"),
         (LUCB(widths="kl"), "poisson"),
         (PosteriorRule(stop="expected_loss", allocation="top_two", floor=0.05), "gaussian")]
IDS = [f"{spec.label}-{rewards}" for spec, rewards in CASES]


def _experiment(spec, rewards, **kw):
    kw.setdefault("seed", 11)
    return Experiment(spec, PRIORS[rewards], 0.1, noise_stds=NOISE[rewards], **kw)


@pytest.mark.parametrize("spec, rewards", CASES, ids=IDS)
def test_same_runs_as_simulate(spec, rewards):
    """Driven by the rewards a simulated run draws, an experiment is that run: its stopping
    time, stop reason and recommendation, for runs 0..5 of the seed."""
    runs = 6
    ref = B.simulate(spec, PRIORS[rewards], NOISE[rewards], 0.1, runs, 11,
                     means=MEANS[rewards], progress=False)
    for r in range(runs):
        status = _experiment(spec, rewards, run=r).simulate(MEANS[rewards])
        assert status.stopped
        assert (status.samples, status.recommendation, status.reason) == (
            int(ref.stopping_times[r]), int(ref.recommendations[r]), str(ref.stop_reasons[r]))


@pytest.mark.parametrize("spec, rewards", CASES[::3], ids=IDS[::3])
def test_ask_tell_one_at_a_time_is_the_simulated_run(spec, rewards):
    """Asking one arm and recording its reward at every step: the arm asked is the simulated
    run's at every step, and the run ends where it ended."""
    sim = _experiment(spec, rewards, max_samples=4000)
    end = sim.simulate(MEANS[rewards])
    log = sim.to_dict()["log"]
    live = _experiment(spec, rewards, max_samples=4000)
    for arm, x in zip(log["arms"], log["rewards"]):
        assert live.next_arms(1).tolist() == [arm]
        status = live.record([arm], [x])
    assert status.as_dict() == end.as_dict()


def test_two_arms_follow_the_elimination_kernel():
    """On two arms too the experiment takes the elimination kernel's steps, run for run (the
    two-arm walk of the importance sampler is another stream)."""
    prior = B.GaussianPrior(np.zeros(2), np.ones(2))
    spec = Elimination()
    binding = spec.bind(prior, np.ones(2), [0.05], 10**9)
    for r in range(5):
        state = B._rng.seed_state(4, r, B._rng.STREAM_ALGO)
        tau, rec, _, code = binding.run_one(state, np.array([0.2, 0.0]))
        status = Experiment(spec, prior, 0.05, noise_stds=1.0, seed=4, run=r).simulate([0.2, 0.0])
        assert (status.samples, status.recommendation) == (tau, rec)
        assert status.reason == B.kernels.STOP_REASON_NAMES[code]


@pytest.mark.parametrize("spec", [Elimination(), NoElim(), TTTS(), EBTC()],
                         ids=lambda s: s.label)
def test_batched_looks_stop_only_at_looks(spec):
    """With looks every 50 observations a GLR algorithm stops at a multiple of 50, never before
    the run that looks at every step (the trajectory is the same: looks do not change the
    sampling); Algorithm 1 stops at the end of a round (its eliminations wait for the looks
    too, so its trajectory changes)."""
    for r in range(8):
        every = _experiment(spec, "gaussian", run=r).simulate(MEANS["gaussian"])
        batched = _experiment(spec, "gaussian", run=r).simulate(MEANS["gaussian"],
                                                                look_every=50)
        assert batched.stopped
        if isinstance(spec, Elimination):
            active = batched.counts == batched.counts.max()
            assert batched.samples == batched.counts.sum()
            assert batched.reason == "single_arm" or np.all(active | (batched.counts > 0))
        else:
            assert batched.samples % 50 == 0 and batched.samples >= every.samples


def test_record_batches_check_at_batch_ends_only():
    """A day's batch is one look: the stop is checked once, at its end."""
    sim = _experiment(TTTS(), "gaussian")
    end = sim.simulate(MEANS["gaussian"])
    log = sim.to_dict()["log"]
    arms, xs = np.array(log["arms"]), np.array(log["rewards"])
    live = _experiment(TTTS(), "gaussian")
    day = 100
    for start in range(0, arms.size + day, day):
        if live.status().stopped or start >= arms.size:
            break
        live.record(arms[start:start + day], xs[start:start + day])
    s = live.status()
    assert s.stopped and s.samples == min(arms.size, -(-end.samples // day) * day)


def test_next_arms_batch_is_the_believers_plan():
    """Before the first round ends the plan goes round the arms; afterwards a batch is the
    rule's choices with the pending pulls believed at the current means."""
    e = _experiment(EBTC(), "gaussian")
    assert e.next_arms(7).tolist() == [0, 1, 2, 0, 1, 2, 0]
    e.record([1], [0.3])
    assert e.next_arms(4).tolist() == [0, 2, 0, 1]
    e.record([0, 2], [1.0, -1.0])
    plan = e.next_arms(30)
    assert plan.size == 30 and set(plan.tolist()) <= {0, 1, 2}
    # recording the plan with its believed rewards gives the plan again, step by step
    means = e.status().means
    first = e.next_arms(1)
    assert first[0] == plan[0]
    e.record(plan[:1], means[plan[:1]])
    assert e.next_arms(1)[0] == plan[1]


def test_algorithm_1_plans_and_enforces_its_rounds():
    e = _experiment(Elimination(), "gaussian")
    assert e.next_arms(5).tolist() == [0, 1, 2, 0, 1]
    e.record([2, 0], [0.1, 0.2])
    assert e.next_arms(2).tolist() == [1, 0]
    with pytest.raises(ValueError, match=r"arms\[0\] = 2: .*rounds.*due now are \[1\]"):
        e.record([2], [0.0])
    assert e.status().samples == 2  # nothing recorded


def test_record_counts_books_the_totals():
    e = _experiment(TTTS(), "bernoulli")
    status = e.record_counts([10, 10, 10], [7, 4, 5])
    assert status.counts.tolist() == [10, 10, 10] and status.sums.tolist() == [7, 4, 5]
    with pytest.raises(ValueError, match=r"totals\[1\] must be a number of successes in 0\.\.3"):
        e.record_counts([3, 3, 3], [1, 4, 0])
    g = _experiment(EBTC(), "gaussian")
    s = g.record_counts([4, 4, 2], [2.0, -1.0, 0.5])
    np.testing.assert_allclose(s.sums, [2.0, -1.0, 0.5], rtol=1e-15)
    p = _experiment(TTTS(), "poisson")
    s = p.record_counts([3, 3, 3], [7, 2, 0])
    assert s.sums.tolist() == [7, 2, 0]
    a1 = _experiment(Elimination(), "gaussian")
    with pytest.raises(ValueError, match="rounds"):
        a1.record_counts([2, 1, 0], [0.0, 0.0, 0.0])
    assert a1.record_counts([2, 2, 2], [0.5, 0.1, 0.0]).samples == 6


def test_a_stopped_experiment_refuses_more():
    e = _experiment(TTTS(), "gaussian")
    s = e.simulate(MEANS["gaussian"])
    with pytest.raises(ValueError, match=f"stopped \\(glr\\) after {s.samples:,} observations"):
        e.record([0], [0.0])
    with pytest.raises(ValueError, match="stopped"):
        e.next_arms(3)


def test_max_samples_censors_and_bounds_records():
    e = _experiment(TTTS(), "gaussian", max_samples=40)
    with pytest.raises(ValueError, match="max_samples = 40 leaves room for 40"):
        e.record(np.zeros(41, dtype=int) % 3, np.zeros(41))
    s = e.simulate([0.0, 0.0, 0.0])
    assert s.reason == "censored" and s.samples == 40 and s.guarantee.startswith("None")
    assert e.next_arms.__doc__  # the refusal below is about the stop, not the plan
    with pytest.raises(ValueError, match="censored"):
        e.next_arms(1)


@pytest.mark.parametrize("rewards, bad, message", [
    ("gaussian", [np.nan], "rewards must be finite"),
    ("bernoulli", [0.5], "rewards of Bernoulli arms must be 0 or 1, got 0.5"),
    ("poisson", [-1.0], "Poisson arms must be non-negative integers, got -1"),
    ("poisson", [1.5], "Poisson arms must be non-negative integers, got 1.5"),
])
def test_rewards_must_fit_the_model(rewards, bad, message):
    e = _experiment(TTTS(), rewards)
    with pytest.raises(ValueError, match=message):
        e.record([0], bad)
    assert e.status().samples == 0


@pytest.mark.parametrize("arms, rewards, message", [
    ([3], [0.0], r"arms must be integers in 0\.\.2"),
    ([-1], [0.0], r"arms must be integers in 0\.\.2"),
    ([0.5], [0.0], r"arms must be integers"),
    ([0, 1], [0.0], "same non-zero length"),
    ([], [], "same non-zero length"),
    (["a"], [0.0], "arms must be integers"),
    ([0], ["x"], "rewards must be numbers"),
])
def test_bad_observations_are_refused(arms, rewards, message):
    e = _experiment(EBTC(), "gaussian")
    with pytest.raises(ValueError, match=message):
        e.record(arms, rewards)


def test_first_round_takes_each_arm_once():
    e = _experiment(TTTS(), "gaussian")
    with pytest.raises(ValueError,
                       match=r"arms\[1\] = 0: .*once first.*due now are \[1, 2\]"):
        e.record([0, 0], [0.1, 0.2])


@dataclasses.dataclass(frozen=True)
class _NoEngine(LUCB):
    """A specification of one's own with a kernel and no ask/tell engine."""

    def _bind(self, *args):
        return dataclasses.replace(super()._bind(*args), ask_tell=None)


def test_construction_errors_name_the_parameter():
    with pytest.raises(ValueError, match="k is None"):
        Experiment("ttucb", None, 0.1, noise_stds=1.0)
    with pytest.raises(ValueError, match="has no ask/tell engine"):
        Experiment(_NoEngine(), GAUSS, 0.1, noise_stds=1.0)
    with pytest.raises(ValueError, match="delta"):
        Experiment("ttts", GAUSS, 1.5, noise_stds=1.0)
    with pytest.raises(ValueError, match="k = 4 but the prior has 3 arms"):
        Experiment("ttts", GAUSS, 0.1, k=4, noise_stds=1.0)
    with pytest.raises(ValueError, match="max_samples"):
        Experiment("ttts", GAUSS, 0.1, noise_stds=1.0, max_samples=2)
    # a prior-free algorithm runs with k
    e = Experiment("ttucb", None, 0.1, k=4, noise_stds=1.0)
    assert e.next_arms(4).tolist() == [0, 1, 2, 3]


def test_guarantee_says_what_is_proven():
    assert _experiment(Elimination(), "gaussian").guarantee.startswith("Bayesian")
    assert _experiment(Elimination(delta0_factor=1.0), "gaussian").guarantee.startswith(
        "None stated")
    assert _experiment(TTTS(), "gaussian").guarantee.startswith("None proven")
    assert _experiment(TTTS(threshold="kk2021"), "gaussian").guarantee.startswith(
        "Frequentist")
    assert _experiment(TTTS(indifference=True), "gaussian").guarantee.startswith(
        "Bayesian")
    assert _experiment(TTTS(indifference=True, indifference_glr="own"),
                       "gaussian").guarantee.startswith("None stated")


# -- state files ---------------------------------------------------------------------------


def _half_run(tmp_path, spec=TTTS(), rewards="bernoulli"):
    e = _experiment(spec, rewards)
    e.record_counts([20, 20, 20], [14, 9, 8] if rewards == "bernoulli" else [5.0, 2.0, 1.0])
    path = e.save(tmp_path / "state.json")
    return e, path


@pytest.mark.parametrize("spec, rewards", [(TTTS(), "bernoulli"), (Elimination(), "gaussian"),
                                           (EBTC(indifference=True), "gaussian")],
                         ids=["ttts-bernoulli", "alg1", "ebtc-indifference"])
def test_state_round_trips_and_continues_identically(tmp_path, spec, rewards):
    e, path = _half_run(tmp_path, spec, rewards)
    back = Experiment.load(path)
    assert back.to_dict() == e.to_dict()
    means = MEANS[rewards]
    assert back.simulate(means).as_dict() == e.simulate(means).as_dict()
    assert json.loads(path.read_text())["schema"] == SCHEMA


def _broken(tmp_path, edit):
    _, path = _half_run(tmp_path)
    d = json.loads(path.read_text())
    edit(d)
    path.write_text(json.dumps(d))
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda d: d.update(schema="bai_lib.online/0"), "schema: not a bai_lib experiment state"),
    (lambda d: d["log"]["rewards"].__setitem__(0, 1.0 - d["log"]["rewards"][0]),
     "status: the stored status differs from the replay"),
    (lambda d: d["log"]["arms"].__setitem__(5, 7), r"log: arms must lie in 0\.\.2"),
    (lambda d: d["log"]["rewards"].__setitem__(5, 0.5), "log: rewards of Bernoulli arms"),
    (lambda d: d["log"]["arms"].pop(), "log: arms, rewards and looks do not fit"),
    (lambda d: d.pop("delta"), "delta: missing from the state"),
    (lambda d: d.update(algorithm={"name": "nope", "options": {}}), "algorithm: unknown"),
    (lambda d: d.update(delta=0.2), "status: the stored status differs"),
    (lambda d: d["algorithm"]["options"].update(beta=0.3), "status: the stored status differs"),
    (lambda d: d.update(prior={"type": "Cauchy"}), "prior: unknown prior description"),
], ids=["schema", "edited-reward", "arm", "reward", "lengths", "missing", "algorithm",
        "other-delta", "other-spec", "prior"])
def test_broken_state_files_are_refused(tmp_path, edit, message):
    path = _broken(tmp_path, edit)
    with pytest.raises(ValueError, match=message):
        Experiment.load(path)


def test_unreadable_state_file(tmp_path):
    _, path = _half_run(tmp_path)
    path.write_text(path.read_text()[:100])
    with pytest.raises(ValueError, match="is not a readable JSON state file"):
        Experiment.load(path)


def test_a_sampling_rule_runs_but_cannot_be_saved(tmp_path):
    from numba import njit

    @njit
    def round_robin(t, N, S, noise_stds, state):
        return t % N.size

    e = Experiment(SamplingRule(round_robin), None, 0.1, k=3, noise_stds=1.0)
    assert e.next_arms(5).tolist() == [0, 1, 2, 0, 1]
    with pytest.raises(ValueError, match="not a registered specification"):
        e.save(tmp_path / "s.json")


# -- the command line ------------------------------------------------------------------------


def _cli(capsys, *argv):
    from bai_lib.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_start_and_decide_a_conversion_test(tmp_path, capsys):
    """Start, plan day 1, record day 1 per arm, then record pulls one per row until the stop:
    the state file then gives the experiment's own status."""
    state = tmp_path / "exp.json"
    code, out, _ = _cli(capsys, "start", state, "--algorithm", "ttts", "--beta-prior", 1, 1,
                        "--arms", 3, "--delta", 0.1)
    assert code == 0 and state.exists()
    code, out, _ = _cli(capsys, "decide", state, "--next", 300)
    assert "CONTINUE after 0 observations" in out and "arm 0 x 100, arm 1 x 100, arm 2 x 100" in out
    day1 = tmp_path / "day1.csv"
    day1.write_text("arm,count,total\n0,100,31\n1,100,22\n2,100,45\n")
    code, out, _ = _cli(capsys, "decide", state, "--observations", day1, "--format", "json")
    d = json.loads(out)
    assert code == 0 and d["samples"] == 300 and d["sums"] == [31.0, 22.0, 45.0]
    exp = Experiment.load(state)
    assert exp.status().as_dict() == {k: v for k, v in d.items() if k != "next"}
    rng = np.random.default_rng(0)
    pulls = tmp_path / "pulls.csv"
    for _ in range(200):
        code, out, _ = _cli(capsys, "decide", state, "--next", 50, "--format", "json")
        d = json.loads(out)
        if d["stopped"]:
            break
        arms = np.repeat(np.arange(3), d["next"])
        xs = (rng.random(arms.size) < np.array([0.3, 0.2, 0.5])[arms]).astype(int)
        pulls.write_text("arm,reward\n" + "".join(f"{a},{x}\n" for a, x in zip(arms, xs)))
        assert _cli(capsys, "decide", state, "--observations", pulls)[0] == 0
    assert d["stopped"] and d["recommendation"] == 2
    code, out, _ = _cli(capsys, "decide", state)
    assert out.startswith("STOP (glr) after") and "recommendation: arm 2" in out


@pytest.mark.parametrize("content, message", [
    ("arms,rewards\n0,1\n", "must start with the header arm,reward or arm,count,total"),
    ("", "got an empty file"),
    ("arm,reward\n0\n", "line 2: 2 values expected, got 1"),
    ("arm,reward\nzero,1\n", "line 2: not numbers"),
    ("arm,reward\n", "has no rows"),
    ("arm,reward\n0,0.5\n", "rewards of Bernoulli arms must be 0 or 1, got 0.5"),
    ("arm,count,total\n5,10,3\n", r"arm 5 with count 10: arms are 0\.\.2"),
])
def test_cli_refuses_bad_observation_files(tmp_path, capsys, content, message):
    state = tmp_path / "exp.json"
    _cli(capsys, "start", state, "--algorithm", "ttts", "--beta-prior", 1, 1, "--arms", 3,
         "--delta", 0.1)
    before = state.read_text()
    obs = tmp_path / "obs.csv"
    obs.write_text(content)
    code, _, err = _cli(capsys, "decide", state, "--observations", obs)
    assert code == 2 and re.search(message, err) and err.count("\n") == 1
    assert state.read_text() == before


def test_cli_start_refuses_to_overwrite_and_bad_algorithms(tmp_path, capsys):
    state = tmp_path / "exp.json"
    args = ["start", state, "--algorithm", "elimination", "--arms", 3, "--delta", 0.1,
            "--noise-std", 1]
    assert _cli(capsys, *args)[0] == 0
    code, _, err = _cli(capsys, *args)
    assert code == 2 and "exists; give --force" in err
    code, _, err = _cli(capsys, "start", tmp_path / "b.json", "--algorithm", "ucb", "--arms", 3,
                        "--delta", 0.1, "--noise-std", 1)
    assert code == 2 and "ucb" in err
    code, _, err = _cli(capsys, "start", tmp_path / "c.json", "--algorithm", "ttts", "--arms", 3,
                        "--delta", 0.1, "--noise-std", 1, "--option", "bogus=1")
    assert code == 2 and "--option" in err and "bogus" in err


def test_lucb_takes_its_pair_and_names_it_when_refusing():
    e = Experiment(LUCB(), GAUSS, 0.1, noise_stds=1.0, seed=4)
    e.simulate(MEANS["gaussian"], n=9)               # round 1 and three pairs
    pair = e.next_arms(2)
    assert pair[0] != pair[1]
    other = next(a for a in range(3) if a not in pair)
    with pytest.raises(ValueError, match=rf"arms\[0\] = {other}: .*the arms due now are "
                                         rf"\[{min(pair)}, {max(pair)}\]"):
        e.record([other], [0.0])
    e.record([pair[1]], [0.0])                       # either order within the round
    with pytest.raises(ValueError, match=rf"the arms due now are \[{pair[0]}\]"):
        e.record([pair[1]], [0.0])
    e.record([pair[0]], [0.0])
    assert e.status().samples == 11

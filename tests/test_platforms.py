"""The platforms' rules under a prior: each rule bounds its own Bayesian risk on the runs it
stops when its belief is the law of the means, and the calibration picks the loosest
certified threshold."""

import warnings

import numpy as np
import pytest

import bai_lib
from bai_lib import BetaPrior, GaussianPrior, simulate
from bai_lib.algorithms import Elimination, PosteriorRule
from bai_lib.platforms import Calibration, calibrate, platform_runs, risk_summary, rule_label
from bai_lib.stats import clopper_pearson, mean_ci

LAW = BetaPrior([4.0, 4.0], [36.0, 36.0])          # two arms, rates near 10%
RUNS, SEED, LOOK, CAP = 1500, 11, 50, 20_000


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", bai_lib.CensoringWarning)
        yield


def _runs(rule, threshold, belief=None, n=RUNS, look=LOOK):
    return platform_runs(rule, threshold, LAW, n, SEED, belief=belief, look_every=look,
                         max_samples=CAP, progress=False)


def test_instances_come_from_the_law_whatever_the_belief():
    rule = PosteriorRule()
    own = _runs(rule, 0.2, n=60)
    flat = _runs(rule, 0.2, belief=BetaPrior.uniform(2), n=60)
    np.testing.assert_array_equal(own.means, LAW.sample_means(SEED, 60))
    np.testing.assert_array_equal(flat.means, own.means)
    direct = simulate(rule, LAW, None, 0.2, 60, SEED, rewards="bernoulli", look_every=LOOK,
                      max_samples=CAP, progress=False)
    np.testing.assert_array_equal(direct.stopping_times, own.stopping_times)
    np.testing.assert_array_equal(direct.recommendations, own.recommendations)


def test_a_looser_threshold_stops_no_later_run_for_run():
    """The allocation does not depend on the threshold, so on one seed the runs share their
    paths and a looser threshold can only stop at an earlier look."""
    rule = PosteriorRule()
    strict, loose = _runs(rule, 0.02, n=300), _runs(rule, 0.2, n=300)
    assert np.all(loose.stopping_times <= strict.stopping_times)
    assert np.any(loose.stopping_times < strict.stopping_times)
    assert np.all(loose.stopping_times % LOOK == 0)


@pytest.mark.parametrize("delta", [0.1, 0.3])
def test_the_probability_best_rule_bounds_its_error_on_stopped_runs(delta):
    s = risk_summary(_runs(PosteriorRule(), delta))
    stopped = 1.0 - s["censored_share"]
    assert stopped > 0.9
    assert s["error_stopped_lo"] <= delta * stopped
    assert s["error_stopped"] > 0          # the bound is not met by never erring
    assert s["error"] == pytest.approx(s["error_stopped"] + s["error_censored"])


def test_a_wrong_belief_breaks_the_bound():
    """A belief that arm 0 is far better stops at once on arm 0: its error on stopped runs is
    about one half, far above δ."""
    wrong = BetaPrior([40.0, 1.0], [60.0, 99.0])
    s = risk_summary(_runs(PosteriorRule(), 0.1, belief=wrong, n=400))
    assert s["error_stopped_lo"] > 0.1 * (1.0 - s["censored_share"])


def test_the_expected_loss_rule_bounds_the_regret_on_stopped_runs():
    eps = 0.005
    res = _runs(PosteriorRule(stop="expected_loss"), eps)
    s = risk_summary(res)
    rows = np.arange(res.n_runs)
    regret = res.means.max(axis=1) - res.means[rows, res.recommendations]
    part = regret * ~res.censored
    assert s["regret_stopped"] == pytest.approx(part.mean())
    lo, _ = mean_ci(part)
    assert 0 < s["regret_stopped"] and lo <= eps * (1.0 - s["censored_share"])
    assert s["regret_lo"] <= s["regret"] <= s["regret_hi"]


def test_the_value_remaining_rule_bounds_its_relative_regret_on_stopped_runs():
    delta, value = 0.2, 0.05
    res = _runs(PosteriorRule(stop="value_remaining", value=value), delta)
    s = risk_summary(res, value=value)
    n_rel = round(s["relative_stopped"] * res.n_runs)
    assert n_rel > 0
    assert clopper_pearson(n_rel, res.n_runs)[0] <= delta * (1.0 - s["censored_share"])


def test_risk_summary_agrees_with_the_runs():
    res = _runs(PosteriorRule(), 0.2, n=200)
    s = risk_summary(res)
    frame = res.to_frame()
    assert s["error"] == pytest.approx(1.0 - frame["correct"].mean())
    assert s["censored_share"] == pytest.approx(frame["censored"].mean())
    assert s["error_stopped"] == pytest.approx(
        np.mean(~frame["correct"] & ~frame["censored"]))
    regret = res.means.max(axis=1) - res.means[np.arange(200), res.recommendations]
    assert np.all((regret == 0) == res.correct)


def test_calibrate_returns_the_loosest_certified_threshold():
    grid = [0.3, 0.1, 0.02]
    cal = calibrate(PosteriorRule(), grid, LAW, 800, SEED, target=0.06, look_every=LOOK,
                    max_samples=CAP, progress=False)
    assert isinstance(cal, Calibration)
    assert [r["threshold"] for r in cal.rows] == grid
    ok = [r["threshold"] for r in cal.rows if r["error_hi"] <= 0.06]
    assert ok and cal.threshold == max(ok)
    assert any(r["error_hi"] > 0.06 for r in cal.rows)     # the grid brackets the target
    means = [r["avg"] for r in cal.rows]
    assert means == sorted(means)                           # stricter, longer
    strict = calibrate(PosteriorRule(), grid, LAW, 800, SEED, target=1e-4, look_every=LOOK,
                       max_samples=CAP, progress=False)
    assert strict.threshold is None


@pytest.mark.parametrize("call, name", [
    (lambda: platform_runs(Elimination(), 0.1, LAW, 10, 1), "rule"),
    (lambda: platform_runs(PosteriorRule(), 0.1, [0.5, 0.5], 10, 1), "law"),
    (lambda: platform_runs(PosteriorRule(), 0.1, LAW, 10, 1, belief=BetaPrior.uniform(3)),
     "belief"),
    (lambda: platform_runs(PosteriorRule(), 0.1, LAW, 10, 1, belief=GaussianPrior.standard(2)),
     "belief"),
    (lambda: calibrate(PosteriorRule(), [], LAW, 10, 1, target=0.05), "thresholds"),
    (lambda: calibrate(PosteriorRule(), [0.1, 1.5], LAW, 10, 1, target=0.05), "thresholds"),
    (lambda: calibrate(PosteriorRule(), [0.1], LAW, 10, 1, target=0.0), "target"),
    (lambda: rule_label(PosteriorRule(), 0.0), "threshold"),
])
def test_bad_input_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_rule_labels():
    assert rule_label(PosteriorRule(), 0.05) == "P(best) ≥ 95%"
    assert rule_label(PosteriorRule(stop="expected_loss"), 0.001) == "loss ≤ 0.1 pp"
    assert (rule_label(PosteriorRule(stop="value_remaining", allocation="top_two", floor=0.01),
                       0.05) == "value rem. 1% at 95%, top-two, floor 1%")
    assert rule_label(PosteriorRule(allocation="uniform"), 0.01) == "P(best) ≥ 99%, even split"


GAUSS_LAW = GaussianPrior([0.0, 0.0, 0.0], [1.0, 1.0, 1.0])


@pytest.mark.parametrize("stop, delta", [("probability_best", 0.1), ("expected_loss", 0.02)])
def test_gaussian_arms_keep_the_bound_with_the_right_belief_and_lose_it_with_a_wrong_one(
        stop, delta):
    rule = PosteriorRule(stop=stop)
    res = platform_runs(rule, delta, GAUSS_LAW, 1500, SEED, look_every=5, max_samples=5_000,
                        progress=False)
    s = risk_summary(res)
    stopped = 1.0 - s["censored_share"]
    if stop == "probability_best":
        assert 0 < s["error_stopped"] and s["error_stopped_lo"] <= delta * stopped
    else:
        lo, _ = mean_ci((res.means.max(axis=1) - res.means[np.arange(res.n_runs),
                                                           res.recommendations]) * ~res.censored)
        assert 0 < s["regret_stopped"] and lo <= delta * stopped
    # a belief far too sure that arm 0 is best stops on it at once
    wrong = GaussianPrior([3.0, 0.0, 0.0], [0.3, 1.0, 1.0])
    bad = risk_summary(platform_runs(rule, delta, GAUSS_LAW, 400, SEED, belief=wrong,
                                     look_every=5, max_samples=5_000, progress=False))
    if stop == "probability_best":
        assert bad["error_stopped_lo"] > delta
    else:
        assert bad["regret_lo"] > delta

"""Stopping thresholds of TTTS/TTUCB and the predicted stopping time for a gap."""

import math

import numpy as np
import pytest

from bai_lib import TTUCB, GaussianPrior, simulate
from bai_lib.stopping import gap_for_stopping_time, predicted_stopping_time, threshold, ttucb_cg


def test_thresholds_match_the_appendix_formulas():
    t, delta = 1e6, 0.1
    assert threshold("ttts", t, delta) == pytest.approx(2 * math.log(t / delta))
    x = 0.5 * math.log(1 / delta)
    expected = 2 * (x + math.log(x)) + 4 * math.log(4 + math.log(t / 2))
    assert threshold("ttucb", t, delta, rule="printed", log_term="printed") == pytest.approx(expected)
    released = 2 * (2 * (x + math.log(x)) + 4 * math.log(4 + math.log((t - 1) / 2)))
    assert threshold("ttucb", t, delta) == pytest.approx(released)
    assert threshold("ttucb", t, delta, cg="exact") > threshold("ttucb", t, delta)
    arr = threshold("ttts", np.array([10.0, 100.0]), delta)
    assert arr.shape == (2,) and arr[1] > arr[0]


@pytest.mark.parametrize("alg", ["ttts", "ttucb"])
def test_predicted_time_is_a_fixed_point_and_inverts(alg):
    gaps = np.array([1e-3, 1e-2, 0.3])
    t = predicted_stopping_time(alg, gaps, 0.05)
    assert np.allclose(t, 4 * threshold(alg, t, 0.05) / gaps**2, rtol=1e-10)
    assert np.allclose(gap_for_stopping_time(alg, t, 0.05), gaps, rtol=1e-10)
    assert np.all(np.diff(t) < 0)


@pytest.mark.parametrize("alg", ["ttts", "ttucb"])
def test_prediction_matches_simulated_median(alg):
    """On a fixed instance with gap 0.1 the median stopping time is near the caricature."""
    gap = 0.1
    H = GaussianPrior([gap, 0.0], [1e-12, 1e-12])  # a point mass: every run has this gap
    res = simulate(alg, H, 1.0, 0.1, 400, 7)
    med = float(np.median(res.stopping_times))
    pred = predicted_stopping_time(alg, gap, 0.1)
    assert 0.5 * pred < med < 1.5 * pred, (med, pred)


def test_validation():
    with pytest.raises(ValueError, match="algorithm"):
        threshold("elimination", 10.0, 0.1)
    with pytest.raises(ValueError, match="delta"):
        threshold("ttts", 10.0, 1.0)
    with pytest.raises(ValueError, match="t must"):
        threshold("ttts", 1.0, 0.1)
    with pytest.raises(ValueError, match="gap"):
        predicted_stopping_time("ttts", 0.0, 0.1)
    with pytest.raises(ValueError, match="cg"):
        ttucb_cg(1.0, "other")


def test_ttucb_released_threshold_continues_the_same_runs():
    """Same seed, same sampling path: the stricter rule can only stop later, run by run."""
    H = GaussianPrior.standard(2)
    a = simulate(TTUCB(threshold="printed"), H, 1.0, 0.1, 300, 3, max_samples=10**6)
    b = simulate("ttucb", H, 1.0, 0.1, 300, 3, max_samples=10**6)
    assert a.algorithm.threshold == "printed" and b.algorithm.threshold == "released"
    assert np.all(b.stopping_times >= a.stopping_times)
    assert np.mean(b.stopping_times > a.stopping_times) > 0.5
    with pytest.raises(ValueError, match="rule"):
        threshold("ttucb", 10.0, 0.1, rule="x")
    with pytest.raises(ValueError, match="log_term"):
        threshold("ttucb", 10.0, 0.1, log_term="x")


def test_threshold_evaluates_the_compiled_scalar_thresholds():
    """The array form of the thresholds is the simulators' compiled scalar function."""
    from bai_lib.stopping import GLR_THRESHOLDS, glr_beta, glr_level, ttucb_c, ttucb_two_cg
    t = np.array([2.0, 17.0, 1e3, 1e9])
    assert np.array_equal(threshold("ttts", t, 0.05), [2 * glr_beta(x, 0.05, 0) for x in t])
    two_cg = ttucb_two_cg(3, 0.05)
    assert np.array_equal(threshold("ttucb", t, 0.05, k=3),
                          [2 * ttucb_c(x, two_cg, 1.0) for x in t])
    for name, code in GLR_THRESHOLDS.items():
        level = glr_level(name, 0.05, 3)
        assert np.array_equal(threshold(name, t, 0.05, k=3),
                              [2 * glr_beta(x, level, code) for x in t])
    assert threshold("ttts", 100.0, 0.05) == pytest.approx(2 * math.log(100 / 0.05), rel=1e-15)


def test_a_specification_brings_its_own_threshold_conventions():
    """threshold() of a GLR specification follows its options, not the name's defaults."""
    from bai_lib import EBTC, TTTS, TrackAndStop
    t = np.array([2.0, 50.0, 1e4])
    assert np.array_equal(threshold(TTTS(), t, 0.05), threshold("ttts", t, 0.05))
    assert np.array_equal(threshold(TTUCB(), t, 0.05, k=4), threshold("ttucb", t, 0.05, k=4))
    printed = TTUCB(threshold="printed", log_term="printed", cg="exact")
    assert np.array_equal(threshold(printed, t, 0.05, k=3),
                          threshold("ttucb", t, 0.05, k=3, cg="exact", rule="printed",
                                    log_term="printed"))
    gk = 2 * np.log((np.log(t) + 1) / 0.05)
    assert np.allclose(threshold(TrackAndStop(threshold="gk2016"), t, 0.05), gk, rtol=1e-14)
    assert np.allclose(threshold(TTTS(threshold="gk2016"), t, 0.05), gk, rtol=1e-14)
    assert np.array_equal(threshold(EBTC(), t, 0.05, k=3),
                          threshold("ttucb", t, 0.05, 3, rule="released", log_term="printed"))
    assert threshold(TTTS(), 10.0, 0.1) == threshold("chernoff", 10.0, 0.1)
    # the predicted stopping time sees the options too
    assert (predicted_stopping_time(printed, 0.1, 0.05)
            < predicted_stopping_time(TTUCB(), 0.1, 0.05))
    with pytest.raises(ValueError, match="algorithm"):
        threshold("lucb", t, 0.05)

"""Conf(i,t) of Section 5 and the indifference round of Algorithm 1."""

import math

import numpy as np
import pytest

from bai_lib import GaussianPrior, delta0
from bai_lib.confidence import (conf_log_term, conf_width, failure_bound, indifference_round,
                                stopping_time_cap)


def test_conf_width_formula():
    n, s, d, k = 50, 1.7, 0.05, 3
    expected = math.sqrt(2 * s**2 * math.log(6 * n**2 / ((d**2 / (2 * k)) * math.pi**2)) / n)
    assert conf_width(n, s, d, k) == pytest.approx(expected, rel=1e-14)
    arr = conf_width(np.array([1, 10, 100]), 1.0, 0.1, 2)
    assert arr.shape == (3,) and np.all(np.diff(arr) < 0)


@pytest.mark.parametrize("k,delta,factor", [(2, 0.1, 4.0), (10, 0.01, 1.0), (10, 0.01, 4.0), (3, 0.3, 2.0)])
def test_indifference_round_is_first_round(k, delta, factor):
    d0 = delta0(GaussianPrior.standard(k), delta, factor)
    n = indifference_round(delta, d0, k)
    assert 2 * conf_width(n, 1.0, delta, k) <= d0
    assert 2 * conf_width(n - 1, 1.0, delta, k) > d0
    assert stopping_time_cap(delta, d0, k) == k * n


def test_caps_match_the_published_maxima():
    """The published maxima of Tables 1 and 2 (NoElim) equal the analytic caps."""
    H2, H10 = GaussianPrior.standard(2), GaussianPrior.standard(10)
    cap1 = stopping_time_cap(0.1, delta0(H2, 0.1), 2)
    assert f"{cap1:.2e}" == "2.35e+05"  # Table 1, Alg. 1, Max
    cap2 = stopping_time_cap(0.01, delta0(H10, 0.01, factor=1.0), 10)
    assert f"{cap2:.2e}" == "8.25e+07"  # Table 2, NoElim, Max, under Delta0 = delta / L


def test_validation():
    with pytest.raises(ValueError, match="delta"):
        conf_width(3, 1.0, 1.0, 2)
    with pytest.raises(ValueError, match="k"):
        conf_width(3, 1.0, 0.1, 1)
    with pytest.raises(ValueError, match="noise_stds"):
        conf_width(3, 0.0, 0.1, 2)
    with pytest.raises(ValueError, match="n must"):
        conf_width(0, 1.0, 0.1, 2)
    with pytest.raises(ValueError, match="delta0"):
        indifference_round(0.1, 0.0, 2)


def test_conf_log_term_is_the_log_inside_conf():
    from bai_lib.confidence import conf_log_term

    n = np.array([1, 7, 1000])
    assert np.allclose(conf_width(n, 1.3, 0.05, 4) ** 2 * n / (2 * 1.3**2), conf_log_term(n, 0.05, 4))
    assert conf_log_term(10, 0.1, 2) == pytest.approx(math.log(6 * 100 * 4 / (0.01 * math.pi**2)))


def test_common_noise_level_is_named_noise_stds_everywhere():
    """Every public function takes the noise level as ``noise_stds``; a common-σ formula accepts
    a scalar or equal entries and refuses unequal ones by name."""
    import inspect

    import bai_lib
    from bai_lib import bounds, confidence, opt2, stopping, trace

    for module in (bai_lib, bounds, confidence, opt2, stopping, trace):
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if callable(obj) and not inspect.isclass(obj):
                params = inspect.signature(obj).parameters
                assert "sigma" not in params, f"{module.__name__}.{name}"
    assert indifference_round(0.1, 0.05, 2, [1.5, 1.5]) == indifference_round(0.1, 0.05, 2, 1.5)
    with pytest.raises(ValueError, match="noise_stds must be one common level"):
        indifference_round(0.1, 0.05, 2, [1.0, 2.0])
    with pytest.raises(ValueError, match="noise_stds"):
        stopping_time_cap(0.1, 0.05, 2, "1.0")


def test_failure_bound_is_the_sum_of_the_per_round_tail_bounds():
    """exp(-t²/2) at Conf's t, summed over rounds (to 10⁶, plus the tail 1/n) and over K arms."""
    for delta, k in ((0.1, 2), (0.01, 10)):
        n = np.arange(1, 10**6 + 1, dtype=float)
        tail = math.pi**2 * delta**2 / (12 * k) / 1e6    # Σ_{n > 10⁶} of the same terms
        per_arm = np.exp(-conf_log_term(n, delta, k)).sum() + tail
        assert math.isclose(failure_bound(delta), k * per_arm, rel_tol=1e-6)
    with pytest.raises(ValueError, match="delta"):
        failure_bound(1.0)


@pytest.mark.parametrize("k, delta, d0, sigma", [(2, 0.1, 0.05, 1.0), (5, 0.01, 0.003, 0.7),
                                                 (3, 0.9, 2.0, 1.0), (10, 1e-6, 1e-2, 2.5)])
def test_indifference_round_is_the_first_round_of_the_paper_width(k, delta, d0, sigma):
    """The compiled bisection finds the round a linear scan of the printed formula finds."""
    start, chunk = 1, 2**20
    while True:  # a linear scan, in vectorised chunks, of Conf as printed in Section 5
        n = np.arange(start, start + chunk, dtype=float)
        width = np.sqrt(2 * sigma**2 * np.log(6 * n**2 / ((delta**2 / (2 * k)) * math.pi**2)) / n)
        stops = 2 * width <= d0 * (1 + 1e-12)
        if stops.any():
            first = int(n[np.argmax(stops)])
            break
        start += chunk
    assert indifference_round(delta, d0, k, sigma) in (first, first + 1)
    assert 2 * conf_width(indifference_round(delta, d0, k, sigma), sigma, delta, k) <= d0


def test_the_compiled_width_and_round_are_the_ones_checked_here():
    from bai_lib.confidence import conf_factor, conf_log_const, first_indifference_round
    lc = conf_log_const(0.05, 4)
    n = np.array([1, 2, 10, 1000, 10**9])
    assert np.array_equal(conf_width(n, 1.7, 0.05, 4), [1.7 * conf_factor(float(m), lc) for m in n])
    assert first_indifference_round(2.0, lc, 0.01) == indifference_round(0.05, 0.01, 4)
    assert first_indifference_round(2.0, lc, 1e-300) == -1     # beyond 2**62 rounds
    with pytest.raises(ValueError, match="delta0 is too small"):
        indifference_round(0.05, 1e-300, 4)

"""Gamma and Beta variates of :mod:`bai_lib._variates` and the Beta prior :func:`prior_beta_means`.

The statistical tests use fixed seeds, 20,000 draws a case and a Kolmogorov-Smirnov test
against scipy (p > 1e-3), plus moment checks within a few standard errors.
"""

import math

import numpy as np
import pytest
from scipy import stats

from bai_lib import _rng, _variates

N = 20_000
GAMMA_SHAPES = [0.01, 0.3, 1.0, 2.5, 50.0, 1e5]
BETA_PARAMS = [(0.5, 0.5), (1.0, 1.0), (2.0, 5.0), (0.02, 3.0), (20.0, 980.0),
               (3000.0, 97000.0), (1e6, 1e6)]


def _gammas(shape, seed, n=N):
    st = _rng.seed_state(seed, 0, _rng.STREAM_ALGO)
    return np.array([_variates.gamma_variate(st, shape) for _ in range(n)])


def _betas(a, b, seed, n=N):
    st = _rng.seed_state(seed, 0, _rng.STREAM_ALGO)
    return np.array([_variates.beta_variate(st, a, b) for _ in range(n)])


# --- the existing Gaussian prior stream -------------------------------------------------------

def test_prior_means_stream_unchanged():
    # Recorded from the implementation of prior_means before the Gamma/Beta code was added
    # (hexadecimal, so the comparison is bit for bit).
    recorded = [["-0x1.2c8ca3be7686ap+0", "0x1.f28038ed29c09p-2"],
                ["0x1.3f820bd337a6bp-1", "0x1.8674cdb9aa2bep+0"],
                ["0x1.d639ab85d5076p-2", "-0x1.4ace5b4b87e76p+0"]]
    expected = np.array([[float.fromhex(h) for h in row] for row in recorded])
    np.testing.assert_array_equal(_rng.prior_means([0, 0], [1, 1], 2024, 3), expected)
    # Also recorded before the change: other means, stds and a shard.
    np.testing.assert_array_equal(
        _rng.prior_means([0.5, -1, 2], [2, 0.1, 3], 7, 2, first_run=5),
        [[3.0395423942577735, -0.9871287225916435, -0.528814112609262],
         [-2.255512778042859, -1.051455480208235, 3.005076795894076]])


# --- Gamma --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", GAMMA_SHAPES)
def test_gamma_distribution(shape):
    x = _gammas(shape, seed=1000 + GAMMA_SHAPES.index(shape))
    assert np.all(np.isfinite(x)) and np.all(x >= 0)
    p = stats.kstest(x, stats.gamma(shape).cdf).pvalue
    assert p > 1e-3, (shape, p)
    # mean shape, variance shape; Var(sample variance) ~ (mu4 - sigma^4) / n = (2 k^2 + 6 k) / n
    assert abs(x.mean() - shape) < 5 * math.sqrt(shape / N), (shape, x.mean())
    assert abs(x.var() - shape) < 6 * math.sqrt((2 * shape**2 + 6 * shape) / N), (shape, x.var())


def test_gamma_small_shape_deep_tail():
    # For shape 0.3 the boost U**(1/shape) must be right far into the lower tail, where the
    # KS statistic sees nothing: compare the frequency of X < t with the Gamma cdf.
    shape = 0.3
    x = _gammas(shape, seed=77, n=4 * N)
    for t in (1e-12, 1e-6, 1e-3):
        p = stats.gamma.cdf(t, shape)
        count = np.count_nonzero(x < t)
        sd = math.sqrt(x.size * p * (1 - p))
        assert abs(count - x.size * p) < 5 * sd + 1, (t, count, x.size * p)


def test_gamma_is_deterministic_and_rejects_bad_shape():
    a, b = _rng.seed_state(3, 1, 0), _rng.seed_state(3, 1, 0)
    assert [_variates.gamma_variate(a, 0.7) for _ in range(5)] == [
        _variates.gamma_variate(b, 0.7) for _ in range(5)]
    for bad in (0.0, -1.0, math.nan):
        st = _rng.seed_state(3, 1, 0)
        before = st.copy()
        assert math.isnan(_variates.gamma_variate(st, bad))
        np.testing.assert_array_equal(st, before)  # no randomness consumed
        assert math.isnan(_variates.beta_variate(st, bad, 1.0))
        assert math.isnan(_variates.beta_variate(st, 1.0, bad))


# --- Beta ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("a, b", BETA_PARAMS)
def test_beta_distribution(a, b):
    x = _betas(a, b, seed=2000 + BETA_PARAMS.index((a, b)))
    assert np.all((x > 0) & (x < 1)), (a, b, x.min(), x.max())
    p = stats.kstest(x, stats.beta(a, b).cdf).pvalue
    assert p > 1e-3, (a, b, p)
    mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / N), (a, b, x.mean(), mean)


def test_beta_tiny_shapes_stay_strictly_inside():
    # Beta(0.01, 0.01): about 35% of the exact values lie within 2**-53 of 1 and would round to
    # 1.0; they come back as the largest double below 1, the others are exact ratios.
    x = _betas(0.01, 0.01, seed=31, n=2 * N)
    assert np.all((x > 0) & (x < 1)), (x.min(), x.max())
    top = np.count_nonzero(x == _variates._BELOW_ONE) / x.size
    expected = stats.beta.cdf(2.0**-53, 0.01, 0.01)  # P(1 - B <= 2**-53), by symmetry
    assert 0.3 < expected < 0.4
    assert abs(top - expected) < 5 * math.sqrt(expected * (1 - expected) / x.size) + 0.005
    # A KS test on all draws is meaningless here (doubles cannot resolve 1 - B below 1e-16:
    # numpy's own Beta sampler fails it the same way), but the lower half is resolved down to
    # the subnormals: KS of the draws below 1/2 against Beta(0.01, 0.01) conditioned on B < 1/2.
    low = x[x < 0.5]
    assert abs(low.size / x.size - 0.5) < 5 * math.sqrt(0.25 / x.size)
    dist = stats.beta(0.01, 0.01)
    p = stats.kstest(low, lambda t: dist.cdf(t) / dist.cdf(0.5)).pvalue
    assert p > 1e-3, p
    assert np.count_nonzero(x < 1e-300) > 0  # P(B < 1e-300) is about 5e-4, not flushed to 0


def test_beta_ratio_survives_underflow_of_both_gammas():
    # Below the tested range, a = b = 1e-3, each Gamma variate underflows to 0 about 47% of the
    # time, so X / (X + Y) formed from the values would be 0 / 0 in about a fifth of the draws;
    # the ratio from the logarithms stays a number in (0, 1), symmetric about 1/2.
    st = _rng.seed_state(8, 0, _rng.STREAM_ALGO)
    g = np.array([_variates.gamma_variate(st, 1e-3) for _ in range(2000)])
    assert 0.35 < np.mean(g == 0) < 0.6
    x = _betas(1e-3, 1e-3, seed=8, n=2000)
    assert np.all((x > 0) & (x < 1))
    assert abs(np.mean(x < 0.5) - 0.5) < 5 * math.sqrt(0.25 / x.size)


@pytest.mark.parametrize("a, b", [(2.0, 5.0), (0.3, 4.0), (3.0, 0.05)])
def test_beta_draws_x_then_y_from_the_same_state(a, b):
    s1 = _rng.seed_state(9, 4, 0)
    s2 = s1.copy()
    for _ in range(200):
        got = _variates.beta_variate(s1, a, b)
        x = _variates.gamma_variate(s2, a)
        y = _variates.gamma_variate(s2, b)
        want = min(max(x / (x + y), 5e-324), _variates._BELOW_ONE)
        if a >= 1 and b >= 1:
            assert got == want
        else:
            assert got == pytest.approx(want, rel=1e-12, abs=1e-300)
        np.testing.assert_array_equal(s1, s2)


# --- prior_beta_means ---------------------------------------------------------------------------

A = [1.0, 0.5, 3000.0]
B = [1.0, 0.5, 97000.0]


def test_prior_beta_means_rows_follow_the_prior_stream():
    out = _variates.prior_beta_means(A, B, 11, 5, first_run=3)
    assert out.shape == (5, 3) and out.dtype == np.float64
    for j in range(5):
        st = _rng.seed_state(11, 3 + j, _rng.STREAM_PRIOR)
        assert out[j].tolist() == [_variates.beta_variate(st, a, b) for a, b in zip(A, B)]
    np.testing.assert_array_equal(out, _variates.prior_beta_means(A, B, 11, 5, first_run=3))
    assert _variates.prior_beta_means(A, B, 11, 0).shape == (0, 3)


def test_prior_beta_means_shards_concatenate():
    whole = _variates.prior_beta_means(A, B, 123, 10)
    parts = np.concatenate([_variates.prior_beta_means(A, B, 123, 4),
                            _variates.prior_beta_means(A, B, 123, 6, first_run=4)])
    np.testing.assert_array_equal(whole, parts)


def test_prior_beta_means_seeds_differ():
    x = _variates.prior_beta_means(A, B, 1, 50)
    y = _variates.prior_beta_means(A, B, 2, 50)
    assert np.all(x != y)


def test_prior_beta_means_independent_runs_and_arms():
    n = N
    out = _variates.prior_beta_means([2.0, 2.0], [3.0, 3.0], 5, n)
    assert np.all((out > 0) & (out < 1))
    bound = 5 / math.sqrt(n)
    assert abs(np.corrcoef(out[:-1, 0], out[1:, 0])[0, 1]) < bound  # consecutive runs
    assert abs(np.corrcoef(out[:, 0], out[:, 1])[0, 1]) < bound    # arms of one run
    sd = math.sqrt(2 * 3 / (25 * 6) / n)
    assert np.all(np.abs(out.mean(axis=0) - 0.4) < 5 * sd)


@pytest.mark.parametrize("a, b, match", [
    ([1.0, 2.0], [1.0], "a and b must have the same length"),
    ([], [], "a must be"),
    (1.0, [1.0], "a must be"),
    ([[1.0, 2.0]], [1.0, 2.0], "a must be"),
    ([1.0, 0.0], [1.0, 1.0], "a must be"),
    ([1.0, -2.0], [1.0, 1.0], "a must be"),
    ([1.0, math.nan], [1.0, 1.0], "a must be"),
    ([1.0, math.inf], [1.0, 1.0], "a must be"),
    (["1", "2"], [1.0, 1.0], "a must be"),
    ([1.0, True], [1.0, 1.0], "a must be"),
    ([1.0, 1.0], [1.0, 0.0], "b must be"),
    ([1.0, 1.0], [1.0, math.inf], "b must be"),
    ([1.0, 1.0], [[1.0], [1.0]], "b must be"),
    ([1.0, 1.0], None, "b must be"),
])
def test_prior_beta_means_rejects_bad_shapes(a, b, match):
    with pytest.raises(ValueError, match=match):
        _variates.prior_beta_means(a, b, 1, 3)


@pytest.mark.parametrize("kwargs, match", [
    (dict(seed=-1, n_runs=3), "seed"),
    (dict(seed=1.5, n_runs=3), "seed"),
    (dict(seed=1, n_runs=-1), "n_runs"),
    (dict(seed=1, n_runs=2.0), "n_runs"),
    (dict(seed=1, n_runs=3, first_run=-1), "first_run"),
    (dict(seed=1, n_runs=3, first_run=_rng.RUN_MAX), "first_run"),
])
def test_prior_beta_means_rejects_bad_counts(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _variates.prior_beta_means([1.0], [1.0], **kwargs)

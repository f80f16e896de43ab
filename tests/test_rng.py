"""Statistical and determinism tests for :mod:`bai_lib._rng`."""

import math

import numpy as np
import pytest
from scipy import stats

from bai_lib import _rng


@pytest.fixture(scope="module")
def normals_1e7():
    out = np.empty(10**7)
    _rng.fill_normal(_rng.seed_state(12345, 0, 1), out)
    return out


def test_ziggurat_tables_have_equal_areas():
    x, f, r = _rng._ZIG_X, _rng._ZIG_F, _rng._ZIG_R
    n = _rng.ZIGGURAT_LAYERS
    v = x[0] * f[0]
    tail = math.sqrt(math.pi / 2) * math.erfc(r / math.sqrt(2))
    assert v == pytest.approx(r * math.exp(-r * r / 2) + tail, rel=1e-12)
    areas = np.array([x[i] * (f[i + 1] - f[i]) for i in range(1, n)])
    np.testing.assert_allclose(areas, v, rtol=1e-9)
    assert x[n] == 0.0 and f[n] == 1.0
    assert np.all(np.diff(x[1:]) < 0)
    # Known value of the tail start for 256 layers (Marsaglia & Tsang 2000).
    assert r == pytest.approx(3.6541528853610088, rel=1e-12)


def test_normal_moments(normals_1e7):
    z = normals_1e7
    n = z.size
    assert abs(z.mean()) < 5 / math.sqrt(n)
    assert abs(z.var() - 1.0) < 5 * math.sqrt(2.0 / n)
    m4 = np.mean(z**4)
    assert abs(m4 - 3.0) < 5 * math.sqrt(96.0 / n)
    m3 = np.mean(z**3)
    assert abs(m3) < 5 * math.sqrt(15.0 / n)


def test_normal_tail_probabilities(normals_1e7):
    z = np.abs(normals_1e7)
    n = z.size
    for level in (2.0, 3.5, _rng._ZIG_R, 4.5):
        p = 2 * stats.norm.sf(level)
        count = np.count_nonzero(z > level)
        sd = math.sqrt(n * p * (1 - p))
        assert abs(count - n * p) < 5 * sd + 1, (level, count, n * p)


def test_normal_binned_density(normals_1e7):
    # Chi-square over 400 equiprobable bins: sensitive to wedge/table errors.
    edges = stats.norm.ppf(np.linspace(0, 1, 401))
    counts = np.histogram(normals_1e7, bins=edges)[0]
    expected = normals_1e7.size / 400
    chi2 = np.sum((counts - expected) ** 2 / expected)
    assert stats.chi2.sf(chi2, 399) > 1e-3


def test_normal_ks():
    out = np.empty(10**6)
    _rng.fill_normal(_rng.seed_state(7, 3, 1), out)
    assert stats.kstest(out, "norm").pvalue > 1e-3


def test_normal_tail_sampler_is_truncated_normal():
    r = _rng._ZIG_R
    st = _rng.seed_state(99, 0, 1)
    draws = np.array([_rng._normal_tail(st) for _ in range(20000)])
    assert draws.min() > r
    cdf = lambda x: 1 - stats.norm.sf(x) / stats.norm.sf(r)  # noqa: E731
    assert stats.kstest(draws, cdf).pvalue > 1e-3


def test_normal_symmetric_and_layers_used(normals_1e7):
    z = normals_1e7
    n = z.size
    pos = np.count_nonzero(z > 0)
    assert abs(pos - n / 2) < 5 * math.sqrt(n / 4)
    assert z.max() > 4.5 and z.min() < -4.5


def test_uniform_range_and_distribution():
    out = np.empty(10**6)
    _rng.fill_uniform(_rng.seed_state(5, 0, 1), out)
    assert out.min() >= 0.0 and out.max() < 1.0
    assert abs(out.mean() - 0.5) < 5 * math.sqrt(1 / 12 / out.size)
    assert stats.kstest(out, "uniform").pvalue > 1e-3
    # 53-bit resolution: values are multiples of 2**-53
    assert np.all(out * 2.0**53 == np.floor(out * 2.0**53))


def test_open_uniform_excludes_zero():
    st = np.zeros(4, dtype=np.uint64)
    st[0] = 1  # a valid (non-zero) state
    vals = [_rng.uniform_positive(st) for _ in range(1000)]
    assert min(vals) > 0.0 and max(vals) <= 1.0


def test_seed_state_deterministic_and_streams_differ():
    a = _rng.seed_state(2024, 5, 1)
    b = _rng.seed_state(2024, 5, 1)
    assert a.dtype == np.uint64 and a.shape == (4,)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, _reference_state(2024, 5, 1))
    others = [
        _rng.seed_state(2024, 5, 0),
        _rng.seed_state(2024, 6, 1),
        _rng.seed_state(2025, 5, 1),
    ]
    for o in others:
        assert not np.array_equal(a, o)
    ua = np.empty(100, dtype=np.uint64)
    ub = np.empty(100, dtype=np.uint64)
    _rng.fill_u64(a.copy(), ua)
    _rng.fill_u64(b.copy(), ub)
    np.testing.assert_array_equal(ua, ub)
    uc = np.empty(100, dtype=np.uint64)
    _rng.fill_u64(others[0].copy(), uc)
    assert np.count_nonzero(ua == uc) == 0


_M64 = (1 << 64) - 1


def _reference_mix(z):
    # SplitMix64's output function, written from its published definition with Python ints.
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _reference_state(seed, run, stream):
    g = 0x9E3779B97F4A7C15
    key = _reference_mix((_reference_mix((seed + g) & _M64) + (stream + 1) * 0xD1B54A32D192ED03)
                         & _M64)
    return np.array([_reference_mix((key + (4 * run + w + 1) * g) & _M64) for w in range(4)],
                     dtype=np.uint64)


def test_splitmix64_reference_value():
    # The first output of SplitMix64 seeded with 0 is 0xE220A8397B1DCDAF (Vigna's reference code).
    assert _reference_mix(0x9E3779B97F4A7C15) == 0xE220A8397B1DCDAF
    assert int(_rng._mix64(np.uint64(0x9E3779B97F4A7C15))) == 0xE220A8397B1DCDAF


@pytest.mark.parametrize("seed,run,stream", [(0, 0, 0), (2024, 999, 1), (2**64 - 1, 2**62 - 1, 7),
                                             (123456789, 31, 0)])
def test_seed_state_matches_the_documented_derivation(seed, run, stream):
    np.testing.assert_array_equal(_rng.seed_state(seed, run, stream),
                                  _reference_state(seed, run, stream))


def test_seed_states_are_the_stacked_seed_state_whatever_the_range():
    block = _rng.seed_states(77, range(10, 60), 1)
    listed = _rng.seed_states(77, [59, 10, 33], 1)
    for j, r in enumerate(range(10, 60)):
        np.testing.assert_array_equal(block[j], _rng.seed_state(77, r, 1))
    np.testing.assert_array_equal(listed, block[[49, 0, 23]])
    # a shard of runs gives the rows of the whole range
    np.testing.assert_array_equal(_rng.seed_states(77, range(0, 60), 1)[10:], block)


def _first_uniforms(seed, runs, stream, n=1):
    states = _rng.seed_states(seed, runs, stream)
    out = np.empty((len(states), n))
    for j, st in enumerate(states):
        _rng.fill_uniform(st, out[j])
    return out


def test_neighbouring_runs_are_independent():
    # First uniform of runs 0..N-1 is uniform (KS), and (u_r, u_{r+1}) fills the unit square
    # evenly (chi-square on a 16 x 16 grid), for both streams; the correlation between the
    # first 64 normals of run r and of run r + 1 is within its sampling error.
    n = 200_000
    for stream in (0, 1):
        u = _first_uniforms(99, range(n), stream)[:, 0]
        assert stats.kstest(u, "uniform").pvalue > 1e-3
        cells = (np.floor(u[:-1] * 16) * 16 + np.floor(u[1:] * 16)).astype(int)
        counts = np.bincount(cells, minlength=256)
        assert stats.chisquare(counts).pvalue > 1e-3
    z = np.empty((2000, 64))
    for j, st in enumerate(_rng.seed_states(5, range(2000), 1)):
        _rng.fill_normal(st, z[j])
    r = np.array([np.corrcoef(z[j], z[j + 1])[0, 1] for j in range(1999)])
    # mean of 1999 correlations of 64 iid pairs: sd ~ 1/sqrt(63 * 1999)
    assert abs(r.mean()) < 4 / math.sqrt(63 * 1999)
    assert stats.kstest(np.arctanh(r) * math.sqrt(61), "norm").pvalue > 1e-3


def test_streams_of_one_run_are_independent():
    # Stream 0 (prior) against stream 1 (rewards) of the same runs: the first uniforms are
    # uncorrelated and jointly uniform; the state words share no bits beyond chance.
    n = 200_000
    u0 = _first_uniforms(2024, range(n), 0)[:, 0]
    u1 = _first_uniforms(2024, range(n), 1)[:, 0]
    assert abs(np.corrcoef(u0, u1)[0, 1]) < 4 / math.sqrt(n)
    cells = (np.floor(u0 * 16) * 16 + np.floor(u1 * 16)).astype(int)
    assert stats.chisquare(np.bincount(cells, minlength=256)).pvalue > 1e-3
    a = _rng.seed_states(2024, range(20_000), 0)
    b = _rng.seed_states(2024, range(20_000), 1)
    same_bits = np.unpackbits((~(a ^ b)).view(np.uint8)).mean()
    assert abs(same_bits - 0.5) < 4 * 0.5 / math.sqrt(a.size * 64)


def test_neighbouring_seeds_give_unrelated_draws():
    n = 100_000
    u = np.stack([_first_uniforms(s, range(n), 1)[:, 0] for s in (0, 1, 2)])
    for i, j in ((0, 1), (1, 2), (0, 2)):
        assert abs(np.corrcoef(u[i], u[j])[0, 1]) < 4 / math.sqrt(n)
    assert len(np.unique(_rng.seed_states(0, range(n), 1)[:, 0])) == n


def test_seed_state_rejects_bad_input():
    with pytest.raises(ValueError, match="seed"):
        _rng.seed_state(2**64, 0, 0)
    with pytest.raises(ValueError, match="run"):
        _rng.seed_state(0, 2**62, 0)
    with pytest.raises(ValueError, match="seed"):
        _rng.seed_state(-1, 0, 0)
    with pytest.raises(ValueError, match="run"):
        _rng.seed_state(0, 1.5, 0)
    with pytest.raises(ValueError, match="stream"):
        _rng.seed_state(0, 0, True)


def test_xoshiro_reference_values():
    # xoshiro256++ from state (1, 2, 3, 4): first outputs computed by hand
    # from the published recurrence.
    def ref(state, n):
        mask = (1 << 64) - 1
        s = list(state)
        out = []
        for _ in range(n):
            a = (s[0] + s[3]) & mask
            res = ((((a << 23) | (a >> 41)) & mask) + s[0]) & mask
            t = (s[1] << 17) & mask
            s[2] ^= s[0]
            s[3] ^= s[1]
            s[1] ^= s[2]
            s[0] ^= s[3]
            s[2] ^= t
            s[3] = ((s[3] << 45) | (s[3] >> 19)) & mask
            out.append(res)
        return out

    st = np.array([1, 2, 3, 4], dtype=np.uint64)
    got = np.empty(50, dtype=np.uint64)
    _rng.fill_u64(st, got)
    assert [int(v) for v in got] == ref([1, 2, 3, 4], 50)
    assert int(got[0]) == 41943041


def test_prior_means_rows_match_streams():
    means = np.array([0.5, -1.0, 2.0])
    stds = np.array([1.0, 0.5, 2.0])
    out = _rng.prior_means(means, stds, 11, 4)
    assert out.shape == (4, 3)
    for r in range(4):
        z = np.empty(3)
        _rng.fill_normal(_rng.seed_state(11, r, _rng.STREAM_PRIOR), z)
        np.testing.assert_array_equal(out[r], means + stds * z)
    again = _rng.prior_means(means, stds, 11, 6)
    np.testing.assert_array_equal(again[:4], out)


def test_fill_normal_equals_successive_std_normal():
    s1 = _rng.seed_state(3, 1, 1)
    s2 = s1.copy()
    a = np.empty(20000)
    _rng.fill_normal(s1, a)
    b = np.array([_rng.std_normal(s2) for _ in range(a.size)])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(s1, s2)

"""TTTS's exact challenger (bai_lib.algorithms.challenger): Russo's rule, the argmax of a
posterior draw given that it differs from the leader, sampled without a rejection loop.

Checked in law against re-drawing the posterior (chi-square on challenger frequencies) where
re-drawing is feasible, against the probabilities computed by quadrature where the posterior is
too concentrated for it, and through whole runs against the capped re-drawing rule (KS)."""

import math

import numpy as np
import pytest
from numba import njit
from scipy import integrate, special, stats

from bai_lib import GaussianPrior, TTTS, _rng, simulate
from bai_lib.algorithms import challenger as ch


@njit
def _challengers(state, pmean, psd, leader, n, zb, meta, pw, zs, cum, dirty):
    out = np.empty(n, dtype=np.int64)
    for r in range(n):
        out[r] = ch.exact_challenger(state, pmean, psd, leader, zb, meta, pw, zs, cum,
                                       dirty)[0]
        meta[2] = r % 3 == 0  # the leader "sampled" now and then: weights recomputed whole
    return out


def _exact(pmean, psd, leader, n, seed=5):
    pmean, psd = np.asarray(pmean, float), np.asarray(psd, float)
    return _challengers(_rng.seed_state(seed, 0, 1), pmean, psd, leader, n,
                        *ch.challenger_workspace(pmean.size))


def _argmax_probabilities(pmean, psd):
    """P(argmax θ = j) = ∫ φ_j(x) Π_{l≠j} Φ_l(x) dx, by quadrature around each arm."""
    out = []
    for j in range(len(pmean)):
        def f(x):
            logs = stats.norm.logcdf(x, pmean, psd)
            return math.exp(stats.norm.logpdf(x, pmean[j], psd[j]) + logs.sum() - logs[j])
        lo, hi = pmean[j] - 12 * psd[j], pmean[j] + 12 * psd[j]
        out.append(integrate.quad(f, lo, hi, points=list(pmean[(pmean > lo) & (pmean < hi)]),
                                  limit=400, epsabs=0, epsrel=1e-10)[0])
    return np.array(out)


def _chi2_pvalue(draws, probs, leader):
    others = [j for j in range(probs.size) if j != leader]
    p = probs[others] / probs[others].sum()
    counts = np.bincount(draws, minlength=probs.size)[others]
    assert counts.sum() == draws.size  # never the leader
    keep = p * draws.size >= 5  # chi-square cells need counts; the rest must be (near) empty
    assert counts[~keep].sum() <= 5 + 5 * p[~keep].sum() * draws.size
    expected = np.append(p[keep], p[~keep].sum()) * draws.size
    observed = np.append(counts[keep], counts[~keep].sum())
    if expected[-1] == 0:
        expected, observed = expected[:-1], observed[:-1]
    return stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue


POSTERIORS = {
    "leader not the best mean": ([0.0, 0.3, 0.2, -0.1, 0.25], [0.3, 0.2, 0.4, 0.5, 0.1], 2),
    "uneven widths": ([1.0, 0.5, 0.9, -0.3, 0.0], [0.2, 0.4, 0.3, 0.8, 1.0], 0),
}


@pytest.mark.parametrize("name", sorted(POSTERIORS))
def test_exact_challenger_matches_redrawing_the_posterior(name):
    pmean, psd, leader = POSTERIORS[name]
    n = 60_000
    ours = _exact(pmean, psd, leader, n)
    rng = np.random.default_rng(11)
    draws = rng.normal(pmean, psd, size=(6 * n, len(pmean))).argmax(axis=1)
    ref = draws[draws != leader][:n]
    assert ref.size == n
    table = np.array([np.bincount(ours, minlength=len(pmean)),
                      np.bincount(ref, minlength=len(pmean))])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-3
    # and both agree with the probabilities computed by quadrature
    probs = _argmax_probabilities(np.array(pmean, float), np.array(psd, float))
    assert _chi2_pvalue(ours, probs, leader) > 1e-3


def test_exact_challenger_is_exact_where_redrawing_would_need_millions_of_draws():
    """A concentrated posterior: a draw's argmax differs from the leader with probability about
    3e-3, so the capped re-drawing rule often falls back to a deterministic arm."""
    pmean = np.array([1.0, 0.9, 0.85, 0.5, 0.0, 0.95])
    psd = np.array([0.02, 0.03, 0.025, 0.05, 0.1, 0.004])
    probs = _argmax_probabilities(pmean, psd)
    assert 1e-4 < 1 - probs[0] < 1e-2
    ours = _exact(pmean, psd, 0, 100_000)
    assert _chi2_pvalue(ours, probs, 0) > 1e-3
    assert {1, 2, 5} <= set(ours.tolist()) and 4 not in ours  # arm 4: p ~ 1e-20


def test_exact_challenger_in_the_far_tail_uses_logs():
    """Every z below -37: Φ underflows in linear scale; the weights are taken in logs."""
    pmean = np.array([0.0, -1.0, -1.0003, -3.0])
    psd = np.full(4, 0.015)
    z = (pmean[1:] - pmean[0]) / np.hypot(psd[1:], psd[0])
    assert (z < -37).all()
    ours = _exact(pmean, psd, 0, 20_000)
    lp = special.log_ndtr(z)  # the law, up to the correction for more than one arm above
    p = np.exp(lp - lp.max())
    assert 0.3 < p[1] / p.sum() < 0.45  # two arms of comparable weight, a third negligible
    assert set(ours.tolist()) <= {1, 2} and abs((ours == 2).mean() - p[1] / p.sum()) < 0.015


@pytest.mark.parametrize("a", [-1.0, 0.0, 0.29, 0.31, 2.0, 12.0])
def test_std_normal_above_is_the_truncated_normal(a):
    zb, meta = ch.challenger_workspace(2)[:2]

    @njit
    def draw(state, n, zb, meta):
        out = np.empty(n)
        for i in range(n):
            out[i] = ch.std_normal_above(state, zb, meta, a)
        return out

    x = draw(_rng.seed_state(3, 0, 1), 20_000, zb, meta)
    assert (x > a).all()
    assert stats.kstest(x, stats.truncnorm(a, np.inf).cdf).pvalue > 1e-3


def test_log_ndtr_matches_scipy_across_the_lower_tail():
    z = np.concatenate([np.linspace(-300, -25, 400), np.linspace(-25, 8, 400)])
    ours = np.array([ch.log_ndtr(x) for x in z])
    np.testing.assert_allclose(ours, special.log_ndtr(z), rtol=1e-13, atol=1e-300)


def test_exact_and_capped_redrawing_give_the_same_stopping_times():
    """Whole runs on a fixed instance: the exact rule against the capped re-drawing rule it
    replaces as default (KS on τ, and the error rates)."""
    mu = np.array([1.0, 0.8, 0.6, 0.4, 0.2])
    H = GaussianPrior.standard(5)
    runs = {c: simulate(TTTS(challenger=c), H, 1.0, 0.01, 400, 8, means=mu, progress=False)
            for c in ("exact", "resample")}
    a, b = (runs[c].stopping_times for c in ("exact", "resample"))
    assert stats.ks_2samp(a, b).pvalue > 1e-3
    assert runs["exact"].error_rate <= 0.01 and runs["resample"].error_rate <= 0.01


def test_a_buffer_holds_a_whole_step_at_any_number_of_arms():
    """A step takes 2k normals at once (leader and plain draw): 10,000 arms need more than the
    default buffer of 1024 (reads past its end went unchecked in compiled code)."""
    for k in (3, 600, 10_000):
        zb, meta = ch.challenger_workspace(k)[:2]
        assert zb.size >= 2 * k + 2 and meta[ch.Z_POS] == zb.size  # empty: filled on use
    res = simulate(TTTS(), GaussianPrior.standard(700), 1.0, 0.1, 2, 3, max_samples=3000,
                   means=np.r_[1.0, np.zeros(699)], progress=False)
    assert (res.stopping_times <= 3000).all()


def test_the_exact_rule_is_the_default_and_lifts_the_ten_million_cap():
    """The default (``None``) is the exact rule on Gaussian arms, where ``"normal"`` is the same
    rule (the posterior is normal), run for run."""
    H = GaussianPrior.standard(4)
    runs = [simulate(TTTS(challenger=c), H, 1.0, 0.1, 30, 4) for c in (None, "exact", "normal")]
    for other in runs[1:]:
        assert np.array_equal(runs[0].stopping_times, other.stopping_times)
        assert np.array_equal(runs[0].recommendations, other.recommendations)
    assert TTTS().default_max_samples(10) == 10**9
    assert TTTS(challenger="normal").default_max_samples(10) == 10**9
    assert TTTS(challenger="resample").default_max_samples(10) == 10**7
    with pytest.raises(ValueError, match="challenger"):
        TTTS(challenger="first")


def test_cached_weights_are_refreshed_for_the_arms_marked_dirty():
    """The weights of the leader are cached between calls; an arm whose posterior moved is
    recomputed when marked (the kernel marks every sampled arm), giving exactly what fresh
    weights give for the same random stream."""
    pmean = np.array([1.0, 0.7, 0.8, 0.6])
    psd = np.array([0.1, 0.2, 0.15, 0.3])

    def run(mark, fresh):
        work = ch.challenger_workspace(4)
        state = _rng.seed_state(9, 0, 1)
        ch.exact_challenger(state, pmean, psd, 0, *work)  # caches the weights of leader 0
        moved = pmean.copy()
        moved[3] = 0.95  # arm 3 moves up: its weight grows about tenfold
        if fresh:
            work[1][1] = -1  # no cached weights (the normal buffer stays as it is)
        elif mark:
            work[5][3] = 1
        return [ch.exact_challenger(state, moved, psd, 0, *work)[0] for _ in range(2000)]

    assert run(mark=True, fresh=False) == run(mark=False, fresh=True)
    assert run(mark=False, fresh=False) != run(mark=False, fresh=True)  # stale without the mark

"""TTTS's default challenger on Bernoulli and Poisson arms with k > 2: one plain draw of the Beta
or Gamma posterior, then Russo's challenger under a normal approximation of the posteriors
(``bai_lib.families.family.posterior_normal``), sampled by the union sampler of the Gaussian rule.

The approximation is checked where it acts, on the law of the challenger at given posteriors
(Russo's law computed by quadrature), and the rule on whole runs, against the re-drawing rule
and for the guarantee."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from bai_lib import TTTS, BetaPrior, GammaPrior, simulate
from bai_lib.families.bernoulli import Bernoulli
from bai_lib.families.bernoulli import posterior_normal as beta_normal
from bai_lib.families.poisson import Poisson
from bai_lib.families.poisson import posterior_moments as gamma_moments
from bai_lib.families.poisson import posterior_normal as gamma_normal
from bai_lib.stats import clopper_pearson


def challenger_law(dists, leader):
    """``P(argmax θ = j | argmax θ ≠ leader)`` for independent ``θ_i ~ dists[i]`` (frozen scipy
    distributions), by quadrature of ``∫ f_j Π_{i≠j} F_i``."""
    k = len(dists)
    p = np.zeros(k)
    for j in range(k):
        if j == leader:
            continue
        pts = sorted({float(d.ppf(q)) for d in dists for q in (1e-12, 1e-3, 0.5, 0.999, 1 - 1e-12)})
        p[j] = integrate.quad(lambda x: dists[j].pdf(x) * math.prod(
            float(dists[i].cdf(x)) for i in range(k) if i != j), pts[0], pts[-1], points=pts[1:-1],
            limit=400, epsabs=1e-14)[0]
    return p / p.sum()


def tv_to_russo(exact, normal, shapes, leader=0):
    """Total variation between Russo's challenger law under the posteriors ``exact(A, B)`` and
    under the normal approximations ``normal(A, B) -> (center, scale)``."""
    russo = challenger_law([exact(A, B) for A, B in shapes], leader)
    approx = challenger_law([stats.norm(*normal(A, B)) for A, B in shapes], leader)
    return 0.5 * float(np.abs(russo - approx).sum())


#: Pull counts of the three arms along a run: even early on, then the leader ahead and the
#: lowest arm starved, where the posteriors of few pulls are skewed.
COUNTS = [(3, 3, 3), (10, 10, 10), (30, 30, 30), (100, 60, 3), (50, 30, 2), (200, 100, 5),
          (400, 200, 10)]


def _beta_shapes(n):
    s = np.round(np.array([0.6, 0.5, 0.45]) * n)
    return [(1.0 + a, 1.0 + m - a) for a, m in zip(s, n)]


def _gamma_shapes(n):
    s = np.round(np.array([3.0, 2.0, 1.5]) * n)
    return [(1.0 + a, 1.0 + m) for a, m in zip(s, n)]


@pytest.mark.parametrize("counts", COUNTS, ids=["-".join(map(str, c)) for c in COUNTS])
def test_the_normal_challenger_is_close_to_russos_law(counts):
    """At posteriors a run passes through (uniform priors; Bernoulli rates 0.6, 0.5, 0.45 and
    Poisson means 3, 2, 1.5, the counts rounded), the challenger's law under the approximation is
    within 0.03 (Beta, moments on the natural scale) and 0.002 (Gamma, Wilson-Hilferty's cube
    root) in total variation of Russo's. The rule's law is a mixture of Russo's (when its plain
    draw differs from the leader) and this one, so it is at least as close."""
    n = np.array(counts, dtype=float)
    beta = tv_to_russo(lambda A, B: stats.beta(A, B),
                       lambda A, B: beta_normal(Bernoulli(), A, B), _beta_shapes(n))
    gamma = tv_to_russo(lambda A, B: stats.gamma(A, scale=1.0 / B),
                        lambda A, B: gamma_normal(Poisson(), A, B), _gamma_shapes(n))
    assert beta <= 0.03, beta
    assert gamma <= 0.002, gamma


def test_the_check_sees_the_skew_of_gamma_posteriors():
    """The same check fails for the normal law with the Gamma posterior's own mean and variance
    (no cube root), which misses the right skew of a starved arm: the reason for the scale."""
    shapes = _gamma_shapes(np.array([50.0, 30.0, 2.0]))
    moments = tv_to_russo(lambda A, B: stats.gamma(A, scale=1.0 / B),
                          lambda A, B: (gamma_moments(Poisson(), A, B)[0],
                                        math.sqrt(gamma_moments(Poisson(), A, B)[1])), shapes)
    assert moments > 0.05, moments


def test_on_three_bernoulli_arms_the_runs_match_the_redrawing_rule_in_distribution():
    """Rates 0.7, 0.5, 0.4, uniform priors, δ = 0.1: 2,000 runs of the default rule against
    2,000 of the re-drawing rule (independent seeds; its cap of a hundred draws seldom binds
    here): two-sample KS on the stopping times at p > 0.01; the released rule, which starves
    the lowest arm, is told apart (p < 10⁻⁶), so the test has the power to see a different
    challenger."""
    H, mu = BetaPrior([1.0] * 3, [1.0] * 3), [0.7, 0.5, 0.4]
    runs = {ch: simulate(TTTS(challenger=ch), H, None, 0.1, 2000, seed, means=mu)
            for ch, seed in ((None, 11), ("resample", 12), ("released", 13))}
    assert not any(r.censored.any() for r in runs.values())
    same = stats.ks_2samp(runs[None].stopping_times, runs["resample"].stopping_times).pvalue
    other = stats.ks_2samp(runs["released"].stopping_times, runs["resample"].stopping_times).pvalue
    assert same > 0.01, same
    assert other < 1e-6, other


@pytest.mark.filterwarnings("ignore::bai_lib.CensoringWarning")
@pytest.mark.parametrize("prior", [BetaPrior([1.0, 2.0, 2.0], [1.0, 2.0, 3.0]),
                                   GammaPrior([2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0])],
                         ids=["beta-3", "gamma-4"])
def test_the_default_runs_any_k_and_errs_below_delta(prior):
    """Under the prior (instances drawn from it, near ties included), 1,000 runs at δ = 0.1 with
    a cap of 2×10⁵: the 99.9% Clopper-Pearson upper end of the Bayesian error is below δ and at
    most 5% of the runs reach the cap (on the Beta prior at δ = 0.01 and a cap of 2×10⁶ the
    re-drawing rule censors as many as the default, 1.35%, the released rule 22%)."""
    res = simulate(TTTS(), prior, None, 0.1, 1000, 21, max_samples=2 * 10**5)
    errors = int(np.count_nonzero(~res.correct))
    assert clopper_pearson(errors, 1000, 0.999)[1] < 0.1, errors
    assert res.censored.mean() <= 0.05, res.censored.mean()
    assert set(res.stop_reasons) <= {"glr", "censored"}


@pytest.mark.filterwarnings("ignore::bai_lib.CensoringWarning")
def test_the_default_does_not_depend_on_threads_or_chunks():
    H = BetaPrior([1.0, 2.0, 2.0], [1.0, 2.0, 3.0])
    one = simulate(TTTS(), H, None, 0.2, 60, 5, n_threads=1, max_samples=10**5)
    two = simulate(TTTS(), H, None, 0.2, 60, 5, n_threads=2, chunk_size=7, max_samples=10**5)
    assert np.array_equal(one.stopping_times, two.stopping_times)
    assert np.array_equal(one.recommendations, two.recommendations)

"""Poisson arms with Gamma priors: the reward draw, the family's plumbing, the guarantee under a
Gamma prior, and bad input refused by name."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtr

from bai_lib import TTUCB, Elimination, LUCB, NoElim, TTTS, TrackAndStop, simulate
from bai_lib import BetaPrior, GaussianPrior
from bai_lib.gamma_prior import GammaPrior
from bai_lib.families import REWARD_MODELS, model_of_prior, reward_model
from bai_lib.families.poisson import MAX_MEAN, poisson_inverse
from bai_lib.runcache import plan_key
from bai_lib.plan import RunPlan
from bai_lib.stats import clopper_pearson

H = GammaPrior([6.0, 5.0, 4.0], [3.0, 3.0, 3.0])  # means 2, 1.67, 1.33 orders per visitor


@pytest.mark.parametrize("lam", [0.0, 1e-3, 0.2, 3.7, 41.0, 599.9, 600.0, 1234.5, 1e5])
def test_inversion_is_the_poisson_quantile(lam):
    """``poisson_inverse(u, λ)`` is the least ``n`` with ``F(n) >= u``: scipy's quantile, except
    where ``u`` lies within rounding of ``F(n)`` (both sums are rounded), and, for ``u`` within
    ``1e-12`` of 0 or 1, a count in the tail (``P(X <= n)`` or ``P(X >= n)`` below ``1e-14``:
    the sums end where the terms are negligible)."""
    rng = np.random.default_rng(int(lam * 10) + 1)
    u = np.concatenate([rng.random(4000), [1e-300, 0.5, 1 - 1e-12, 1.0 - 2**-53]])
    got = np.array([poisson_inverse(x, lam) for x in u])
    want = stats.poisson.ppf(u, lam)
    body = (u >= 1e-12) & (u <= 1 - 1e-12)
    near = np.isclose(stats.poisson.cdf(want, lam), u, rtol=1e-9, atol=0) | np.isclose(
        stats.poisson.cdf(want - 1, lam), u, rtol=1e-9, atol=0)
    inner = body & ~near
    assert np.array_equal(got[inner], want[inner]), (lam, u[inner][got[inner] != want[inner]])
    assert np.all(np.abs(got - want)[body] <= 1)
    tail, want_tail = got[~body], want[~body]
    assert np.all((tail == want_tail) | (stats.poisson.sf(tail - 1, lam) < 1e-14)
                  | (stats.poisson.cdf(tail, lam) < 1e-14))


@pytest.mark.parametrize("lam", [0.3, 4.0, 750.0])
def test_draws_from_normals_follow_the_poisson_law(lam):
    """Rewards from a stream of normals (``u = Φ(z)``): a chi-square test of the counts against
    the Poisson probabilities (200,000 draws, bins of expected count >= 20), p > 1e-3."""
    z = np.random.default_rng(17).standard_normal(200_000)
    x = np.array([poisson_inverse(ndtr(v), lam) for v in z])
    lo, hi = stats.poisson.ppf([1e-4, 1 - 1e-4], lam).astype(int)
    edges = np.arange(lo, hi + 2)
    observed = np.array([np.count_nonzero(x < lo)]
                        + [np.count_nonzero(x == n) for n in edges[:-1]]
                        + [np.count_nonzero(x > hi)])
    probs = np.concatenate([[stats.poisson.cdf(lo - 1, lam)], stats.poisson.pmf(edges[:-1], lam),
                            [stats.poisson.sf(hi, lam)]])
    expected = probs * z.size
    keep = expected >= 20
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    p = stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue
    assert p > 1e-3, p


def test_the_prior_chooses_the_family_and_the_family_its_prior():
    assert model_of_prior(H) is REWARD_MODELS["poisson"]
    assert model_of_prior(BetaPrior([1, 1], [1, 1])).name == "bernoulli"
    assert model_of_prior(GaussianPrior.standard(2)).name == "gaussian"
    res = simulate(TTUCB(), H, None, 0.1, 5, 3, progress=False)
    assert res.rewards == "poisson" and np.all(res.noise_stds == 1.0)
    assert np.array_equal(res.means, H.sample_means(3, 5))  # run r's means from its prior stream
    assert reward_model("poisson").has_kl_widths and reward_model("poisson").has_conjugate
    assert not reward_model("gaussian").has_kl_widths


def test_the_run_cache_keys_a_gamma_prior_by_its_parameters():
    plan = RunPlan.build(TTUCB(), H, None, [0.1], 10, 1)
    key = plan_key(plan)
    assert key["prior"] == {"GammaPrior": {"a": [6.0, 5.0, 4.0], "b": [3.0, 3.0, 3.0]}}
    assert key["rewards"] == "poisson"
    other = plan_key(RunPlan.build(TTUCB(), GammaPrior([6.0, 5.0, 4.0], [3.0, 3.0, 2.5]), None,
                                   [0.1], 10, 1))
    assert other != key


def test_bayesian_error_of_algorithm_1_under_a_gamma_prior_is_below_delta():
    """Algorithm 1 with KL widths is δ-correct on Poisson arms under the prior (its argument
    needs only intervals that miss with probability ``Conf``'s bound, which Chernoff's bound
    gives): the upper end of the 99.9% Clopper-Pearson interval of the Bayesian probability of
    error over 600 runs is below δ."""
    delta, n = 0.1, 600
    res = simulate(Elimination(widths="kl"), H, None, delta, n, 21, progress=False)
    assert not np.any(res.censored)
    errors = int(np.count_nonzero(res.recommendations != np.argmax(res.means, axis=1)))
    assert clopper_pearson(errors, n, 0.999)[1] < delta, errors


@pytest.mark.parametrize("spec, n", [(TTTS(challenger="resample", threshold="union"), 150),
                                     (TrackAndStop(threshold="union"), 300), (TTUCB(), 300),
                                     (LUCB(widths="kl"), 300)],
                         ids=["ttts_union", "tas_union", "ttucb", "kl_lucb"])
def test_error_on_a_fixed_poisson_instance_is_below_delta(spec, n):
    """The GLR algorithms with the threshold proven for exponential families, TTUCB and KL-LUCB
    on a fixed Poisson instance: the upper end of the 99.9% Clopper-Pearson interval of the
    error rate over 300 runs (150 for TTTS, whose Gamma draws make its steps slow) is below δ
    (without an indifference stop their stopping times have no finite mean under a continuous
    prior, so the Bayesian error is Algorithm 1's test)."""
    delta = 0.1
    prior = H if spec.uses_prior() else None  # TTTS's posterior starts from the prior
    res = simulate(spec, prior, None, delta, n, 22, means=[2.0, 1.6, 1.2], rewards="poisson",
                   progress=False)
    assert not np.any(res.censored)
    errors = int(np.count_nonzero(res.recommendations != 0))
    assert clopper_pearson(errors, n, 0.999)[1] < delta, errors


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="widths"):
        simulate(Elimination(), H, None, 0.1, 2, 1)
    with pytest.raises(ValueError, match="widths"):
        simulate(LUCB(), None, None, 0.1, 2, 1, means=[1.0, 2.0], rewards="poisson")
    with pytest.raises(ValueError, match="indifference"):
        simulate(TTUCB(indifference=True), H, None, 0.1, 2, 1)
    with pytest.raises(ValueError, match="means must lie in"):
        simulate(TTUCB(), None, None, 0.1, 2, 1, means=[1.0, -0.5], rewards="poisson")
    with pytest.raises(ValueError, match="means must lie in"):
        simulate(TTUCB(), None, None, 0.1, 2, 1, means=[1.0, 2 * MAX_MEAN], rewards="poisson")
    with pytest.raises(ValueError, match="prior must be a GammaPrior"):
        simulate(TTUCB(), BetaPrior([1, 1], [1, 1]), None, 0.1, 2, 1, rewards="poisson")
    with pytest.raises(ValueError, match="rewards='gaussian' with a GammaPrior"):
        simulate(TTUCB(), H, 1.0, 0.1, 2, 1, rewards="gaussian")
    with pytest.raises(ValueError, match="challenger='exact' samples Gaussian posteriors"):
        simulate(TTTS(challenger="exact"), H, None, 0.1, 2, 1)
    with pytest.raises(ValueError, match="rewards must be one of"):
        reward_model("binomial")
    with pytest.raises(ValueError, match="rewards"):
        simulate(TTUCB(), H, None, 0.1, 2, 1, rewards="counts")


def test_no_stopping_time_cap_is_claimed_for_poisson_arms():
    """Algorithm 1's cap ``k n*`` rests on sub-Gaussian widths; Poisson KL widths grow with the
    mean, so no cap is claimed under a Gamma prior (one is under a Beta prior)."""
    assert Elimination(widths="kl").max_stopping_time(H, np.ones(3), 0.1) is None
    assert Elimination().max_stopping_time(BetaPrior([1, 1], [1, 1]), np.full(2, 0.5),
                                           0.1) > 0


def test_noelim_with_kl_widths_runs_and_names_its_family():
    res = simulate(NoElim(widths="kl"), H, None, 0.1, 20, 4, progress=False)
    assert res.rewards == "poisson" and not np.any(res.censored)


def test_every_family_generic_specification_takes_every_registered_family(monkeypatch):
    """``reward_models`` defaults to the registry, so a new family module reaches every
    family-generic algorithm; what a family cannot serve is refused when it binds."""
    from bai_lib.algorithms import ALGORITHMS, SamplingRule
    from bai_lib.algorithms import ttts as ttts_module

    from bai_lib.algorithms import PosteriorRule

    assert all(cls.reward_models == tuple(REWARD_MODELS) for cls in ALGORITHMS.values()
               if cls is not PosteriorRule)
    assert SamplingRule.reward_models == ("gaussian",)
    # the platforms' rules compute Beta and normal posteriors' summaries
    assert PosteriorRule.reward_models == ("bernoulli", "gaussian")

    class NoPosterior:  # a family registered without the conjugate group
        has_conjugate = False

    monkeypatch.setattr(ttts_module, "reward_model", lambda rewards: NoPosterior())
    with pytest.raises(ValueError, match="rewards='bernoulli': TTTS samples a conjugate"):
        simulate(TTTS(), BetaPrior([2, 3], [3, 2]), None, 0.1, 2, 1, progress=False)

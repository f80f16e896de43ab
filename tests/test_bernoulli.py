"""Bernoulli arms: Algorithm 1 and NoElim on Bernoulli rewards, under a BetaPrior or on fixed means."""


import numpy as np
import pytest
from scipy.special import ndtr

from bai_lib import BetaPrior, Elimination, NoElim, TTUCB, GaussianPrior, simulate, delta0
from bai_lib import _rng
from bai_lib.stats import clopper_pearson
from test_conventions import ref_elimination


def ref_bernoulli_elimination(state, mu, sigma, delta, d0, pull_all, recommend):
    """Algorithm 1 / NoElim in plain Python on Bernoulli arms: a pull of arm i gives 1 when the
    standard normal it consumes has Φ(z) < μ_i (probability μ_i), else 0."""
    return ref_elimination(state, mu, sigma, delta, d0, pull_all, recommend,
                           reward=lambda i, z: 1.0 if ndtr(z) < mu[i] else 0.0)


@pytest.mark.parametrize("spec", [Elimination(delta0=0.05), NoElim(delta0=0.05),
                                  NoElim(delta0=0.05, recommend="empirical_best")],
                         ids=["alg1", "noelim", "noelim-best"])
def test_the_kernel_matches_a_plain_reference_run_for_run(spec):
    mu = np.array([0.55, 0.5, 0.3, 0.52])
    sigma = np.full(4, 0.5)
    delta = 0.1
    res = simulate(spec, None, None, delta, 12, 7, means=mu, rewards="bernoulli")
    assert res.rewards == "bernoulli" and res.noise_stds.tolist() == [0.5] * 4
    for r in range(12):
        ref = ref_bernoulli_elimination(_rng.seed_state(7, r, _rng.STREAM_ALGO), mu, sigma, delta,
                                        0.05, spec._pull_all, spec.recommend)
        assert (int(res.stopping_times[r]), int(res.recommendations[r])) == ref, r


def test_a_beta_prior_draws_the_means_of_its_sample_means():
    H = BetaPrior([2.0, 3.0, 1.5], [5.0, 4.0, 2.5])
    res = simulate("elimination", H, None, 0.2, 50, 11)
    assert np.array_equal(res.means, H.sample_means(11, 50))
    assert res.delta0 == delta0(H, 0.2)
    assert np.all((res.means > 0) & (res.means < 1))


def test_algorithm_1_keeps_its_bayesian_guarantee_on_bernoulli_arms():
    """PoE <= δ under a Beta prior: the upper end of the 99.9% Clopper-Pearson interval of the
    error rate over 4,000 runs is below δ (σ = 1/2 makes the widths valid for any mean)."""
    delta = 0.1
    H = BetaPrior([2.0, 2.0], [2.0, 2.0])
    res = simulate("elimination", H, None, delta, 4000, 2024)
    errors = int(np.count_nonzero(~res.correct))
    lo, hi = clopper_pearson(errors, res.n_runs, 0.001)
    assert hi < delta, (errors, lo, hi)
    assert not np.any(res.censored)


def test_bernoulli_runs_do_not_depend_on_threads_or_shards():
    H = BetaPrior([1.0, 1.0, 2.0], [1.0, 2.0, 1.0])
    one = simulate("noelim", H, None, 0.2, 40, 5, n_threads=1)
    two = simulate("noelim", H, None, 0.2, 40, 5, n_threads=2, chunk_size=3)
    parts = [simulate("noelim", H, None, 0.2, n, 5, first_run=f) for f, n in ((0, 15), (15, 25))]
    for other in (two,):
        assert np.array_equal(one.stopping_times, other.stopping_times)
        assert np.array_equal(one.recommendations, other.recommendations)
    assert np.array_equal(one.stopping_times,
                          np.concatenate([p.stopping_times for p in parts]))


def test_means_at_zero_and_one_give_constant_rewards():
    """A mean of 1 always pays 1 and a mean of 0 never pays: the arms separate as fast as the
    widths allow, and the run recommends the arm of mean 1."""
    res = simulate(Elimination(delta0=1e-3), None, None, 0.1, 20, 3, means=[1.0, 0.0],
                   rewards="bernoulli")
    assert np.all(res.recommendations == 0) and np.all(res.stop_reasons == "single_arm")
    assert len(set(res.stopping_times.tolist())) == 1


def test_replay_reproduces_a_bernoulli_run_and_trace_is_refused():
    res = simulate("elimination", BetaPrior([2.0, 2.0], [3.0, 3.0]), None, 0.1, 5, 9)
    for r in range(5):
        assert res.replay(r)["tau"] == res.stopping_times[r]
    with pytest.raises(ValueError, match=r"trace\(\) replays Gaussian runs"):
        res.trace(0)


BAD = [
    (lambda: simulate(TTUCB(), BetaPrior([1, 1], [1, 1]), None, 0.1, 5, 1),
     r"rewards='bernoulli': TTUCB simulates Gaussian rewards only"),
    (lambda: simulate("elimination", BetaPrior([1, 1], [1, 1]), 0.5, 0.1, 5, 1,
                      rewards="gaussian"), r"rewards='gaussian' with a BetaPrior"),
    (lambda: simulate("elimination", GaussianPrior.standard(2), 0.5, 0.1, 5, 1,
                      rewards="bernoulli"), r"prior must be a BetaPrior or None"),
    (lambda: simulate(Elimination(delta0=0.1), None, None, 0.1, 5, 1, means=[1.5, 0.2],
                      rewards="bernoulli"), r"means must lie in \[0, 1\]"),
    (lambda: simulate(Elimination(delta0=0.1), None, None, 0.1, 5, 1, means=[0.5, -0.1],
                      rewards="bernoulli"), r"means must lie in \[0, 1\]"),
    (lambda: simulate("elimination", None, None, 0.1, 5, 1, means=[0.5, 0.2],
                      rewards="bernoulli"), r"uses the prior; give a BetaPrior"),
    (lambda: simulate("elimination", BetaPrior([1, 1], [1, 1]), None, 0.1, 5, 1,
                      rewards="poisson"), r"^rewards must be one of"),
    (lambda: Elimination().bind(BetaPrior([1, 1], [1, 1]), np.full(2, 0.5), [0.1], 100,
                                rewards="poisson"), r"^rewards must be one of"),
]


@pytest.mark.parametrize("call, match", BAD, ids=range(len(BAD)))
def test_bad_bernoulli_input_is_refused_by_name(call, match):
    with pytest.raises(ValueError, match=match):
        call()

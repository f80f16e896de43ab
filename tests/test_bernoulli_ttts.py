"""Top-Two Thompson Sampling on Bernoulli arms: the conjugate Beta posterior, the Bernoulli GLR
stop, and the kernel against a plain reference on fixed sample paths."""

import math
from typing import Callable, NamedTuple, Optional

import numpy as np
import pytest

from bai_lib import TTTS, BetaPrior, GaussianPrior, simulate, simulate_deltas
from bai_lib import _rng, _variates
from bai_lib.stats import clopper_pearson
from test_bernoulli_glr import _coin, ref_z
from test_conventions import Stream


class Conjugate(NamedTuple):
    """A reward family with a conjugate prior of two shape parameters, as the plain TTTS
    reference sees it."""

    #: ``reward(mu, i, z)``: the reward of a pull of arm ``i`` from the standard normal ``z``
    reward: Callable
    #: ``shapes(a, b, S, N) -> (A, B)``: the posterior shapes after sums ``S`` in ``N`` pulls
    shapes: Callable
    #: ``draw(state, A_i, B_i)``: one draw of an arm's mean from its posterior
    draw: Callable
    #: ``moments(A, B) -> (means, variances)`` of the posteriors (arrays)
    moments: Callable
    #: the divergence of the GLR statistic (``None``: Bernoulli, :func:`ref_z`'s default)
    kl: Optional[Callable] = None


def _beta_moments(A, B):
    n = A + B
    return A / n, A * B / (n * n * (n + 1))


#: Bernoulli arms under a Beta prior: ``Beta(a + S, b + N − S)``, drawn by ``beta_variate``.
BETA = Conjugate(reward=_coin, shapes=lambda a, b, S, N: (a + S, b + N - S),
                 draw=_variates.beta_variate, moments=_beta_moments)


class RefTTTS:
    """TTTS with the conjugate Beta posterior, written plainly: posterior draws by
    ``_variates.beta_variate`` in arm order, the Bernoulli GLR statistic from its definition, the
    threshold log(t/δ). Counts how often the "resample" rule fell back to the likeliest rival.
    Another conjugate family with ``family`` (:class:`Conjugate`)."""

    def __init__(self, family=BETA):
        self.fallbacks = 0
        self.family = family

    def run(self, state, mu, a, b, delta, beta, challenger, max_samples=10**6):
        k = mu.size
        fam = self.family
        stream = Stream(state, k)
        S = np.array([fam.reward(mu, i, z) for i, z in enumerate(stream.take(k))])
        N = np.ones(k)
        t = k
        bits = []

        def draw(skip=-1):
            """The arm of the largest draw from the posteriors (A, B) of the current step
            (the first such arm on a tie), arm ``skip`` left out."""
            arm, top = -1, -math.inf
            for i in range(k):
                if i != skip:
                    v = fam.draw(state, A[i], B[i])
                    if v > top:
                        arm, top = i, v
            return arm

        while True:
            A, B = (x.tolist() for x in fam.shapes(a, b, S, N))
            mh = S / N
            best = int(np.argmax(mh))
            z = min(ref_z(mh[best], N[best], mh[j], N[j], fam.kl) for j in range(k) if j != best)
            if z >= math.log(t / delta) or t + 1 > max_samples:
                return t, best
            if beta == 0.5:
                if not bits:
                    word = int(_rng.next_u64(state))
                    bits = [(word >> i) & 1 for i in range(64)]
                coin = bits.pop(0) == 1
            else:
                coin = _rng.uniform(state) < beta
            if k == 2 and beta == 0.5:
                arm = 1 if coin else 0
            else:
                leader = draw()
                if coin:
                    arm = leader
                elif k == 2:
                    arm = 1 - leader
                elif challenger == "released":
                    arm = draw(skip=leader)
                else:
                    arm = next((c for c in (draw() for _ in range(100)) if c != leader), leader)
                    if arm == leader:
                        self.fallbacks += 1
                        arm = self._likeliest_rival(*fam.shapes(a, b, S, N), leader)
            S[arm] += fam.reward(mu, arm, stream.take(1)[0])
            N[arm] += 1
            t += 1

    def _likeliest_rival(self, A, B, leader):
        m, var = self.family.moments(A, B)
        score = [math.inf if j == leader else (m[leader] - m[j]) / math.sqrt(var[leader] + var[j])
                 for j in range(A.size)]
        return int(np.argmin(score))


CASES = [  # means, prior a, prior b, beta, challenger
    ([0.35, 0.2], [2.0, 1.0], [5.0, 1.0], 0.5, "exact"),
    ([0.35, 0.2], [2.0, 1.0], [5.0, 1.0], 0.3, "exact"),
    ([0.5, 0.3, 0.4], [1.0, 3.0, 2.0], [1.0, 2.0, 6.0], 0.5, "resample"),
    ([0.5, 0.3, 0.4], [1.0, 3.0, 2.0], [1.0, 2.0, 6.0], 0.75, "resample"),
    ([0.5, 0.3, 0.4], [1.0, 3.0, 2.0], [1.0, 2.0, 6.0], 0.5, "released"),
]


@pytest.mark.parametrize("mu, a, b, beta, challenger", CASES,
                         ids=["k2-fair", "k2-beta0.3", "k3-resample", "k3-resample-beta0.75",
                              "k3-released"])
def test_kernel_matches_a_plain_reference_run_for_run(mu, a, b, beta, challenger):
    mu, a, b = np.array(mu), np.array(a), np.array(b)
    delta, n = 0.05, 12
    res = simulate(TTTS(beta=beta, challenger=challenger), BetaPrior(a, b), None, delta, n, 3,
                   means=mu)
    assert res.rewards == "bernoulli"
    ref = RefTTTS()
    for r in range(n):
        expect = ref.run(_rng.seed_state(3, r, _rng.STREAM_ALGO), mu, a, b, delta, beta,
                         challenger)
        assert (int(res.stopping_times[r]), int(res.recommendations[r])) == expect, r
    if challenger == "resample" and beta == 0.5:
        assert ref.fallbacks > 0  # the fallback to the likeliest rival is exercised


def test_the_prior_enters_the_sampling_rule():
    """Off the fair two-arm coin the leader is a posterior draw, so the prior changes the
    trajectories; with the fair coin on two arms it does not (a uniformly random arm)."""
    mu = np.array([0.35, 0.2])
    flat, skewed = BetaPrior([1.0, 1.0], [1.0, 1.0]), BetaPrior([1.0, 50.0], [50.0, 1.0])
    for beta, same in [(0.3, False), (0.5, True)]:
        taus = [simulate(TTTS(beta=beta), H, None, 0.05, 40, 4, means=mu).stopping_times
                for H in (flat, skewed)]
        assert np.array_equal(*taus) == same, beta


@pytest.mark.filterwarnings("ignore::bai_lib.CensoringWarning")
def test_one_trajectory_scores_every_level():
    H = BetaPrior([4.0, 3.0, 2.0], [6.0, 7.0, 8.0])
    deltas = [0.2, 0.05, 0.01]
    spec = TTTS(challenger="released", beta=0.6)
    # a cap of 2·10^4 samples (10^5 before), which censors the near ties that cost the most:
    # about half the runs still stop, at times that differ between the levels, and one of them
    # stops in time at δ = 0.2 but is censored at δ = 0.01
    cap = 2 * 10**4
    many = simulate_deltas(spec, H, None, deltas, 30, 9, max_samples=cap)
    for d in deltas:
        one = simulate(spec, H, None, d, 30, 9, max_samples=cap)
        assert np.array_equal(many[d].stopping_times, one.stopping_times)
        assert np.array_equal(many[d].recommendations, one.recommendations)
        assert 0 < np.count_nonzero(one.censored) < 30
    assert np.any(~many[0.2].censored & many[0.01].censored)
    assert len({tuple(many[d].stopping_times) for d in deltas}) == len(deltas)


def test_error_rate_on_a_fixed_instance_is_below_delta():
    """δ-correct on a fixed Bernoulli instance: the upper end of the 99.9% Clopper-Pearson
    interval of the error rate over 500 runs is below δ = 0.1."""
    # an error rate of δ or more passes with probability < 0.05% whatever the number of runs;
    # the rate here is ~1% (9 errors in 1,000 runs, 5 in these 500: upper end 0.034)
    res = simulate(TTTS(beta=0.4), BetaPrior([1.0, 1.0], [1.0, 1.0]), None, 0.1, 500, 12,
                   means=[0.3, 0.25])
    errors = int(np.count_nonzero(res.recommendations != 0))
    assert clopper_pearson(errors, 500, 0.999)[1] < 0.1, errors
    assert not np.any(res.censored)


def test_bad_combinations_are_refused_by_name():
    H3 = BetaPrior([1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="challenger='exact' samples Gaussian posteriors.*"
                                         "challenger='normal' \\(the default\\)"):
        simulate(TTTS(challenger="exact"), H3, None, 0.1, 2, 1)
    with pytest.raises(ValueError, match="challenger must be one of"):
        TTTS(challenger="gaussian")
    with pytest.raises(ValueError, match="prior must be a BetaPrior"):
        simulate(TTTS(), GaussianPrior.standard(2), None, 0.1, 2, 1, means=[0.3, 0.2],
                 rewards="bernoulli")


@pytest.mark.filterwarnings("ignore::bai_lib.CensoringWarning")
def test_runs_do_not_depend_on_threads_or_shards():
    H = BetaPrior([1.0, 2.0, 2.0], [1.0, 2.0, 3.0])
    spec = TTTS(challenger="released", beta=0.4)
    # runs of 9 to 20,000 samples (the cap; 10^6 before, where six censored runs cost nearly
    # all the time): 14 chunks of 3 runs of uneven lengths keep both threads busy and
    # interleaved, and both shards hold stopped and censored runs
    cap = 2 * 10**4
    one = simulate(spec, H, None, 0.2, 40, 5, n_threads=1, max_samples=cap)
    two = simulate(spec, H, None, 0.2, 40, 5, n_threads=2, chunk_size=3, max_samples=cap)
    parts = [simulate(spec, H, None, 0.2, n, 5, first_run=f, max_samples=cap)
             for f, n in ((0, 15), (15, 25))]
    for p in parts:
        assert 0 < np.count_nonzero(p.censored) < p.n_runs
    for other in (two, parts):
        taus = (other.stopping_times if other is two
                else np.concatenate([p.stopping_times for p in other]))
        assert np.array_equal(one.stopping_times, taus)
    assert np.array_equal(one.recommendations, two.recommendations)

"""The released-code and printed conventions of each algorithm, against plain numpy implementations.

Each reference below is written from the rule as stated (the paper's appendix, or the
authors' released code as described in :mod:`bai_lib.algorithms`), in plain Python/numpy. The
deterministic algorithms (elimination, NoElim, TTUCB) draw their rewards from the same
generator stream as the compiled kernels, so every run must agree exactly: same stopping time,
same recommendation. TTTS randomises its sampling, so its reference uses numpy's generator and
is compared in distribution.
"""

import functools
import math

import numpy as np
import pytest
from scipy import stats

from bai_lib import TTTS, TTUCB, Elimination, GaussianPrior, NoElim, simulate
from bai_lib import _rng
from bai_lib import kernels as K
from bai_lib.algorithms import top_two as T
from bai_lib.algorithms.challenger import TTTS_MAX_RESAMPLE
from bai_lib.algorithms import ALGORITHMS, resolve
from bai_lib.stopping import threshold, ttucb_cg


class Stream:
    """Standard normals in the order the kernels consume them (buffer of ``max(512, k)``)."""

    def __init__(self, state, k):
        self.state = state
        self.buf = np.empty(max(512, k))
        self.pos = self.buf.size

    def take(self, n):
        if self.pos + n > self.buf.size:
            _rng.fill_normal(self.state, self.buf)
            self.pos = 0
        out = self.buf[self.pos:self.pos + n].copy()
        self.pos += n
        return out

    def next(self):
        """The next standard normal as a float: ``take(1)[0]`` without the array."""
        if self.pos >= self.buf.size:
            _rng.fill_normal(self.state, self.buf)
            self.pos = 0
        self.pos += 1
        return float(self.buf[self.pos - 1])


def argmax(x):
    """The first index of the largest entry of a sequence (``np.argmax`` on plain floats)."""
    return max(range(len(x)), key=x.__getitem__)


def argmin(x):
    """The first index of the smallest entry of a sequence (``np.argmin`` on plain floats)."""
    return min(range(len(x)), key=x.__getitem__)


def conf(n, k, delta, sigma):
    return sigma * math.sqrt(2 * math.log(6 * n**2 / ((delta**2 / (2 * k)) * math.pi**2)) / n)


def ref_elimination(state, mu, sigma, delta, delta0, pull_all, recommend, reward=None,
                    interval=None, with_reason=False):
    """Algorithm 1 / NoElim; the indifference recommendation as printed or as released.
    ``reward(i, z)`` turns the standard normal ``z`` of a pull of arm ``i`` into its reward
    (default: the Gaussian ``mu[i] + sigma[i] z``); ``interval(i, mean, n)`` gives arm ``i``'s
    ``(LCB, UCB)`` after ``n`` rounds (default: ``mean ± Conf``). Returns ``(τ,
    recommendation)``, with ``with_reason`` also the stop reason (``"single_arm"`` or
    ``"indifference"``)."""
    if reward is None:
        def reward(i, z):
            return mu[i] + sigma[i] * z
    if interval is None:
        def interval(i, mean, n):
            w = conf(n, k, delta, sigma[i])
            return mean - w, mean + w
    k = mu.size
    stream = Stream(state, k)
    active = list(range(k))
    sums = np.zeros(k)
    n = t = 0
    while True:
        pulled = list(range(k)) if pull_all else list(active)
        z = stream.take(len(pulled))
        for j, i in enumerate(pulled):
            sums[i] += reward(i, z[j])
        t += len(pulled)
        n += 1
        mean = sums / n
        lcb, ucb = {}, {}
        for i in active:
            lcb[i], ucb[i] = interval(i, mean[i], n)
        max_lcb = max(lcb.values())
        active = [i for i in active if ucb[i] > max_lcb]
        if len(active) == 1:
            return (t, active[0], "single_arm")[:3 if with_reason else 2]
        if max(ucb[i] for i in active) - max_lcb <= delta0:
            if recommend == "empirical_best":
                rec = max(pulled, key=lambda i: (mean[i], -i))
            else:
                rec = active[min(int(_rng.uniform(state) * len(active)), len(active) - 1)]
            return (t, rec, "indifference")[:3 if with_reason else 2]


def ref_ttucb_released(state, mu, sigma, delta, noise_aware, reward=None, glr=None,
                       extra_stop=None, beta=None):
    """TTUCB as in the released code: check, sample, update, until the check passes.

    ``reward(a, z)`` turns the standard normal of a pull of arm ``a`` into its reward (default
    Gaussian); ``glr(m_a, n_a, m_b, n_b)`` is the GLR statistic ``Z`` of "a beats b" (default
    Gaussian, ``(m_a − m_b)² / (2 (v_a + v_b))`` for ``m_a > m_b``, else 0): the test is
    ``min_j Z(best, j) >= c(t, δ)``, and the challenger minimises ``sign(m_lead − m_j) Z``, the
    order of the released cost ``(m_lead − m_j) / sqrt(v_lead + v_j) = sign · sqrt(2Z)``.
    ``extra_stop(m, n, best)``, if given, is a second stopping rule checked with the test (``m``
    and ``n`` the lists of means and counts); ``beta(T)``, if given, replaces the threshold
    ``c(T, δ)`` (``δ`` is then not used). The state is kept in lists of floats: with k <= 4 arms
    numpy's per-call overhead would dominate, and the arithmetic is the same."""
    k = mu.size
    var = (sigma**2 if noise_aware else np.ones(k)).tolist()
    if reward is None:
        mean, sd = mu.tolist(), sigma.tolist()

        def reward(a, z):
            return mean[a] + sd[a] * z
    if glr is None:
        def glr(ma, na, mb, nb, a=None, b=None):
            return 0.0 if ma <= mb else (ma - mb) ** 2 / (2 * (var[a] / na + var[b] / nb))
    else:
        glr_plain = glr

        def glr(ma, na, mb, nb, a=None, b=None):
            return glr_plain(ma, na, mb, nb)

    def signed(a, b):
        if m[a] >= m[b]:
            return glr(m[a], n[a], m[b], n[b], a, b)
        return -glr(m[b], n[b], m[a], n[a], b, a)

    stream = Stream(state, k)
    n = [0.0] * k
    sums = [0.0] * k
    m = [0.0] * k
    width = [math.sqrt(v) for v in var]
    ucb = [math.inf] * k
    n_la = [[0.0] * k for _ in range(k)]
    led = [0.0] * k
    x = 0.5 * math.log((k - 1) / delta)
    two_cg = 2 * (x + math.log(x))
    T = 0
    while True:
        if min(n) > 0:
            best = argmax(m)
            z = min(signed(best, j) for j in range(k) if j != best)
            c = two_cg + 4 * math.log(4 + math.log((T - 1) / 2)) if beta is None else beta(T)
            if z >= c:
                return T, best
            if extra_stop is not None and extra_stop(m, n, best):
                return T, best
        lead = argmax(ucb)
        if min(n) == 0:
            a = argmin(n)
        elif 0.5 * led[lead] < n_la[lead][lead]:
            cost = [math.inf if j == lead else signed(lead, j) for j in range(k)]
            a = argmin(cost)
        else:
            a = lead
        n_la[lead][a] += 1
        led[lead] += 1
        sums[a] += reward(a, stream.next())
        n[a] += 1
        m[a] = sums[a] / n[a]
        T += 1
        width[a] = math.sqrt(var[a] / n[a])
        bonus = math.sqrt(4 * math.log(T + 1))
        ucb = [m[j] + width[j] * bonus for j in range(k)]


def ref_ttucb_printed(state, mu, sigma, delta):
    """TTUCB with the printed threshold sqrt(c), log(t/2), and Jourdan & Degenne's sampling."""
    k = mu.size
    mean, sd, sig2 = mu.tolist(), sigma.tolist(), (sigma**2).tolist()
    stream = Stream(state, k)
    n = [1.0] * k
    sums = (mu + sigma * stream.take(k)).tolist()
    led = [0.0] * k
    n_la = [[0.0] * k for _ in range(k)]
    x = 0.5 * math.log((k - 1) / delta)
    t = k
    while True:
        mh = [sums[i] / n[i] for i in range(k)]
        v = [sig2[i] / n[i] for i in range(k)]
        best = argmax(mh)
        c = 2 * (x + math.log(x)) + 4 * math.log(4 + math.log(t / 2))
        if min((mh[best] - mh[i]) / math.sqrt(v[best] + v[i]) for i in range(k) if i != best) \
                >= math.sqrt(c):
            return t, best
        coef = T.TTUCB_UCB_COEF * math.log(t)
        lead = argmax([mh[i] + math.sqrt(coef * v[i]) for i in range(k)])
        cost = [math.inf if j == lead else max(mh[lead] - mh[j], 0) / math.sqrt(v[lead] + v[j])
                for j in range(k)]
        led[lead] += 1
        arm = lead if n_la[lead][lead] <= 0.5 * led[lead] else argmin(cost)
        n_la[lead][arm] += 1
        sums[arm] += mean[arm] + sd[arm] * stream.next()
        n[arm] += 1
        t += 1


def kernel_runs(spec, mu, sigma, delta, seed, n_runs, prior=None):
    prior = prior or GaussianPrior(np.zeros(mu.size), np.ones(mu.size))
    run = resolve(spec).bind(prior, np.asarray(sigma, float), [delta], 10**9).run_one
    return [run(_rng.seed_state(seed, r, 1), mu) for r in range(n_runs)]


INSTANCES = [
    (np.array([0.0, 0.35]), np.array([1.0, 1.0])),
    (np.array([0.2, -0.1, 0.75, 0.45]), np.array([1.3, 0.7, 1.0, 0.9])),
]


@pytest.mark.parametrize("mu, sigma", INSTANCES)
@pytest.mark.parametrize("spec", [Elimination(delta0=0.6),
                                  Elimination(delta0=0.6, recommend="empirical_best"),
                                  NoElim(delta0=0.6), NoElim(delta0=0.6, recommend="empirical_best")])
def test_elimination_conventions_match_reference_run_for_run(spec, mu, sigma):
    delta = 0.1
    ours = kernel_runs(spec, mu, sigma, delta, 11, 150)
    ref = [ref_elimination(_rng.seed_state(11, r, 1), mu, sigma, delta, 0.6,
                           isinstance(spec, NoElim), spec.recommend) for r in range(150)]
    assert [(int(o[0]), int(o[1])) for o in ours] == ref
    # the recommendation rule is exercised: some runs end with the indifference stop
    assert sum(o[3] == K.STOP_INDIFFERENCE for o in ours) >= 10


def test_empirical_best_only_changes_the_recommendation():
    H = GaussianPrior.standard(4)
    a = simulate(NoElim(delta0=0.5), H, 1.0, 0.2, 1000, 5, progress=False)
    b = simulate(NoElim(delta0=0.5, recommend="empirical_best"), H, 1.0, 0.2, 1000, 5,
                 progress=False)
    np.testing.assert_array_equal(a.stopping_times, b.stopping_times)
    ind = a.stop_reasons == "indifference"
    assert ind.sum() > 100
    # at an indifference stop the empirical best is right at least as often as a uniform survivor
    assert b.correct[ind].mean() > a.correct[ind].mean()
    np.testing.assert_array_equal(a.recommendations[~ind], b.recommendations[~ind])


@pytest.mark.parametrize("noise_aware", [True, False])
@pytest.mark.parametrize("mu, sigma", INSTANCES)
def test_ttucb_released_matches_reference_run_for_run(mu, sigma, noise_aware):
    delta = 0.1
    spec = TTUCB(noise_aware=noise_aware)
    ours = kernel_runs(spec, mu, sigma, delta, 21, 120)
    ref = [ref_ttucb_released(_rng.seed_state(21, r, 1), mu, sigma, delta, noise_aware)
           for r in range(120)]
    assert [(int(o[0]), int(o[1])) for o in ours] == ref


@pytest.mark.parametrize("mu, sigma", INSTANCES)
def test_ttucb_printed_matches_reference_run_for_run(mu, sigma):
    delta = 0.1
    ours = kernel_runs(TTUCB.as_printed(), mu, sigma, delta, 22, 120)
    ref = [ref_ttucb_printed(_rng.seed_state(22, r, 1), mu, sigma, delta) for r in range(120)]
    assert [(int(o[0]), int(o[1])) for o in ours] == ref


def test_ttucb_released_threshold_stops_later_on_the_same_instances():
    """On shared random numbers the sqrt(2c) rule can only continue a run that sqrt(c) stops;
    on a standard normal prior the median grows by a factor close to 2 (the 1/g^2 law)."""
    H = GaussianPrior.standard(2)
    printed = simulate(TTUCB(threshold="printed"), H, 1.0, 0.1, 600, 3, max_samples=10**7,
                       progress=False)
    released = simulate(TTUCB(), H, 1.0, 0.1, 600, 3, max_samples=10**7, progress=False)
    assert np.all(released.stopping_times >= printed.stopping_times)
    ratio = np.median(released.stopping_times) / np.median(printed.stopping_times)
    assert 1.6 < ratio < 2.6, ratio
    assert threshold("ttucb", 1e4, 0.1, rule="released") == pytest.approx(
        2 * threshold("ttucb", 1e4, 0.1, rule="printed"))


def test_ttucb_log_term_conventions():
    x = 0.5 * math.log(1 / 0.1)
    two_cg = 2 * ttucb_cg(x)
    for t in (3.0, 10.0, 1e6):
        assert threshold("ttucb", t, 0.1, log_term="released", rule="printed") == pytest.approx(
            two_cg + 4 * math.log(4 + math.log((t - 1) / 2)))
        assert threshold("ttucb", t, 0.1, log_term="printed", rule="printed") == pytest.approx(
            two_cg + 4 * math.log(4 + math.log(t / 2)))


def ref_ttts(rng, mu, sigma, m, xi, delta, challenger):
    """TTTS with beta = 1/2: one posterior draw for the leader, then Russo's re-drawing or the
    released rule (argmax over the other arms of one fresh draw). A posterior draw is written
    ``mean + sd * z``, ``z`` standard normal: the numbers numpy's ``rng.normal(mean, sd)`` gives,
    without its per-call argument checks (the state is kept in lists of floats)."""
    k = mu.size
    arms = range(k)
    n = [1.0] * k
    sums = rng.normal(mu, sigma).tolist()
    sig2 = (sigma**2).tolist()
    prior_prec, prior_lin = (1 / xi**2).tolist(), (m / xi**2).tolist()
    t = k
    while True:
        mh = [sums[i] / n[i] for i in arms]
        var = [sig2[i] / n[i] for i in arms]
        best = argmax(mh)
        if min((mh[best] - mh[b]) ** 2 / (2 * (var[best] + var[b]))
               for b in arms if b != best) >= math.log(t / delta):
            return t, best
        prec = [prior_prec[i] + n[i] / sig2[i] for i in arms]
        pmean = [(prior_lin[i] + sums[i] / sig2[i]) / prec[i] for i in arms]
        psd = [1 / math.sqrt(p) for p in prec]
        z = rng.standard_normal(k).tolist()
        leader = argmax([pmean[i] + psd[i] * z[i] for i in arms])
        arm = leader
        if rng.random() < 0.5:
            if challenger == "released":
                z = rng.standard_normal(k).tolist()
                arm = argmax([-math.inf if i == leader else pmean[i] + psd[i] * z[i]
                              for i in arms])
            else:
                z = rng.standard_normal((TTTS_MAX_RESAMPLE, k))
                draws = (np.array(pmean) + np.array(psd) * z).argmax(axis=1)
                other = draws[draws != leader]
                if other.size:
                    arm = int(other[0])
                else:
                    score = [math.inf if j == leader else
                             (pmean[leader] - pmean[j]) / math.hypot(psd[leader], psd[j])
                             for j in arms]
                    arm = argmin(score)
        sums[arm] += rng.normal(mu[arm], sigma[arm])
        n[arm] += 1
        t += 1


TTTS_INSTANCES = {
    "k=4": (np.array([0.0, 0.4, 0.8, 0.1]), np.array([1.0, 0.8, 1.2, 1.0]),
            np.array([0.0, 0.2, 0.1, 0.0]), np.array([1.0, 0.7, 1.3, 1.0])),
    "k=2": (np.array([0.0, 0.6]), np.ones(2), np.zeros(2), np.ones(2)),
}


@functools.cache
def ttts_reference_sample(instance, rule, delta, n_runs):
    """``(τ, recommendation)`` of ``n_runs`` reference runs (numpy seed 31), read-only; computed
    once per challenger rule: the "resample" and "exact" kernels share theirs."""
    mu, sigma, m, xi = TTTS_INSTANCES[instance]
    rng = np.random.default_rng(31)
    ref = np.array([ref_ttts(rng, mu, sigma, m, xi, delta, rule) for _ in range(n_runs)])
    ref.flags.writeable = False
    return ref


@pytest.mark.parametrize("instance", sorted(TTTS_INSTANCES))
@pytest.mark.parametrize("challenger", ["released", "resample", "exact"])
def test_ttts_challenger_rules_match_reference_in_distribution(challenger, instance):
    """The exact challenger is Russo's rule: compared with the re-drawing reference."""
    mu, sigma, m, xi = TTTS_INSTANCES[instance]
    prior = GaussianPrior(m, xi)
    delta, n_runs = 0.2, 300
    ours = np.array(kernel_runs(TTTS(challenger=challenger), mu, sigma, delta, 31, n_runs, prior),
                    dtype=np.int64)
    rule = "released" if challenger == "released" else "resample"
    ref = ttts_reference_sample(instance, rule, delta, n_runs)
    assert stats.ks_2samp(ours[:, 0], ref[:, 0]).pvalue > 1e-3
    # each empirical CDF at a point has sd <= sqrt(0.25 / 300) = 0.029, their difference 0.041:
    # a band of +-0.12 in probability is about 3 sd
    for q in (0.25, 0.5, 0.75):
        lo, hi = sorted(np.quantile(ref[:, 0], [q - 0.12, q + 0.12]))
        assert lo <= np.quantile(ours[:, 0], q) <= hi
    best = int(np.argmax(mu))
    assert abs((ours[:, 1] == best).mean() - (ref[:, 1] == best).mean()) < 0.1


def test_specs_validate_their_options():
    for bad, name in [(dict(threshold="sqrt"), "threshold"), (dict(log_term=1), "log_term"),
                      (dict(sampling="x"), "sampling"), (dict(cg="fast"), "cg"),
                      (dict(beta=1.0), "beta"), (dict(beta=0), "beta"),
                      (dict(noise_aware="yes"), "noise_aware")]:
        with pytest.raises(ValueError, match=name):
            TTUCB(**bad)
    with pytest.raises(ValueError, match="challenger"):
        TTTS(challenger="first")
    with pytest.raises(ValueError, match="recommend"):
        NoElim(recommend="best")
    with pytest.raises(ValueError, match="delta0_factor"):
        Elimination(delta0_factor=-1)
    with pytest.raises(ValueError, match="not both"):
        Elimination(delta0=0.1, delta0_factor=2)
    with pytest.raises(ValueError, match="delta0_factor"):
        simulate("elimination", GaussianPrior.standard(2), 1.0, 0.1, 3, 0, delta0_factor=1)
    with pytest.raises(ValueError, match="algorithm"):
        simulate("ucb", GaussianPrior.standard(2), 1.0, 0.1, 3, 0)


def test_names_resolve_to_default_specs_and_results_carry_them():
    assert {"elimination", "noelim", "ttts", "ttucb"} <= set(ALGORITHMS)
    H = GaussianPrior.standard(2)
    for name, cls in ALGORITHMS.items():
        if "gaussian" not in cls.reward_models:
            continue
        res = simulate(name, H, 1.0, 0.2, 5, 1, progress=False)
        assert res.algorithm == cls() and res.algorithm.name == name
    a = simulate("ttucb", H, 1.0, 0.1, 200, 9, progress=False)
    b = simulate(TTUCB(threshold="released", log_term="released", sampling="released"), H, 1.0,
                 0.1, 200, 9, progress=False)
    np.testing.assert_array_equal(a.stopping_times, b.stopping_times)
    assert TTUCB().label == "TTUCB"
    assert TTUCB(threshold="printed").label == "TTUCB (threshold=printed)"

"""Tests of :func:`bai_lib.simulation.simulate` and :class:`SimulationResult`."""

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from bai_lib import _rng
from bai_lib.priors import GaussianPrior, delta0
from bai_lib.algorithms import ALGORITHMS, TTTS, TTUCB, Elimination, NoElim

# the algorithms that simulate Gaussian rewards
GAUSSIAN_ALGORITHMS = [n for n, c in ALGORITHMS.items() if "gaussian" in c.reward_models]
from bai_lib import SimulationResult
from bai_lib.simulation import simulate
from bai_lib.stopping import ttucb_cg

REPO = Path(__file__).resolve().parents[1]
H2 = GaussianPrior.standard(2)
H3 = GaussianPrior([0.0, 0.5, -0.3], [1.0, 0.8, 1.2])

ARRAYS = ("stopping_times", "recommendations", "best_arms", "correct", "means", "censored",
          "stop_reasons")


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("BAI_LIB_PROGRESS", "0")


def assert_same(a, b):
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert a.delta0 == b.delta0


# ---------------------------------------------------------------------------
# Basic structure
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", GAUSSIAN_ALGORITHMS)
def test_result_structure(algorithm):
    res = simulate(algorithm, H3, [1.0, 0.5, 2.0], 0.2, 40, 7, max_samples=10**6)
    assert isinstance(res, SimulationResult)
    n = 40
    assert res.n_runs == n and res.k == 3
    assert res.stopping_times.dtype == np.int64 and res.stopping_times.shape == (n,)
    assert res.recommendations.dtype == np.int64
    assert res.best_arms.dtype == np.int64
    assert res.correct.dtype == bool and res.censored.dtype == bool
    assert res.means.shape == (n, 3)
    assert res.seconds.dtype == np.float64 and np.all(res.seconds >= 0)
    assert set(res.stop_reasons) <= {"single_arm", "indifference", "glr", "censored", "separation",
                                    "posterior"}
    np.testing.assert_array_equal(res.stop_reasons == "censored", res.censored)
    np.testing.assert_array_equal(res.stopping_times[res.censored] > 10**6 - 3, True)
    stops = set(res.stop_reasons[~res.censored])
    np.testing.assert_array_equal(res.best_arms, np.argmax(res.means, axis=1))
    best_mean = res.means.max(axis=1)
    np.testing.assert_array_equal(
        res.correct, res.means[np.arange(res.n_runs), res.recommendations] == best_mean)
    np.testing.assert_array_equal(res.correct, res.recommendations == res.best_arms)  # no ties
    assert res.error_rate == pytest.approx(1 - res.correct.mean())
    assert np.all((res.recommendations >= 0) & (res.recommendations < 3))
    if algorithm != "posterior":  # a posterior rule may stop before it has sampled every arm
        assert np.all(res.stopping_times >= 3)
    if algorithm in ("elimination", "noelim"):
        assert res.delta0 == pytest.approx(delta0(H3, 0.2, 4.0))
        assert stops <= {"single_arm", "indifference"}
    else:
        assert res.delta0 is None
        expected = {"lucb": {"separation"}, "posterior": {"posterior"}}.get(algorithm, {"glr"})
        assert stops <= expected
    if algorithm == "noelim":
        assert np.all(res.stopping_times % 3 == 0)
    with pytest.raises(ValueError):
        res.stopping_times[0] = 1  # read-only


def test_summary_and_repr():
    res = simulate("elimination", H2, 1.0, 0.1, 300, 3)
    s = res.summary()
    tau = res.stopping_times
    assert s["n_runs"] == 300
    assert s["avg"] == pytest.approx(tau.mean())
    assert s["max"] == tau.max()
    assert s["median"] == pytest.approx(np.median(tau))
    for key, q in (("q90", 0.9), ("q99", 0.99)):  # order statistics: whole numbers from tau
        assert isinstance(s[key], int) and s[key] in tau
        assert np.mean(tau <= s[key]) >= q > np.mean(tau < s[key])
    assert s["error"] == pytest.approx(res.error_rate)
    lo, hi = s["error_ci"]
    assert 0 <= lo <= s["error"] <= hi <= 1
    assert s["n_censored"] == 0
    assert sum(s["stop_reasons"].values()) == 300
    assert s["mean_seconds"] == pytest.approx(res.seconds.mean())
    r1 = repr(res)
    r2 = repr(simulate("elimination", H2, 1.0, 0.1, 300, 3, n_threads=1))
    assert r1 == r2
    assert "0x" not in r1 and "seconds" not in r1 and "Elimination(" in r1


def test_clopper_pearson_interval_values():
    from bai_lib.stats import clopper_pearson

    lo, hi = clopper_pearson(0, 100)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 100))
    lo, hi = clopper_pearson(5, 100)
    assert lo == pytest.approx(0.01643, abs=1e-4) and hi == pytest.approx(0.11284, abs=1e-4)


# ---------------------------------------------------------------------------
# Reproducibility and common random numbers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", GAUSSIAN_ALGORITHMS)
def test_reproducible_across_threads_and_chunks(algorithm):
    kw = dict(max_samples=10**5)
    a = simulate(algorithm, H3, 1.0, 0.1, 60, 123, n_threads=1, **kw)
    b = simulate(algorithm, H3, 1.0, 0.1, 60, 123, n_threads=2, chunk_size=7, **kw)
    c = simulate(algorithm, H3, 1.0, 0.1, 60, 123, n_threads=2, chunk_size=1, **kw)
    d = simulate(algorithm, H3, 1.0, 0.1, 60, 123, **kw)
    assert_same(a, b)
    assert_same(a, c)
    assert_same(a, d)
    e = simulate(algorithm, H3, 1.0, 0.1, 60, 124, **kw)
    assert not np.array_equal(a.means, e.means)


def test_runs_are_prefix_stable():
    # Run r depends only on (seed, r): a longer simulation extends a shorter one.
    a = simulate("ttts", H2, 1.0, 0.2, 30, 9, max_samples=10**6)
    b = simulate("ttts", H2, 1.0, 0.2, 50, 9, max_samples=10**6)
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name)[:30])


def test_common_random_numbers_across_algorithms():
    results = [simulate(alg, H3, 1.0, 0.1, 50, 77, max_samples=10**5) for alg in GAUSSIAN_ALGORITHMS]
    expected = _rng.prior_means(H3.means, H3.stds, 77, 50)
    for res in results:
        np.testing.assert_array_equal(res.means, expected)
    np.testing.assert_array_equal(H3.sample_means(77, 50), expected)


_SUBPROCESS_SCRIPT = textwrap.dedent(
    """
    import hashlib, numpy as np
    from bai_lib.priors import GaussianPrior
    from bai_lib.simulation import simulate
    h = hashlib.sha256()
    for alg in ("elimination", "noelim", "ttts", "ttucb"):
        r = simulate(alg, GaussianPrior.standard(3), 1.0, 0.1, 40, 5, max_samples=10**6)
        for a in (r.stopping_times, r.recommendations, r.censored, r.means):
            h.update(np.ascontiguousarray(a).tobytes())
    print(h.hexdigest())
    """
)


def _run_script(numba_threads):
    env = dict(os.environ, NUMBA_NUM_THREADS=str(numba_threads), BAI_LIB_PROGRESS="0",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-c", _SUBPROCESS_SCRIPT], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip(), proc.stderr


def test_identical_under_numba_num_threads():
    h1, err1 = _run_script(1)
    h2, err2 = _run_script(2)
    assert h1 == h2 and len(h1) == 64
    # Nothing (warnings, progress bars) is written to stderr.
    assert err1 == "" and err2 == ""


# ---------------------------------------------------------------------------
# Correctness on easy and on Bayesian instances
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", GAUSSIAN_ALGORITHMS)
def test_huge_gap_instances_are_solved(algorithm):
    # Prior concentrated on a 10-sigma gap.
    prior = GaussianPrior([0.0, 10.0, -4.0], [1e-3, 1e-3, 1e-3])
    spec = ALGORITHMS[algorithm](delta0=0.1) if algorithm in ("elimination", "noelim") else algorithm
    res = simulate(spec, prior, 1.0, 0.05, 300, 1)
    assert res.correct.all()
    assert res.stopping_times.max() <= 60
    assert not res.censored.any()


def _assert_poe_at_most(res, delta):
    from bai_lib.stats import clopper_pearson

    # Count censored runs as errors: an upper bound on the error of the
    # uncapped algorithm on these runs.
    n_bad = int(np.count_nonzero(~res.correct | res.censored))
    lo, _ = clopper_pearson(n_bad, res.n_runs)
    assert n_bad / res.n_runs <= delta
    assert lo < delta


def test_bayesian_poe_elimination():
    res = simulate("elimination", H2, 1.0, 0.1, 2000, 2024)
    assert not res.censored.any()
    _assert_poe_at_most(res, 0.1)
    # Errors need a small gap: with 2000 runs the indifference rule fires.
    assert (res.stop_reasons == "indifference").any()


@pytest.mark.parametrize("algorithm", ["ttts", "ttucb"])
def test_bayesian_poe_top_two(algorithm):
    res = simulate(algorithm, H2, 1.0, 0.1, 2000, 2024, max_samples=200_000)
    _assert_poe_at_most(res, 0.1)


def test_elimination_k10_poe():
    res = simulate("elimination", GaussianPrior.standard(10), 1.0, 0.1, 300, 5)
    _assert_poe_at_most(res, 0.1)


# ---------------------------------------------------------------------------
# Delta_0, TTUCB constant, censoring
# ---------------------------------------------------------------------------


def test_delta0_defaults_and_overrides():
    a = simulate("elimination", H2, 1.0, 0.1, 20, 1)
    assert a.delta0 == pytest.approx(0.1 / (4 * H2.L()))
    b = simulate(Elimination(delta0_factor=1.0), H2, 1.0, 0.1, 20, 1)
    assert b.delta0 == pytest.approx(0.1 / H2.L())
    c = simulate(NoElim(delta0=0.3), H2, 1.0, 0.1, 20, 1)
    assert c.delta0 == 0.3
    # A larger Delta_0 never delays stopping (same rewards, earlier indifference).
    d = simulate(Elimination(delta0=0.3), H2, 1.0, 0.1, 200, 1)
    e = simulate(Elimination(delta0=0.05), H2, 1.0, 0.1, 200, 1)
    assert np.all(d.stopping_times <= e.stopping_times)


def test_ttucb_cg_exact_and_approx():
    x = 0.5 * math.log(1 / 0.1)
    approx = ttucb_cg(x, "approx")
    exact = ttucb_cg(x, "exact")
    assert approx == pytest.approx(x + math.log(x))
    assert math.isfinite(exact) and exact > x
    assert exact == pytest.approx(2.67066251, abs=1e-7)
    # Brute-force check of the minimum.
    from scipy.special import zeta

    lam = np.linspace(0.5 + 1e-6, 1 - 1e-6, 200001)
    obj = (2 * lam - 2 * lam * np.log(4 * lam) + np.log(zeta(2 * lam))
           - 0.5 * np.log(1 - lam) + x) / lam
    assert exact <= obj.min() + 1e-9
    assert exact >= obj.min() - 1e-6
    # The approximation becomes accurate for large x.
    big = 30.0
    assert abs(ttucb_cg(big, "exact") - ttucb_cg(big, "approx")) / big < 0.05
    with pytest.raises(ValueError, match="cg"):
        ttucb_cg(1.0, "other")


def test_ttucb_exact_cg_stops_no_earlier():
    a = simulate("ttucb", H2, 1.0, 0.1, 200, 4, max_samples=10**6)
    b = simulate(TTUCB(cg="exact"), H2, 1.0, 0.1, 200, 4, max_samples=10**6)
    assert a.algorithm.cg == "approx" and b.algorithm.cg == "exact"
    # Same sampling path, larger threshold: every run stops later or at the same time.
    assert np.all(b.stopping_times >= a.stopping_times)
    assert np.any(b.stopping_times > a.stopping_times)


@pytest.mark.parametrize("algorithm", GAUSSIAN_ALGORITHMS)
def test_censoring(algorithm):
    prior = GaussianPrior([0.0, 0.0, 0.0], [0.01, 0.01, 0.01])
    spec = ALGORITHMS[algorithm](delta0=1e-4) if algorithm in ("elimination", "noelim") else algorithm
    res = simulate(spec, prior, 1.0, 0.01, 50, 2, max_samples=40)
    assert res.censored.all()
    assert np.all(res.stopping_times <= 40)
    assert np.all(res.stop_reasons == "censored")
    s = res.summary()
    assert s["n_censored"] == 50
    assert s["stop_reasons"]["censored"] == 50
    assert s["stop_reasons"]["glr"] == s["stop_reasons"]["single_arm"] == 0
    assert s["stop_reasons"]["indifference"] == 0


def test_flat_summary_holds_plain_numbers():
    res = simulate("ttts", H2, 1.0, 0.1, 50, 3, max_samples=2000, progress=False)
    s, flat = res.summary(), res.summary(flat=True)
    assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in flat.values())
    assert (flat["error_lo"], flat["error_hi"]) == s["error_ci"]
    assert flat["stops_glr"] + flat["stops_censored"] == 50
    assert {k: v for k, v in flat.items() if k in s} == {k: v for k, v in s.items() if k in flat}


def test_partial_censoring_counts():
    res = simulate("ttts", H2, 1.0, 0.1, 400, 2024, max_samples=2000)
    s = res.summary()
    n_c = int(res.censored.sum())
    assert 0 < n_c < 400
    assert s["n_censored"] == n_c
    assert s["stop_reasons"]["glr"] == 400 - n_c
    np.testing.assert_array_equal(res.stop_reasons == "censored", res.censored)
    assert np.all(res.stopping_times[res.censored] <= 2000)


# ---------------------------------------------------------------------------
# Progress and validation
# ---------------------------------------------------------------------------


def test_progress_off_writes_nothing(capfd):
    simulate("elimination", H2, 1.0, 0.1, 20, 1)
    simulate("elimination", H2, 1.0, 0.1, 20, 1, progress=False)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_progress_on_does_not_change_results(capfd):
    a = simulate("ttts", H2, 1.0, 0.2, 30, 1, progress=True, max_samples=10**5)
    b = simulate("ttts", H2, 1.0, 0.2, 30, 1, progress=False, max_samples=10**5)
    assert_same(a, b)
    capfd.readouterr()


BAD_CALLS = [
    (dict(algorithm="nope"), "algorithm"),
    (dict(prior=[0.0, 1.0]), "prior"),
    (dict(noise_stds=0.0), "noise_stds"),
    (dict(noise_stds=-1.0), "noise_stds"),
    (dict(noise_stds=float("nan")), "noise_stds"),
    (dict(noise_stds=float("inf")), "noise_stds"),
    (dict(noise_stds=[1.0, 1.0, 1.0]), "noise_stds"),
    (dict(noise_stds="x"), "noise_stds"),
    (dict(delta=0.0), "delta"),
    (dict(delta=1.0), "delta"),
    (dict(delta=-0.5), "delta"),
    (dict(delta=float("nan")), "delta"),
    (dict(delta="a"), "delta"),
    (dict(n_runs=0), "n_runs"),
    (dict(n_runs=2.5), "n_runs"),
    (dict(seed=-1), "seed"),
    (dict(seed=1.5), "seed"),
    (dict(seed=True), "seed"),
    (dict(seed="1"), "seed"),
    (dict(max_samples=1), "max_samples"),
    (dict(delta0=0.1), "delta0"),
    (dict(algorithm="ttts", delta0=0.1), "delta0"),
    (dict(algorithm="ttucb", delta0_factor=1.0), "delta0_factor"),
    (dict(algorithm="ttts", cg="exact"), "cg"),
    (dict(algorithm="ttucb", ttucb_rule="printed"), "ttucb_rule"),
    (dict(algorithm=Elimination), "algorithm"),
    (dict(n_threads=0), "n_threads"),
    (dict(chunk_size=0), "chunk_size"),
    (dict(progress="yes"), "progress"),
    (dict(colour="red"), "colour"),
]


@pytest.mark.parametrize("spec,name", [
    (lambda: Elimination(delta0=0.0), "delta0"),
    (lambda: Elimination(delta0=-1.0), "delta0"),
    (lambda: Elimination(delta0=float("inf")), "delta0"),
    (lambda: NoElim(delta0_factor=0.0), "delta0_factor"),
    (lambda: NoElim(delta0_factor=float("nan")), "delta0_factor"),
    (lambda: Elimination(delta0=0.1, delta0_factor=2.0), "delta0"),
    (lambda: TTUCB(cg="fast"), "cg"),
])
def test_spec_validation(spec, name):
    with pytest.raises(ValueError, match=name):
        spec()


@pytest.mark.parametrize("override,name", BAD_CALLS)
def test_validation(override, name):
    args = dict(algorithm="elimination", prior=H2, noise_stds=1.0, delta=0.1, n_runs=5, seed=0)
    args.update(override)
    with pytest.raises(ValueError, match=name):
        simulate(**args)


def test_k_below_two_rejected():
    class OneArm(GaussianPrior):
        pass

    one = object.__new__(OneArm)
    object.__setattr__(one, "means", np.array([0.0]))
    object.__setattr__(one, "stds", np.array([1.0]))
    object.__setattr__(one, "_cache", {})
    with pytest.raises(ValueError, match="k >= 2"):
        simulate("ttts", one, 1.0, 0.1, 5, 0)


def test_accepts_numpy_scalars_and_vectors():
    res = simulate("ttucb", H3, np.array([1.0, 2.0, 0.5]), np.float64(0.1), np.int64(10),
                   np.uint32(3), max_samples=np.int64(10**6))
    assert res.n_runs == 10 and res.seed == 3
    np.testing.assert_array_equal(res.noise_stds, [1.0, 2.0, 0.5])


# ---------------------------------------------------------------------------
# Fixed instances (the frequentist setting)
# ---------------------------------------------------------------------------


def test_given_means_equal_to_the_prior_draws_reproduce_the_bayesian_runs():
    H = GaussianPrior.standard(3)
    for alg in ("elimination", "ttucb", "tas"):
        bayes = simulate(alg, H, 1.0, 0.1, 300, 21, max_samples=10**5, progress=False)
        fixed = simulate(alg, H, 1.0, 0.1, 300, 21, means=bayes.means, max_samples=10**5,
                         progress=False)
        np.testing.assert_array_equal(fixed.stopping_times, bayes.stopping_times)
        np.testing.assert_array_equal(fixed.recommendations, bayes.recommendations)
        np.testing.assert_array_equal(fixed.censored, bayes.censored)
        assert fixed.means_given and not bayes.means_given


def test_one_fixed_instance_is_reproducible_whatever_the_threads_and_chunks():
    mu = np.array([0.3, 0.0, -0.2])
    runs = [simulate("tas", None, [1.0, 2.0, 1.0], 0.05, 200, 5, means=mu, n_threads=nt,
                     chunk_size=cs, progress=False) for nt, cs in ((1, 1), (2, 1), (2, 7))]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.stopping_times, runs[0].stopping_times)
        np.testing.assert_array_equal(r.recommendations, runs[0].recommendations)
    assert runs[0].prior is None and np.all(runs[0].means == mu) and runs[0].k == 3
    assert len(set(runs[0].stopping_times.tolist())) > 20   # the runs differ from each other


def test_fixed_means_are_checked():
    H = GaussianPrior.standard(2)
    with pytest.raises(ValueError, match="means"):
        simulate("tas", None, 1.0, 0.1, 10, 0, means=[[1.0, 0.0]] * 3)
    with pytest.raises(ValueError, match="means"):
        simulate("tas", None, 1.0, 0.1, 10, 0, means=[1.0, np.inf])
    with pytest.raises(ValueError, match="means"):
        simulate("tas", GaussianPrior.standard(3), 1.0, 0.1, 10, 0, means=[1.0, 0.0])
    with pytest.raises(ValueError, match="prior"):
        simulate("ttts", None, 1.0, 0.1, 10, 0, means=[1.0, 0.0])
    with pytest.raises(ValueError, match="prior"):
        simulate("elimination", None, 1.0, 0.1, 10, 0, means=[1.0, 0.0])
    with pytest.raises(ValueError, match="prior"):
        simulate("tas", None, 1.0, 0.1, 10, 0)
    r = simulate(Elimination(delta0=0.01), None, 1.0, 0.1, 10, 0, means=[1.0, 0.0], progress=False)
    assert r.delta0 == 0.01 and r.error_rate == 0.0
    with pytest.raises(ValueError, match="delta"):
        simulate("tas", H, 1.0, "0.1", 10, 0)


@pytest.mark.parametrize("algorithm", ["elimination", "ttts", "tas"])
def test_shards_of_runs_concatenate_to_one_call(algorithm):
    """Run r depends only on (seed, r): simulating runs 0-9, 10-24 and 25-39 separately gives
    exactly the result of one call over 40 runs, as sweeps rely on."""
    whole = simulate(algorithm, H3, 1.0, 0.2, 40, 5, max_samples=10**5, progress=False)
    parts = [simulate(algorithm, H3, 1.0, 0.2, b - a, 5, first_run=a, max_samples=10**5,
                      progress=False) for a, b in ((0, 10), (10, 25), (25, 40))]
    for name in ARRAYS:
        if name != "seconds":
            np.testing.assert_array_equal(np.concatenate([getattr(p, name) for p in parts]),
                                          getattr(whole, name), err_msg=name)
    assert [p.runs for p in parts] == [range(0, 10), range(10, 25), range(25, 40)]
    # replay uses the run's own index of the seed
    assert parts[1].replay(3)["tau"] == whole.stopping_times[13]
    frame = parts[2].to_frame()
    assert list(frame["run"]) == list(range(25, 40))
    np.testing.assert_array_equal(frame["tau"], whole.stopping_times[25:])
    top2 = np.sort(whole.means[25:], axis=1)[:, -2:]
    np.testing.assert_allclose(frame["gap"], top2[:, 1] - top2[:, 0])
    with pytest.raises(ValueError, match="first_run"):
        simulate(algorithm, H3, 1.0, 0.2, 4, 5, first_run=-1)
    with pytest.raises(ValueError, match="seed"):
        simulate(algorithm, H3, 1.0, 0.2, 4, 2**64)


@pytest.mark.filterwarnings("ignore::bai_lib.CensoringWarning")
@pytest.mark.parametrize("algorithm,prior", [("ttts", "H2"), ("ttucb", "H2"), ("ebtc", "H3"),
                                             ("ttts", "H3"), ("ttucb", "H3"),
                                             ("elimination", "H3"), ("tas", "H2"), ("tas", "H3")])
def test_simulate_deltas_equals_one_call_per_delta(algorithm, prior):
    """One trajectory scored at every level (TTTS, TTUCB, EB-TC, Track-and-Stop), or one pass
    per level (Algorithm 1): either way each level's result is exactly that of simulate at
    that delta."""
    from bai_lib import simulate_deltas

    H = {"H2": H2, "H3": H3}[prior]
    deltas = [0.01, 0.3, 0.001, 0.1]  # any order
    cap = 3 * 10**5  # low enough that some runs are censored at the smaller deltas
    got = simulate_deltas(algorithm, H, 1.0, deltas, 60, 17, max_samples=cap, progress=False)
    assert list(got) == deltas
    for d in deltas:
        want = simulate(algorithm, H, 1.0, d, 60, 17, max_samples=cap, progress=False)
        assert got[d].delta == d and got[d].delta0 == want.delta0
        for name in ARRAYS:
            if name != "seconds":
                np.testing.assert_array_equal(getattr(got[d], name), getattr(want, name),
                                              err_msg=f"{name} at delta = {d}")
    # smaller delta, later stop, run by run (one trajectory for the top-two rules)
    if algorithm in ("ttts", "ttucb", "ebtc", "tas"):
        taus = np.array([got[d].stopping_times for d in sorted(deltas, reverse=True)])
        assert np.all(np.diff(taus, axis=0) >= 0)


def test_simulate_deltas_checks_its_levels():
    from bai_lib import simulate_deltas

    for bad, needle in [([0.1, 0.1], "distinct"), ([], "at least one"), (0.1, "sequence"),
                        ([0.1, 1.5], r"deltas\[1\]"), (["0.1"], r"deltas\[0\]")]:
        with pytest.raises(ValueError, match=needle):
            simulate_deltas("ttts", H2, 1.0, bad, 5, 1)


def test_specifications_answer_what_the_layers_above_ask():
    """The capability methods replace class tests in the orchestration layer."""
    from bai_lib.algorithms.elimination import TwoArmElimination
    H = GaussianPrior.standard(2)
    sig = np.ones(2)
    alg1, walk = Elimination(), TwoArmElimination()
    expected = {  # spec: (coin on 2 arms, has a two-arm walk, traceable, has Δ0)
        alg1: (True, True, True, True),
        Elimination(recommend="empirical_best"): (False, False, False, True),
        NoElim(): (False, False, False, True),
        walk: (True, True, False, True),
        TTUCB(): (False, False, False, False),
        TTTS(): (False, False, False, False),
    }
    for spec, (coin, has_walk, trace, has_d0) in expected.items():
        assert spec.coin_at_indifference(2) is coin, spec
        assert (spec.two_arm_walk() is not None) is has_walk, spec
        assert spec.can_trace() is trace, spec
        assert (spec.resolve_delta0(H, 0.1) is not None) is has_d0, spec
        assert (spec.max_stopping_time(H, sig, 0.1) is not None) is has_d0, spec
    assert not alg1.coin_at_indifference(3)
    assert alg1.two_arm_walk() == walk
    assert alg1.max_stopping_time(H, np.array([1.0, 2.0]), 0.1) is None  # unequal noise
    assert Elimination(delta0=0.1).with_delta0_factor(1.0) == Elimination(delta0=0.1)
    assert alg1.with_delta0_factor(1.0) == Elimination(delta0_factor=1.0)
    assert TTUCB().with_delta0_factor(1.0) == TTUCB()
    # the two-arm walk's runs are not the ones trace_elimination replays: refused, not wrong
    res = simulate(walk, H, 1.0, 0.1, 3, seed=1)
    with pytest.raises(ValueError, match="trace\\(\\) covers Algorithm 1"):
        res.trace(0)


def test_from_runs_derives_best_arm_correctness_and_censoring():
    means = np.array([[0.0, 1.0], [2.0, 1.0], [0.5, 0.0]])
    res = SimulationResult.from_runs(
        algorithm=TTUCB(), prior=None, noise_stds=np.ones(2), delta=0.1, delta0=None, seed=3,
        max_samples=100, means=means, means_given=True, first_run=5,
        stopping_times=[10, 100, 7], recommendations=[1, 1, 0],
        stop_reasons=["glr", "censored", "glr"], seconds=[0.1, 0.2, 0.3])
    assert res.best_arms.tolist() == [1, 0, 0]
    assert res.correct.tolist() == [True, False, True]
    assert res.censored.tolist() == [False, True, False]
    assert list(res.runs) == [5, 6, 7]
    for a in (res.stopping_times, res.correct, res.censored, res.means, res.noise_stds):
        assert not a.flags.writeable


def test_a_run_ending_on_an_exact_tie_between_best_arms_is_correct():
    """means = [1, 1]: every run stops at indifference and either arm is a best arm (about
    half the runs were counted as errors)."""
    res = simulate("elimination", GaussianPrior.standard(2), 1.0, 0.1, 200, seed=4,
                   means=[1.0, 1.0], progress=False)
    assert set(res.recommendations.tolist()) == {0, 1}  # both arms recommended ...
    assert res.correct.all() and res.error_rate == 0.0  # ... and both are best
    three = simulate("elimination", GaussianPrior.standard(3), 1.0, 0.1, 200, seed=4,
                     means=[1.0, 0.0, 1.0], progress=False)
    np.testing.assert_array_equal(three.correct, three.recommendations != 1)


def test_one_binding_serves_one_level_or_many():
    """A one-trajectory specification binds several levels at once, the others one at a time,
    and a binding at one level runs like the same level taken from a binding at several."""
    H, sig = GaussianPrior.standard(3), np.ones(3)
    with pytest.raises(ValueError, match="one confidence level at a time"):
        Elimination().bind(H, sig, [0.1, 0.01], 10**6)
    assert TTUCB().one_trajectory and not Elimination().one_trajectory
    assert not TTUCB(indifference=True).one_trajectory  # forcing depends on the level
    mu = np.array([0.3, 0.0, -0.2])
    many = TTUCB().bind(H, sig, [0.1, 0.01], 10**7)
    tau, rec, code = (np.empty(2, np.int64) for _ in range(3))
    many.run(_rng.seed_state(4, 0, 1), mu, tau, rec, code)
    for j, d in enumerate([0.1, 0.01]):
        one = TTUCB().bind(H, sig, [d], 10**7).run_one(_rng.seed_state(4, 0, 1), mu)
        assert one == (tau[j], rec[j], False, code[j])
    # the warm-up's override of the censoring level
    assert TTUCB().bind(H, sig, [0.01], 10**7).run_one(_rng.seed_state(4, 0, 1), np.zeros(3),
                                                        max_samples=3)[2]


def test_a_run_plan_is_checked_once_and_runs_like_simulate():
    from bai_lib.plan import RunPlan
    from bai_lib.simulation import run_plan
    H = GaussianPrior.standard(3)
    plan = RunPlan.build("ttucb", H, 1.0, [0.1, 0.01], 20, 7, first_run=5)
    assert (plan.k, plan.n_runs, plan.deltas) == (3, 20, (0.1, 0.01))
    assert list(plan.runs) == list(range(5, 25))
    assert plan.max_samples == TTUCB().default_max_samples(3) and not plan.means_given
    assert np.array_equal(plan.instance_means(), H.sample_means(7, 25)[5:])
    a, b = run_plan(plan, n_threads=1)
    ref = simulate("ttucb", H, 1.0, 0.01, 20, 7, first_run=5, n_threads=2)
    assert np.array_equal(b.stopping_times, ref.stopping_times)
    assert np.array_equal(b.recommendations, ref.recommendations)
    for bad, match in [(dict(deltas=[0.1, 0.1]), "distinct"), (dict(n_runs=0), "n_runs"),
                       (dict(prior=None), "prior is None"), (dict(max_samples=2), "max_samples"),
                       (dict(deltas="0.1"), "deltas")]:
        args = dict(algorithm="ttucb", prior=H, noise_stds=1.0, deltas=[0.1], n_runs=3, seed=1)
        args.update(bad)
        with pytest.raises(ValueError, match=match):
            RunPlan.build(**args)

"""A user's own sampling rule through SamplingRule (bai_lib.algorithms.plugin)."""

import math

import numpy as np
import pytest
from numba import njit

from bai_lib import SamplingRule, simulate
from bai_lib.algorithms.plugin import uniform
from test_baselines import _states, glr_stop
from test_conventions import Stream


@njit
def round_robin(t, N, S, sigma, state):
    return t % N.size


@njit
def least_sampled_then_random(t, N, S, sigma, state):
    if uniform(state) < 0.5:
        return int(np.argmin(N))
    return int(uniform(state) * N.size)


@njit
def out_of_range(t, N, S, sigma, state):
    return -1


def ref_round_robin(state, mu, sigma, delta):
    k = mu.size
    stream = Stream(state, k)
    S = mu + sigma * stream.take(k)
    N = np.ones(k)
    t = k
    while True:
        stop, b = glr_stop(S * (1.0 / N), sigma**2 * (1.0 / N), math.log(t / delta))
        if stop:
            return t, b
        arm = t % k
        S[arm] += mu[arm] + sigma[arm] * stream.take(1)[0]
        N[arm] += 1
        t += 1


def test_round_robin_plugin_matches_a_plain_reference_run_for_run():
    mu, sigma = np.array([0.6, 0.3, 0.0]), np.array([1.0, 0.7, 1.3])
    res = simulate(SamplingRule(round_robin, "round robin"), None, sigma, 0.05, 100, 3,
                   means=mu, progress=False)
    ref = np.array([ref_round_robin(st, mu, sigma, 0.05) for st in _states(3, 100)])
    np.testing.assert_array_equal(res.stopping_times, ref[:, 0])
    np.testing.assert_array_equal(res.recommendations, ref[:, 1])
    assert res.algorithm.label == "round robin" and set(res.stop_reasons) == {"glr"}


def test_a_randomised_plugin_keeps_the_seeding_guarantees():
    spec = SamplingRule(least_sampled_then_random)
    runs = [simulate(spec, None, 1.0, 0.05, 300, 4, means=[0.5, 0.0, 0.2], n_threads=nt,
                     chunk_size=cs, progress=False) for nt, cs in ((1, 1), (2, 5))]
    np.testing.assert_array_equal(runs[0].stopping_times, runs[1].stopping_times)
    other = simulate(spec, None, 1.0, 0.05, 300, 5, means=[0.5, 0.0, 0.2], progress=False)
    assert not np.array_equal(other.stopping_times, runs[0].stopping_times)
    censored = simulate(spec, None, 1.0, 1e-6, 20, 4, means=[0.5, 0.0, 0.2], max_samples=50,
                        progress=False)
    assert censored.censored.all() and np.all(censored.stopping_times == 50)


@pytest.mark.filterwarnings("ignore::bai_lib.CensoringWarning")
def test_a_plugin_scores_one_trajectory_at_every_delta():
    """simulate_deltas runs a user's rule once per run and each level equals its own run."""
    from bai_lib import GaussianPrior, simulate_deltas

    spec, H = SamplingRule(least_sampled_then_random), GaussianPrior.standard(3)
    deltas = [0.01, 0.3, 0.001]
    cap = 3000   # low enough that some runs are censored at the smaller deltas
    got = simulate_deltas(spec, H, 1.0, deltas, 50, 8, max_samples=cap, progress=False)
    for d in deltas:
        want = simulate(spec, H, 1.0, d, 50, 8, max_samples=cap, progress=False)
        for name in ("stopping_times", "recommendations", "censored", "stop_reasons"):
            np.testing.assert_array_equal(getattr(got[d], name), getattr(want, name))
    assert got[0.001].censored.any() and not got[0.3].censored.all()
    taus = np.array([got[d].stopping_times for d in (0.3, 0.01, 0.001)])
    assert np.all(np.diff(taus, axis=0) >= 0) and np.any(np.diff(taus, axis=0) > 0)


def test_plugin_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="select"):
        SamplingRule(lambda t, N, S, sigma, state: 0)
    with pytest.raises(ValueError, match="threshold"):
        SamplingRule(round_robin, threshold="printed")
    with pytest.raises(ValueError, match="label_text"):
        SamplingRule(round_robin, label_text="")
    with pytest.raises(ValueError, match="outside"):
        simulate(SamplingRule(out_of_range), None, 1.0, 0.05, 4, 0, means=[1.0, 0.0],
                 progress=False)


@pytest.mark.parametrize("body, message", [
    ("return 0.5", "must return an int .* float64"),
    ("return True", "must return an int .*bool"),
    ("return (1, 2)", "must return an int .* Tuple"),
])
def test_a_rule_with_the_wrong_return_type_is_refused_in_one_sentence(body, message):
    namespace = {}
    exec(f"def rule(t, N, S, noise_stds, state):\n    {body}\n", namespace)
    with pytest.raises(ValueError, match=message):
        SamplingRule(njit(namespace["rule"]))


def test_a_rule_with_the_wrong_signature_is_refused_naming_select():
    @njit
    def three(t, N, S):
        return 0

    with pytest.raises(ValueError, match=r"^select must be callable as select\(t, N, S, "
                                         r"noise_stds, state\).*5 argument types given"):
        SamplingRule(three)


@njit
def _round_robin(t, N, S, noise_stds, state):
    return t % N.size


@njit
def _writes_counts(t, N, S, noise_stds, state):
    arm = t % N.size
    N[0] = 0
    S[1] = 1e308
    noise_stds[0] = 0.0
    return arm


@njit
def _zeroes_state(t, N, S, noise_stds, state):
    state[:] = 0
    return t % N.size


def test_a_rule_writing_to_its_arguments_changes_nothing():
    """The rule sees copies: the run, and the result's read-only noise levels, are those of the
    same rule without the writes."""
    from bai_lib import GaussianPrior
    H = GaussianPrior.standard(3)
    clean = simulate(SamplingRule(_round_robin), H, [1.0, 2.0, 0.5], 0.1, 30, 4)
    dirty = simulate(SamplingRule(_writes_counts), H, [1.0, 2.0, 0.5], 0.1, 30, 4)
    assert np.array_equal(clean.stopping_times, dirty.stopping_times)
    assert np.array_equal(clean.recommendations, dirty.recommendations)
    assert dirty.noise_stds.tolist() == [1.0, 2.0, 0.5]


def test_a_rule_zeroing_the_generator_state_is_refused():
    from bai_lib import GaussianPrior
    with pytest.raises(ValueError, match="generator state to zero"):
        simulate(SamplingRule(_zeroes_state), GaussianPrior.standard(2), 1.0, 0.1, 2, 1)


@njit
def _raises_after_ten(t, N, S, noise_stds, state):
    if t >= 10:
        raise ValueError("the rule gives up at t = 10")
    return t % N.size


def test_an_exception_raised_by_the_rule_reaches_the_caller():
    """The kernel calls the rule through its address with numba's own calling convention, so an
    error raised inside the rule propagates like one from any compiled function."""
    with pytest.raises(ValueError, match="gives up at t = 10"):
        simulate(SamplingRule(_raises_after_ten), None, 1.0, 1e-6, 2, 1, means=[0.5, 0.0],
                 progress=False)


def test_a_rule_returning_another_integer_type_is_refused_naming_int64():
    @njit
    def narrow(t, N, S, noise_stds, state):
        return np.int32(t % N.size)

    with pytest.raises(ValueError, match=r"select must return an int .*int64.*returns int32"):
        SamplingRule(narrow)


def test_the_kernel_is_compiled_once_for_every_rule():
    """Rules are passed by address: two different rules run through one compiled kernel (a
    function argument made numba compile the kernel again for each rule)."""
    from bai_lib.algorithms.glr import glr_run
    from bai_lib.algorithms.plugin import PluginSteps
    for rule in (_round_robin, least_sampled_then_random):
        simulate(SamplingRule(rule), None, 1.0, 0.1, 3, 1, means=[1.0, 0.0, 0.5],
                 progress=False)
    plugin = [s for s in glr_run.signatures if getattr(s[2], "instance_class", None) is PluginSteps]
    assert len(plugin) == 1, glr_run.signatures


RULE_MODULE = '''
from numba import njit
@njit(cache=True)
def every_other(t, N, S, noise_stds, state):
    return t % N.size
'''

SECOND_PROCESS = '''
import sys
sys.path.insert(0, sys.argv[1])
from bai_lib import SamplingRule, simulate
from bai_lib.algorithms.glr import glr_run
from user_rule_module import every_other
simulate(SamplingRule(every_other), None, 1.0, 0.1, 3, 1, means=[1.0, 0.0], progress=False)
stats = glr_run.stats
print(sum(stats.cache_hits.values()), sum(stats.cache_misses.values()))
'''


def test_a_new_process_loads_the_kernel_of_a_user_rule_from_the_disk_cache(tmp_path):
    """A rule in an importable module: the second process compiles nothing of the kernel."""
    import subprocess
    import sys
    (tmp_path / "user_rule_module.py").write_text(RULE_MODULE)
    counts = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", SECOND_PROCESS, str(tmp_path)],
                             capture_output=True, text=True, check=True,
                             env={**__import__("os").environ, "BAI_LIB_PROGRESS": "0"})
        counts.append(tuple(int(x) for x in out.stdout.split()))
    hits, misses = counts[1]
    assert (hits, misses) == (1, 0), counts

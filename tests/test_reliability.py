"""Bad and extreme inputs to ``simulate``: a clear ValueError naming the parameter, or the right
answer; never inf/NaN/0 used silently, an overflow traceback or a hang."""

from __future__ import annotations

import io
import sys
import time
import warnings

import numpy as np
import pytest

from bai_lib import TTTS, CensoringWarning, GaussianPrior, simulate
from bai_lib.algorithms import ALGORITHMS
from bai_lib.stats import clopper_pearson

# the algorithms that simulate Gaussian rewards
GAUSSIAN_ALGORITHMS = [n for n, c in ALGORITHMS.items() if "gaussian" in c.reward_models]
from bai_lib.executor import memory_needed

H2 = GaussianPrior.standard(2)
H3 = GaussianPrior.standard(3)


def run(**kw):
    args = dict(algorithm="elimination", prior=H2, noise_stds=1.0, delta=0.1, n_runs=20, seed=1,
                progress=False)
    args.update(kw)
    return simulate(**args)


def test_too_many_runs_is_refused_before_any_allocation():
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=r"n_runs = 1,000,000,000 needs about .* GiB"):
        run(n_runs=10**9)
    assert time.perf_counter() - t0 < 5  # refused up front, not after filling memory
    assert memory_needed(10**9, 2) > 10**11


@pytest.mark.parametrize("bad,match", [
    (dict(max_samples=2**63), "max_samples must be an integer in"),
    (dict(max_samples=10**30), "max_samples must be an integer in"),
    (dict(delta=5e-324), r"delta must lie in the supported range \[1e-100, 1\)"),
    (dict(delta=1e-300), "delta must lie in the supported range"),
    (dict(delta="0.1"), "delta"),
    (dict(seed="42"), "seed"),
    (dict(noise_stds=None), "noise_stds must be a positive number"),
    (dict(noise_stds="1.0"), "noise_stds must be a positive number"),
    (dict(noise_stds=[True, True]), "noise_stds must be a positive number"),
    (dict(noise_stds=1e155), r"noise_stds must lie in the supported range \[1e-100, 1e\+100\]"),
    (dict(noise_stds=1e-120), "noise_stds must lie in the supported range"),
    (dict(means=["0.5", "0"]), "means must be an array of real numbers"),
    (dict(means=[1e120, 0.0]), "means must have magnitudes in the supported range"),
    (dict(prior=GaussianPrior([0.0, 0.0], [1e-120, 1e-120])), "prior: stds"),
    (dict(n_runs=2.0), "n_runs"),
])
def test_bad_and_extreme_inputs_are_refused_by_name(bad, match):
    with pytest.raises(ValueError, match=match):
        run(**bad)


@pytest.mark.parametrize("name", GAUSSIAN_ALGORITHMS)
def test_tiny_noise_identifies_the_best_arm(name):
    """With noise far below the gaps every algorithm must be right; Algorithm 1 used to
    eliminate every arm when sigma * Conf fell below the rounding of the means (UCB == LCB)
    and then return a random arm (31-51% error)."""
    for sigma in (1e-17, 1e-60, 1e-100):
        res = simulate(name, H3, sigma, 0.1, 200, 3, progress=False)
        # Prior draws with a gap below the indifference level may end in an indifference stop;
        # away from it the answer must be right.
        gap = np.sort(res.means, axis=1)
        clear = (gap[:, -1] - gap[:, -2]) > 1e-6
        if name == "posterior":
            # A posterior rule may stop before it has sampled every arm, and then errs with
            # probability at most δ under the prior: it must stop, and err no more than that.
            assert not np.any(res.censored), (name, sigma)
            assert clopper_pearson(int(np.count_nonzero(~res.correct)), res.n_runs)[0] <= 0.1
            continue
        assert np.all(res.correct[clear]), (name, sigma)
        assert np.all(res.stopping_times[clear] == 3), (name, sigma)


@pytest.mark.parametrize("name", GAUSSIAN_ALGORITHMS)
def test_huge_noise_censors_without_nonsense(name):
    """Noise 1e100 times the prior scale: no algorithm can tell the arms apart within the cap.
    Every run must be censored (not stop early on an overflowed statistic), with the warning."""
    with pytest.warns(CensoringWarning, match=r"50 of 50 runs \(100.00%\)"):
        res = simulate(name, H3, 1e100, 0.1, 50, 3, max_samples=20_000, progress=False)
    assert res.censored.all()
    assert np.all(res.stopping_times >= 19_990)


def test_censoring_warning_counts_runs_and_is_silent_otherwise():
    with pytest.warns(CensoringWarning, match=r"of 40 runs .* max_samples = 1,000"):
        res = simulate("ttucb", H2, 1.0, 0.1, 40, 5, max_samples=1000, progress=False)
    n = int(res.censored.sum())
    assert 0 < n < 40
    with warnings.catch_warnings():
        warnings.simplefilter("error", CensoringWarning)
        simulate("elimination", H2, 1.0, 0.1, 40, 5, progress=False)


def test_caller_arrays_are_never_modified_or_frozen():
    mu = np.array([0.5, 0.0])
    sig = np.array([1.0, 2.0])
    res = simulate("ttucb", None, sig, 0.1, 5, 1, means=mu, progress=False)
    assert mu.flags.writeable and sig.flags.writeable
    mu[0] = 3.0  # the result keeps its own copy
    sig[0] = 7.0
    assert res.means[0, 0] == 0.5 and res.noise_stds[0] == 1.0


def test_progress_default_follows_the_terminal(monkeypatch):
    from bai_lib import executor

    monkeypatch.delenv("BAI_LIB_PROGRESS", raising=False)
    monkeypatch.setattr(executor.sys, "stderr", open("/dev/null", "w"))  # not a terminal
    monkeypatch.delitem(executor.sys.modules, "IPython", raising=False)  # no kernel shell
    assert executor.progress_enabled(None) is False
    monkeypatch.setenv("BAI_LIB_PROGRESS", "1")
    assert executor.progress_enabled(None) is True
    monkeypatch.setenv("BAI_LIB_PROGRESS", "0")
    assert executor.progress_enabled(True) is True
    assert executor.progress_enabled(None) is False


def test_default_cap_is_practical_for_slow_ttts():
    """TTTS with k > 2 and the re-drawing challengers draws the posterior up to a hundred times
    a step (~1e5-1e6 samples/s): their default cap is 1e7 samples, so a censored run takes
    seconds, not the hour a 1e9 cap would. The exact challenger (default) keeps 1e9."""
    H10 = GaussianPrior.standard(10)
    for rule in ("resample", "released"):
        spec = TTTS(challenger=rule)
        assert simulate(spec, H10, 1.0, 0.1, 2, 1, progress=False).max_samples == 10**7
    assert simulate("ttts", H10, 1.0, 0.1, 2, 1, progress=False).max_samples == 10**9
    assert simulate("ttts", H2, 1.0, 0.1, 2, 1, progress=False).max_samples == 10**9
    assert simulate("ttucb", H10, 1.0, 0.1, 2, 1, progress=False).max_samples == 10**9
    assert simulate("ttts", H10, 1.0, 0.1, 2, 1, max_samples=500, progress=False).max_samples == 500


def test_progress_bar_starts_at_once_and_estimates_time_by_cost(capfd):
    """The bar is drawn before the first run ends (seeding is compiled and takes milliseconds),
    and its time left is weighted by the runs' expected cost: runs are scheduled longest first,
    so a count-based estimate would start far too pessimistic."""
    import re

    n = 20_000
    res = simulate("elimination", H2, 1.0, 0.1, n, 1, progress=True)
    err = capfd.readouterr().err
    assert re.search(rf"\b0/{n} runs", err)  # drawn from the start
    assert re.findall(r"about (\d\d):(\d\d) left", err)  # the cost-weighted estimate
    assert "<" not in err  # no count-based estimate next to it
    assert res.n_runs == n


def test_progress_moves_while_a_long_run_holds_every_worker(capfd, monkeypatch):
    """One long run and no other: no run finishes for seconds, yet the bar redraws about once a
    second with the elapsed time and names the age of the run in progress."""
    import re

    from bai_lib import executor as S
    monkeypatch.setattr(S, "LONG_RUN_NOTICE", 0.5)
    from bai_lib import CensoringWarning
    with pytest.warns(CensoringWarning):  # tied means: the run goes to its cap
        res = simulate("ttucb", None, 1.0, 0.01, 1, 2, means=[0.0, 0.0], progress=True,
                       n_threads=1, max_samples=15 * 10**7)
    err = capfd.readouterr().err
    assert res.seconds > 2.5, res.seconds  # long enough to need the redraws
    ages = re.findall(r"a run going for 00:(\d\d)", err)
    assert len(set(ages)) >= 2, err[-2000:]  # the age moves
    assert re.search(r"\b0/1 runs \[00:0[1-9]", err), err[-2000:]  # elapsed time moves too


def test_a_chapter_run_in_a_kernel_keeps_no_progress_output(monkeypatch):
    """Executed by nbclient (as ``jupyter execute`` and nbval do: no input allowed, a batch
    execution), a cell whose call compiles and lasts seconds keeps its own output only: no
    progress display, no compile notice on stderr (both would be saved into the notebook)."""
    import nbclient
    import nbformat

    monkeypatch.delenv("BAI_LIB_PROGRESS", raising=False)
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(
        "import warnings\nwarnings.simplefilter('ignore')\nprint('before')\n"
        "from bai_lib import simulate\nfrom bai_lib.executor import kernel_request\n"
        "r = simulate('ttucb', None, 1.0, 0.01, 1, 2, means=[0.0, 0.0], n_threads=1,\n"
        "             max_samples=15 * 10**7)\nprint('after', r.seconds[0] > 1.5, "
        "kernel_request())"))
    nbclient.NotebookClient(nb, kernel_name="python3", timeout=300).execute()
    outputs = nb.cells[0].outputs
    assert [o["output_type"] for o in outputs] == ["stream"] * len(outputs), outputs
    assert "".join(o["text"] for o in outputs) == "before\nafter True batch\n", outputs


class _Shell:
    """An IPython shell whose kernel answers ``get_parent`` as ipykernel does."""

    def __init__(self, content):
        parent = {"header": {}, "content": content}
        self.kernel = type("K", (), {"get_parent": lambda self, channel=None: parent})()


@pytest.mark.parametrize("content, kind, progress, notice", [
    ({"code": "", "allow_stdin": True}, "interactive", True, True),
    ({"code": "", "allow_stdin": False}, "batch", False, False),
    ({}, "interactive", True, True),  # a kernel that does not say
])
def test_a_notebook_someone_uses_shows_progress_a_batch_execution_does_not(
        content, kind, progress, notice, monkeypatch):
    from bai_lib import executor

    fake = type(sys)("IPython")
    fake.get_ipython = lambda: _Shell(content)
    monkeypatch.setitem(executor.sys.modules, "IPython", fake)
    monkeypatch.delenv("BAI_LIB_PROGRESS", raising=False)
    monkeypatch.setattr(executor.sys, "stderr", io.StringIO())  # not a terminal
    assert executor.kernel_request() == kind
    assert executor.progress_enabled(None) is progress
    assert executor.notice_enabled(None) is notice
    monkeypatch.setenv("BAI_LIB_PROGRESS", "1")
    assert executor.progress_enabled(None) and executor.notice_enabled(None)


def test_cost_weighted_eta_is_not_misled_by_longest_first(monkeypatch):
    """Two runs of cost 1000 done out of 1000 runs (998 of cost 1): a count-based estimate says
    499 times the elapsed time is left, the cost-weighted one about half of it."""
    from bai_lib import executor as S

    clock = iter([0.0, 10.0])
    monkeypatch.setattr(S.time, "perf_counter", lambda: next(clock))
    keys = np.array([999.0, 999.0] + [0.0] * 998)
    bar = S.CostProgress("t", keys, max_samples=10**9)
    bar.update(np.array([0, 1]))
    text = str(bar.bar)
    bar.close()
    assert "about 00:04 left" in text  # 10 s * 998 / 2000 = 4.99 s


def test_importance_poe_refuses_too_many_runs_before_drawing():
    """The memory preflight runs before the proposal allocates (it raised MemoryError)."""
    from bai_lib.poe import importance_poe
    with pytest.raises(ValueError, match=r"n_runs = 100,000,000,000 needs about"):
        importance_poe("elimination", GaussianPrior.standard(2), 1.0, 0.1, 10**11, 1)


def test_gaps_and_noise_ratios_beyond_double_precision_are_refused_by_name():
    from bai_lib import characteristic_time
    with pytest.raises(ValueError, match="^means: the smallest gap"):
        characteristic_time([1e-300, 0.0])  # the squared gap underflowed: ZeroDivisionError
    with pytest.raises(ValueError, match="^noise_stds: the largest variance"):
        characteristic_time([1.0, 0.0], [1e-90, 1e90])
    with pytest.raises(ValueError, match="^noise_stds: the largest variance"):
        simulate("tas", None, [1e-100, 1e100], 0.1, 1, 1, means=[1.0, 0.0])
    with pytest.raises(ValueError, match="^means must be finite real numbers"):
        characteristic_time([True, False])
    assert characteristic_time([1e-150, 0.0])[0] == pytest.approx(8e300)  # still in range


def test_fixed_means_are_checked_for_memory_before_they_are_expanded():
    """One instance for 10^9 runs was copied into a 16 GB array before the check refused it."""
    import tracemalloc

    tracemalloc.start()  # numpy reports its allocations to tracemalloc
    try:
        with pytest.raises(ValueError, match=r"n_runs = 1,000,000,000 needs about"):
            simulate("ttucb", None, 1.0, 0.1, 10**9, 1, means=[1.0, 0.0])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"{peak / 2**20:.0f} MiB allocated before the refusal"


@pytest.mark.parametrize("name", ["ttucb", "ebtc"])
def test_the_memory_check_counts_the_kernels_k_by_k_tables(name, monkeypatch):
    """TTUCB and EB-TC keep a k x k table per running simulation (MemoryError at 10^5 arms)."""
    from bai_lib import executor
    from bai_lib.algorithms import resolve
    monkeypatch.setattr(executor, "available_memory", lambda: 24 * 2**30)
    assert resolve(name).working_memory(5000) == 8 * 5000**2
    with pytest.raises(ValueError, match=r"k = 100,000 arms need about 149.0 GiB of working"):
        simulate(name, None, 1.0, 0.1, 2, 1, means=np.arange(100_000.0), n_threads=2)

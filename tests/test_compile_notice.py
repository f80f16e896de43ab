"""The one-line notice of a first call that compiles (``executor.warm_up``)."""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from bai_lib import GaussianPrior, simulate
from bai_lib import executor

NOTICE = "simulator (first call in this process only)"


def _fresh_kernel():
    @njit  # a new function object: the first call compiles it (no on-disk cache)
    def add_one(x):
        return x + 1.0

    return add_one


def test_a_compiling_call_is_announced_once(monkeypatch, capsys):
    monkeypatch.setattr(executor, "COMPILE_NOTICE_AFTER", 0.05)
    kernel = _fresh_kernel()

    def call():
        kernel(np.float64(1.0))
        time.sleep(0.3)

    executor.warm_up(call, "Test", show=True)
    err = capsys.readouterr().err
    assert err.count(NOTICE) == 1 and "compiling the Test simulator" in err, err


def test_no_notice_without_progress_or_without_compiling(monkeypatch, capsys):
    monkeypatch.setattr(executor, "COMPILE_NOTICE_AFTER", 0.05)
    kernel = _fresh_kernel()
    executor.warm_up(lambda: (kernel(np.float64(1.0)), time.sleep(0.3)), "Test", show=False)
    kernel(np.float64(2.0))  # compiled now
    executor.warm_up(lambda: (kernel(np.float64(1.0)), time.sleep(0.3)), "Test", show=True)
    assert NOTICE not in capsys.readouterr().err


def test_simulate_stays_silent_when_progress_is_off(monkeypatch, capsys):
    monkeypatch.setattr(executor, "COMPILE_NOTICE_AFTER", 0.0)
    res = simulate("elimination", GaussianPrior.standard(2), 1.0, 0.1, 5, seed=1, progress=False)
    assert res.n_runs == 5
    assert capsys.readouterr().err == ""


def test_the_notice_shows_on_piped_output_unless_progress_is_turned_off(monkeypatch):
    """Piped (not a terminal, not a kernel) a compile is still announced; only an explicit off
    (progress=False or BAI_LIB_PROGRESS=0) silences it."""
    monkeypatch.delenv("BAI_LIB_PROGRESS", raising=False)
    assert executor.notice_enabled(None) and executor.notice_enabled(True)
    assert not executor.notice_enabled(False)
    monkeypatch.setenv("BAI_LIB_PROGRESS", "0")
    assert not executor.notice_enabled(None) and executor.notice_enabled(True)


def test_simulate_asks_for_the_notice_on_piped_output(monkeypatch):
    """``simulate(progress=None)`` with output captured (as piped: no terminal, no kernel) asks
    ``warm_up`` for the notice; with ``BAI_LIB_PROGRESS=0`` it does not."""
    import bai_lib.simulation as simulation
    asked = []
    real = simulation.warm_up
    monkeypatch.setattr(simulation, "warm_up",
                        lambda call, label, show: (asked.append(show), real(call, label, False)))
    monkeypatch.delenv("BAI_LIB_PROGRESS", raising=False)
    simulate("elimination", GaussianPrior.standard(2), 1.0, 0.1, 3, seed=1)
    monkeypatch.setenv("BAI_LIB_PROGRESS", "0")
    simulate("elimination", GaussianPrior.standard(2), 1.0, 0.1, 3, seed=1)
    assert asked == [True, False]

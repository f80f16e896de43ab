"""Ctrl-C stops a simulation within about a second, whatever the thread count.

Every kernel polls a cancellation flag at each refill of its normal buffer; ``simulate`` keeps
the calling thread free, raises the flag on KeyboardInterrupt and re-raises once the threads
have returned. The runs below would take minutes each, so a prompt exit can only come from
the flag.
"""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from bai_lib import (EBTC, LUCB, TTTS, TTUCB, BetaPrior, Elimination, GaussianPrior, NoElim,
                     SamplingRule, TrackAndStop, simulate)
from bai_lib.algorithms import resolve
from bai_lib.kernels import STOP_INTERRUPTED, cancel_flag

REPO = Path(__file__).resolve().parents[1]

# (algorithm, k): two nearly tied arms, so no run stops before max_samples = 1e10.
LONG_RUNS = [("elimination", 2), ("ttucb", 2), ("ttts", 10), ("tas", 10), ("lucb", 2)]

# One process per thread count runs the five, one after the other (a session interrupted
# several times, as in a notebook), so the interpreter and the library start once.
_CHILD = """
import sys
import numpy as np
from bai_lib import Elimination, GaussianPrior, simulate
threads = int(sys.argv[1])
for case in sys.argv[2:]:
    name, k = case.split(":")[0], int(case.split(":")[1])
    spec = Elimination(delta0=1e-7) if name == "elimination" else name
    mu = np.array([1e-4, 0.0] + [-1.0] * (k - 2))
    prior = GaussianPrior.standard(k)
    simulate(spec, prior, 1.0, 0.1, 2, 1, means=mu, max_samples=1000, progress=False)
    print("started", name, flush=True)
    try:
        simulate(spec, prior, 1.0, 0.1, 8, 1, means=mu, max_samples=10**10, n_threads=threads,
                 progress=False)
        print("finished", name, flush=True)
    except KeyboardInterrupt as exc:
        print("interrupted:", name, exc, flush=True)
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_simulate_promptly(threads):
    """Each of the long runs of ``LONG_RUNS``, Ctrl-C'd half a second in, raises
    KeyboardInterrupt within seconds; the process then goes on to the next and ends normally."""
    # A shell without job control starts background jobs with SIGINT ignored, and children
    # inherit that; restore the default so the child gets Python's KeyboardInterrupt handler,
    # as a program started from a terminal does.
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(threads),
                             *(f"{name}:{k}" for name, k in LONG_RUNS)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line.strip()) for line in proc.stdout],
                     daemon=True).start()

    def next_line(timeout: float) -> str:
        try:
            return lines.get(timeout=timeout)
        except queue.Empty:
            proc.kill()
            pytest.fail(f"no line from the child within {timeout} s: {proc.stderr.read()}")

    latencies = {}
    try:
        for name, _ in LONG_RUNS:
            assert next_line(120) == f"started {name}"
            time.sleep(0.5)  # inside the long runs
            t0 = time.perf_counter()
            proc.send_signal(signal.SIGINT)
            out = next_line(60)
            latencies[name] = time.perf_counter() - t0
            assert out.startswith(f"interrupted: {name} simulate interrupted"), out
            assert "no result was returned" in out, out
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
    finally:
        proc.kill()
    # Each run needs minutes; every one ends within seconds of its Ctrl-C.
    assert max(latencies.values()) < 5.0, latencies


def _returns_when_the_flag_is_raised(bound, mu):
    """A run of ``bound`` on ``mu`` that would take minutes, still going 0.3 s in, returns
    within seconds of the flag with an interrupted record."""
    flag = cancel_flag()
    out = {}

    def target():
        out["result"] = bound.run_one(np.array([1, 2, 3, 4], dtype=np.uint64), mu, cancel=flag)

    bound.run_one(np.array([1, 2, 3, 4], dtype=np.uint64), mu, max_samples=100)  # compile
    thread = threading.Thread(target=target)
    thread.start()
    time.sleep(0.3)
    assert thread.is_alive()
    flag[0] = 1
    thread.join(timeout=10)
    assert not thread.is_alive()
    tau, rec, censored, reason = out["result"]
    assert reason == STOP_INTERRUPTED and censored and rec == -1
    assert 0 < tau < 10**10


@pytest.mark.parametrize("name", ["elimination", "noelim", "ttts", "ttucb", "ebtc", "tas", "lucb"])
def test_every_kernel_returns_when_the_flag_is_raised(name):
    k = 3
    spec = resolve(name)
    if name in ("elimination", "noelim"):
        spec = type(spec)(delta0=1e-7)
    bound = spec.bind(GaussianPrior.standard(k), np.ones(k), [0.1], 10**10)
    mu = np.array([1e-4, 0.0, -1e-4])
    _returns_when_the_flag_is_raised(bound, mu)


BERNOULLI_SPECS = {"elimination": Elimination(delta0=1e-7), "kl": Elimination(delta0=1e-7,
                                                                             widths="kl"),
                   "noelim": NoElim(delta0=1e-7), "ttts": TTTS(challenger="resample"),
                   "ttts-fair-k2": TTTS(), "ttucb": TTUCB(), "ebtc": EBTC(),
                   "tas": TrackAndStop(), "lucb": LUCB()}


@pytest.mark.parametrize("name", list(BERNOULLI_SPECS))
def test_every_bernoulli_kernel_returns_when_the_flag_is_raised(name):
    k = 2 if name.endswith("k2") else 3
    bound = BERNOULLI_SPECS[name].bind(BetaPrior.uniform(k), np.full(k, 0.5), [0.1], 10**10,
                                       rewards="bernoulli")
    mu = np.array([0.5, 0.5 - 1e-4, 0.5 - 2e-4])[:k]
    _returns_when_the_flag_is_raised(bound, mu)


def test_a_failing_worker_cancels_the_others_and_its_error_propagates():
    from numba import njit

    @njit
    def bad_rule(t, N, S, noise_stds, state):
        return N.size if t > 10_000 else t % N.size  # out of range after 10,000 samples

    mu = np.array([1e-4, 0.0])
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="outside 0..k-1"):
        simulate(SamplingRule(bad_rule), None, 1.0, 0.1, 50, 1, means=mu, n_threads=2,
                 max_samples=10**10, progress=False)
    assert time.perf_counter() - t0 < 30


def test_cancel_flag_validation():
    with pytest.raises(ValueError, match="cancel"):
        cancel_flag(np.zeros(1, dtype=np.int64))
    flag = np.zeros(1, dtype=np.uint8)
    assert cancel_flag(flag) is flag


MANY_ARM_SPECS = {"ttts": TTTS(), "ttts-bernoulli": TTTS(challenger="resample"),
                  "ttucb": TTUCB(), "ttucb-bernoulli": TTUCB(), "ebtc": EBTC(),
                  "ebtc-bernoulli": EBTC()}


@pytest.mark.parametrize("name", list(MANY_ARM_SPECS))
def test_many_arm_kernels_stop_at_the_first_step_after_the_flag(name):
    """A step of TTTS on k > 2 arms draws the posterior up to 101 times, one of TTUCB or EB-TC
    scans every arm (twice, with Bernoulli divergences): these kernels poll the flag at every
    step, not only when their normal buffer runs out (512 rewards, seconds to minutes at 10^4
    arms)."""
    k = 300  # fewer than the buffer: without the per-step poll the run would reach t = 512
    bernoulli = name.endswith("bernoulli")
    prior = BetaPrior.uniform(k) if bernoulli else GaussianPrior.standard(k)
    sig = np.full(k, 0.5) if bernoulli else np.ones(k)
    bound = MANY_ARM_SPECS[name].bind(prior, sig, [0.1], 10**9,
                                      rewards="bernoulli" if bernoulli else "gaussian")
    flag = cancel_flag()
    flag[0] = 1
    mu = np.linspace(0.9, 0.1, k) if bernoulli else np.linspace(1.0, 0.0, k)
    tau, rec, censored, reason = bound.run_one(np.array([1, 2, 3, 4], dtype=np.uint64), mu,
                                               cancel=flag)
    assert (tau, rec, censored, reason) == (k, -1, True, STOP_INTERRUPTED)


_STUCK_CHILD = """
from numba import njit
from bai_lib import GaussianPrior, SamplingRule, simulate

@njit
def stuck(t, N, S, noise_stds, state):
    while N[0] >= 0:  # never returns
        S[0] += 1.0
    return 0

spec = SamplingRule(stuck, label_text="stuck")
prior = GaussianPrior.standard(2)
simulate(spec, prior, 1.0, 0.1, 1, 1, max_samples=2, progress=False)  # compiles, never selects
print("started", flush=True)
try:
    simulate(spec, prior, 1.0, 0.1, 4, 1, n_threads=1, progress=False)
except KeyboardInterrupt as exc:
    print("interrupted:", exc, flush=True)
"""


def test_a_second_ctrl_c_ends_a_sampling_rule_that_never_returns():
    """The first Ctrl-C raises the flag, which the rule never lets the kernel read; the second
    abandons the (daemon) worker thread, and the process exits saying why."""
    proc = subprocess.Popen([sys.executable, "-c", _STUCK_CHILD], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=REPO,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(1.0)  # inside the rule
        proc.send_signal(signal.SIGINT)
        time.sleep(1.0)
        assert proc.poll() is None  # still waiting for the worker after the first Ctrl-C
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert "interrupted: simulate interrupted twice: 1 worker thread(s) had not stopped" in out, \
        (out, err)
    assert proc.returncode == 0

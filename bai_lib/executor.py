"""How :func:`~bai_lib.simulate` executes its runs: threads, progress, Ctrl-C and memory.

Orchestration layer, below :mod:`bai_lib.simulation` and the sweep. The stopping times are
heavy-tailed, so runs are handed out dynamically to ``n_threads`` Python threads that call the
compiled kernels (``nogil=True``, so the threads run in parallel), in decreasing order of a rough
cost estimate, ``chunk_size`` runs at a time: long runs start first and short runs fill the gaps
at the end. The calling thread only waits, so Ctrl-C reaches it at once; it raises the
cancellation flag every kernel polls (:func:`bai_lib.kernels.cancel_flag`).
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from typing import Callable, Optional

import numpy as np

__all__ = ["memory_needed", "check_memory", "available_memory", "progress_enabled",
           "notice_enabled", "kernel_request", "CostProgress", "COMPILE_NOTICE_AFTER",
           "LONG_RUN_NOTICE", "warm_up", "run_workers", "execute", "default_threads"]

#: Bytes of per-run storage in :func:`~bai_lib.simulate`, besides ``8 k`` for the means:
#: generator state (32), the best arm (8) and the schedule (8 + 8).
_BYTES_PER_RUN = 32 + 8 + 16
#: ... per run and confidence level: the work arrays (4 x 8, and 3 x 8 for one trajectory scored
#: at several levels) and the result's arrays (8 + 8 + 1 + 1 + 8, and the stop reason names, 4
#: bytes a character, 12 characters).
_BYTES_PER_RUN_LEVEL = 32 + 24 + 26 + 48
#: ... and per run and arm: the means and the scheduling temporaries of ``cost_keys``.
_BYTES_PER_RUN_ARM = 8 * 4


def available_memory() -> Optional[int]:
    """Bytes of memory available to this process (Linux ``MemAvailable``), or ``None``."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def memory_needed(n_runs: int, k: int, n_deltas: int = 1) -> int:
    """Bytes :func:`~bai_lib.simulate` (or :func:`~bai_lib.simulate_deltas` with ``n_deltas``
    levels) allocates for ``n_runs`` runs on ``k`` arms (an upper estimate)."""
    return int(n_runs) * (_BYTES_PER_RUN + _BYTES_PER_RUN_ARM * int(k)
                          + _BYTES_PER_RUN_LEVEL * int(n_deltas))


def check_memory(n_runs: int, k: int, n_deltas: int = 1, working: int = 0) -> None:
    """Refuse (``ValueError``) a call whose :func:`memory_needed` plus ``working`` bytes (the
    kernels' own tables, one run per worker thread) exceeds 80% of the available memory."""
    per_run = memory_needed(n_runs, k, n_deltas)
    need = per_run + working
    avail = available_memory()
    if avail is not None and need > 0.8 * avail:
        if working > per_run:
            raise ValueError(
                f"k = {k:,} arms need about {working / 2**30:,.1f} GiB of working memory for "
                f"the running simulations, more than 80% of the {avail / 2**30:,.1f} GiB "
                "available; use fewer threads (n_threads) or fewer arms")
        raise ValueError(
            f"n_runs = {n_runs:,} needs about {need / 2**30:,.1f} GiB for the per-run arrays "
            f"(k = {k}), more than 80% of the {avail / 2**30:,.1f} GiB available; "
            "use fewer runs per call (several calls with different seeds)")


def progress_enabled(progress: Optional[bool]) -> bool:
    """The progress bar's default: ``BAI_LIB_PROGRESS`` (``"0"``/``"1"``) when set, else on when
    stderr is a terminal or the caller is a Jupyter kernel serving someone at a notebook (not a
    batch execution: :func:`kernel_request`)."""
    if progress is None:
        env = os.environ.get("BAI_LIB_PROGRESS")
        if env is not None:
            return env != "0"
        try:
            if sys.stderr.isatty():
                return True
        except (AttributeError, ValueError):
            return False
        return kernel_request() == "interactive"
    if isinstance(progress, (bool, np.bool_)):
        return bool(progress)
    raise ValueError(f"progress must be None, True or False, got {progress!r}")


def notice_enabled(progress: Optional[bool]) -> bool:
    """Whether a first call that compiles says so on stderr: always, piped output included,
    unless progress output is turned off (``progress=False`` or ``BAI_LIB_PROGRESS=0``) or the
    call runs in a batch execution of a notebook (:func:`kernel_request`), where stderr would
    be saved among the notebook's outputs (and compared by nbval)."""
    if progress is None:
        env = os.environ.get("BAI_LIB_PROGRESS")
        return env != "0" if env is not None else kernel_request() != "batch"
    return progress_enabled(progress)


class _KernelLine:
    """A file for tqdm in a Jupyter kernel: the bar is one display output redrawn in place
    (created at its first draw), and emptied when the bar closes, so that a saved notebook
    keeps no trace of it beyond an empty output (stderr would keep one output per redraw)."""

    def __init__(self) -> None:
        self.text = ""
        self.handle = None

    def write(self, s: str) -> None:
        self.text = s.rsplit("\r", 1)[-1] if "\r" in s else self.text + s

    def flush(self) -> None:
        from IPython.display import display

        data = {"text/plain": self.text} if self.text.strip() else {}
        if self.handle is None:
            if data:
                self.handle = display(data, raw=True, display_id=True)
        else:
            self.handle.update(data, raw=True)


def kernel_request() -> Optional[str]:
    """What runs the caller: ``None`` outside a Jupyter kernel (or in one whose stderr is a
    terminal); in a kernel, ``"interactive"`` when the cell was sent by a notebook someone is
    using (JupyterLab and other front ends let code ask for input, ``allow_stdin``), and
    ``"batch"`` when it was sent by a program executing the notebook (``jupyter execute``,
    nbclient, nbconvert, nbval, papermill: none of them allows input), whose outputs are saved
    into the notebook. An IPython shell with a kernel is what counts: the module ``ipykernel``
    alone may be imported by tools that start kernels."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    try:
        if sys.stderr.isatty():
            return None
    except (AttributeError, ValueError):
        pass
    try:
        allow = kernel.get_parent("shell")["content"]["allow_stdin"]
    except (AttributeError, KeyError, TypeError):
        return "interactive"  # a kernel that does not say: assume someone is watching
    return "interactive" if allow else "batch"


class CostProgress:
    """A tqdm bar over runs whose time-left estimate is weighted by each run's expected cost.

    Runs are scheduled longest first, so a count-based ETA starts far too pessimistic. Here the
    time left is ``elapsed * (cost left) / (cost done)`` with the scheduling keys of the
    algorithm (proportional to a run's expected number of samples) capped at ``max_samples``.

    While no run finishes (the long runs of a heavy tail come first), :meth:`tick`, called about
    once a second, keeps the elapsed time moving and shows how long the oldest run in progress
    has been going (:data:`LONG_RUN_NOTICE` seconds or more).

    In a Jupyter kernel the bar is one display output, drawn only by the calling thread (once a
    second, by :meth:`tick`), shown only for calls longer than a second, and emptied at the end:
    re-running a chapter leaves no progress output in it.
    """

    def __init__(self, desc: str, keys: np.ndarray, max_samples: int) -> None:
        from tqdm import tqdm

        cost = np.where(np.isfinite(keys), keys, np.inf)
        self.cost = np.minimum(np.maximum(cost, 0.0), float(max_samples)) + 1.0
        self.total = float(self.cost.sum())
        self.done = 0.0
        self.t0 = time.perf_counter()
        kernel = kernel_request() is not None
        self.line = _KernelLine() if kernel else sys.stderr
        self.bar = tqdm(total=len(keys), desc=desc, unit="run", leave=False, file=self.line,
                        delay=1.0 if kernel else 0.0,
                        # in a kernel only tick() draws (tqdm's monitor thread neither)
                        mininterval=math.inf if kernel else 0.1,
                        maxinterval=math.inf if kernel else 10.0,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} runs "
                                   "[{elapsed}{postfix}]")
        self.left = ""
        self.lock = threading.Lock()  # the worker threads and the waiting thread draw the bar
        self.running: dict[int, float] = {}  # perf_counter() at the start of each run going

    def start(self, worker: int) -> None:
        """A run starts on the worker thread ``worker``."""
        with self.lock:
            self.running[worker] = time.perf_counter()

    def update(self, runs: np.ndarray, worker: Optional[int] = None) -> None:
        """The runs ``runs`` are done (on the worker thread ``worker``, now idle)."""
        with self.lock:
            self.running.pop(worker, None)
            self.done += float(self.cost[runs].sum())
            left = (time.perf_counter() - self.t0) * max(self.total - self.done, 0.0) / self.done
            self.left = f"about {self.bar.format_interval(left)} left"
            self.bar.set_postfix_str(self.left, refresh=False)
            self.bar.update(len(runs))

    def tick(self) -> None:
        """Redraw: the elapsed time, and the age of the oldest run in progress when it is long."""
        with self.lock:
            now = time.perf_counter()
            oldest = now - min(self.running.values(), default=now)
            parts = [self.left] if self.left else []
            if oldest >= LONG_RUN_NOTICE:
                parts.append(f"a run going for {self.bar.format_interval(oldest)}")
            self.bar.set_postfix_str(", ".join(parts), refresh=False)
            self.bar.refresh()

    def close(self) -> None:
        self.bar.close()
        if isinstance(self.line, _KernelLine):  # tqdm clears only what update() drew
            self.line.text = ""
            self.line.flush()


#: Seconds a run must have been going before the progress bar names its age.
LONG_RUN_NOTICE = 5.0

#: Seconds of compiling before :func:`warm_up` prints its notice.
COMPILE_NOTICE_AFTER = 1.0


def warm_up(call: Callable[[], object], label: str, show: bool) -> None:
    """Call the kernel once on a trivial instance, so that it is compiled before runs are timed.

    With ``show`` (:func:`notice_enabled`), a compilation still going after
    :data:`COMPILE_NOTICE_AFTER` seconds is announced on stderr, once per call, so that a first
    call does not sit silent for the 10 s a kernel can take to compile.
    """
    if not show:
        call()
        return
    from numba.core import event

    class Compiles(event.Listener):  # numba:compile events; a load from numba's cache fires none
        started = 0

        def on_start(self, ev):
            self.started += 1

        def on_end(self, ev):
            pass

    watch = Compiles()
    finished = threading.Event()

    def notice():
        if not finished.wait(COMPILE_NOTICE_AFTER) and watch.started:
            print(f"compiling the {label} simulator (first call in this process only) ...",
                  file=sys.stderr, flush=True)

    with event.install_listener("numba:compile", watch):
        thread = threading.Thread(target=notice, daemon=True)
        thread.start()
        try:
            call()
        finally:
            finished.set()
            thread.join()


def run_workers(worker: Callable[[], None], n_workers: int, cancel: np.ndarray,
                bar: Optional[CostProgress]) -> None:
    """Run ``worker`` on ``n_workers`` threads while the calling thread stays free for Ctrl-C.

    The calling thread only waits, so a KeyboardInterrupt reaches it at once (also with one
    worker, which then runs on its own thread); it raises ``cancel``, which every kernel polls
    at each refill of its normal buffer, waits for the threads to return, and re-raises. An
    exception in a worker cancels the others and is re-raised here once they have stopped.

    A second Ctrl-C while waiting gives up on the threads (code that never returns, such as a
    sampling rule stuck in a loop, cannot be stopped from outside): they are daemon threads,
    so they do not keep the interpreter from exiting, and the KeyboardInterrupt says so.
    """
    failures: list[BaseException] = []
    lock = threading.Lock()
    running = [n_workers]
    all_done = threading.Event()  # waited on, never joined: an interrupted join can leave a
                                  # thread's state wrong (is_alive() False while it runs)

    def guarded():
        try:
            worker()
        except BaseException as err:  # noqa: BLE001 - handed to the calling thread
            failures.append(err)
            cancel[0] = 1
        finally:
            with lock:
                running[0] -= 1
                if running[0] == 0:
                    all_done.set()

    def wait_all():
        last = time.perf_counter()
        while not all_done.wait(timeout=0.1):
            if bar is not None and time.perf_counter() - last >= 1.0:
                last = time.perf_counter()
                bar.tick()

    started = 0
    try:
        try:
            for i in range(n_workers):
                threading.Thread(target=guarded, daemon=True, name=f"bai-lib-worker-{i}").start()
                started += 1
            wait_all()  # after a failure the others stop at their next poll of cancel
        except KeyboardInterrupt:
            cancel[0] = 1
            with lock:  # workers never started count as done
                running[0] -= n_workers - started
                if running[0] <= 0:
                    all_done.set()
            t0 = time.perf_counter()
            try:
                wait_all()
            except KeyboardInterrupt:
                raise KeyboardInterrupt(
                    f"simulate interrupted twice: {running[0]} worker thread(s) had not "
                    f"stopped {time.perf_counter() - t0:.1f} s after the first Ctrl-C (code "
                    "that never returns, such as a sampling rule in an endless loop?); they "
                    "were abandoned and no result was returned") from None
            raise KeyboardInterrupt(
                f"simulate interrupted; the threads stopped {time.perf_counter() - t0:.2f} s "
                "later and no result was returned") from None
        if failures:
            raise failures[0]
    finally:
        if bar is not None:
            bar.close()


def execute(task: Callable[[int, np.ndarray], None], keys: np.ndarray, n_runs: int,
            secs: np.ndarray, n_threads: int, chunk_size: int, show_progress: bool, desc: str,
            max_samples: int) -> None:
    """Run ``task(r, cancel)`` for every run on ``n_threads`` threads, longest (largest key)
    first, timing each run into ``secs[r]``; Ctrl-C stops it (see :func:`run_workers`)."""
    order = np.argsort(-keys, kind="stable")
    lock = threading.Lock()
    cursor = [0]
    cancel = np.zeros(1, dtype=np.uint8)  # raised on Ctrl-C or a failed worker; kernels poll it
    bar = CostProgress(desc, keys, max_samples) if show_progress else None

    def worker():
        me = threading.get_ident()
        try:
            while not cancel[0]:
                with lock:
                    start = cursor[0]
                    if start >= n_runs:
                        return
                    stop = min(start + chunk_size, n_runs)
                    cursor[0] = stop
                for j in range(start, stop):
                    r = order[j]
                    if bar is not None:
                        bar.start(me)
                    t0 = time.perf_counter()
                    task(r, cancel)
                    secs[r] = time.perf_counter() - t0
                if bar is not None:
                    bar.update(order[start:stop], me)
        except BaseException:
            cancel[0] = 1
            raise

    run_workers(worker, min(n_threads, n_runs), cancel, bar)



def default_threads() -> int:
    """Worker threads when the caller does not say: ``numba.get_num_threads()``."""
    import numba

    return int(numba.get_num_threads())

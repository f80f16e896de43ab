"""A call awaited for a bounded time, for tests of inputs that once made a function hang.

The call runs in a daemon thread: a compiled loop that never returns (numba releases no signal
handler back to Python) cannot block the test, which fails after ``seconds`` instead.
"""

from __future__ import annotations

import threading
import time

import pytest


def answered(seconds: float, fn, *args, **kwargs):
    """``(fn(*args, **kwargs), seconds taken)``; fails the test if ``fn`` has not answered
    within ``seconds``, and re-raises in the test's thread what ``fn`` raised."""
    box = {}

    def run():
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as err:  # re-raised in the test's thread
            box["error"] = err

    worker = threading.Thread(target=run, daemon=True)
    start = time.perf_counter()
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        pytest.fail(f"{getattr(fn, '__qualname__', fn)} did not answer within {seconds} s "
                    f"(arguments {args} {kwargs})")
    if "error" in box:
        raise box["error"]
    return box["value"], time.perf_counter() - start

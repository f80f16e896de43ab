"""Conventions and shared steps of the compiled single-run simulators (numba).

A simulator simulates **one** run of a best arm identification algorithm on a fixed Gaussian bandit
instance ``mu`` (arm means) with known noise standard deviations ``sigma``: arm ``i`` returns
``mu[i] + sigma[i] * Z`` with ``Z ~ N(0, 1)`` (paper, Section 2; other reward families in
:mod:`bai_lib.families`). The simulators live in :mod:`bai_lib.algorithms`: the elimination and
LUCB kernels with their algorithms (``elimination_run``, ``lucb_run``), and one loop for every
GLR-stopped algorithm (:func:`bai_lib.algorithms.glr.glr_run`). This module holds what they share:
the stop codes, the normal buffer, the records of the confidence levels, the bookkeeping of a
sample and the compile-time dispatch on bundles (:func:`bundle_generic`). All randomness (rewards
and the algorithm's own coin flips) comes from the xoshiro256++ state ``state`` (see
:mod:`bai_lib._rng`), which is advanced in place. Every simulator returns a tuple

``(tau, recommendation, censored, stop_reason)``

with ``tau`` the total number of samples (int64), ``recommendation`` the
0-based index of the recommended arm, ``censored`` a bool, and
``stop_reason`` one of :data:`STOP_SINGLE_ARM`, :data:`STOP_INDIFFERENCE`,
:data:`STOP_GLR`, :data:`STOP_CENSORED`, :data:`STOP_SEPARATION`.

Every simulator takes a last argument ``cancel`` (uint8[1], see :func:`cancel_flag`) and reads
it each time it refills its normal buffer, that is every :data:`NORMAL_BUFFER` rewards at most
(TTTS with more than two arms, whose steps draw the whole posterior, at every step):
once ``cancel[0]`` is nonzero it returns at once with ``stop_reason=STOP_INTERRUPTED``
(recommendation ``-1``, ``censored=True``). Another thread sets the flag, which is how
:func:`bai_lib.simulate` stops every thread within a fraction of a second on Ctrl-C.

``max_samples`` bounds the work of a run: when the next sampling step would
make the number of samples exceed ``max_samples`` the run stops with
``censored=True`` and ``stop_reason=STOP_CENSORED``, ``tau <= max_samples``,
and recommends the empirical best arm (among the active arms for the
elimination algorithms).  No simulator can loop forever.

The kernels avoid the transcendental functions of the stopping and
confidence thresholds at most steps by checking first against a cheap bound
that can only err on the side of "maybe"; the exact threshold is evaluated
whenever the bound does not settle the question, so the decisions are those
of the direct implementation.  See each docstring for the bound used.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any, Optional

import numpy as np
from numba import njit
from numba import types
from numba.core import ir_utils
from numba.extending import intrinsic, overload

from ._rng import fill_normal

__all__ = [
    "STOP_SINGLE_ARM",
    "STOP_INDIFFERENCE",
    "STOP_GLR",
    "STOP_CENSORED",
    "STOP_SEPARATION",
    "STOP_INTERRUPTED",
    "STOP_POSTERIOR",
    "STOP_REASON_NAMES",
    "cancel_flag",
    "bundle_generic",
    "borrowed",
    "NORMAL_BUFFER",
    "argmax",
    "level_records",
    "record_level",
    "record_rest",
    "refill",
]

#: Stopped because a single active arm remained (Algorithm 1, first return).
STOP_SINGLE_ARM = 0
#: Stopped by the indifference rule ``Delta_safe <= Delta_0`` (second return).
STOP_INDIFFERENCE = 1
#: Stopped by a GLR / Chernoff-type test (TTTS, TTUCB).
STOP_GLR = 2
#: Stopped because ``max_samples`` would have been exceeded.
STOP_CENSORED = 3
#: Stopped because the confidence intervals of the leader and the rest separated (LUCB).
STOP_SEPARATION = 4
#: Stopped because the caller raised the cancellation flag (Ctrl-C); the run is incomplete.
STOP_INTERRUPTED = 5
#: Stopped by a posterior summary reaching its threshold at a look (the A/B platforms' rules,
#: :class:`~bai_lib.algorithms.PosteriorRule`).
STOP_POSTERIOR = 6
#: Names of the stop reason codes, indexed by code.
STOP_REASON_NAMES = ("single_arm", "indifference", "glr", "censored", "separation", "interrupted",
                     "posterior")

#: Rewards use standard normals taken from a buffer of this length, refilled with
#: :func:`bai_lib._rng.fill_normal` (which keeps the generator state in
#: registers); unused entries are dropped when a step needs more than remain.
NORMAL_BUFFER = 512

def cancel_flag(cancel: Optional[np.ndarray] = None) -> np.ndarray:
    """The cancellation flag a simulator reads: ``cancel`` itself, or a new lowered flag.

    Parameters
    ----------
    cancel : ndarray of uint8, shape (1,), optional
        A flag shared with another thread, which raises it (``cancel[0] = 1``) to stop the run.
    """
    if cancel is None:
        return np.zeros(1, dtype=np.uint8)
    if not (isinstance(cancel, np.ndarray) and cancel.dtype == np.uint8 and cancel.shape == (1,)):
        raise ValueError(f"cancel must be a uint8 array of shape (1,), got {cancel!r}")
    return cancel


def _borrowed_aliases(lhs, args, alias_map, arg_aliases):
    """Tell numba's alias analysis that ``lhs = borrowed(x)`` aliases ``x``, so that its dead-code
    pass keeps the writes made through the view (it takes an unknown call's result for a new
    array)."""
    rhs = args[0].name
    if rhs in arg_aliases:
        arg_aliases.add(lhs)
        return
    alias_map.setdefault(rhs, set()).add(lhs)
    alias_map.setdefault(lhs, set()).add(rhs)


@intrinsic
def borrowed(typingctx, array):
    """``array`` as a view that holds no reference to its memory, for a loop to hand to the steps
    it calls at every sample while it keeps the array itself alive.

    Numba counts the references of every array a compiled step receives, two atomic operations
    per array and call that its pruning pass cannot remove once the step is part of a large loop:
    on two arms, a sampling rule taking a dozen arrays ran at a tenth of the speed of the same
    code written out in the loop. The counts of a view without a reference cost nothing. The
    caller keeps the array alive while the view is in use (the GLR loop passes ``borrowed(x)``
    at each call and uses ``x`` itself at every step).
    """
    if not isinstance(array, types.Array):
        return None

    def codegen(context, builder, signature, args):
        view = context.make_array(array)(context, builder, value=args[0])
        view.meminfo = context.get_constant_null(types.MemInfoPointer(array.dtype))
        view.parent = context.get_constant_null(types.pyobject)
        return view._getvalue()

    return array(array), codegen


ir_utils.alias_func_extensions[("borrowed", __name__)] = _borrowed_aliases


def bundle_generic(name: str, params: str, default=None):
    """A function of compiled code that the compiler resolves, from the class of its first
    argument (a *bundle*: a named tuple of scalar constants), to the implementation registered
    for that class with ``.register(bundle_class, njit_function)``; ``params`` names its
    arguments (``"fam, z, mu_arm, sigma_arm"``), which an implementation may name otherwise.
    ``default`` (a compiled function, or ``None``: a typing error) serves the classes with no
    implementation, so that a loop compiles for them where the call sits in a branch that the
    caller never takes for such a class.

    A loop that calls ``f(bundle, ...)`` is compiled once per bundle class and cached on disk (a
    named tuple's type names its class by reference, where a function passed as an argument is
    typed by its address and compiled again in every process), with the implementation written
    out at the call: no call, no branch on the bundle. An implementation must not unpack the
    arrays it writes from a tuple: numba's dead-code pass does not follow an array out of a
    tuple and drops such writes once the implementation is written out. Called from Python the
    function raises ``TypeError``.
    """
    implementations = {}
    namespace = {"implementations": implementations, "Any": Any, "fallback": default}
    annotated = ", ".join(f"{p.strip()}: Any" for p in params.split(","))
    # a generic with a fixed signature (numba writes out a call only to one without *args); its
    # resolution returns the implementation's own Python function, written out at the call site
    exec(f"def {name}({annotated}) -> Any:\n"
         f"    raise TypeError('{name} runs inside compiled code only')\n"
         f"def resolve({params}):\n"
         f"    implementation = implementations.get(getattr({params.split(',')[0]}, "
         f"'instance_class', None))\n"
         f"    if implementation is None:\n"
         f"        implementation = fallback\n"
         f"    if implementation is None:\n"
         f"        return None\n"
         f"    return implementation.py_func\n", namespace)
    generic = namespace[name]
    generic.__module__ = sys._getframe(1).f_globals["__name__"]  # the module that defines it
    overload(generic, jit_options={"nogil": True}, strict=False,
             inline="always")(namespace["resolve"])

    def register(bundle: type, implementation) -> None:
        found = list(inspect.signature(implementation.py_func).parameters)
        if len(found) != len(params.split(",")):
            raise ValueError(f"{name} for {bundle.__name__} must take ({params}), "
                             f"it takes ({', '.join(found)})")
        implementations[bundle] = implementation

    generic.register = register
    generic.implementations = implementations  # bundle class -> implementation
    return generic


# ---------------------------------------------------------------------------
# Steps shared by the kernels
# ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def level_records(m):
    """``(out_tau, out_rec, out_code)``: the int64 arrays of :func:`record_level` for ``m``
    levels (one for a run at a single ``δ``)."""
    return (np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64),
            np.empty(m, dtype=np.int64))


@njit(cache=True, nogil=True)
def record_level(p: int, t: int, rec: int, code: int, out_tau: np.ndarray, out_rec: np.ndarray,
                 out_code: np.ndarray) -> int:
    """Record level ``p`` of a run scored at several confidence levels; return ``p + 1``.

    Simulators whose sampling rule does not depend on ``δ`` follow one trajectory and record,
    for each level ``δ_0 > δ_1 > ...`` in turn, the first time ``t`` its stopping test passes,
    the recommendation ``rec`` and the stop code: exactly what a run at that ``δ`` alone returns.
    """
    out_tau[p] = t
    out_rec[p] = rec
    out_code[p] = code
    return p + 1


@njit(cache=True, nogil=True)
def record_rest(p, t, rec, code, out_tau, out_rec, out_code):
    """Record every level from ``p`` on as ended at ``t`` with ``code`` (censored, interrupted)."""
    for q in range(p, out_tau.size):
        record_level(q, t, rec, code, out_tau, out_rec, out_code)


@njit(cache=True, nogil=True)
def refill(state, buf, cancel):
    """Refill the normal buffer, unless the cancellation flag is raised: then return ``False``.

    Where simulators look at ``cancel``: once per :data:`NORMAL_BUFFER` rewards (TTTS with
    more than two arms also at every step).
    """
    if cancel[0]:
        return False
    fill_normal(state, buf)
    return True


@njit(cache=True, nogil=True)
def argmax(x):
    """Index of the largest entry of ``x`` (the first one on ties)."""
    best = 0
    for i in range(1, x.size):
        if x[i] > x[best]:
            best = i
    return best

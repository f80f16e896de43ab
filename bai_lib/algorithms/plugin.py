"""Your own sampling rule, run with the library's stopping and recommendation rules.

Write the rule as a numba ``@njit`` function with the signature ::

    select(t, N, S, noise_stds, state) -> arm

called before every sample after the first round (each arm is sampled once first), where

- ``t`` (int64) is the number of samples taken so far,
- ``N`` (int64[k]) the number of samples of each arm and ``S`` (float64[k]) their sums,
- ``noise_stds`` (float64[k]) the known noise standard deviations,
- ``state`` (uint64[4]) the run's generator state, for a rule that randomises: draw from it
  only with :func:`uniform` and :func:`std_normal` from this module,

and returning the index of the arm to sample next (``0 <= arm < k``). Wrap it in a
:class:`SamplingRule` and pass that to :func:`bai_lib.simulate`: the run stops with the Gaussian
GLR test (:func:`bai_lib.families.gaussian.glr_passes`) at the threshold you choose, recommends the
empirical best arm, and gets everything :func:`~bai_lib.simulate` guarantees (per-run seeding,
the same results whatever the threads, censoring at ``max_samples``, a progress bar).

Example
-------
>>> from numba import njit, types
>>> @njit
... def round_robin(t, N, S, noise_stds, state):
...     return t % N.size
>>> spec = SamplingRule(round_robin, label_text="round robin")
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, NamedTuple, Optional

import numpy as np
from numba import njit, types
from numba.core import cgutils
from numba.experimental.function_type import _get_jit_address as _jit_address
from numba.extending import intrinsic
from numpy.typing import ArrayLike

from .. import _validate as V
from .._rng import std_normal, uniform
from ..stopping import GLR_THRESHOLDS, glr_level, threshold
from .base import Algorithm, Binding
from .glr import GLRThreshold, bind_glr, register

__all__ = ["SamplingRule", "PluginSteps", "SELECT_ARGS", "SELECT_SIGNATURE", "select_address",
           "uniform", "std_normal"]


#: The argument types the kernel calls ``select`` with: ``t``, ``N``, ``S``, ``noise_stds``,
#: ``state``.
SELECT_ARGS = (types.int64, types.int64[::1], types.float64[::1], types.float64[::1],
               types.uint64[::1])
#: ``select``'s full signature: :data:`SELECT_ARGS` returning ``int64``.
SELECT_SIGNATURE = types.int64(*SELECT_ARGS)
_SELECT_TYPE = types.FunctionType(SELECT_SIGNATURE)
_NONE = np.empty(0)  # an unused state slot


@intrinsic
def _select_at(typingctx, address):
    """The compiled ``select`` at ``address`` (:func:`select_address`) as a first-class function.

    Only the address of the function proper is set, so a call uses numba's own calling
    convention and an exception raised in the rule propagates as from any jitted function."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        function = cgutils.create_struct_proxy(_SELECT_TYPE)(context, builder)  # zero-filled
        function.jit_addr = builder.inttoptr(args[0], context.get_value_type(types.voidptr))
        return function._getvalue()

    return _SELECT_TYPE(address), codegen


def select_address(select: Callable) -> int:
    """The address of ``select`` compiled for :data:`SELECT_SIGNATURE`, which the kernels take
    instead of the function itself: they are then compiled once for every rule and cached on disk,
    where a function argument would make numba compile them again for each rule in each process.
    The caller keeps ``select`` alive while a kernel uses the address (``SamplingRule.bind``
    does)."""
    _check_select(select)
    address = _jit_address(select, SELECT_SIGNATURE)
    if not (isinstance(address, int) and address > 0):  # pragma: no cover - numba internals
        raise RuntimeError(f"no compiled code for select = {select!r}")
    return address


class PluginSteps(NamedTuple):
    """A user's sampling rule, given by its :func:`select_address`, for
    :func:`bai_lib.algorithms.glr.glr_run`: at every step ``select`` picks the next arm, and an arm
    outside ``0..k-1`` raises ``ValueError``. ``select`` never sees ``δ``, so one trajectory serves
    every level. The rule is called through its address, so the loop is compiled once, whatever the
    rule, and cached on disk.

    ``select`` gets copies of ``N``, ``S`` and the noise levels, refreshed at every call, so a rule
    that writes to them changes nothing of the run; it gets the run's generator state itself (to
    draw from), and a rule that zeroes it (the generator would then return zeros for ever) raises
    ``ValueError``.

    Attributes
    ----------
    select : int
        The address of the compiled rule (:func:`select_address`).
    """

    select: int


@njit(cache=True, nogil=True)
def _start(steps, data, mh, var):
    k = mh.size
    seen = (np.empty(k, dtype=np.int64), np.empty(k), np.empty(k))  # select's copies to write to
    return seen + (_NONE, _NONE, _NONE), (np.int64(0),)  # nothing carried


@njit(cache=True, nogil=True)
def _choose(steps, N_seen, S_seen, sigma_seen, _3, _4, _5, carry, fam, t, best, mh, v, N, S, sigma,
            var, state):
    for i in range(N.size):
        N_seen[i] = N[i]
        S_seen[i] = S[i]
        sigma_seen[i] = sigma[i]
    arm = _select_at(steps.select)(t, N_seen, S_seen, sigma_seen, state)
    if arm < 0 or arm >= N.size:
        raise ValueError("the sampling rule returned an arm outside 0..k-1")
    if state[0] == 0 and state[1] == 0 and state[2] == 0 and state[3] == 0:
        raise ValueError("the sampling rule set the generator state to zero; draw from it "
                         "only with uniform() and std_normal()")
    return arm, carry


register(PluginSteps, _start, _choose)


def _check_select(select) -> None:
    """Compile ``select`` for :data:`SELECT_ARGS` and require an ``int64`` result: a wrong
    signature or return type is reported in one sentence, not as a compiler traceback."""
    try:
        select.compile(SELECT_ARGS)
    except Exception as err:  # numba's TypingError and friends, whatever their class
        first = next((line.strip() for line in str(err).splitlines() if line.strip()), "")
        raise ValueError(f"select must be callable as select(t, N, S, noise_stds, state) "
                         f"(int64, int64[:], float64[:], float64[:], uint64[:]) in nopython "
                         f"mode; numba says: {first}") from None
    returned = select.overloads[SELECT_ARGS].signature.return_type
    if types.unliteral(returned) != types.int64:
        raise ValueError(f"select must return an int (the arm to sample, an int64: np.int64(arm) "
                         f"converts), it returns {returned}")


@dataclass(frozen=True)
class SamplingRule(Algorithm):
    """A user-defined sampling rule with GLR stopping and the empirical-best recommendation.

    Parameters
    ----------
    select : numba-compiled function
        ``select(t, N, S, noise_stds, state) -> arm`` (see :mod:`bai_lib.algorithms.plugin`).
    label_text : str
        Name shown in tables and legends.
    threshold : {"chernoff", "gk2016", "kk2021", "union"}
        GLR threshold ``β(t, δ)`` (:data:`bai_lib.stopping.GLR_THRESHOLDS`; the last two are
        proven ``δ``-correct, :func:`bai_lib.stopping.glr_beta`).
    color : str
        Colour in figures.
    """

    select: Callable
    label_text: str = "custom rule"
    threshold: str = "chernoff"
    color: str = "#555555"

    name: ClassVar[str] = "custom"
    one_trajectory: ClassVar[bool] = True
    reward_models: ClassVar[tuple] = ("gaussian",)

    def __post_init__(self):
        if not (hasattr(self.select, "py_func") and hasattr(self.select, "compile")):
            raise ValueError(f"select must be a numba @njit function, got {self.select!r}")
        _check_select(self.select)
        if not isinstance(self.label_text, str) or not self.label_text:
            raise ValueError(f"label_text must be a non-empty string, got {self.label_text!r}")
        V.choice(self.threshold, GLR_THRESHOLDS, "threshold")

    @property
    def label(self) -> str:
        return self.label_text

    def stopping_threshold(self, t: ArrayLike, delta: float, k: int = 2) -> float | np.ndarray:
        """The level of the squared normalised gap at which this specification stops on two
        arms, ``2 β(t, δ)`` (:func:`bai_lib.stopping.threshold`; ``k`` enters the proven
        thresholds only)."""
        return threshold(self.threshold, t, delta, k)

    def glr_threshold(self, rewards: str) -> Optional[str]:
        """Its ``threshold``."""
        return self.threshold

    def _bind(self, prior, noise_stds, deltas, max_samples, rewards) -> Binding:
        select = self.select
        sig = noise_stds
        levels = np.array([glr_level(self.threshold, d, sig.size) for d in deltas])
        none = np.empty(0)
        bound = bind_glr(PluginSteps(select_address(select)), (), "gaussian", sig,
                         GLRThreshold(GLR_THRESHOLDS[self.threshold], 1.0, 0.0), levels, none,
                         none, max_samples)
        bound.run.select = select  # the compiled code at the address lives as long as ``run``
        return bound

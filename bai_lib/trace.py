"""A round-by-round record of one run of Algorithm 1, for figures and teaching.

Orchestration layer. :func:`trace_elimination` re-implements Algorithm 1 (Section 5) in plain
Python, keeping every round's confidence bounds, active set and safe gap. It consumes the
generator (:mod:`bai_lib._rng`) exactly as the compiled kernel
:func:`bai_lib.algorithms.elimination.elimination_run` does: standard normals are taken from a buffer refilled
with :func:`bai_lib._rng.fill_normal` whenever the next round's rewards would not fit (one
reward per active arm per round, in the order of the active arms), and an indifference
recommendation uses one uniform drawn after the last refill. Given the same state it therefore
reproduces the kernel's run exactly, which the tests check. It is meant for runs of up to about
:math:`10^5` rounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from . import _rng
from . import _validate as V
from .confidence import conf_width
from .kernels import NORMAL_BUFFER

__all__ = ["EliminationTrace", "trace_elimination"]


@dataclass(frozen=True)
class EliminationTrace:
    """Per-round record of one run of Algorithm 1.

    Attributes
    ----------
    mu : ndarray, shape (k,)
        True means of the instance.
    delta, delta0 : float
        Confidence level and indifference level ``Δ0``.
    rounds : ndarray of int, shape (R,)
        Round numbers ``n = 1..R`` (every active arm has ``N_i = n`` after round ``n``).
    t : ndarray of int, shape (R,)
        Total samples after each round.
    mean_hat, ucb, lcb : ndarray, shape (R, k)
        Empirical means and confidence bounds of each arm; ``nan`` once the arm is eliminated.
    active : ndarray of bool, shape (R, k)
        Active set *after* the elimination step of each round.
    delta_safe : ndarray, shape (R,)
        ``max_A UCB − max_A LCB`` after elimination (``nan`` when one arm is left).
    eliminated_at : dict
        ``arm -> round`` at which it was eliminated.
    tau : int
        Stopping time (total samples).
    recommendation : int
        Recommended arm (0-based).
    stop_reason : str
        ``"single_arm"`` or ``"indifference"``.
    """

    mu: np.ndarray
    delta: float
    delta0: float
    rounds: np.ndarray
    t: np.ndarray
    mean_hat: np.ndarray
    ucb: np.ndarray
    lcb: np.ndarray
    active: np.ndarray
    delta_safe: np.ndarray
    eliminated_at: dict
    tau: int
    recommendation: int
    stop_reason: str


def trace_elimination(
    mu: ArrayLike,
    noise_stds: ArrayLike,
    delta: float,
    delta0: float,
    state: np.ndarray,
    *,
    max_rounds: int = 200_000,
) -> EliminationTrace:
    """Run Algorithm 1 once and record every round.

    Parameters
    ----------
    mu : array_like, shape (k,)
        True arm means.
    noise_stds : float or array_like, shape (k,)
        Noise standard deviations (a scalar is shared by all arms).
    delta : float
        Confidence level in (0, 1).
    delta0 : float
        Indifference level ``Δ0 > 0``.
    state : ndarray of uint64, shape (4,)
        Generator state of the run; a copy is used. :meth:`bai_lib.SimulationResult.trace`
        passes the state of a simulated run.
    max_rounds : int
        Refuse to trace longer runs (raises ``ValueError``) instead of running for minutes.
    """
    mu = np.asarray(mu, dtype=float)
    k = mu.size
    if k < 2 or mu.ndim != 1 or not np.all(np.isfinite(mu)):
        raise ValueError("mu must be a finite vector of length >= 2")
    sigma = V.noise_stds(noise_stds, k)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    if not (math.isfinite(delta0) and delta0 > 0):
        raise ValueError(f"delta0 must be finite and positive, got {delta0!r}")
    st = np.array(state, dtype=np.uint64, copy=True)
    if st.shape != (4,):
        raise ValueError("state must be a uint64 array of shape (4,)")

    S = np.zeros(k)
    buf = np.empty(max(NORMAL_BUFFER, k))
    pos = buf.size
    act = list(range(k))
    t = 0
    rec = {key: [] for key in ("t", "mean", "ucb", "lcb", "active", "dsafe")}
    eliminated_at: dict[int, int] = {}
    n = 0
    while True:
        if n >= max_rounds:
            raise ValueError(f"max_rounds={max_rounds} reached; trace a shorter run")
        if pos + len(act) > buf.size:
            _rng.fill_normal(st, buf)
            pos = 0
        for j, i in enumerate(act):
            S[i] += mu[i] + sigma[i] * buf[pos + j]
        pos += len(act)
        t += len(act)
        n += 1
        c = conf_width(n, 1.0, delta, k)
        mean = np.full(k, np.nan)
        mean[act] = S[act] / n
        ucb = mean + sigma * c
        lcb = mean - sigma * c
        max_l = np.nanmax(lcb[act])
        act = [i for i in act if ucb[i] > max_l]
        for i in range(k):
            if not np.isnan(mean[i]) and i not in act:
                eliminated_at[i] = n
        active = np.zeros(k, dtype=bool)
        active[act] = True
        dsafe = float(np.max(ucb[act]) - np.max(lcb[act])) if len(act) > 1 else math.nan
        for key, val in zip(rec, (t, mean, ucb, lcb, active, dsafe)):
            rec[key].append(val)
        if len(act) == 1:
            reason, choice = "single_arm", act[0]
            break
        if dsafe <= delta0:
            pick = min(int(_rng.uniform(st) * len(act)), len(act) - 1)
            reason, choice = "indifference", act[pick]
            break
    return EliminationTrace(
        mu=mu, delta=float(delta), delta0=float(delta0),
        rounds=np.arange(1, n + 1), t=np.array(rec["t"]),
        mean_hat=np.array(rec["mean"]), ucb=np.array(rec["ucb"]), lcb=np.array(rec["lcb"]),
        active=np.array(rec["active"]), delta_safe=np.array(rec["dsafe"]),
        eliminated_at=eliminated_at, tau=int(t), recommendation=int(choice), stop_reason=reason,
    )

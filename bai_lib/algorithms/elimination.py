"""Algorithm 1 of the paper (successive elimination with the indifference stop) and NoElim."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple, Optional

import numpy as np
from numba import njit

from .. import _validate as V
from .._rng import uniform
from ..confidence import (conf_factor, conf_level, conf_log_const, first_indifference_round,
                          stopping_time_cap)
from ..kernels import (NORMAL_BUFFER, STOP_CENSORED, STOP_INDIFFERENCE, STOP_INTERRUPTED,
                       STOP_SINGLE_ARM, refill)
from ..families import family as F
from ..families import family_bundle, model_of_prior
from ..priors import GaussianPrior
from ..priors import delta0 as _delta0_of
from .ask_tell import RUNNING, active_best, decide_round, elimination_ask_tell
from .base import Algorithm, Binding, gap_cost, indifference_guarantee, one_level
from .skip_ahead import DEFAULT_TOLERANCE, checked_tolerance, elimination_blocks_run

__all__ = ["Elimination", "NoElim", "TwoArmElimination", "elimination_run",
           "two_arm_elimination_run", "WIDTHS"]

_NEG_INF = -np.inf

#: The confidence intervals Algorithm 1 and NoElim can use (:class:`Elimination` ``widths``).
WIDTHS = ("subgaussian", "kl")


@njit(cache=True, nogil=True)
def _kl_window(n: int) -> int:
    """Rounds a window of the KL block check covers after round ``n``: ``max(1, √n / 4)``."""
    return max(1, int(math.sqrt(n)) >> 2)


@njit(cache=True, nogil=True)
def _kl_window_quiet(fam, S, act, n_act, n, log_const, delta0, scratch) -> bool:
    """Whether no elimination and no indifference stop can happen in rounds ``n .. n + W``.

    ``W = _kl_window(n)``. In those rounds an active arm's sum grows by at most one per round,
    so its mean stays in ``[S/(n+W), (S+W)/(n+W)]`` (rewards in ``[0, 1]``: Bernoulli arms), and
    the level ``conf_level`` is at least its value at ``n + W``. The KL ends increase with the
    mean and widen with the level, so ``UCB_i`` is at least the inner upper point
    (:func:`~bai_lib.families.family.kl_inner`) at the lowest mean and that level, and ``LCB_i``
    at most the inner lower point at the highest mean. If
    every such ``UCB_i`` exceeds the largest such ``LCB_j``, and the largest minus that exceeds
    ``delta0``, neither rule can fire in the window.
    """
    w = _kl_window(n)
    end = float(n + w)
    level = conf_level(end, log_const) * (1.0 - 1e-12)
    inv = 1.0 / end
    max_l = _NEG_INF
    max_u = _NEG_INF
    for j in range(n_act):
        i = act[j]
        lo = F.kl_inner(fam, min((S[i] + w) * inv, 1.0), level)[0]
        hi = F.kl_inner(fam, S[i] * inv, level)[1]
        scratch[i] = hi
        max_l = max(max_l, lo)
        max_u = max(max_u, hi)
    if not max_u - max_l > delta0:
        return False
    for j in range(n_act):
        if not scratch[act[j]] > max_l:
            return False
    return True


@njit(cache=True, nogil=True)
def elimination_run(state: np.ndarray, mu: np.ndarray, sigma: np.ndarray, log_const: float,
                    delta0: float, max_samples: int, pull_all: bool, recommend_best: bool,
                    check_every_round: bool, fam: NamedTuple, kl_widths: bool,
                    cancel: np.ndarray) -> tuple[int, int, bool, int]:
    """One run of Algorithm 1 (Successive Elimination with Early-Stopping).

    Section 5 of the paper.  Rounds ``n = 1, 2, ...``; in each round every
    active arm (every arm if ``pull_all``) is sampled once, so all active
    arms have ``N_i = n``.  Then, with the empirical **mean**
    ``mu_hat_i = S_i / n`` (the paper prints a sum; the mean is meant) and
    ``Conf(i) = sigma_i * c(n)`` (:func:`~bai_lib.confidence.conf_factor`),

    * ``UCB(i) = mu_hat_i + Conf(i)``, ``LCB(i) = mu_hat_i - Conf(i)``
      (equation (UCB LCB bound));
    * every active ``i`` with ``UCB(i) <= max_{j active} LCB(j)`` is
      eliminated (the arm attaining the max LCB is never eliminated, so the
      order of the loop is immaterial);
    * if one arm is left the run stops and recommends it
      (:data:`~bai_lib.kernels.STOP_SINGLE_ARM`);
    * otherwise ``Delta_safe = max_A UCB - max_A LCB`` and the run stops if
      ``Delta_safe <= delta0`` (:data:`~bai_lib.kernels.STOP_INDIFFERENCE`), recommending an
      active arm chosen uniformly at random (as printed in Algorithm 1 and
      NoElim, and as released for Algorithm 1), or, with ``recommend_best``,
      the arm with the largest empirical mean among the arms sampled in the
      last round (the active arms for Algorithm 1, every arm for NoElim: the
      rule of the released NoElim code).  The uniform draw comes after the
      last reward, so the stopping times do not depend on this choice.

    With ``pull_all=True`` this is NoElim (Appendix, Algorithm NoElim): every
    arm is sampled in every round (``tau`` grows by ``k`` per round) while
    the active set is still shrunk by the same rule and used for stopping and
    for the recommendation.

    Parameters
    ----------
    state : uint64[4]
        Generator state, advanced in place.
    mu, sigma : float64[k]
        The arms' mean parameters (the means; for Bernoulli arms their normal quantiles
        :math:`\\Phi^{-1}(\\mu_i)`: ``kernel_means`` of
        :class:`~bai_lib.families.family.RewardModel`) and noise standard deviations (for
        Bernoulli arms the sub-Gaussian parameters the widths use, ``1/2`` for rewards in
        ``[0, 1]``).
    log_const : float
        The constant of ``Conf`` for ``δ`` and ``k`` (:func:`bai_lib.confidence.conf_log_const`).
    delta0 : float
        Indifference level ``Delta_0``.
    max_samples : int
        Censoring bound on the number of samples.
    pull_all : bool
        ``False`` for Algorithm 1, ``True`` for NoElim.
    recommend_best : bool
        Recommendation at the indifference stop: ``False`` uniform survivor,
        ``True`` empirical best (see above).
    check_every_round : bool
        Evaluate ``c(n)`` exactly in every round (reference mode, used in
        tests).  With ``False`` the kernel first checks with
        ``c_lo = c(n_end)`` where ``n_end`` is the last round of the current
        block of rounds: ``c`` is decreasing in ``n`` (for ``n >= 2`` and any
        ``delta < 1``), and both the elimination condition and the stopping
        condition are monotone in ``c`` (``UCB - max LCB`` and
        ``Delta_safe`` increase with ``c``), so if neither can trigger with
        ``c_lo <= c(n)`` neither triggers with ``c(n)``.  Otherwise ``c(n)``
        is computed and the round is evaluated exactly.  Both modes make the
        same decisions and consume the same random numbers.
    fam : NamedTuple
        The reward family's bundle (:func:`bai_lib.families.family_bundle`): a pull of arm
        ``i`` pays :func:`~bai_lib.families.family.draw` of the one standard normal ``z`` it
        consumes (Gaussian ``mu[i] + sigma[i] z``; Bernoulli ``1`` if ``z < mu[i]``; Poisson by
        inversion), so the seeding, threads and censoring are those of the Gaussian runs.
    kl_widths : bool
        KL widths (Bernoulli and Poisson rewards): ``LCB(i)`` and ``UCB(i)`` are the ends of
        ``{q : d(mu_hat_i, q) <= l(n)}`` with ``l(n) = log(log_const n²) / n``, ``d`` the family's
        divergence (:func:`~bai_lib.families.family.kl_lower`,
        :func:`~bai_lib.families.family.kl_upper`, :func:`~bai_lib.confidence.conf_level`)
        instead of ``mu_hat_i ± sigma_i c(n)``; ``sigma`` is then unused. By Chernoff's bound
        each interval misses the mean with at most the probability ``Conf``'s does; for
        Bernoulli arms, by Pinsker's inequality, it lies inside ``mu_hat_i ± c(n) / 2``. The block
        check uses the closed-form inner points of :func:`~bai_lib.families.family.kl_inner` at
        ``l(n_end)``: narrower intervals than the exact ones, which is the direction the check
        needs (both conditions are monotone in the interval ends). Before it, for rewards in
        ``[0, 1]``, a window test skips up to ``√n / 4`` rounds at once when even the extreme
        means those rounds can reach decide nothing (``_kl_window_quiet``); when it fails, rounds
        are checked one by one for as many rounds before it is tried again.

    Returns
    -------
    tau, recommendation, censored, stop_reason
    """
    k = mu.size
    S = np.zeros(k)
    means = np.zeros(k)
    ucb = np.zeros(k)
    act = np.arange(k)
    n_act = k
    buf = np.empty(max(NORMAL_BUFFER, k))
    pos = buf.size
    t = np.int64(0)
    n = 0
    block_end = 0
    c_lo = 0.0
    level_lo = 0.0
    skip_until = 0
    retry_at = 0
    window = kl_widths and F.reward_max(fam, 0.0) == 1.0  # rewards in [0, 1]
    while True:
        pulls = k if pull_all else n_act
        if t + pulls > max_samples:
            return t, np.int64(active_best(S, act, n_act)), True, STOP_CENSORED
        if pos + pulls > buf.size:
            if not refill(state, buf, cancel):
                return t, np.int64(-1), True, STOP_INTERRUPTED
            pos = 0
        if pull_all:
            for i in range(k):
                S[i] += F.draw(fam, buf[pos + i], mu[i], sigma[i])
        else:
            for j in range(n_act):
                i = act[j]
                S[i] += F.draw(fam, buf[pos + j], mu[i], sigma[i])
        pos += pulls
        t += pulls
        n += 1
        inv_n = 1.0 / n
        if window and not check_every_round and n >= 4:
            if n <= skip_until:
                continue
            if n > retry_at and _kl_window_quiet(fam, S, act, n_act, n, log_const, delta0, ucb):
                skip_until = n + _kl_window(n)
                continue
            if n > retry_at:
                retry_at = n + _kl_window(n)
        if not check_every_round and n >= 4:
            if n > block_end:
                block_end = n + max(8, n >> 5)
                c_lo = conf_factor(float(block_end), log_const) * (1.0 - 1e-12)
                level_lo = conf_level(float(block_end), log_const) * (1.0 - 1e-12)
            max_l = _NEG_INF
            max_u = _NEG_INF
            for j in range(n_act):
                i = act[j]
                m = S[i] * inv_n
                if kl_widths:
                    lo, hi = F.kl_inner(fam, m, level_lo)
                else:
                    w = sigma[i] * c_lo
                    lo = m - w
                    hi = m + w
                ucb[i] = hi
                max_l = max(max_l, lo)
                max_u = max(max_u, hi)
            # the rounded bounds' difference errs by up to a few ulps of the bounds themselves
            if max_u - max_l > delta0 + 1e-15 * (abs(max_u) + abs(max_l)):
                maybe = False
                for j in range(n_act):
                    if ucb[act[j]] <= max_l:
                        maybe = True
                        break
                if not maybe:
                    continue
        # Exact evaluation of the round.
        n_act, code, rec = decide_round(fam, state, S, n, act, n_act, means, ucb, sigma,
                                        log_const, kl_widths, delta0, pull_all, recommend_best)
        if code != RUNNING:
            return t, np.int64(rec), False, code


@njit(cache=True, nogil=True)
def two_arm_elimination_run(state: np.ndarray, mu: np.ndarray, sigma: float, log_const: float,
                            delta0: float, max_samples: int,
                            cancel: np.ndarray) -> tuple[int, int, bool, int]:
    """Algorithm 1 on two arms with a common noise level, simulated through their difference.

    With two arms pulled once per round and ``σ_1 = σ_2 = σ``, every decision of
    :func:`elimination_run` depends on the rewards only through ``D_n = S_1(n) - S_2(n)``:
    arm 2 is eliminated when ``D_n / n >= 2 σ c(n)``, arm 1 when ``-D_n / n >= 2 σ c(n)``,
    and while both are active ``Δ_safe = 2 σ c(n)``, so the indifference stop comes at the
    fixed round ``n*`` of :func:`bai_lib.confidence.first_indifference_round`. ``D_n`` is a Gaussian
    random walk with steps ``N(μ_1 - μ_2, 2 σ^2)``, drawn here with one normal per round instead
    of two. The stopping time, the stop reason and the recommendation therefore have the same
    joint distribution as in :func:`elimination_run` (uniform recommendation at the
    indifference stop), from half the random numbers; the draws differ, so single runs do not
    coincide. The same block bound as there skips the exact ``c(n)`` in most rounds.

    Parameters
    ----------
    state : uint64[4]
        Generator state, advanced in place.
    mu : float64[2]
        Arm means.
    sigma : float
        The common noise standard deviation.
    log_const, delta0, max_samples, cancel
        As in :func:`elimination_run` (``log_const`` for ``k = 2``).

    Returns
    -------
    tau, recommendation, censored, stop_reason
    """
    two_sigma = 2.0 * sigma
    step_sd = math.sqrt(2.0) * sigma
    gap = mu[0] - mu[1]
    n_star = first_indifference_round(two_sigma, log_const, delta0)
    if n_star < 0:  # beyond 2**62 rounds: max_samples censors the run first
        n_star = np.int64(2) ** 62
    n_max = max_samples // 2
    buf = np.empty(NORMAL_BUFFER)
    D = 0.0
    n = np.int64(0)
    block_end = np.int64(0)
    bound_lo = 0.0
    while True:
        if n >= n_max:
            return 2 * n, np.int64(0 if D >= 0.0 else 1), True, STOP_CENSORED
        if not refill(state, buf, cancel):
            return 2 * n, np.int64(-1), True, STOP_INTERRUPTED
        for p in range(min(buf.size, n_max - n)):
            D += gap + step_sd * buf[p]
            n += 1
            if n > block_end:
                block_end = n + max(8, n >> 5)
                bound_lo = two_sigma * conf_factor(float(block_end), log_const) * (1.0 - 1e-12)
            if n >= 4 and n < n_star and abs(D) < n * bound_lo:
                continue
            bound = n * two_sigma * conf_factor(float(n), log_const)
            if D >= bound:
                return 2 * n, np.int64(0), False, STOP_SINGLE_ARM
            if -D >= bound:
                return 2 * n, np.int64(1), False, STOP_SINGLE_ARM
            if n >= n_star:
                pick = np.int64(uniform(state) * 2.0)
                return 2 * n, np.int64(min(pick, 1)), False, STOP_INDIFFERENCE


@dataclass(frozen=True)
class Elimination(Algorithm):
    """Algorithm 1 of the paper: successive elimination with the indifference stop (Section 5).

    Parameters
    ----------
    delta0 : float, optional
        Indifference level ``Δ0 > 0``. Default: ``δ / (delta0_factor · L(H))``.
    delta0_factor : float, optional
        Divisor in ``Δ0 = δ / (factor · L(H))``; 4 as printed in Algorithm 1 (default), 1 in the
        released code of Experiment 2. Not together with ``delta0``.
    recommend : {"uniform", "empirical_best"}
        Recommendation at the indifference stop: a uniformly drawn active arm (as printed, and as
        released for Algorithm 1), or the arm with the largest empirical mean among the arms
        sampled in the last round (as released for NoElim). See
        :func:`~bai_lib.algorithms.elimination.elimination_run`.
    widths : {"subgaussian", "kl"}
        The confidence intervals: ``μ̂ ± Conf`` of Section 5 (default; for Bernoulli rewards
        with ``σ = 1/2``), or, for Bernoulli and Poisson rewards, the KL intervals
        ``{q : n d(μ̂, q) <= log(6n²/((δ²/(2K))π²))}`` with the family's divergence ``d``
        (:data:`~bai_lib.algorithms.elimination.WIDTHS`). Both miss an arm's mean with the same
        probability bound, so Algorithm 1's argument for PoE ≤ δ holds for either; for Bernoulli
        arms the KL intervals are never wider and much narrower for means near 0 or 1. Poisson
        rewards are not sub-Gaussian and take ``"kl"`` only.
    method : {"samples", "blocks"}
        How runs are simulated: one reward at a time
        (:func:`~bai_lib.algorithms.elimination.elimination_run`, the default and
        the reference), or in law by blocks of rounds
        (:func:`~bai_lib.algorithms.skip_ahead.elimination_blocks_run`: Gaussian rewards with a
        common noise level and ``widths="subgaussian"`` only; the cost of a run grows like the
        logarithm of its length). Runs by blocks check the stop at every round, so they take no
        batched looks.
    tolerance : float
        With ``method="blocks"``, the bound on the total variation distance between the law of
        a run's result and the per-sample law (default ``1e-12``).
    """

    delta0: Optional[float] = None
    delta0_factor: Optional[float] = None
    recommend: str = "uniform"
    widths: str = "subgaussian"
    method: str = "samples"
    tolerance: float = DEFAULT_TOLERANCE

    name: ClassVar[str] = "elimination"
    short_label: ClassVar[str] = "Alg. 1 (elimination)"
    color: ClassVar[str] = "#1b6ca8"
    bounded: ClassVar[bool] = True
    needs_prior: ClassVar[bool] = True
    _pull_all: ClassVar[bool] = False

    def __post_init__(self):
        if self.delta0 is not None and self.delta0_factor is not None:
            raise ValueError("give either delta0 or delta0_factor, not both")
        if self.delta0 is not None:
            object.__setattr__(self, "delta0", V.positive(self.delta0, "delta0"))
        if self.delta0_factor is not None:
            object.__setattr__(self, "delta0_factor", V.positive(self.delta0_factor, "delta0_factor"))
        V.choice(self.recommend, ("uniform", "empirical_best"), "recommend")
        V.choice(self.widths, WIDTHS, "widths")
        object.__setattr__(self, "tolerance", checked_tolerance(self.method, self.tolerance))
        if self.method == "blocks" and self.widths != "subgaussian":
            raise ValueError(f"widths must be 'subgaussian' with method='blocks', got "
                             f"{self.widths!r}")

    def simulates_in_law(self) -> bool:
        return self.method == "blocks"

    def translation_invariant(self) -> bool:
        """With the subgaussian widths: eliminations compare differences of sums, and with a
        common noise level the indifference stop depends on the round alone."""
        return self.widths == "subgaussian"

    def uses_prior(self) -> bool:
        return self.delta0 is None

    def resolve_delta0(self, prior: Optional[GaussianPrior], delta: float) -> float:
        """The ``Δ0`` this specification uses for ``prior`` and ``delta``."""
        if self.delta0 is not None:
            return self.delta0
        factor = 4.0 if self.delta0_factor is None else self.delta0_factor
        return float(_delta0_of(prior, delta, factor=factor))

    def with_delta0_factor(self, factor: float) -> "Elimination":
        return self if self.delta0 is not None else dataclasses.replace(self, delta0_factor=factor)

    def max_stopping_time(self, prior: Optional[GaussianPrior], noise_stds: np.ndarray,
                          delta: float) -> Optional[int]:
        """``k n*`` (:func:`bai_lib.confidence.stopping_time_cap`) with a common noise level;
        ``None`` for a prior over the means of rewards that are not sub-Gaussian (a
        :class:`~bai_lib.GammaPrior`: the KL widths of Poisson arms have no bound in ``σ``)."""
        sigma = np.asarray(noise_stds, dtype=float)
        model = model_of_prior(prior)
        if not np.all(sigma == sigma[0]) or (model is not None and not model.sub_gaussian):
            return None
        return stopping_time_cap(delta, self.resolve_delta0(prior, delta), sigma.size,
                                 float(sigma[0]))

    def exploration_level(self, t: np.ndarray, delta: float, k: int,
                          rewards: str = "gaussian") -> np.ndarray:
        """``log(6n² / ((δ²/(2K)) π²))`` of ``Conf`` at round ``n = t / k``
        (:func:`bai_lib.confidence.conf_log_const`), the level of both widths."""
        n = np.maximum(np.asarray(t, dtype=np.float64) / k, 1.0)
        return np.log(conf_log_const(delta, k) * n * n)

    def coin_at_indifference(self, k: int) -> bool:
        return k == 2 and self.recommend == "uniform"

    def guarantee(self, prior: Optional[GaussianPrior], rewards: str, delta: float) -> str:
        """Bayesian, ``PoE ≤ δ``, when ``Δ0 ≤ δ / (4 L(H))`` (Theorem 6 of the paper); else
        none stated (:func:`~bai_lib.algorithms.base.indifference_guarantee`)."""
        return indifference_guarantee(self, prior, delta, True, "Theorem 6 of the paper")

    def two_arm_walk(self) -> Optional["TwoArmElimination"]:
        usable = (self.recommend == "uniform" and self.widths == "subgaussian"
                  and self.method == "samples")
        return TwoArmElimination.of(self) if usable else None

    def can_trace(self) -> bool:
        return (self.recommend == "uniform" and self.widths == "subgaussian"
                and self.method == "samples")

    def _bind(self, prior, noise_stds, deltas, max_samples, rewards) -> Binding:
        """For Bernoulli rewards the widths use ``noise_stds`` as sub-Gaussian parameters
        (``1/2`` is valid for any mean in ``[0, 1]``, so Algorithm 1's guarantee holds as for
        Gaussian rewards), or, with ``widths="kl"``, not at all; Poisson rewards, which are not
        sub-Gaussian, take ``widths="kl"`` only."""
        kl_widths = self._kl_widths(self.widths, rewards)
        fam = family_bundle(rewards)
        delta = self._single_level(deltas)
        d0 = self.resolve_delta0(prior, delta)
        pull_all = self._pull_all
        best = self.recommend == "empirical_best"
        sig = noise_stds
        log_const = conf_log_const(delta, sig.size)

        if self.method == "blocks":
            if rewards != "gaussian":
                raise ValueError(f"rewards={rewards!r}: method='blocks' simulates Gaussian "
                                 f"rewards only")
            if not np.all(sig == sig[0]):
                raise ValueError(f"noise_stds: method='blocks' needs a common noise level, got "
                                 f"{sig.tolist()}")
            sigma, tol = float(sig[0]), self.tolerance

            def call(state, mu, max_samples, cancel):
                return elimination_blocks_run(state, mu, sigma, log_const, d0, max_samples,
                                              pull_all, best, tol, fam, cancel)
        else:
            def call(state, mu, max_samples, cancel):
                return elimination_run(state, mu, sig, log_const, d0, max_samples, pull_all,
                                       best, False, fam, kl_widths, cancel)

        def ask_tell(state, arms, xs, looks, mode, n_more, schedule, mu, *out,
                     max_samples=max_samples):
            return elimination_ask_tell(fam, state, sig, log_const, d0, max_samples, pull_all,
                                        best, kl_widths, arms, xs, looks, mode, n_more,
                                        schedule, mu, *out)

        return one_level(call, d0, lambda means: gap_cost(means, sig, d0, pull_all), max_samples,
                         ask_tell)


@dataclass(frozen=True)
class NoElim(Elimination):
    """NoElim (paper, appendix): Algorithm 1 that keeps sampling every arm in every round.

    Same options as :class:`Elimination`. The released code recommends the empirical best arm
    (``recommend="empirical_best"``); the printed algorithm, and the default here, a uniformly
    drawn active arm.
    """

    name: ClassVar[str] = "noelim"
    short_label: ClassVar[str] = "NoElim"
    color: ClassVar[str] = "#7a5195"
    _pull_all: ClassVar[bool] = True

    def coin_at_indifference(self, k: int) -> bool:
        return False

    def two_arm_walk(self) -> None:
        return None

    def can_trace(self) -> bool:
        return False


@dataclass(frozen=True)
class TwoArmElimination(Elimination):
    """Algorithm 1 on two arms with a common noise level, run by :func:`two_arm_elimination_run`.

    Same options and same distribution of stopping times, stop reasons and recommendations as
    :class:`Elimination` (uniform recommendation only), at about a quarter of the cost per
    round; single runs differ from :class:`Elimination`'s for the same seed, since the random
    numbers are used differently. Not registered under a name: build it from a specification
    with :meth:`of`.
    """

    short_label: ClassVar[str] = "Alg. 1 (two-arm walk)"
    reward_models: ClassVar[tuple] = ("gaussian",)

    def __post_init__(self):
        super().__post_init__()
        if self.recommend != "uniform":
            raise ValueError(f"recommend must be 'uniform' for the two-arm walk, got "
                             f"{self.recommend!r}")
        if self.widths != "subgaussian":
            raise ValueError(f"widths must be 'subgaussian' for the two-arm walk, got "
                             f"{self.widths!r}")
        if self.method != "samples":
            raise ValueError(f"method must be 'samples' for the two-arm walk, got "
                             f"{self.method!r}")

    @classmethod
    def of(cls, spec: Elimination) -> "TwoArmElimination":
        """The two-arm walk with the options of ``spec`` (an :class:`Elimination`)."""
        if type(spec) not in (Elimination, TwoArmElimination):
            raise ValueError(f"spec must be an Elimination specification, got {spec!r}")
        return cls(delta0=spec.delta0, delta0_factor=spec.delta0_factor, recommend=spec.recommend,
                   widths=spec.widths)

    def two_arm_walk(self) -> "TwoArmElimination":
        return self

    def can_trace(self) -> bool:
        return False  # its runs draw one normal per round, not the rewards trace_elimination replays

    def _bind(self, prior, noise_stds, deltas, max_samples, rewards) -> Binding:
        delta = self._single_level(deltas)
        sig = np.asarray(noise_stds, dtype=float)
        if sig.size != 2 or sig[0] != sig[1]:
            raise ValueError(f"noise_stds: the two-arm walk needs two arms with a common noise "
                             f"level, got {sig.tolist()}")
        d0 = self.resolve_delta0(prior, delta)
        sigma = float(sig[0])
        log_const = conf_log_const(delta, 2)

        def call(state, mu, max_samples, cancel):
            return two_arm_elimination_run(state, mu, sigma, log_const, d0, max_samples, cancel)

        return one_level(call, d0, lambda means: gap_cost(means, sig, d0, False), max_samples)

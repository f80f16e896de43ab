"""The protocol every algorithm specification follows.

A specification is a small frozen dataclass whose fields are the algorithm's options. It checks
them once (``__post_init__``), computes its constants once for a given prior, noise levels and
confidence levels (:meth:`~bai_lib.algorithms.Algorithm.bind`) and returns a :class:`Binding`: a
function that runs one run on one instance with its compiled kernel and records it at each
level. :func:`bai_lib.simulate` does everything else (drawing or fixing the instances, seeding,
threads, censoring, progress).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable, ClassVar, Optional

import numpy as np

from .. import _validate as V
from ..beta_prior import BetaPrior
from ..families import REWARD_MODELS, reward_model
from ..kernels import STOP_CENSORED, STOP_INTERRUPTED, cancel_flag, level_records
from .ask_tell import SIMULATE, look_schedule
from ..priors import GaussianPrior
from ..priors import delta0 as delta0_of
from ..stopping import PROVEN_GLR_THRESHOLDS

__all__ = ["Algorithm", "Binding", "one_level", "gap_cost", "indifference_guarantee"]


@dataclass(frozen=True)
class Binding:
    """A specification bound to a prior, noise levels and its confidence levels: what
    :func:`~bai_lib.simulate` runs.

    Attributes
    ----------
    run : callable
        ``run(state, mu, out_tau, out_rec, out_code, cancel=None, max_samples=...)``: one run on
        the instance ``mu`` from the generator state ``state`` (:mod:`bai_lib._rng`, advanced in
        place), recorded at every level given to :meth:`Algorithm.bind` (in that order,
        decreasing ``δ``): its stopping time, recommendation and stop code
        (:data:`bai_lib.kernels.STOP_REASON_NAMES`) in the ``int64`` arrays. ``cancel`` is the
        flag of :func:`bai_lib.kernels.cancel_flag`; ``max_samples`` overrides the censoring
        level of the binding (a warm-up call uses ``k``).
    delta0s : tuple
        The indifference level ``Δ0`` in force at each level (``None`` for algorithms without
        an indifference stop).
    cost_keys : callable
        ``cost_keys(means) -> ndarray``: a rough relative cost per run, used only to hand out the
        long runs first.
    ask_tell : callable or None
        ``ask_tell(state, arms, xs, looks, mode, n_more, schedule, mu, out_arms, out_xs, S, N,
        cancel) -> (code, recommendation, t, n_out, bad)``: the run at the binding's single level
        on a log of observations, then planned or simulated pulls on the instance ``mu``
        (:mod:`bai_lib.algorithms.ask_tell`, which :mod:`bai_lib.online` drives); ``max_samples``
        overrides the censoring level as for ``run``. ``None`` for an algorithm without one.
    """

    run: Callable
    delta0s: tuple
    cost_keys: Callable
    ask_tell: Optional[Callable] = None

    def with_looks(self, look_every: int, k: int,
                   look_at: Optional[Sequence[int]] = None) -> "Binding":
        """This binding (at one level, on ``k`` arms) with the stop checked only when the number
        of samples is a multiple of ``look_every``, or, with ``look_at``, one of those
        increasing counts (Algorithm 1 and NoElim: at the end of the round that completes such
        a look, and eliminating only there; LUCB: before the round after it), as platforms
        check hourly or daily; ``max_samples`` still censors at any step. Its runs take the
        ask/tell engine's steps (:mod:`bai_lib.algorithms.ask_tell`), which with
        ``look_every = 1`` are the kernel's runs exactly. The sampling does not depend on the
        looks, except Algorithm 1's, whose eliminations wait for them."""
        if self.ask_tell is None or len(self.delta0s) != 1:
            raise ValueError("batched looks need an algorithm with an ask/tell engine "
                             "(bai_lib.algorithms.ask_tell) bound at one level")
        return dataclasses.replace(
            self, run=_looked(self.ask_tell, look_schedule(look_every, look_at), k))

    @classmethod
    def of_engine(cls, ask_tell: Callable, cost_keys: Callable, k: int) -> "Binding":
        """The binding of a specification that has no kernel of its own, only an ask/tell engine
        (one level, no indifference level): its runs are the engine's, looking at every
        sample (:meth:`with_looks` changes that)."""
        return cls(_looked(ask_tell, look_schedule(), k), (None,), cost_keys, ask_tell)

    def run_one(self, state: np.ndarray, mu: np.ndarray, cancel: Optional[np.ndarray] = None,
                max_samples: Optional[int] = None) -> tuple[int, int, bool, int]:
        """One run of a binding at a single level: ``(tau, recommendation, censored, stop
        code)``."""
        if len(self.delta0s) != 1:
            raise ValueError(f"run_one needs a binding at one level, this one has "
                             f"{len(self.delta0s)}")
        tau, rec, code = level_records(1)
        extra = {} if max_samples is None else {"max_samples": max_samples}
        mu = np.array(mu, dtype=np.float64)  # writable, as in bind: one compiled type
        self.run(state, mu, tau, rec, code, cancel, **extra)
        return (int(tau[0]), int(rec[0]), bool(code[0] in (STOP_CENSORED, STOP_INTERRUPTED)),
                int(code[0]))


def _looked(ask_tell: Callable, schedule: np.ndarray, k: int) -> Callable:
    """The ``run`` of a :class:`Binding` whose stop is checked at the looks of ``schedule``
    (:func:`~bai_lib.algorithms.ask_tell.look_schedule`)."""
    none_i, none_x, none_l = np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.uint8)

    def run(state, mu, out_tau, out_rec, out_code, cancel=None, **kwargs):
        S, N = np.zeros(k), np.zeros(k, dtype=np.int64)
        # pulls without end: max_samples (at most bai_lib.plan.MAX_SAMPLES_LIMIT) censors first
        code, rec, t, _, _ = ask_tell(state, none_i, none_x, none_l, SIMULATE, 2**62,
                                      schedule, mu, none_i, none_x, S, N, cancel_flag(cancel),
                                      **kwargs)
        out_tau[0], out_rec[0], out_code[0] = t, rec, code

    return run


def one_level(call: Callable, delta0: Optional[float], cost_keys: Callable,
              max_samples: int, ask_tell: Optional[Callable] = None) -> Binding:
    """The :class:`Binding` of a kernel that runs at one ``δ``: ``call(state, mu, max_samples,
    cancel) -> (tau, recommendation, censored, stop code)``, and its ``ask_tell`` engine."""
    default = max_samples

    def run(state, mu, out_tau, out_rec, out_code, cancel=None, max_samples=default):
        tau, rec, _, code = call(state, mu, max_samples, cancel_flag(cancel))
        out_tau[0], out_rec[0], out_code[0] = tau, rec, code

    return Binding(run, (delta0,), cost_keys, ask_tell)


def gap_cost(means: np.ndarray, noise_stds: np.ndarray, floor: float = 1e-12,
             pull_all: bool = False) -> np.ndarray:
    """``Σ_j (σ_best² + σ_j²) / max(gap_j, floor)²`` per instance (``k · max_j`` for ``pull_all``).

    A scheduling key only: proportional to the number of samples a run on the instance needs.
    """
    k = means.shape[1]
    rows = np.arange(means.shape[0])
    best = np.argmax(means, axis=1)
    gaps = means[rows, best][:, None] - means
    var = noise_stds[best][:, None] ** 2 + (noise_stds**2)[None, :]
    per_arm = var / np.maximum(gaps, floor) ** 2
    per_arm[rows, best] = 0.0
    return k * per_arm.max(axis=1) if pull_all else per_arm.sum(axis=1)


def indifference_guarantee(spec: "Algorithm", prior: Optional[GaussianPrior | BetaPrior],
                           delta: float, proven_glr: bool, why: str) -> str:
    """:meth:`bai_lib.algorithms.Algorithm.guarantee` of a specification stopped by Algorithm
    1's indifference rule: Bayesian, ``PoE ≤ δ``, when its ``Δ0`` is at most the theorem's
    ``δ / (4 L(H))`` and its GLR share (if any) uses the proven threshold (``proven_glr``);
    ``why`` names the proof."""
    if prior is not None and proven_glr and \
            spec.resolve_delta0(prior, delta) <= float(delta0_of(prior, delta, factor=4.0)):
        return (f"Bayesian: the probability of error averaged over the prior is at most "
                f"δ = {delta:g} ({why}).")
    return (f"None stated: {spec.label} runs with a Δ0 above δ/(4 L(H)) or a GLR threshold "
            f"other than the proven one, which the proof does not cover.")


class Algorithm:
    """Base of the algorithm specifications (frozen dataclasses).

    Class attributes a subclass sets
    --------------------------------
    name : str
        The string alias accepted by :func:`bai_lib.simulate` (registered in
        :data:`bai_lib.algorithms.ALGORITHMS`).
    short_label : str
        Display name in tables and legends.
    color : str
        Colour of the algorithm in every figure.
    bounded : bool
        Whether the stopping time is bounded on sub-Gaussian rewards (so that a normal interval
        for its mean means something); on rewards that are not sub-Gaussian (Poisson) no
        algorithm's is (``sub_gaussian`` of :class:`~bai_lib.families.family.RewardModel`).
    needs_prior : bool
        Whether :meth:`bind` uses the prior (a posterior, ``L(H)``); algorithms that do not can
        run on fixed instances without one.
    one_trajectory : bool
        Whether the sampling rule does not depend on ``δ`` (only the stopping rule does), so
        that :meth:`bind` takes several levels and one trajectory serves them all
        (:func:`bai_lib.simulate_deltas`). Read it on the specification, not the class: the GLR
        algorithms with the indifference stop force pulls from a time set by the level
        (:func:`~bai_lib.algorithms.indifference.forcing_start`), so theirs is false.
    reward_models : tuple of str
        The reward families its kernel simulates (keys of
        :data:`bai_lib.families.REWARD_MODELS`): by default every registered family (a new
        family module is taken up by every family-generic specification; an option the family
        cannot serve, such as KL widths without a divergence or TTTS without a conjugate
        posterior, is refused when it binds), ``("gaussian",)`` for a
        :class:`~bai_lib.algorithms.SamplingRule` and the two-arm walk of Algorithm 1.

    A specification implements ``_bind(prior, noise_stds, deltas, max_samples, rewards)``, the
    binding for one reward family; :meth:`bind` checks ``rewards`` against ``reward_models`` and
    hands the runnable the family's mean parameters (``kernel_means`` of
    :class:`~bai_lib.families.family.RewardModel`), once for every specification.

    What the layers above ask a specification, instead of testing its class: :meth:`uses_prior`,
    :meth:`resolve_delta0`, :meth:`with_delta0_factor`, :meth:`max_stopping_time`,
    :meth:`coin_at_indifference`, :meth:`two_arm_walk` and :meth:`can_trace`. The defaults are
    those of an algorithm without an indifference stop.
    """

    name: ClassVar[str] = ""
    short_label: ClassVar[str] = ""
    color: ClassVar[str] = "#555555"
    bounded: ClassVar[bool] = False
    needs_prior: ClassVar[bool] = False
    one_trajectory: ClassVar[bool] = False
    reward_models: ClassVar[tuple] = tuple(REWARD_MODELS)

    def bind(self, prior: Optional[GaussianPrior | BetaPrior], noise_stds: np.ndarray,
             deltas: Sequence[float], max_samples: int, rewards: str = "gaussian") -> Binding:
        """Compute the constants for ``prior`` (a :class:`~bai_lib.GaussianPrior`, a
        :class:`~bai_lib.BetaPrior` for Bernoulli rewards, or ``None``), ``noise_stds``
        (float64[k]), the confidence levels ``deltas`` (decreasing) and ``max_samples``; return
        the runnable. Several levels only where ``one_trajectory`` holds: one trajectory is then
        scored at every level, each level's record being exactly a run at that ``δ`` alone.

        ``rewards`` is one of the specification's ``reward_models``. The runnable takes the
        arms' means and hands the kernel the family's mean parameters: for Bernoulli arms their
        standard normal quantiles (a pull pays ``1`` when its standard normal draw lies below
        the quantile), so that every family consumes the same stream of normals."""
        V.choice(rewards, self.reward_models, "rewards")
        model = reward_model(rewards)
        # a writable copy: numba compiles a kernel once per argument type, and a read-only
        # array (a result's, a frozen plan's) is another type, compiled again for nothing
        noise_stds = np.array(noise_stds, dtype=np.float64)
        bound = self._bind(prior, noise_stds, deltas, max_samples, rewards)
        if rewards == "gaussian":
            return bound
        run, ask_tell, parameters = bound.run, bound.ask_tell, model.kernel_means

        def run_family(state, mu, *args, **kwargs):
            run(state, parameters(mu), *args, **kwargs)

        def ask_tell_family(state, arms, xs, looks, mode, n_more, schedule, mu, *args,
                            **kwargs):
            return ask_tell(state, arms, xs, looks, mode, n_more, schedule, parameters(mu),
                            *args, **kwargs)

        return dataclasses.replace(bound, run=run_family,
                                   ask_tell=None if ask_tell is None else ask_tell_family)

    def _bind(self, prior, noise_stds, deltas, max_samples,
              rewards) -> Binding:  # pragma: no cover - abstract
        """:meth:`bind` for the reward family ``rewards`` (one of ``reward_models``); the
        runnable receives the family's mean parameters in place of the means."""
        raise NotImplementedError

    def _kl_widths(self, widths: str, rewards: str) -> bool:
        """Whether ``widths`` asks for KL widths, which the families with a divergence have
        (Bernoulli, Poisson); sub-Gaussian widths need a sub-Gaussian family."""
        model = reward_model(rewards)
        if widths == "kl" and not model.has_kl_widths:
            raise ValueError(f"widths='kl' is for the families with KL intervals "
                             f"(rewards='bernoulli' or 'poisson'), got rewards={rewards!r}")
        if widths != "kl" and not model.sub_gaussian:
            raise ValueError(f"widths={widths!r} needs sub-Gaussian rewards; {model.describe} "
                             f"rewards are not, use widths='kl' with rewards={rewards!r}")
        return widths == "kl"

    def _single_level(self, deltas: Sequence[float]) -> float:
        """The one ``δ`` of ``deltas`` for a specification that binds one level at a time."""
        if len(deltas) != 1:
            raise ValueError(f"{self.label} binds one confidence level at a time (its sampling "
                             f"rule depends on δ), got {len(deltas)}")
        return float(deltas[0])

    def default_max_samples(self, k: int) -> int:
        """The censoring level :func:`bai_lib.simulate` uses when ``max_samples`` is not given:
        ``10**9`` samples, which the compiled simulators reach in seconds (a specification whose
        steps are slow lowers it, see :meth:`TTTS.default_max_samples`)."""
        return 10**9

    def uses_prior(self) -> bool:
        """Whether this specification, with its options, needs a prior to
        :meth:`.Algorithm.bind`."""
        return self.needs_prior

    def resolve_delta0(self, prior: Optional[GaussianPrior], delta: float) -> Optional[float]:
        """The indifference level ``Δ0`` in force for ``prior`` and ``delta``; ``None`` for an
        algorithm without an indifference stop."""
        return None

    def with_delta0_factor(self, factor: float) -> "Algorithm":
        """This specification with ``Δ0 = δ / (factor · L(H))`` where ``Δ0`` comes from the prior;
        itself where it does not (a fixed ``Δ0``, or no indifference stop)."""
        return self

    def max_stopping_time(self, prior: Optional[GaussianPrior], noise_stds: np.ndarray,
                          delta: float) -> Optional[int]:
        """A stopping time no run can exceed (so that a run censored at it cannot exist), or
        ``None`` when there is none."""
        return None

    def indifference_samples(self, prior: Optional[GaussianPrior], noise_stds: np.ndarray,
                             delta: float) -> Optional[int]:
        """``n0``, the samples per arm after which the indifference stop of a GLR algorithm
        with ``indifference=True`` fires; ``None`` for a specification without that stop."""
        return None

    def exploration_level(self, t: np.ndarray, delta: float, k: int,
                          rewards: str = "gaussian") -> np.ndarray:
        """The logarithmic level a run at ``delta`` must clear after ``t`` samples, as a function
        of ``t``: a run on an instance of cost key ``c`` (``cost_keys`` of its :class:`Binding`)
        takes about ``α · c · level(τ)`` samples for a constant ``α``, which
        :func:`bai_lib.estimate_cost` fits on a pilot. By default the GLR test's threshold
        (:func:`bai_lib.stopping.threshold` of this specification)."""
        from ..stopping import threshold

        return np.asarray(threshold(self, np.maximum(t, 2.0), delta, k, rewards=rewards))

    def coin_at_indifference(self, k: int) -> bool:
        """Whether, on ``k`` arms, the recommendation at an indifference stop is a fair coin
        between the two arms (the error of such a stop is then exactly ``1/2``)."""
        return False

    def due_now(self, counts: np.ndarray, planned: np.ndarray, t: int) -> list:
        """The arms an experiment may record next, after ``t`` observations with per-arm
        ``counts``, given the next ``k`` arms the rule ``planned``: the arms of the current round
        (every arm once first; for Algorithm 1 every active arm once a round), those of the plan
        with the fewest observations. The experiments name them when they refuse a pull."""
        sampled = np.unique(planned)
        n = counts[sampled]
        return sampled[n == n.min()].tolist()

    def translation_invariant(self) -> bool:
        """Whether, on Gaussian arms, the law of a run is unchanged when every arm mean is
        shifted by the same amount (its decisions depend on differences of sums only), as
        :func:`bai_lib.poe.gap_average` needs."""
        return False

    def simulates_in_law(self) -> bool:
        """Whether :func:`bai_lib.simulate` runs this specification in law, by blocks of rounds
        (:mod:`bai_lib.algorithms.skip_ahead`), rather than sample by sample: such runs check
        the stop at every round and take no batched looks."""
        return False

    def two_arm_walk(self) -> Optional["Algorithm"]:
        """A specification with the same law on two arms with a common noise level that is
        cheaper to simulate, or ``None``."""
        return None

    def working_memory(self, k: int) -> int:
        """Bytes a run of the kernel allocates beyond the ``O(k)`` vectors every kernel has
        (each worker thread holds one run's worth); counted by the memory check."""
        return 0

    def can_trace(self) -> bool:
        """Whether :func:`bai_lib.trace.trace_elimination` replays this specification's runs."""
        return False

    def glr_threshold(self, rewards: str) -> Optional[str]:
        """The name of the GLR threshold (:data:`bai_lib.stopping.GLR_THRESHOLDS`) that stops
        this specification's runs on ``rewards`` arms, or ``None`` when another rule does."""
        return None

    def guarantee(self, prior: Optional[GaussianPrior | BetaPrior], rewards: str,
                  delta: float) -> str:
        """What a stop of this specification at ``delta`` on ``rewards`` arms under ``prior``
        guarantees, in one sentence, stating only what a proof covers (the paper's, or those
        of :func:`bai_lib.stopping.glr_beta`): by default, frequentist ``δ``-correctness when
        its GLR threshold is the proven one for the family
        (:data:`bai_lib.stopping.PROVEN_GLR_THRESHOLDS`), else none."""
        name = self.glr_threshold(rewards)
        if name is not None and name == PROVEN_GLR_THRESHOLDS.get(rewards):
            return (f"Frequentist: on every instance the probability of error is at most "
                    f"δ = {delta:g} (the proven GLR threshold {name!r}), hence also averaged "
                    f"over any prior.")
        return (f"None proven: the stopping threshold of {self.label} is a heuristic; "
                f"δ = {delta:g} is its nominal level (bai_lib.stopping lists the proven "
                f"thresholds).")

    @property
    def label(self) -> str:
        """Short display name (the algorithm's name plus every option that differs from its
        default)."""
        base = self.short_label or self.name
        changed = [f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self)
                   if f.repr and getattr(self, f.name) != f.default]
        return f"{base} ({', '.join(changed)})" if changed else base

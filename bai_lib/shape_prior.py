"""Independent priors with two shape parameters per arm: the base of the Beta and Gamma priors.

Math layer, below :mod:`bai_lib.beta_prior` and :mod:`bai_lib.gamma_prior`. Arm ``i`` has mean
:math:`\\mu_i \\sim H_i`, independently, with density :math:`h_i` and distribution function
:math:`H_i` fixed by two parameters :math:`a_i, b_i` (Beta(a_i, b_i) on ``[0, 1]``, Gamma of
shape :math:`a_i` and rate :math:`b_i` on ``(0, ∞)``). :class:`ShapePrior` holds what the two
families share: the frozen, read-only parameters, the checks of the inputs, the constants of
Definition 2 (``L_ij(H)`` and ``L(H)``) and of the volume lemma (Lemma 1, ``L(H, Δ)``) of
Jang, Komiyama and Yamazaki, *Fixed Confidence Best Arm Identification in the Bayesian
Setting* (NeurIPS 2024), computed by one quadrature, and the draws of the mean vector.

The quadrature the families share
---------------------------------
Every quantity is a one-dimensional integral over the support of products of the densities
:math:`h_s` and distribution functions :math:`H_s`, in log space. A family cuts the support at
one point into two halves and maps each onto local coordinates in ``[0, 1]`` (the Jacobian
is part of the log integrand), with the power substitution of
:func:`bai_lib.quadrature.exponent_map` where an integrand behaves like :math:`x^p`,
``-1 < p < 0``. Panels are cut at every arm's quantiles of levels ``1e-15 ... 1 - 1e-15``
(and, for :math:`P[\\text{gap} \\le \\Delta]`, at those points shifted by ``Δ``), plus
``8`` uniform panels of each half, and carry 16-point Gauss-Legendre rules, halved until the
estimated relative error of every integral is below ``1e-13``
(:func:`bai_lib.quadrature.panel_integral`). Nothing is truncated. The size of every
computation is estimated before it starts, and refused beyond ``MAX_EVALUATIONS`` and
``MAX_BYTES`` of ``bai_lib._validate``.
"""

from __future__ import annotations

import math
import reprlib
import warnings
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Union

import numpy as np
from numpy.typing import ArrayLike

from . import _validate as V
from ._rng import SEED_MAX
from .quadrature import log_pair_sum, panel_integral, sum_except

__all__ = ["ShapePrior", "PAIRWISE_MAX_K"]

#: ``method="auto"`` of :meth:`bai_lib.BetaPrior.L` and :meth:`bai_lib.GammaPrior.L` sums the
#: pairwise integrals up to this many arms.
PAIRWISE_MAX_K = 10

_METHODS = ("auto", "pairwise", "single")
_TINY = np.finfo(float).tiny
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_N_BASE = 8                      # uniform panels of each half, besides the arms' quantiles
#: lower quantile levels of each arm used as panel edges (the upper ones by symmetry)
_LEVELS = np.array([1e-15, 1e-9, 1e-5, 1e-3, 0.02, 0.16, 0.5])
_GL_SHIFT = 0.1                  # largest Δ / scale of h_s where H_s(x) - H_s(x-Δ) is integrated


def _short(value: np.ndarray) -> str:  # a bounded repr for error messages
    return reprlib.repr(value.tolist())


def _params(values, name: str, bounds: tuple[float, float]) -> np.ndarray:
    """``values`` as a new one-dimensional array of positive parameters within ``bounds``."""
    arr = V.reals(values, name, positive=True)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a one-dimensional sequence, got {values!r}")
    lo, hi = bounds
    if np.any(arr < lo) or np.any(arr > hi):
        raise ValueError(f"{name} must lie in the supported range [{lo:g}, {hi:g}], "
                         f"got {_short(arr)}")
    return arr


@dataclass(frozen=True, eq=False, init=False)
class ShapePrior:
    """Independent priors :math:`H_i` on the arm means, each with two parameters ``a_i, b_i``.

    The common part of :class:`~bai_lib.BetaPrior` and :class:`~bai_lib.GammaPrior`, not a
    prior by itself. It keeps read-only copies of the inputs ``a`` and ``b`` (one value per arm,
    ``k >= 2`` arms) and provides ``k``, equality and hashing by value, the volume ratio
    :math:`L(H, \\Delta)` of Lemma 1 and, for the families' public methods, the computations
    behind :math:`L_{ij}(H)` and :math:`L(H)` of Definition 2, :math:`P[\\mu_{(1)} -
    \\mu_{(2)} \\le \\Delta]` of Lemma 1 and the draws of the mean vector (see the module
    docstring). A ``ValueError`` names ``a`` or ``b`` if a value is not a real number, the
    input is not one-dimensional, the lengths differ, ``k < 2``, or a value is not finite, not
    positive or outside its supported range.

    A family implements the densities and distribution functions of its arms and the map of
    the support onto the local coordinates ``u`` of two halves: ``_arms(u, left, m)``, the logs
    of :math:`h_s` and :math:`H_s` (arms in columns), the log Jacobian and the points ``x``
    (first of a tuple the family reads back in the hooks below); ``_quantiles(q)``, the arms'
    quantiles of levels ``q``; ``_edges(points, m)``, the panel edges of both halves at those
    points (with ``_panel_edges``); ``_l_map()`` and ``_gap_map()``, the exponents ``m`` of
    the substitutions for :math:`L` and for the gap probability. For the gap probability,
    where :math:`h_s(x) \\propto x^{a_s - 1} g_s(x)` (:math:`g_s = (1-x)^{b_s - 1}` or
    :math:`e^{-b_s x}`), it also implements ``_shifted(points, d)`` (the points and those
    shifted by ``Δ``), ``_right_rate(pts)`` (the inverse scale of each :math:`g_s` at ``x``),
    ``_right_psi(pts, i, s, dc)`` (:math:`\\log g_s(x - \\Delta c) - \\log g_s(x)`) and
    ``_log_cdf_before(pts, rows, d)`` (:math:`\\log H_s(x - \\Delta)`).

    Class attributes a subclass sets
    --------------------------------
    _RANGES : tuple of two (float, float)
        The supported ranges of ``a_i`` and of ``b_i``.
    _SUPPORT_END : float
        The right end of the support (``1`` or ``inf``): a gap ``Δ`` at least this large has
        probability ``1``.
    _L_TOO_SMALL : str
        How the error for an ``L(H)`` below the smallest normal double says so.
    """

    a: np.ndarray
    b: np.ndarray
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __init__(self, a: ArrayLike, b: ArrayLike) -> None:
        # written out so that the parameters take any array-like (the fields hold arrays)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "_cache", {})
        self.__post_init__()

    _RANGES: ClassVar[tuple[tuple[float, float], tuple[float, float]]]
    _SUPPORT_END: ClassVar[float]
    _L_TOO_SMALL: ClassVar[str]

    def __post_init__(self) -> None:
        a_range, b_range = self._RANGES
        a, b = _params(self.a, "a", a_range), _params(self.b, "b", b_range)
        if a.shape != b.shape:
            raise ValueError(f"a and b must have the same length, got {a.size} and {b.size}")
        if a.size < 2:
            raise ValueError(f"a and b: need k >= 2 arms (best arm identification compares "
                             f"arms), got k = {a.size}")
        for name, arr in (("a", a), ("b", b)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    # ------------------------------------------------------------------ basics
    @property
    def k(self) -> int:
        """Number of arms."""
        return int(self.a.size)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(a={self.a.tolist()}, b={self.b.tolist()})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        return np.array_equal(self.a, other.a) and np.array_equal(self.b, other.b)

    def __hash__(self) -> int:
        return hash((self.a.tobytes(), self.b.tobytes()))

    def _stored(self, key, make):
        if key not in self._cache:
            value = make()
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            self._cache[key] = value
        return self._cache[key]

    def _quantile_points(self):
        """The arms' quantiles of ``_LEVELS`` and their complements (``_quantiles``); only panel
        edges: an inexact one (boost may warn) costs nothing."""
        def make():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return self._quantiles(_LEVELS[:, None])
        return self._stored("quantiles", make)

    @staticmethod
    def _panel_edges(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Panel edges of the two halves: the local coordinates ``u`` (left) and ``v`` (right)
        of the arms' points, plus ``_N_BASE`` uniform panels each."""
        base = np.linspace(0.0, 1.0, _N_BASE + 1)
        return (np.unique(np.clip(np.concatenate([base, u]), 0.0, 1.0)),
                np.unique(np.clip(np.concatenate([base, v]), 0.0, 1.0)))

    def _plan(self, what, name="k", pairs=False, shifted=False) -> None:
        """``V.budget`` of the quadrature's first pass: k evaluations on 48 nodes per panel."""
        n_pairs = self.k * (self.k - 1) // 2 if pairs else 0  # 16 bytes per node and pair
        for u in (1, None):  # one distinct arm is a lower bound: np.unique only if it passes
            n = u or self._stored("u", lambda: int(np.unique(self.a + 1j * self.b).size))
            nodes = 48 * (2 * _N_BASE + (2 * _LEVELS.size - 1) * n * (1 + shifted) + shifted)
            V.budget(name, f"{what} for k = {self.k:,} arms ({nodes:,} quadrature nodes"
                     + ("" if u else f", {n:,} distinct (a, b)")
                     + (f" x {n_pairs:,} pairs x 16 bytes)" if pairs else ")"),
                     nodes * self.k * (1 + shifted), 16 * nodes * n_pairs,
                     "at least" if u else "about", "; method='single' needs O(k)" if pairs else "")

    def _sum_a(self) -> float:
        """:math:`A = \\sum_s a_s`; ``ValueError`` unless ``A > 1``: near ``x = 0`` the
        integrands of :math:`L` behave like :math:`x^{A-2}` (:math:`h_s \\propto x^{a_s - 1}`,
        :math:`H_s \\propto x^{a_s}`)."""
        A = float(np.sum(self.a))
        if not A > 1.0:
            raise ValueError(f"a: L(H) is infinite for this prior: sum(a) = {A:.6g} <= 1, so "
                             f"the integrand behaves like x^(sum(a) - 2) near 0")
        return A

    # ------------------------------------------------------------------ Definition 2
    def _l_matrix(self, what: str, name: str) -> np.ndarray:
        """The matrix of :math:`L_{ij}(H)`, stored; ``what`` and ``name`` for the refusals."""
        def make():
            self._plan(what, name, pairs=True)
            m = self._l_map()
            k = self.k
            iu, ju = np.triu_indices(k, 1)

            def log_f(u, left):
                lh, lH, ljac, _ = self._arms(u, left, m)
                rest = sum_except(lH)[:, iu] - lH[:, ju]
                return lh[:, iu] + lh[:, ju] + rest + ljac[:, None]

            out = np.zeros((k, k))  # finite (checked by _l_map), far below overflow here
            out[iu, ju] = out[ju, iu] = panel_integral(
                log_f, self._edges(self._quantile_points(), m), max(k, iu.size), "L_matrix")
            return out
        return self._stored("L_matrix", make)

    def _L(self, method: str) -> float:
        """:math:`L(H)` by ``method`` (``"auto"``, ``"pairwise"`` or ``"single"``), stored."""
        V.choice(method, _METHODS, "method")
        name = "method" if method == "pairwise" else "k"  # what the caller can change
        if method == "auto":
            method = "pairwise" if self.k <= PAIRWISE_MAX_K else "single"
        return self._stored(("L", method), lambda: self._compute_L(method, name))

    def _compute_L(self, method: str, name: str) -> float:
        if method == "pairwise":
            value = float(np.sum(self._l_matrix("L(H) by method='pairwise'", name)))
        else:
            self._plan("L(H) by the single integral", name)
            m = self._l_map()

            def log_f(u, left):
                lh, lH, ljac, _ = self._arms(u, left, m)
                return (log_pair_sum(lh, lH) + ljac)[:, None]

            value = float(panel_integral(log_f, self._edges(self._quantile_points(), m),
                                         self.k, "L(H)")[0])
        if not (math.isfinite(value) and value >= _TINY):
            raise ValueError(f"a and b: L(H) = {value!r} {self._L_TOO_SMALL} for "
                             f"a = {_short(self.a)}, b = {_short(self.b)} (arms far apart)")
        return value

    # ------------------------------------------------------------------ volume lemma
    def _gap_probability(self, delta: float) -> float:
        """:math:`P[\\text{gap} \\le \\Delta]` of Lemma 1, as the families' ``gap_probability``
        documents it: the bracket :math:`\\prod_{s \\ne i} H_s(x) - \\prod_{s \\ne i} H_s(x -
        \\Delta)` as :math:`\\prod_{s \\ne i} H_s(x)\\,(1 - e^{D})`, each term of ``D`` by
        Gauss-Legendre over ``[x - Δ, x]`` where ``Δ`` is below a tenth of the scales of
        :math:`h_s` around ``x``, otherwise as a difference of :math:`\\log H_s`."""
        d = V.nonnegative(delta, "delta")
        if d == 0.0 or d >= self._SUPPORT_END:
            return float(d >= self._SUPPORT_END)
        if d < _TINY:
            raise ValueError(f"delta = {d!r} is too small: below the smallest normal double "
                             f"({_TINY:.3g}) it carries fewer than 53 significant bits")
        self._plan("gap_probability", shifted=True)
        m = self._gap_map()
        ca = np.where(self.a == 1.0, 0.0, np.maximum(1.0, np.abs(self.a - 1.0)))  # 1 / scale

        def log_f(u, left):  # log of sum_i h_i(x) [prod_{s != i} H_s(x) - ... (x - Δ)]
            lh, lH, ljac, pts = self._arms(u, left, m)
            x = pts[0]
            D, inside = np.full(lH.shape, -np.inf), x > d  # D = log H_s(x - Δ) - log H_s(x)
            with np.errstate(all="ignore"):  # 0 * inf, log 0, 1/0 at the ends
                near = inside[:, None] & (d * (ca / (x - d)[:, None] + self._right_rate(pts))
                                          <= _GL_SHIFT)
                far = inside[:, None] & ~near
                rows, (i, s) = np.any(far, axis=1), np.nonzero(near)
                D[far] = (self._log_cdf_before(pts, rows, d) - lH[rows])[far[rows]]
                # H(x) - H(x - Δ) = h(x) Δ/2 Σ w_n exp(ψ_n), nodes x - c_n Δ: with Δ below a
                # tenth of both scales, within e^2 on the Bernstein ellipse 20 (error < 1e-30)
                dc = d * (0.5 * (1.0 - _GL_X))
                psi = ((self.a[s, None] - 1.0) * np.log1p(-dc / x[i, None])
                       + self._right_psi(pts, i, s, dc))
                ratio = np.exp(lh[i, s] - lH[i, s] + np.log(0.5 * d * (np.exp(psi) @ _GL_W)))
                D[near] = np.log1p(-np.minimum(ratio, 1.0))  # rounding must not pass 1
                terms = lh + sum_except(lH) + np.log(-np.expm1(np.minimum(sum_except(D), 0)))
                top = np.max(terms, axis=1)
                total = top + np.log(np.sum(np.exp(terms - top[:, None]), axis=1))
            return (total + ljac)[:, None]

        edges = self._edges(self._shifted(self._quantile_points(), d), m)
        p = float(panel_integral(log_f, edges, self.k, "gap_probability")[0])
        if not p >= _TINY:
            raise ValueError(f"delta = {d!r}: P[gap <= delta] = {p:.3g} underflows double "
                             f"precision (below {_TINY:.3g}) for this prior: delta is too small "
                             f"or the arms are too far apart")
        return min(p, 1.0)  # a probability; the quadrature may round above 1 by ~1e-15

    def volume_ratio(self, delta: float) -> float:
        """:math:`L(H, \\Delta) = P[\\text{gap} \\le \\Delta] / \\Delta` of the volume lemma
        (Lemma 1); tends to :math:`L(H)` as ``Δ → 0``. A ``ValueError`` names ``delta`` if it is
        not positive; otherwise as :meth:`gap_probability`."""
        d = V.positive(delta, "delta")
        return self.gap_probability(d) / d  # a normal double (else gap_probability raises)

    # ------------------------------------------------------------------ sampling
    def _sample_means(self, rng_or_seed: Union[int, np.random.Generator], size: int,
                      generator: Callable, seeded: Callable) -> np.ndarray:
        """``size`` draws of the mean vector: ``generator(rng, (size, k))`` with a
        :class:`numpy.random.Generator`, ``seeded(a, b, seed, size)`` with an integer seed."""
        size = V.integer(size, "size", 1, max(1, V.MAX_BYTES // (8 * self.k)))
        if isinstance(rng_or_seed, np.random.Generator):
            return generator(rng_or_seed, (size, self.k))
        try:
            seed = V.integer(rng_or_seed, "rng_or_seed", 0, SEED_MAX)
        except ValueError:
            raise ValueError(f"rng_or_seed must be a numpy Generator or an integer seed "
                             f"in [0, 2**64 - 1], got {reprlib.repr(rng_or_seed)}") from None
        return seeded(self.a, self.b, seed, size)

"""Gaussian priors over bandit instances and the constant :math:`L(\\boldsymbol H)`.

This is the *math layer* of :mod:`bai_lib`: it implements Definition 1 (``L_ij(H)``
and ``L(H)``), the volume lemma (Lemma 1, ``L(H, Δ)``) and the indifference level
``Δ0 = δ / (4 L(H))`` of Algorithm 1 (Section 5) of Jang, Komiyama and Yamazaki,
*Fixed Confidence Best Arm Identification in the Bayesian Setting* (NeurIPS 2024).

All integrals are one-dimensional and computed with :func:`scipy.integrate.quad`,
as in the paper's appendix ("Computation of Δ0").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Union

import numpy as np
from scipy import integrate
from scipy.special import ndtr
from scipy.stats import norm

__all__ = ["GaussianPrior", "L_released", "delta0", "volume_ratio_mc"]

ArrayLike = Union[float, np.ndarray, list, tuple]

_QUAD_OPTS = dict(epsabs=0.0, epsrel=1e-11, limit=400)


_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _pdf(x: float, mean: float, std: float) -> float:
    """Normal density (scalar, fast path for the quadrature integrands)."""
    z = (x - mean) / std
    return _INV_SQRT_2PI * math.exp(-0.5 * z * z) / std


def _as_vector(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a one-dimensional sequence, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr.tolist()}")
    return arr


@dataclass(frozen=True, eq=False)
class GaussianPrior:
    """Independent Gaussian prior :math:`H_i = N(m_i, \\xi_i^2)` on the arm means (Section 2).

    Parameters
    ----------
    means : sequence of float
        Prior means :math:`m_i`, one per arm.
    stds : sequence of float
        Prior standard deviations :math:`\\xi_i > 0`, one per arm.

    Raises
    ------
    ValueError
        If the lengths differ, ``k < 2``, or a value is non-finite or a std is not positive.

    Examples
    --------
    >>> H = GaussianPrior.standard(2)
    >>> round(H.L(), 6)  # 1/sqrt(pi) for two standard normal arms
    0.56419
    """

    means: np.ndarray
    stds: np.ndarray
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        m = _as_vector(self.means, "means")
        s = _as_vector(self.stds, "stds")
        if m.shape != s.shape:
            raise ValueError(
                f"means and stds must have the same length, got {m.size} and {s.size}"
            )
        if m.size < 2:
            raise ValueError(f"means: need k >= 2 arms, got k = {m.size}")
        if np.any(s <= 0):
            raise ValueError(f"stds must be positive, got {s.tolist()}")
        m.setflags(write=False)
        s.setflags(write=False)
        object.__setattr__(self, "means", m)
        object.__setattr__(self, "stds", s)

    @classmethod
    def standard(cls, k: int) -> "GaussianPrior":
        """The prior of both experiments of Section 6: ``m_i = 0``, ``ξ_i = 1`` for ``k`` arms."""
        if int(k) != k or k < 2:
            raise ValueError(f"k must be an integer >= 2, got {k!r}")
        return cls(np.zeros(int(k)), np.ones(int(k)))

    # ------------------------------------------------------------------ basics
    @property
    def k(self) -> int:
        """Number of arms."""
        return int(self.means.size)

    def __repr__(self) -> str:
        return f"GaussianPrior(means={self.means.tolist()}, stds={self.stds.tolist()})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GaussianPrior):
            return NotImplemented
        return np.array_equal(self.means, other.means) and np.array_equal(self.stds, other.stds)

    def __hash__(self) -> int:
        return hash((self.means.tobytes(), self.stds.tobytes()))

    def _support(self) -> tuple[float, float]:
        """An interval outside which every prior density is below 1e-300 of its peak."""
        lo = float(np.min(self.means - 40.0 * self.stds))
        hi = float(np.max(self.means + 40.0 * self.stds))
        return lo, hi

    def _breakpoints(self) -> list[float]:
        return sorted(set(np.concatenate([self.means, self.means - 3 * self.stds,
                                          self.means + 3 * self.stds]).tolist()))

    def _quad(self, f) -> float:
        lo, hi = self._support()
        pts = [p for p in self._breakpoints() if lo < p < hi]
        value, _ = integrate.quad(f, lo, hi, points=pts, **_QUAD_OPTS)
        return float(value)

    # --------------------------------------------------------- Definition 1
    def L_matrix(self) -> np.ndarray:
        """The matrix of :math:`L_{ij}(H)` of Definition 1 (zero diagonal).

        .. math:: L_{ij}(H) = \\int h_i(x)\\, h_j(x) \\prod_{s \\ne i,j} H_s(x)\\, dx,

        the density, at gap zero, of the event that arms ``i`` and ``j`` are the top two.
        The matrix is symmetric.
        """
        if "L_matrix" not in self._cache:
            k, m, s = self.k, self.means, self.stds
            out = np.zeros((k, k))
            for i in range(k):
                for j in range(i + 1, k):
                    others = np.array([t for t in range(k) if t not in (i, j)], dtype=int)
                    mo, so = m[others], s[others]

                    def integrand(x, i=i, j=j, mo=mo, so=so):
                        val = _pdf(x, m[i], s[i]) * _pdf(x, m[j], s[j])
                        return val * float(np.prod(ndtr((x - mo) / so))) if mo.size else val

                    out[i, j] = out[j, i] = self._quad(integrand)
            out.setflags(write=False)
            self._cache["L_matrix"] = out
        return self._cache["L_matrix"]

    def L(self) -> float:
        """:math:`L(H) = \\sum_{i \\ne j} L_{ij}(H)` (Definition 1)."""
        return float(self.L_matrix().sum())

    # ------------------------------------------------------- volume lemma
    def gap_probability(self, delta: float) -> float:
        """:math:`P_{\\mu\\sim H}[\\mu_{(1)} - \\mu_{(2)} \\le \\Delta]`, exactly.

        Uses the one-dimensional representation

        .. math:: P[\\text{gap} \\le \\Delta] = \\sum_i \\int h_i(x)
            \\Big[\\prod_{s\\ne i} H_s(x) - \\prod_{s \\ne i} H_s(x-\\Delta)\\Big] dx,

        since arm ``i`` is best with value ``x`` and all others lie in ``(x-Δ, x)``
        or below. For ``k = 2`` the closed form
        :math:`\\Phi((\\Delta-d)/s) - \\Phi((-\\Delta-d)/s)` with ``d = m1 - m2``,
        ``s^2 = ξ1^2 + ξ2^2`` is used.

        Parameters
        ----------
        delta : float
            Gap threshold ``Δ >= 0`` (named ``delta`` as in the paper's ``Δ``).
        """
        d = float(delta)
        if not math.isfinite(d) or d < 0:
            raise ValueError(f"delta must be a finite number >= 0, got {delta!r}")
        if d == 0.0:
            return 0.0
        m, s = self.means, self.stds
        if self.k == 2:
            loc = m[0] - m[1]
            scale = math.hypot(s[0], s[1])
            return float(norm.cdf((d - loc) / scale) - norm.cdf((-d - loc) / scale))
        total = 0.0
        for i in range(self.k):
            others = np.array([t for t in range(self.k) if t != i], dtype=int)
            mo, so = m[others], s[others]

            def integrand(x, i=i, mo=mo, so=so):
                upper = np.prod(ndtr((x - mo) / so))
                lower = np.prod(ndtr((x - d - mo) / so))
                return _pdf(x, m[i], s[i]) * float(upper - lower)

            total += self._quad(integrand)
        return float(min(max(total, 0.0), 1.0))

    def volume_ratio(self, delta: float) -> float:
        """:math:`L(H, \\Delta) = P[\\text{gap} \\le \\Delta] / \\Delta` of the volume lemma (Lemma 1).

        Tends to :math:`L(H)` as ``Δ → 0``.
        """
        d = float(delta)
        if not math.isfinite(d) or d <= 0:
            raise ValueError(f"delta must be a finite number > 0, got {delta!r}")
        return self.gap_probability(d) / d

    def volume_lemma_threshold(self) -> float:
        """The level below which Lemma 1 guarantees ``L(H,Δ) ∈ (L/2, 2L)``.

        :math:`L(H) / \\sum_i \\frac{2(k-1)}{\\xi_i}` (Lemma 1, informal statement).
        """
        return self.L() / float(np.sum(2.0 * (self.k - 1) / self.stds))

    # ------------------------------------------------------------- sampling
    def sample_means(self, rng_or_seed: Union[int, np.random.Generator], size: int) -> np.ndarray:
        """Draw ``size`` mean vectors ``μ ~ H``; returns an array of shape ``(size, k)``.

        With an integer seed, row ``r`` is exactly the ``μ`` that
        :func:`bai_lib.simulate` uses in run ``r`` for that seed (common random numbers).
        With a :class:`numpy.random.Generator`, draws come from that generator.
        """
        if int(size) != size or size < 1:
            raise ValueError(f"size must be a positive integer, got {size!r}")
        size = int(size)
        if isinstance(rng_or_seed, np.random.Generator):
            z = rng_or_seed.standard_normal((size, self.k))
            return self.means + self.stds * z
        if isinstance(rng_or_seed, (bool, np.bool_)) or not isinstance(
            rng_or_seed, (int, np.integer)
        ) or rng_or_seed < 0:
            raise ValueError(
                f"rng_or_seed must be a non-negative int or a numpy Generator, got {rng_or_seed!r}"
            )
        from ._rng import prior_means

        return prior_means(self.means, self.stds, int(rng_or_seed), size)


def L_released(prior: GaussianPrior) -> float:
    """``L`` as computed by the authors' released code: :math:`\\sum_{i \\ne j} \\xi_i \\xi_j L_{ij}(H)`.

    The released notebooks integrate ``φ((x - m_i)/ξ_i) φ((x - m_j)/ξ_j) ∏ Φ((x - m_s)/ξ_s)``,
    i.e. the prior densities :math:`h_i(x) = φ((x-m_i)/ξ_i)/ξ_i` of Definition 1 without their
    factor :math:`1/\\xi_i`. Each term is therefore :math:`\\xi_i\\xi_j L_{ij}(H)`; the two agree
    when every :math:`\\xi_i = 1` (Experiments 1 and 2) and differ in Experiment 3.
    """
    if not isinstance(prior, GaussianPrior):
        raise ValueError(f"prior must be a GaussianPrior, got {type(prior).__name__}")
    xi = np.asarray(prior.stds, dtype=float)
    return float((prior.L_matrix() * np.outer(xi, xi)).sum())


def delta0(prior: GaussianPrior, delta: float, factor: float = 4.0) -> float:
    """Indifference level :math:`\\Delta_0 = \\delta / (\\text{factor}\\cdot L(H))`.

    Algorithm 1 prints ``factor = 4``, which by the volume lemma gives
    :math:`P(\\text{gap} \\le \\Delta_0) \\le \\delta/2` (Section 5). The code released with
    the paper used ``factor = 1`` for Experiment 2; both conventions are reachable.

    Parameters
    ----------
    prior : GaussianPrior
    delta : float
        Confidence level in (0, 1).
    factor : float, default 4.0
        Positive divisor.
    """
    if not isinstance(prior, GaussianPrior):
        raise ValueError(f"prior must be a GaussianPrior, got {type(prior).__name__}")
    d = float(delta)
    if not (0.0 < d < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    f = float(factor)
    if not math.isfinite(f) or f <= 0:
        raise ValueError(f"factor must be a finite positive number, got {factor!r}")
    return d / (f * prior.L())


def volume_ratio_mc(
    prior: GaussianPrior,
    deltas: ArrayLike,
    n_samples: int,
    rng: np.random.Generator,
    *,
    z: float = 1.96,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Monte Carlo estimate of :math:`L(H,\\Delta)` with a pointwise confidence band.

    Draws ``n_samples`` mean vectors from ``prior``, and for each ``Δ`` in ``deltas``
    estimates :math:`P[\\text{gap} \\le \\Delta]` by a proportion with a Wilson score
    interval (``z = 1.96`` gives 95%), divided by ``Δ``.

    Returns
    -------
    estimate, lower, upper : ndarray
        Arrays of the same length as ``deltas``.
    """
    d = _as_vector(np.atleast_1d(deltas), "deltas")
    if np.any(d <= 0):
        raise ValueError("deltas must be positive")
    if int(n_samples) != n_samples or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy Generator")
    n = int(n_samples)
    mus = prior.sample_means(rng, n)
    top2 = np.partition(mus, prior.k - 2, axis=1)[:, -2:]
    gaps = np.sort(top2[:, 1] - top2[:, 0])  # partition puts the largest value last
    counts = np.searchsorted(gaps, d, side="right")
    p = counts / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return p / d, np.maximum(centre - half, 0.0) / d, (centre + half) / d

"""What the A/B platforms compute from Beta and normal posteriors: the probability that each arm is
best, the expected loss of choosing an arm, and the probability that the value remaining is
small.

Math layer. With independent posteriors ``θ_i ~ Beta(A_i, B_i)`` (densities ``f_i``, CDFs
``F_i``), every quantity is a one-dimensional integral:

* probability of being best, ``P_i = ∫ f_i(x) Π_{j≠i} F_j(x) dx``;
* expected loss of choosing ``i``, ``E[max_j θ_j − θ_i] = E[max_j θ_j] − A_i / (A_i + B_i)``
  with ``E[max_j θ_j] = ∫_0^1 (1 − Π_j F_j(x)) dx``;
* value remaining (Scott 2010), ``V = (max_j θ_j − θ_l) / θ_l`` for the arm ``l`` most likely
  best: ``P(V ≤ c) = ∫ f_l(x) Π_{j≠l} F_j(min(1, (1 + c) x)) dx``.

With normal posteriors ``θ_i ~ N(m_i, s_i²)`` (Gaussian arms with known noise and a Gaussian
prior) the first two are the same integrals with normal densities and CDFs, and
``E[max_j θ_j] = x_0 + ∫_{x_0} (1 − Π_j Φ((x − m_j)/s_j)) dx`` from a point ``x_0`` twelve
standard deviations below every posterior (the ``normal_*`` functions); the value remaining,
a ratio to the leader's mean, is left to rates.

The platforms estimate them from thousands of posterior draws; here they are computed by
Gauss–Legendre quadrature on panels laid around every posterior (edges at ``m_i + z s_i`` for the
posterior mean and standard deviation of every arm, ``|z| ≤ 12``), with the regularized
incomplete Beta function (its continued fraction, Abramowitz & Stegun 26.5.8) at every panel's
left end and the density integrated from there to the nodes, so that a decision is a
deterministic function of the counts; about 0.3 ms for three arms at any count
(``benchmarks/bench_online.py``). Checked against
``scipy.special.betainc``, adaptive quadrature and a closed form for two arms (tests).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from . import _validate as V

__all__ = ["beta_cdf", "probability_best", "expected_loss", "value_remaining_probability",
           "posterior_panels", "probability_best_into", "expected_max", "value_remaining_cdf",
           "normal_probability_best", "normal_expected_loss", "normal_probability_best_into",
           "normal_expected_max", "GL_NODES", "GL_WEIGHTS", "PANEL_Z"]

_GAUSS_LEGENDRE = np.polynomial.legendre.leggauss(8)
#: Gauss–Legendre nodes on ``[-1, 1]`` (8 points) of every panel.
GL_NODES = np.ascontiguousarray(_GAUSS_LEGENDRE[0])
#: Their weights.
GL_WEIGHTS = np.ascontiguousarray(_GAUSS_LEGENDRE[1])
#: Panel edges around each posterior, in posterior standard deviations from its mean.
PANEL_Z = np.array([-12.0, -8.0, -6.0, -4.5, -3.5, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0,
                    1.5, 2.0, 2.5, 3.5, 4.5, 6.0, 8.0, 12.0])

_TINY = 1e-300


@njit(cache=True, nogil=True)
def _incomplete_beta_fraction(a, b, x):
    """The continued fraction of ``I_x(a, b)`` (A&S 26.5.8), evaluated by Lentz's method;
    converges fast for ``x < (a + 1) / (a + b + 2)``."""
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 100000):
        for odd in range(2):
            if odd == 0:  # d_{2m}
                coef = m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m))
            else:  # d_{2m+1}
                coef = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0))
            d = 1.0 + coef * d
            d = 1.0 / (d if abs(d) > _TINY else _TINY)
            c = 1.0 + coef / c
            c = c if abs(c) > _TINY else _TINY
            step = c * d
            h *= step
        if abs(step - 1.0) < 1e-15:
            break
    return h


@njit(cache=True, nogil=True)
def beta_cdf(x: float, a: float, b: float) -> float:
    """``I_x(a, b)``, the CDF of ``Beta(a, b)`` at ``x`` (``a, b > 0``): within ``1e-9`` of
    ``scipy.special.betainc`` for shapes from 0.3 to ``3·10^5`` (tested), the error coming from
    ``lgamma`` at large shapes."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x)
                 + b * math.log1p(-x))
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _incomplete_beta_fraction(a, b, x) / a
    return 1.0 - front * _incomplete_beta_fraction(b, a, 1.0 - x) / b


@njit(cache=True, nogil=True)
def _beta_pdf(x, a, b, log_norm):
    if x <= 0.0 or x >= 1.0:
        return 0.0
    return math.exp(log_norm + (a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x))


@njit(cache=True, nogil=True)
def posterior_panels(A: np.ndarray, B: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The sorted edges in ``[0, 1]`` of the quadrature panels: ``m_i + z s_i`` for every arm's
    posterior mean ``m_i`` and standard deviation ``s_i``, ``0`` and ``1``, and, where a shape
    parameter is below 1 (a density unbounded at 0 or 1), ``10^-j`` and ``1 - 10^-j`` for
    ``j = 1, ..., 15``, so that the panels shrink geometrically towards the singularity."""
    k = A.size
    edges = np.empty(k * z.size + 32)
    edges[0] = 0.0
    edges[1] = 1.0
    n = 2
    if A.min() < 1.0 or B.min() < 1.0:
        for j in range(1, 16):
            edges[n] = 10.0 ** -j
            edges[n + 1] = 1.0 - 10.0 ** -j
            n += 2
    for i in range(k):
        tot = A[i] + B[i]
        m = A[i] / tot
        s = math.sqrt(A[i] * B[i] / (tot * tot * (tot + 1.0)))
        for q in range(z.size):
            e = m + z[q] * s
            if 0.0 < e < 1.0:
                edges[n] = e
                n += 1
    return np.unique(edges[:n])


@njit(cache=True, nogil=True)
def _nodes(A, B, z, gl_x, gl_w):
    """Quadrature nodes and weights on ``[0, 1]`` for the posteriors ``(A, B)``, and the edges
    of their panels (``g`` nodes per panel, in order)."""
    return _panel_nodes(posterior_panels(A, B, z), gl_x, gl_w)


@njit(cache=True, nogil=True)
def _panel_nodes(edges, gl_x, gl_w):
    """The Gauss–Legendre nodes and weights of every panel between consecutive ``edges``."""
    p = edges.size - 1
    g = gl_x.size
    xs = np.empty(p * g)
    ws = np.empty(p * g)
    for q in range(p):
        half = 0.5 * (edges[q + 1] - edges[q])
        mid = 0.5 * (edges[q + 1] + edges[q])
        for r in range(g):
            xs[q * g + r] = mid + half * gl_x[r]
            ws[q * g + r] = half * gl_w[r]
    return xs, ws, edges


@njit(cache=True, nogil=True)
def _log_norms(A, B):
    out = np.empty(A.size)
    for i in range(A.size):
        out[i] = math.lgamma(A[i] + B[i]) - math.lgamma(A[i]) - math.lgamma(B[i])
    return out


@njit(cache=True, nogil=True)
def _cdf_table(A, B, log_norm, edges, xs, gl_x, gl_w, scale):
    """``F_j(scale · x_q)`` for every arm ``j`` and node ``x_q`` (clipped to ``[0, 1]``): the
    exact CDF at the panel's left end (:func:`beta_cdf`) plus the Gauss–Legendre integral of the
    density from there, a continued fraction per panel rather than per node."""
    k = A.size
    g = gl_x.size
    p = edges.size - 1
    out = np.empty((k, xs.size))
    for j in range(k):
        for q in range(p):
            lo = edges[q] * scale
            if lo >= 1.0:
                for r in range(g):
                    out[j, q * g + r] = 1.0
                continue
            base = beta_cdf(lo, A[j], B[j])
            for r in range(g):
                x = min(xs[q * g + r] * scale, 1.0)
                half = 0.5 * (x - lo)
                mid = 0.5 * (x + lo)
                part = 0.0
                for u in range(g):
                    part += gl_w[u] * _beta_pdf(mid + half * gl_x[u], A[j], B[j], log_norm[j])
                out[j, q * g + r] = min(1.0, base + half * part)
    return out


@njit(cache=True, nogil=True)
def probability_best_into(A: np.ndarray, B: np.ndarray, z: np.ndarray, gl_x: np.ndarray,
                          gl_w: np.ndarray, out: np.ndarray) -> int:
    """``out[i] = P(θ_i is the largest)`` for ``θ_j ~ Beta(A_j, B_j)``, on the panels of
    :func:`posterior_panels` at ``z`` with the Gauss–Legendre rule ``gl_x, gl_w`` on each;
    returns the number of nodes (compiled; :func:`probability_best` is the array version)."""
    k = A.size
    xs, ws, edges = _nodes(A, B, z, gl_x, gl_w)
    log_norm = _log_norms(A, B)
    cdf = _cdf_table(A, B, log_norm, edges, xs, gl_x, gl_w, 1.0)
    for i in range(k):
        out[i] = 0.0
    for q in range(xs.size):
        x = xs[q]
        for i in range(k):
            f = _beta_pdf(x, A[i], B[i], log_norm[i])
            if f == 0.0:
                continue
            prod = 1.0
            for j in range(k):
                if j != i:
                    prod *= cdf[j, q]
            out[i] += ws[q] * f * prod
    return xs.size


@njit(cache=True, nogil=True)
def expected_max(A: np.ndarray, B: np.ndarray, z: np.ndarray, gl_x: np.ndarray,
                 gl_w: np.ndarray) -> float:
    """``E[max_j θ_j] = ∫_0^1 (1 − Π_j F_j(x)) dx`` (compiled)."""
    xs, ws, edges = _nodes(A, B, z, gl_x, gl_w)
    cdf = _cdf_table(A, B, _log_norms(A, B), edges, xs, gl_x, gl_w, 1.0)
    total = 0.0
    for q in range(xs.size):
        prod = 1.0
        for j in range(A.size):
            prod *= cdf[j, q]
        total += ws[q] * (1.0 - prod)
    return total


@njit(cache=True, nogil=True)
def value_remaining_cdf(A: np.ndarray, B: np.ndarray, leader: int, c: float, z: np.ndarray,
                        gl_x: np.ndarray, gl_w: np.ndarray) -> float:
    """``P((max_j θ_j − θ_l) / θ_l ≤ c)`` for the arm ``l = leader`` (compiled; the panels
    ``z`` and the Gauss–Legendre rule ``gl_x, gl_w`` as in :func:`probability_best_into`)."""
    xs, ws, edges = _nodes(A, B, z, gl_x, gl_w)
    log_norm = _log_norms(A, B)
    cdf = _cdf_table(A, B, log_norm, edges, xs, gl_x, gl_w, 1.0 + c)  # F_j((1 + c) x)
    total = 0.0
    for q in range(xs.size):
        f = _beta_pdf(xs[q], A[leader], B[leader], log_norm[leader])
        if f == 0.0:
            continue
        prod = 1.0
        for j in range(A.size):
            if j != leader:
                prod *= cdf[j, q]
        total += ws[q] * f * prod
    return total


def _arm_vectors(x: ArrayLike, y: ArrayLike, names: tuple, x_positive: bool = True
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Two per-arm parameter vectors (named ``names``), broadcast, at least two arms."""
    x_arr = np.atleast_1d(V.reals(x, names[0], positive=x_positive))
    y_arr = np.atleast_1d(V.reals(y, names[1], positive=True))
    x_arr, y_arr = np.broadcast_arrays(x_arr, y_arr)
    if x_arr.ndim != 1 or x_arr.size < 2:
        raise ValueError(f"{names[0]} and {names[1]} must give at least two arms, got shapes "
                         f"{np.shape(x)} and {np.shape(y)}")
    return (np.ascontiguousarray(x_arr, dtype=np.float64),
            np.ascontiguousarray(y_arr, dtype=np.float64))


def _shapes(a: ArrayLike, b: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    return _arm_vectors(a, b, ("a", "b"))


def probability_best(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """The probability that each arm has the largest mean, under independent ``Beta(a_i, b_i)``
    posteriors (the platforms' "chance to win" / "probability to be best")."""
    A, B = _shapes(a, b)
    out = np.empty(A.size)
    probability_best_into(A, B, PANEL_Z, GL_NODES, GL_WEIGHTS, out)
    return out


def expected_loss(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """The expected loss ``E[max_j θ_j − θ_i]`` of choosing each arm ``i`` (the platforms'
    "risk", in the units of the means), under independent ``Beta(a_i, b_i)`` posteriors."""
    A, B = _shapes(a, b)
    return expected_max(A, B, PANEL_Z, GL_NODES, GL_WEIGHTS) - A / (A + B)


def value_remaining_probability(a: ArrayLike, b: ArrayLike, c: float) -> float:
    """``P((max_j θ_j − θ_l) / θ_l ≤ c)`` for the arm ``l`` most likely best (Scott 2010 stops
    when this reaches 95% with ``c = 0.01``)."""
    A, B = _shapes(a, b)
    c = V.positive(c, "c")
    leader = int(np.argmax(probability_best(A, B)))
    return float(value_remaining_cdf(A, B, leader, c, PANEL_Z, GL_NODES, GL_WEIGHTS))


_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@njit(cache=True, nogil=True)
def _normal_nodes(M, Sd, z, gl_x, gl_w):
    """Nodes and weights on panels with edges ``M_i + z Sd_i`` for every arm."""
    edges = np.empty(M.size * z.size)
    for i in range(M.size):
        for q in range(z.size):
            edges[i * z.size + q] = M[i] + z[q] * Sd[i]
    return _panel_nodes(np.unique(edges), gl_x, gl_w)


@njit(cache=True, nogil=True)
def _normal_cdf(x, m, s):
    return 0.5 * math.erfc(-(x - m) / (s * _SQRT2))


@njit(cache=True, nogil=True)
def normal_probability_best_into(M: np.ndarray, Sd: np.ndarray, z: np.ndarray,
                                 gl_x: np.ndarray, gl_w: np.ndarray, out: np.ndarray) -> int:
    """``out[i] = P(θ_i is the largest)`` for ``θ_j ~ N(M_j, Sd_j²)``, integrated over
    ``θ_i = M_i + Sd_i u``: ``∫ φ(u) Π_{j≠i} Φ((M_i + Sd_i u − M_j)/Sd_j) du`` on panels with edges
    ``z`` and the other arms' ``M_j + z Sd_j`` mapped to ``u`` (within ``z``'s range), with the
    Gauss–Legendre rule ``gl_x, gl_w`` on each. In each arm's own units a posterior far
    narrower than the others (a point mass, to rounding) is integrated as accurately as a wide
    one. Returns the largest number of nodes of an arm (compiled;
    :func:`normal_probability_best` is the array version)."""
    k = M.size
    lo, hi = z[0], z[-1]
    edges = np.empty(k * z.size)
    most = 0
    for i in range(k):
        n = 0
        for j in range(k):
            for q in range(z.size):
                u = z[q] if j == i else (M[j] + z[q] * Sd[j] - M[i]) / Sd[i]
                if lo <= u <= hi:
                    edges[n] = u
                    n += 1
        us, ws, _ = _panel_nodes(np.unique(edges[:n]), gl_x, gl_w)
        most = max(most, us.size)
        total = 0.0
        for q in range(us.size):
            x = M[i] + Sd[i] * us[q]
            prod = math.exp(-0.5 * us[q] * us[q] - _LOG_SQRT_2PI)
            for j in range(k):
                if j != i:
                    prod *= _normal_cdf(x, M[j], Sd[j])
            total += ws[q] * prod
        out[i] = total
    return most


@njit(cache=True, nogil=True)
def normal_expected_max(M: np.ndarray, Sd: np.ndarray, z: np.ndarray, gl_x: np.ndarray,
                        gl_w: np.ndarray) -> float:
    """``E[max_j θ_j]`` for ``θ_j ~ N(M_j, Sd_j²)``: the left end ``x_0`` of the panels plus
    ``∫ (1 − Π_j Φ((x − M_j)/Sd_j)) dx`` over them (compiled)."""
    xs, ws, edges = _normal_nodes(M, Sd, z, gl_x, gl_w)
    total = edges[0]
    for q in range(xs.size):
        prod = 1.0
        for j in range(M.size):
            prod *= _normal_cdf(xs[q], M[j], Sd[j])
        total += ws[q] * (1.0 - prod)
    return total


def _normals(means: ArrayLike, stds: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    return _arm_vectors(means, stds, ("means", "stds"), x_positive=False)


def normal_probability_best(means: ArrayLike, stds: ArrayLike) -> np.ndarray:
    """The probability that each arm has the largest mean, under independent normal posteriors
    ``N(means_i, stds_i²)``."""
    M, Sd = _normals(means, stds)
    out = np.empty(M.size)
    normal_probability_best_into(M, Sd, PANEL_Z, GL_NODES, GL_WEIGHTS, out)
    return out


def normal_expected_loss(means: ArrayLike, stds: ArrayLike) -> np.ndarray:
    """The expected loss ``E[max_j θ_j − θ_i]`` of choosing each arm ``i`` under independent
    normal posteriors ``N(means_i, stds_i²)``."""
    M, Sd = _normals(means, stds)
    return normal_expected_max(M, Sd, PANEL_Z, GL_NODES, GL_WEIGHTS) - M

"""Algorithm 1 for a prior known only within a family: ``Δ0`` from the largest ``L(H)`` it allows.

Algorithm 1 sets ``Δ0 = δ / (4 L(H'))`` from the prior ``H'`` it is given. In the proof of
Theorem 3 the prior enters the error only through the near-tie mass
``P_H(gap ≤ Δ0) ≈ L(H) Δ0`` of the *true* prior ``H`` (the volume lemma); the confidence
failures do not depend on it. So if the truth is known only to lie in a family ``𝓗`` that
contains ``H'``, the level

.. math:: \\Delta_0 = \\frac{\\delta}{4 \\sup_{H \\in \\mathcal{H}} L(H)}

keeps the same bound, ``L(H) Δ0 ≤ δ/4``, for every ``H`` in the family. In the library's
terms this is ``Elimination(delta0_factor=robust_factor(H', L_sup))``, ``4 L_sup / L(H')``;
the same factor works for the ``indifference`` option of the GLR algorithms. The price is a
``Δ0`` smaller by ``L_sup / L(H')``, and the mean stopping time grows roughly in proportion.

Three families, those of the book's chapter on misspecified priors, each containing the
assumed Gaussian prior ``H' = ⊗ N(m_i, σ_i²)``:

- :func:`L_sup_scale`: the stds multiplied by one factor ``c ∈ [1/ratio, ratio]``;
- :func:`L_sup_shift`: each mean moved by at most ``shift`` (exact for two arms, a search
  for more);
- :func:`L_sup_student_t`: iid arms whose law is Student-``t`` with ``ν ≥ nu_min`` degrees of
  freedom and the assumed mean and variance (a Gaussian fitted to a heavier-tailed truth).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

from . import _validate as V
from .priors import GaussianPrior, check_prior
from .quadrature import iid_L

__all__ = ["L_sup_scale", "L_sup_shift", "L_sup_student_t", "robust_factor"]

#: Points of the grid in ``log c`` (scale) or ``log ν`` (Student-t) searched before refining.
GRID_POINTS = 41
#: Largest ``nu_min`` of :func:`L_sup_student_t`: its grid reaches ``1000 nu_min``, a finite
#: double (the law is the Gaussian to about ``1e-300`` there).
NU_MAX = 1e300


def _scaled(prior: GaussianPrior, c: float) -> GaussianPrior:
    return GaussianPrior(prior.means, prior.stds * c)


def _family_L(prior: GaussianPrior, name: str, value: float) -> float:
    """``L`` of a prior of the family, or ``0.0`` where it underflows double precision.

    The supremum is at least ``L(H')``, a normal double, so a member whose ``L`` is below the
    smallest normal double cannot attain it and counts as ``0`` in the search. Any other
    failure is a ``ValueError`` naming the caller's parameter ``name`` (= ``value``)."""
    try:
        return prior.L()
    except ValueError as err:
        if "underflows" in str(err):
            return 0.0
        raise ValueError(f"{name} = {value!r}: L of a prior of the family is not "
                         f"representable ({err})") from None


def _finite(value: float, name: str, given: float) -> float:
    """``value`` if it is finite, else a ``ValueError`` naming ``name`` and the overflow."""
    if not math.isfinite(value):
        raise ValueError(f"{name} = {given!r}: the supremum of L overflows double precision "
                         f"(got {value!r})")
    return float(value)


def L_sup_scale(prior: GaussianPrior, ratio: float) -> float:
    """:math:`\\sup_{c \\in [1/r, r]} L(\\otimes_i N(m_i, c^2\\sigma_i^2))`: the largest ``L``
    when the prior's spread is wrong by a factor of at most ``r = ratio`` either way.

    When all means are equal ``L`` scales as ``1/c`` and the supremum is ``ratio · L(H')``
    exactly. Otherwise it is the largest value found on a grid of :data:`GRID_POINTS` values
    of ``log c`` refined by a bounded Brent search around the best grid point (for two arms
    ``L = 2 u φ(d u)`` with ``u = 1/(c s)`` is unimodal in ``c``, so the search finds it).

    Members of the family whose ``L`` underflows (arms many scaled stds apart) cannot hold
    the supremum, which is at least ``L(H')``, and count as ``0``.

    Parameters
    ----------
    prior : GaussianPrior
        The assumed prior ``H'``.
    ratio : float
        ``>= 1``; ``1`` gives ``L(H')``. Unless all means are equal, the scaled stds
        ``c σ_i`` of the search must stay within the supported range
        ``SCALE_RANGE = [1e-100, 1e100]`` of ``bai_lib._validate``.

    Raises
    ------
    ValueError
        Naming ``prior`` if it is not a :class:`~bai_lib.GaussianPrior`; naming ``ratio`` if it
        is not a finite number ``>= 1``, takes the searched stds outside the supported range,
        or if the supremum overflows double precision.
    """
    check_prior(prior)
    ratio = V.real(ratio, "ratio")
    if ratio < 1.0:
        raise ValueError(f"ratio must be >= 1 (the family contains the assumed prior), "
                         f"got {ratio!r}")
    if np.all(prior.means == prior.means[0]):
        return _finite(ratio * prior.L(), "ratio", ratio)
    lo_s, hi_s = V.SCALE_RANGE
    if not (float(np.min(prior.stds)) / ratio >= lo_s
            and float(np.max(prior.stds)) * ratio <= hi_s):
        raise ValueError(f"ratio = {ratio!r} takes the prior's stds (from "
                         f"{np.min(prior.stds):.3g} to {np.max(prior.stds):.3g}) outside the "
                         f"supported range [{lo_s:g}, {hi_s:g}] that the search needs")
    logs = np.linspace(-math.log(ratio), math.log(ratio), GRID_POINTS)
    values = np.array([_family_L(_scaled(prior, math.exp(s)), "ratio", ratio) for s in logs])
    i = int(np.argmax(values))
    lo, hi = logs[max(i - 1, 0)], logs[min(i + 1, logs.size - 1)]
    best = float(values[i])
    if hi > lo:
        res = optimize.minimize_scalar(
            lambda s: -_family_L(_scaled(prior, math.exp(s)), "ratio", ratio),
            bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
        best = max(best, float(-res.fun))
    return _finite(best, "ratio", ratio)


def L_sup_shift(prior: GaussianPrior, shift: float) -> float:
    """:math:`\\sup L` over the priors whose means each lie within ``shift`` of the assumed
    ones (stds as assumed).

    For two arms ``L = 2 φ(d/s)/s`` with ``d = |m_1 - m_2|`` and ``s² = σ_1² + σ_2²``, and
    a shift of at most ``shift`` per mean brings ``d`` down to ``max(0, d - 2 shift)``: the
    supremum is ``L`` of the prior with the two means moved that far towards each other. For more arms it is the largest value a bounded quasi-Newton
    search (L-BFGS-B on the box of means) finds from two starts, the assumed means and the
    means pulled as far as allowed towards their median.

    Members of the family whose ``L`` underflows count as ``0`` (as in :func:`L_sup_scale`).
    Each search step evaluates ``L`` of ``k``-arm priors about ``k + 1`` times, and the cost is
    not estimated beforehand: about a second for three arms, 80 s for ten (the pairwise
    quadratures), 7 minutes for a hundred.

    Parameters
    ----------
    prior : GaussianPrior
        The assumed prior ``H'``.
    shift : float
        ``>= 0``, in the units of the means; for more than two arms the searched means must
        stay within the supported magnitude ``1e100`` (``SCALE_RANGE`` of
        ``bai_lib._validate``).

    Raises
    ------
    ValueError
        Naming ``prior`` if it is not a :class:`~bai_lib.GaussianPrior`; naming ``shift`` if it
        is not a finite number ``>= 0``, lets the search (``k > 2``) move a mean beyond
        ``1e100`` in magnitude, or if the supremum overflows double precision.
    """
    check_prior(prior)
    shift = V.nonnegative(shift, "shift")
    m, s = prior.means, prior.stds
    hi_m = V.SCALE_RANGE[1]
    if prior.k > 2 and not float(np.max(np.abs(m))) + shift <= hi_m:
        raise ValueError(f"shift = {shift!r} lets the search move the prior's means (largest "
                         f"magnitude {np.max(np.abs(m)):.3g}) beyond the supported magnitude "
                         f"{hi_m:g}")
    if prior.k == 2:
        # L decreases in |m_1 - m_2|: move each mean towards the other by up to `shift`
        step = min(shift, abs(float(m[0] - m[1])) / 2.0) * np.sign(m[1] - m[0])
        return _finite(max(GaussianPrior(m + np.array([step, -step]), s).L(), prior.L()),
                       "shift", shift)
    if shift == 0.0:
        return float(prior.L())
    bounds = [(float(x) - shift, float(x) + shift) for x in m]
    centre = float(np.median(m))
    starts = [m, np.clip(np.full_like(m, centre), m - shift, m + shift)]
    best = prior.L()
    for x0 in starts:
        res = optimize.minimize(lambda x: -_family_L(GaussianPrior(x, s), "shift", shift), x0,
                                method="L-BFGS-B", bounds=bounds)
        best = max(best, float(-res.fun))
    return _finite(best, "shift", shift)


def L_sup_student_t(prior: GaussianPrior, nu_min: float) -> float:
    """The largest ``L`` of ``k`` iid arms whose law is Student-``t`` with ``ν ≥ nu_min`` degrees
    of freedom and the mean and variance of the assumed iid Gaussian prior.

    The law for ``ν`` is ``t_ν`` with location ``m`` and scale ``σ √((ν-2)/ν)``, whose
    variance is ``σ²``; ``ν → ∞`` is the assumed Gaussian. ``L`` is computed by
    :func:`~bai_lib.quadrature.iid_L` at ``nu_min`` and on a grid of :data:`GRID_POINTS`
    values of ``log ν`` up to ``1000 nu_min``, and the largest value, or ``L(H')``, is returned.

    Parameters
    ----------
    prior : GaussianPrior
        The assumed prior: all arms with the same mean and std.
    nu_min : float
        Smallest degrees of freedom, ``> 2`` (the variance must be finite) and at most
        ``NU_MAX`` (``1e300``).

    Raises
    ------
    ValueError
        Naming ``prior`` if it is not a :class:`~bai_lib.GaussianPrior` of iid arms; naming
        ``nu_min`` if it is not a finite number in ``(2, NU_MAX]``.
    """
    check_prior(prior)
    nu_min = V.real(nu_min, "nu_min")
    if not 2.0 < nu_min <= NU_MAX:
        raise ValueError(f"nu_min must be > 2 (a finite variance) and at most {NU_MAX:g}, "
                         f"got {nu_min!r}")
    m, s = prior.means, prior.stds
    if not (np.all(m == m[0]) and np.all(s == s[0])):
        raise ValueError("prior: the Student-t family is defined for iid arms (equal means and "
                         "equal stds)")
    mean, sd = float(m[0]), float(s[0])
    nus = np.geomspace(nu_min, 1000.0 * nu_min, GRID_POINTS)
    values = [iid_L(stats.t(nu, loc=mean, scale=sd * math.sqrt((nu - 2.0) / nu)), prior.k)
              for nu in nus]
    return float(max(max(values), prior.L()))


def robust_factor(prior: GaussianPrior, L_sup: float) -> float:
    """``4 L_sup / L(H')``: the ``delta0_factor`` that gives ``Δ0 = δ / (4 L_sup)``.

    Parameters
    ----------
    prior : GaussianPrior
        The assumed prior ``H'``.
    L_sup : float
        The largest ``L`` of the family (:func:`L_sup_scale`, :func:`L_sup_shift`,
        :func:`L_sup_student_t`), at least ``L(H')`` since the family contains ``H'``.

    Raises
    ------
    ValueError
        Naming ``prior`` if it is not a :class:`~bai_lib.GaussianPrior`; naming ``L_sup`` if it
        is not a finite positive number, is below ``L(H')``, or if the factor overflows
        double precision (``L_sup / L(H')`` above about ``4.5e307``).
    """
    check_prior(prior)
    L_sup = V.positive(L_sup, "L_sup")
    L = prior.L()
    if L_sup < L * (1.0 - 1e-12):
        raise ValueError(f"L_sup = {L_sup!r} is below L(prior) = {L!r}: the family must contain "
                         f"the assumed prior")
    # 4 (L_sup / L): the same double as (4 L_sup) / L (a factor 4 is exact), without the
    # overflow of 4 L_sup
    factor = 4.0 * (max(L_sup, L) / L)
    if not math.isfinite(factor):
        raise ValueError(f"L_sup = {L_sup!r}: the factor 4 L_sup / L(prior) = 4 x "
                         f"{L_sup!r} / {L!r} overflows double precision")
    return factor
